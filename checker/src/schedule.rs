//! Counterexamples: one [`Schedule`] value for every strategy, with a
//! self-contained, versioned text form (ARCHITECTURE.md, "Counterexamples: schedules and replay").
//!
//! Text form (version 2), fields separated by `:`; it needs no quoting in
//! a shell:
//!
//! ```text
//! mcheck2:2pc:p=clients=2,participants=2:bug=1:e=rtc:seed=7:max-steps=10000:v=monitor:at=41:by=atomicity:msg=participant+1+committed:d=12.3.40:sum=0c3f...
//! mcheck2:-:p=-:bug=-:e=-:seed=0:max-steps=500:deadlock:c=0.2.1.1
//! ```
//!
//! * the model's name, or `-` for a plain [`Program`](crate::Program) that
//!   no model built (the [`Schedule::model`] field is then empty);
//! * `p=` the model's parameters (all of them, `name=value`, comma
//!   separated; `p=-` when it has none), `bug=` the seeded bug or `-`;
//! * `e=` the explorer (`-` for choice paths), `seed=` the explorer's seed;
//! * `max-steps=` the execution limit; an optional `deadlock` flag (deadlocks
//!   are violations);
//! * the expected violation, when known: `v=` its kind, `at=` the step at
//!   which it happens, `by=` the machine, `msg=` its message (`by` and `msg`
//!   are encoded: `+` for a space, `%XX` for any byte outside
//!   `A-Z a-z 0-9 - _ . , /`);
//! * the path: `d=` a delay path `p0.p1...` (take p0 steps as the
//!   explorer says, delay, take p1 steps, delay, ..., then run as the
//!   explorer says), or `c=` a choice path (the index of the choice taken
//!   at each step, counting the alternatives of the enabled actors in id
//!   order). An empty path is `d=` or `c=`;
//! * for a liveness lasso only, `cyc=` its cycle: choice indices (as in
//!   `c=`) that lead from the state the path ends in back to that same
//!   state (ARCHITECTURE.md, "Liveness");
//! * last, `sum=` the [checksum](Schedule::content_checksum) of everything
//!   above, so that replay can tell an edited schedule from a changed model.
//!
//! Version 1 (`mcheck1:`, without the expectation and the checksum, the
//! model always named) still parses. The JSON file form is the serialized
//! [`Schedule`]; it adds the trail of choice points and the model's digest.

use crate::cache::fingerprint;
use crate::program::{Violation, ViolationKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// The current format version (of the text form and of the JSON file).
pub const VERSION: u32 = 2;

/// The text form's version tag.
pub const TEXT_TAG: &str = "mcheck2";

/// The tag of version 1 (still read).
pub const TEXT_TAG_V1: &str = "mcheck1";

/// The shape of the text form, for error messages.
const FORM: &str = "expected mcheck2:MODEL|-:p=NAME=V,...|-:bug=N|-:e=EXPLORER|-:seed=S:max-steps=L[:deadlock][:v=KIND[:at=STEP][:by=MACHINE]:msg=TEXT]:d=P.P...|c=C.C...[:cyc=C.C...][:sum=HEX]";

/// What the path of a schedule counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathKind {
    /// A delay path for an explorer (SES, SS).
    Delays,
    /// A choice index per step (DFS, PB, RS, IRS, PCT).
    Choices,
}

impl PathKind {
    /// The text form's tag: `d` or `c`.
    fn tag(self) -> &'static str {
        match self {
            PathKind::Delays => "d",
            PathKind::Choices => "c",
        }
    }
}

/// One choice point met during an execution, recorded so that a replay can
/// tell "the model changed" from "the model is nondeterministic".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TrailStep {
    /// The actor that ran.
    pub actor: u32,
    /// The alternative taken.
    pub alt: u32,
    /// A digest of the enabled set (actors and their alternatives).
    pub enabled: u64,
}

impl fmt::Display for TrailStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "actor #{} alternative {} (enabled-set digest {:016x})",
            self.actor, self.alt, self.enabled
        )
    }
}

/// A counterexample, replayable by [`crate::replay::replay`] and
/// `mcheck replay`.
///
/// A schedule made by any search is self-contained: its text form parses
/// back to the same value, and the replay reaches the same outcome (with
/// `deadlock` and `expected` filled in by the search, and `model`,
/// `params`, `bug`, `digest` and `trail` by [`crate::check`] for a model).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Schedule {
    /// Format version ([`VERSION`]; version 1 files are read too).
    pub version: u32,
    /// The model's registry name; empty for a plain program.
    pub model: String,
    /// Every parameter of the model.
    pub params: BTreeMap<String, u64>,
    /// The seeded bug, if any.
    pub bug: Option<u32>,
    /// What the path counts.
    pub kind: PathKind,
    /// The explorer, for delay paths.
    pub explorer: Option<String>,
    /// The explorer's seed (PRR's insertions).
    pub explorer_seed: u64,
    /// The execution limit the schedule was found with.
    pub max_steps: usize,
    /// Whether deadlocks were reported as violations.
    #[serde(default)]
    pub deadlock: bool,
    /// The path (see the module docs).
    pub path: Vec<u64>,
    /// A liveness lasso's cycle: the choice indices (as a choice path's)
    /// that lead from the state the path ends in back to that same state.
    /// Empty for every other counterexample.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cycle: Vec<u64>,
    /// The violation it reproduces, when known.
    #[serde(default)]
    pub expected: Option<Violation>,
    /// The step at which `expected` happens (as in
    /// [`Found::step`](crate::Found::step)), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_step: Option<usize>,
    /// The choice points met, step by step (file form only).
    #[serde(default)]
    pub trail: Vec<TrailStep>,
    /// A digest of the model's name, parameters, bug and initial state
    /// (file form only; empty when unknown; see
    /// [`crate::replay::model_digest`]).
    #[serde(default)]
    pub digest: String,
    /// The [content checksum](Schedule::content_checksum) as it was when
    /// the schedule was sealed (empty: never sealed, or read from a form
    /// without one).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub checksum: String,
}

impl Schedule {
    /// A schedule with no model information yet (the search fills the
    /// path; the caller names the model).
    pub fn new(kind: PathKind, explorer: Option<&str>, explorer_seed: u64, max_steps: usize, path: Vec<u64>) -> Self {
        Schedule {
            version: VERSION,
            model: String::new(),
            params: BTreeMap::new(),
            bug: None,
            kind,
            explorer: explorer.map(str::to_string),
            explorer_seed,
            max_steps,
            deadlock: false,
            path,
            cycle: Vec::new(),
            expected: None,
            expected_step: None,
            trail: Vec::new(),
            digest: String::new(),
            checksum: String::new(),
        }
    }

    /// Record the violation the schedule reproduces and its step.
    pub fn expect(&mut self, violation: &Violation, step: usize) {
        self.expected = Some(violation.clone());
        self.expected_step = Some(step);
    }

    /// The number of delays of a delay path (0 for a choice path).
    pub fn delays(&self) -> usize {
        match self.kind {
            PathKind::Delays => self.path.len(),
            PathKind::Choices => 0,
        }
    }

    /// A checksum of everything the text form carries (model, parameters,
    /// bug, explorer, seed, limits, expectation, path; not the trail, the
    /// digest or the version), as 16 hex digits.
    pub fn content_checksum(&self) -> String {
        let expected = self
            .expected
            .as_ref()
            .map(|v| (v.kind.as_str(), v.machine.as_deref(), v.message.as_str()));
        let content = (
            self.model.as_str(),
            &self.params,
            self.bug,
            self.kind.tag(),
            self.explorer.as_deref(),
            self.explorer_seed,
            self.max_steps as u64,
            self.deadlock,
            &self.path,
            expected,
            self.expected_step.map(|s| s as u64),
        );
        // The cycle joins the content only when there is one, so that the
        // checksums of every schedule without one stay what they were.
        if self.cycle.is_empty() {
            format!("{:016x}", fingerprint(&content))
        } else {
            format!("{:016x}", fingerprint(&(content, &self.cycle)))
        }
    }

    /// Record the current content checksum (and the current version): from
    /// now on, any change to the content shows as an edit.
    pub fn seal(&mut self) {
        self.version = VERSION;
        self.checksum = self.content_checksum();
    }

    /// Whether the schedule was changed since it was sealed: `None` when it
    /// carries no checksum.
    pub fn is_edited(&self) -> Option<bool> {
        (!self.checksum.is_empty()).then(|| self.checksum != self.content_checksum())
    }

    /// The text form (the current version). Its `sum=` is the recorded
    /// checksum, or the current one for a schedule never sealed.
    pub fn to_text(&self) -> String {
        let mut out = format!("{TEXT_TAG}:{}", if self.model.is_empty() { "-" } else { &self.model });
        let params = if self.params.is_empty() {
            "-".to_string()
        } else {
            join(self.params.iter().map(|(k, v)| format!("{k}={v}")), ",")
        };
        let bug = self.bug.map_or("-".to_string(), |b| b.to_string());
        let explorer = self.explorer.as_deref().unwrap_or("-");
        out += &format!(
            ":p={params}:bug={bug}:e={explorer}:seed={}:max-steps={}",
            self.explorer_seed, self.max_steps
        );
        if self.deadlock {
            out += ":deadlock";
        }
        if let Some(v) = &self.expected {
            out += &format!(":v={}", v.kind);
            if let Some(step) = self.expected_step {
                out += &format!(":at={step}");
            }
            if let Some(m) = &v.machine {
                out += &format!(":by={}", encode(m));
            }
            out += &format!(":msg={}", encode(&v.message));
        }
        out += &format!(
            ":{}={}",
            self.kind.tag(),
            join(self.path.iter().map(u64::to_string), ".")
        );
        if !self.cycle.is_empty() {
            out += &format!(":cyc={}", join(self.cycle.iter().map(u64::to_string), "."));
        }
        let sum = if self.checksum.is_empty() {
            self.content_checksum()
        } else {
            self.checksum.clone()
        };
        out + ":sum=" + &sum
    }

    /// Parse the text form (version 1 or 2). Errors say which field is
    /// wrong and what the form is.
    pub fn from_text(text: &str) -> Result<Schedule, ParseError> {
        let text = text.trim();
        let mut fields = text.split(':');
        let tag = fields.next().unwrap_or("");
        let version = match tag {
            TEXT_TAG => VERSION,
            TEXT_TAG_V1 => 1,
            t if t.starts_with("mcheck") => {
                return Err(ParseError::UnsupportedVersion { found: t.to_string() });
            }
            _ => return Err(ParseError::NotASchedule { text: abbreviate(text) }),
        };
        let model = fields.next().ok_or(ParseError::Missing { field: "MODEL" })?;
        let mut s = Schedule::new(PathKind::Delays, None, 0, 0, Vec::new());
        s.model = if model == "-" { String::new() } else { model.to_string() };
        let mut seen: Vec<&str> = Vec::new();
        let mut violation: (Option<ViolationKind>, Option<String>, Option<String>) = (None, None, None);
        for field in fields {
            let (key, value) = match field.split_once('=') {
                Some(kv) => kv,
                None if field == "deadlock" => (field, ""),
                None => {
                    return Err(ParseError::NotKeyValue {
                        field: abbreviate(field),
                    });
                }
            };
            let key = *FIELDS.iter().find(|k| **k == key).ok_or_else(|| ParseError::Unknown {
                field: abbreviate(field),
            })?;
            if version == 1 && V2_FIELDS.contains(&key) {
                return Err(ParseError::Unknown {
                    field: abbreviate(field),
                });
            }
            let slot = if key == "c" { "d" } else { key };
            if seen.contains(&slot) {
                return Err(ParseError::Duplicate { field: slot });
            }
            seen.push(slot);
            let bad = |expected: &'static str| ParseError::Bad {
                field: key,
                value: abbreviate(value),
                expected,
            };
            match key {
                "deadlock" => s.deadlock = true,
                "p" if value != "-" => {
                    for pair in value.split(',') {
                        let (k, v) = pair
                            .split_once('=')
                            .ok_or_else(|| bad("NAME=VALUE pairs separated by commas, or -"))?;
                        let v: u64 = v.parse().map_err(|_| bad("whole-number parameter values"))?;
                        s.params.insert(k.to_string(), v);
                    }
                }
                "p" => {}
                "bug" if value != "-" => s.bug = Some(value.parse().map_err(|_| bad("a bug number or -"))?),
                "bug" => {}
                "e" if value != "-" => s.explorer = Some(value.to_string()),
                "e" => {}
                "seed" => s.explorer_seed = value.parse().map_err(|_| bad("a whole number"))?,
                "max-steps" => {
                    s.max_steps = value
                        .parse()
                        .ok()
                        .filter(|&m| m > 0)
                        .ok_or_else(|| bad("a positive whole number"))?
                }
                "v" => violation.0 = Some(ViolationKind::from_name(value).ok_or_else(|| bad(KINDS))?),
                "at" => s.expected_step = Some(value.parse().map_err(|_| bad("a step number"))?),
                "by" => violation.1 = Some(decode(value).ok_or_else(|| bad(ENCODED))?),
                "msg" => violation.2 = Some(decode(value).ok_or_else(|| bad(ENCODED))?),
                "cyc" => {
                    s.cycle = value
                        .split('.')
                        .map(|x| x.parse::<u64>())
                        .collect::<Result<_, _>>()
                        .map_err(|_| bad("whole numbers separated by dots"))?;
                }
                "sum" => {
                    if value.len() != 16 || !value.bytes().all(|b| b.is_ascii_hexdigit()) {
                        return Err(bad("16 hex digits"));
                    }
                    s.checksum = value.to_ascii_lowercase();
                }
                _ => {
                    // "d" or "c": the path.
                    s.kind = if key == "d" {
                        PathKind::Delays
                    } else {
                        PathKind::Choices
                    };
                    if !value.is_empty() {
                        s.path = value
                            .split('.')
                            .map(|x| x.parse::<u64>())
                            .collect::<Result<_, _>>()
                            .map_err(|_| bad("whole numbers separated by dots"))?;
                    }
                }
            }
        }
        for (key, name) in [
            ("p", "p="),
            ("bug", "bug="),
            ("e", "e="),
            ("seed", "seed="),
            ("max-steps", "max-steps="),
            ("d", "d= or c="),
        ] {
            if !seen.contains(&key) {
                return Err(ParseError::Missing { field: name });
            }
        }
        s.expected = match violation {
            (None, None, None) if s.expected_step.is_none() => None,
            (Some(kind), machine, Some(message)) => Some(Violation { kind, machine, message }),
            (None, ..) => {
                return Err(ParseError::Missing {
                    field: "v= (with at=, by= or msg=)",
                });
            }
            (Some(_), _, None) => {
                return Err(ParseError::Missing {
                    field: "msg= (with v=)",
                });
            }
        };
        s.validate()?;
        Ok(s)
    }

    /// Parse either a text form or a JSON file's contents (see also the
    /// [`FromStr`] implementation, which does the same).
    ///
    /// ```
    /// use mcheck_checker::{PathKind, Schedule};
    ///
    /// let mut s = Schedule::parse("mcheck2:-:p=-:bug=-:e=rtc:seed=0:max-steps=500:d=3.1").unwrap();
    /// assert_eq!((s.kind, s.delays(), s.explorer.as_deref()), (PathKind::Delays, 2, Some("rtc")));
    /// s.seal(); // records the checksum that the text form carries
    /// assert_eq!(Schedule::parse(&s.to_text()).unwrap(), s);
    /// assert_eq!(Schedule::parse(&serde_json::to_string(&s).unwrap()).unwrap(), s);
    /// ```
    pub fn parse(input: &str) -> Result<Schedule, ParseError> {
        let t = input.trim_start();
        if !t.starts_with('{') {
            return Schedule::from_text(t);
        }
        let json = |e: serde_json::Error| ParseError::Json { message: e.to_string() };
        let value: serde_json::Value = serde_json::from_str(t).map_err(json)?;
        // The version first: a file of a later version may lack fields.
        if let Some(v) = value.get("version")
            && !v.as_u64().is_some_and(|v| (1..=VERSION as u64).contains(&v))
        {
            return Err(ParseError::UnsupportedVersion {
                found: format!("version {v}"),
            });
        }
        let mut s: Schedule = serde_json::from_value(value).map_err(json)?;
        s.validate()?;
        s.version = VERSION;
        Ok(s)
    }

    /// The checks every form passes: a positive step limit, an explorer
    /// for a delay path.
    fn validate(&self) -> Result<(), ParseError> {
        if self.max_steps == 0 {
            return Err(ParseError::Bad {
                field: "max-steps",
                value: "0".into(),
                expected: "a positive whole number",
            });
        }
        if self.kind == PathKind::Delays && self.explorer.is_none() {
            return Err(ParseError::ExplorerNeeded);
        }
        if self.kind == PathKind::Delays && !self.cycle.is_empty() {
            return Err(ParseError::Bad {
                field: "cyc",
                value: join(self.cycle.iter().map(u64::to_string), "."),
                expected: "a cycle after a choice path (c=), never after a delay path",
            });
        }
        Ok(())
    }
}

/// The keys of the text form (`c` is the other path).
const FIELDS: [&str; 14] = [
    "p",
    "bug",
    "e",
    "seed",
    "max-steps",
    "deadlock",
    "v",
    "at",
    "by",
    "msg",
    "d",
    "c",
    "cyc",
    "sum",
];

/// The keys that version 1 does not have.
const V2_FIELDS: [&str; 6] = ["v", "at", "by", "msg", "cyc", "sum"];

const KINDS: &str =
    "a violation kind (assertion, monitor, unhandled_event, deadlock, max_steps, panic, liveness, possible_liveness)";
const ENCODED: &str = "text with + for a space and %XX for other bytes";

impl FromStr for Schedule {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Schedule::parse(s)
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

/// Why a schedule (text form or JSON) could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// It does not start with a version tag (nor `{`).
    NotASchedule {
        /// The input, abbreviated.
        text: String,
    },
    /// A version this mcheck does not read.
    UnsupportedVersion {
        /// The tag (`mcheck9`) or `version N` of a JSON file.
        found: String,
    },
    /// A required field is absent.
    Missing {
        /// The field.
        field: &'static str,
    },
    /// A field that is not `key=value` (nor `deadlock`).
    NotKeyValue {
        /// The field, abbreviated.
        field: String,
    },
    /// A field this version does not have.
    Unknown {
        /// The field, abbreviated.
        field: String,
    },
    /// A field given twice.
    Duplicate {
        /// The field's key.
        field: &'static str,
    },
    /// A field's value is malformed.
    Bad {
        /// The field's key.
        field: &'static str,
        /// The value, abbreviated.
        value: String,
        /// What it should be.
        expected: &'static str,
    },
    /// A delay path without an explorer.
    ExplorerNeeded,
    /// The JSON is malformed or lacks fields.
    Json {
        /// serde_json's message.
        message: String,
    },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::NotASchedule { text } => write!(f, "not a schedule: {text}; {FORM}"),
            ParseError::UnsupportedVersion { found } => write!(
                f,
                "schedule {found} is not supported (this mcheck reads {TEXT_TAG_V1} and {TEXT_TAG}, JSON versions 1 and {VERSION})"
            ),
            ParseError::Missing { field } => write!(f, "schedule lacks its {field} field; {FORM}"),
            ParseError::NotKeyValue { field } => write!(f, "schedule field {field:?} is not key=value; {FORM}"),
            ParseError::Unknown { field } => write!(f, "schedule has an unknown field {field:?}; {FORM}"),
            ParseError::Duplicate { field } => write!(f, "schedule has its {field}= field twice"),
            ParseError::Bad { field, value, expected } => {
                write!(
                    f,
                    "schedule field {field}= has a bad value {value:?}: expected {expected}"
                )
            }
            ParseError::ExplorerNeeded => f.write_str("a delay path (d=) needs an explorer (e=NAME)"),
            ParseError::Json { message } => write!(f, "schedule file is not valid schedule JSON: {message}"),
        }
    }
}

impl std::error::Error for ParseError {}

fn join(items: impl Iterator<Item = String>, sep: &str) -> String {
    items.collect::<Vec<_>>().join(sep)
}

fn abbreviate(s: &str) -> String {
    if s.chars().count() > 60 {
        format!("{}...", s.chars().take(57).collect::<String>())
    } else {
        s.to_string()
    }
}

/// Bytes kept as they are by [`encode`].
fn plain(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-_.,/".contains(&b)
}

/// Shell- and field-safe text: `+` for a space, `%XX` for any byte that is
/// not [`plain`].
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b' ' => out.push('+'),
            b if plain(b) => out.push(b as char),
            b => out += &format!("%{b:02X}"),
        }
    }
    out
}

/// The inverse of [`encode`]; `None` for a malformed escape, a byte that
/// should have been escaped, or bytes that are not UTF-8.
fn decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .filter(|h| h.iter().all(u8::is_ascii_hexdigit))?;
                out.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
                i += 2;
            }
            b if plain(b) => out.push(b),
            _ => return None,
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Schedule {
        let mut s = Schedule::new(PathKind::Delays, Some("rtc"), 7, 10_000, vec![12, 3, 40]);
        s.model = "2pc".into();
        s.params.insert("participants".into(), 2);
        s.params.insert("clients".into(), 2);
        s.bug = Some(1);
        s
    }

    #[test]
    fn pinned_text_form() {
        let s = sample();
        let sum = s.content_checksum();
        assert_eq!(
            s.to_text(),
            format!("mcheck2:2pc:p=clients=2,participants=2:bug=1:e=rtc:seed=7:max-steps=10000:d=12.3.40:sum={sum}")
        );
        let mut c = Schedule::new(PathKind::Choices, None, 0, 500, vec![]);
        c.deadlock = true;
        c.expect(
            &Violation::new(ViolationKind::Deadlock, "ponger 1", "blocked: 100% (of 2)"),
            3,
        );
        assert_eq!(
            c.to_text(),
            format!(
                "mcheck2:-:p=-:bug=-:e=-:seed=0:max-steps=500:deadlock:v=deadlock:at=3:by=ponger+1:msg=blocked%3A+100%25+%28of+2%29:c=:sum={}",
                c.content_checksum()
            )
        );
        assert_eq!(Schedule::from_text(&c.to_text()).unwrap().expected, c.expected);
    }

    #[test]
    fn round_trip() {
        // Every field the text carries, with and without a model, sealed or not.
        let mut s = sample();
        s.expect(&Violation::invariant("x = 1 : y=2\n\u{e9}+%"), 9);
        for mut s in [
            s.clone(),
            Schedule {
                model: String::new(),
                ..s
            },
        ] {
            let mut again: Schedule = s.to_text().parse().unwrap();
            assert_eq!(again.is_edited(), Some(false));
            again.checksum.clear();
            assert_eq!(again, s);
            s.seal();
            assert_eq!(Schedule::from_text(&s.to_text()).unwrap(), s);
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(Schedule::parse(&json).unwrap(), s);
        }
    }

    #[test]
    fn version_1_still_parses() {
        let s =
            Schedule::from_text("mcheck1:2pc:p=clients=2,participants=2:bug=1:e=rtc:seed=7:max-steps=10000:d=12.3.40")
                .unwrap();
        assert_eq!(s, sample());
        assert_eq!(s.is_edited(), None);
        // Version 1 as the searches printed it for a plain program.
        let s = Schedule::from_text("mcheck1::p=-:bug=-:e=causal:seed=3:max-steps=300:d=2.6").unwrap();
        assert_eq!((s.model.as_str(), s.path.as_slice()), ("", &[2, 6][..]));
        let e = Schedule::from_text("mcheck1:2pc:p=-:bug=-:e=rtc:seed=1:max-steps=10:d=:sum=0123456789abcdef");
        assert!(matches!(e, Err(ParseError::Unknown { .. })), "{e:?}");
        // A JSON file of version 1 (no expected step, no checksum).
        let json = r#"{"version":1,"model":"m","params":{},"bug":null,"kind":"choices","explorer":null,
            "explorer_seed":0,"max_steps":5,"path":[1],"expected":{"kind":"monitor","machine":null,"message":"m"}}"#;
        let s = Schedule::parse(json).unwrap();
        assert_eq!((s.version, s.expected_step, s.is_edited()), (VERSION, None, None));
    }

    #[test]
    fn edits_show() {
        let mut s = sample();
        s.seal();
        let text = s.to_text().replace("d=12.3.40", "d=12.3.41");
        let edited = Schedule::from_text(&text).unwrap();
        assert_eq!(edited.is_edited(), Some(true));
        let mut s2 = s.clone();
        s2.expect(&Violation::invariant("boom"), 1);
        assert_eq!(s2.is_edited(), Some(true));
    }

    #[test]
    fn errors_name_the_field() {
        let e = Schedule::from_text("mcheck2:2pc:p=-:bug=x:e=rtc:seed=1:max-steps=10:d=").unwrap_err();
        assert_eq!(
            e,
            ParseError::Bad {
                field: "bug",
                value: "x".into(),
                expected: "a bug number or -"
            }
        );
        assert!(e.to_string().contains("bug= has a bad value \"x\""), "{e}");
        let e = Schedule::from_text("hello").unwrap_err();
        assert!(e.to_string().starts_with("not a schedule"), "{e}");
        let e = Schedule::from_text("mcheck2:2pc:p=-:bug=-:e=rtc:seed=1:d=1").unwrap_err();
        assert_eq!(e, ParseError::Missing { field: "max-steps=" });
        let e = Schedule::from_text("mcheck2:2pc:p=-:bug=-:e=-:seed=1:max-steps=3:d=1").unwrap_err();
        assert_eq!(e, ParseError::ExplorerNeeded);
        let e = Schedule::from_text("mcheck9:2pc").unwrap_err();
        assert!(e.to_string().contains("not supported"), "{e}");
        let e = Schedule::from_text("mcheck2:2pc:p=-:bug=-:e=-:seed=1:max-steps=3:c=1:c=2").unwrap_err();
        assert_eq!(e, ParseError::Duplicate { field: "d" });
        let e = Schedule::from_text("mcheck2:2pc:p=-:bug=-:e=-:seed=1:max-steps=3:msg=a:c=1").unwrap_err();
        assert!(matches!(e, ParseError::Missing { .. }), "{e:?}");
        let e = Schedule::from_text("mcheck2:2pc:p=-:bug=-:e=-:seed=1:max-steps=3:v=boom:msg=a:c=1").unwrap_err();
        assert!(e.to_string().contains("monitor"), "{e}");
        for msg in ["a%4", "a%+1", "a b", "a%ZZ", "%C3"] {
            let text = format!("mcheck2:2pc:p=-:bug=-:e=-:seed=1:max-steps=3:v=panic:msg={msg}:c=1");
            let e = Schedule::from_text(&text).unwrap_err();
            assert!(matches!(e, ParseError::Bad { field: "msg", .. }), "{msg}: {e:?}");
        }
        let e = "{\"version\": 3}".parse::<Schedule>().unwrap_err();
        assert!(e.to_string().contains("version 3"), "{e}");
        let mut json: serde_json::Value = serde_json::to_value(sample()).unwrap();
        json["version"] = 3.into();
        let e = Schedule::parse(&json.to_string()).unwrap_err();
        assert_eq!(
            e,
            ParseError::UnsupportedVersion {
                found: "version 3".into()
            }
        );
    }
}
