//! Counterexamples: one [`Schedule`] value for every strategy, with a
//! self-contained, versioned text form.
//!
//! Text form (version 1), fields separated by `:`; it needs no quoting in
//! a shell:
//!
//! ```text
//! mcheck1:2pc:p=clients=2,participants=2:bug=1:e=rtc:seed=7:max-steps=10000:d=12.3.40
//! mcheck1:twophase:p=rms=3:bug=-:e=-:seed=0:max-steps=10000:c=0.2.1.1
//! ```
//!
//! * `p=` the model's parameters (all of them, `name=value`, comma
//!   separated; `p=-` when it has none), `bug=` the seeded bug or `-`;
//! * `e=` the explorer (`-` for choice paths), `seed=` the explorer's seed;
//! * `max-steps=` the execution limit; an optional `deadlock` flag;
//! * last, the path: `d=` a delay path `p0.p1...` (take p0 steps as the
//!   explorer says, delay, take p1 steps, delay, ..., then run as the
//!   explorer says), or `c=` a choice path (the index of the choice taken
//!   at each step, counting the alternatives of the enabled actors in id
//!   order). An empty path is `d=` or `c=`.

use crate::program::Violation;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The text form's version tag.
pub const TEXT_TAG: &str = "mcheck1";

/// What the path of a schedule counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathKind {
    /// A delay path for an explorer (SES, SS).
    Delays,
    /// A choice index per step (DFS, PB, RS, IRS, PCT).
    Choices,
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

/// A counterexample, replayable by `mcheck replay`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schedule {
    /// Format version (1).
    pub version: u32,
    /// The model's registry name.
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
    /// The violation it reproduces (file form only).
    #[serde(default)]
    pub expected: Option<Violation>,
    /// The choice points met, step by step (file form only).
    #[serde(default)]
    pub trail: Vec<TrailStep>,
    /// A digest of the model's name, parameters, bug and initial state
    /// (file form only; empty when unknown).
    #[serde(default)]
    pub digest: String,
}

impl Schedule {
    /// A schedule with no model information yet (the search fills the
    /// path; the caller names the model).
    pub fn new(kind: PathKind, explorer: Option<&str>, explorer_seed: u64, max_steps: usize, path: Vec<u64>) -> Self {
        Schedule {
            version: 1,
            model: String::new(),
            params: BTreeMap::new(),
            bug: None,
            kind,
            explorer: explorer.map(str::to_string),
            explorer_seed,
            max_steps,
            deadlock: false,
            path,
            expected: None,
            trail: Vec::new(),
            digest: String::new(),
        }
    }

    /// The number of delays of a delay path (0 for a choice path).
    pub fn delays(&self) -> usize {
        match self.kind {
            PathKind::Delays => self.path.len(),
            PathKind::Choices => 0,
        }
    }

    /// The text form.
    pub fn to_text(&self) -> String {
        let params = if self.params.is_empty() {
            "-".to_string()
        } else {
            self.params
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        let bug = self.bug.map_or("-".to_string(), |b| b.to_string());
        let explorer = self.explorer.as_deref().unwrap_or("-");
        let path = self.path.iter().map(u64::to_string).collect::<Vec<_>>().join(".");
        let tag = match self.kind {
            PathKind::Delays => "d",
            PathKind::Choices => "c",
        };
        let deadlock = if self.deadlock { ":deadlock" } else { "" };
        format!(
            "{TEXT_TAG}:{}:p={params}:bug={bug}:e={explorer}:seed={}:max-steps={}{deadlock}:{tag}={path}",
            self.model, self.explorer_seed, self.max_steps
        )
    }

    /// Parse the text form. Errors say which field is wrong and what the
    /// form is.
    pub fn from_text(text: &str) -> Result<Schedule, String> {
        let text = text.trim();
        let form = "expected mcheck1:MODEL:p=NAME=V,...:bug=N|-:e=EXPLORER|-:seed=S:max-steps=L:d=P.P...|c=C.C...";
        let mut fields = text.split(':');
        let tag = fields.next().unwrap_or("");
        if tag != TEXT_TAG {
            return Err(if tag.starts_with("mcheck") {
                format!("schedule version {tag:?} is not supported (this mcheck reads {TEXT_TAG})")
            } else {
                format!("not a schedule: {}; {form}", abbreviate(text))
            });
        }
        let model = fields
            .next()
            .filter(|m| !m.is_empty())
            .ok_or_else(|| format!("schedule has no model; {form}"))?;
        let mut s = Schedule::new(PathKind::Delays, None, 0, 0, Vec::new());
        s.model = model.to_string();
        let (mut seen_p, mut seen_bug, mut seen_e, mut seen_seed, mut seen_max, mut seen_path) =
            (false, false, false, false, false, false);
        for field in fields {
            if field == "deadlock" {
                s.deadlock = true;
                continue;
            }
            let (key, value) = field
                .split_once('=')
                .ok_or_else(|| format!("schedule field {field:?} is not key=value; {form}"))?;
            match key {
                "p" => {
                    seen_p = true;
                    if value != "-" {
                        for pair in value.split(',') {
                            let (k, v) = pair
                                .split_once('=')
                                .ok_or_else(|| format!("schedule parameter {pair:?} is not name=value"))?;
                            let v: u64 = v
                                .parse()
                                .map_err(|_| format!("schedule parameter {k} has a bad value {v:?}"))?;
                            s.params.insert(k.to_string(), v);
                        }
                    }
                }
                "bug" => {
                    seen_bug = true;
                    if value != "-" {
                        s.bug = Some(
                            value
                                .parse()
                                .map_err(|_| format!("schedule bug {value:?} is not a number or -"))?,
                        );
                    }
                }
                "e" => {
                    seen_e = true;
                    if value != "-" {
                        s.explorer = Some(value.to_string());
                    }
                }
                "seed" => {
                    seen_seed = true;
                    s.explorer_seed = value
                        .parse()
                        .map_err(|_| format!("schedule seed {value:?} is not a number"))?;
                }
                "max-steps" => {
                    seen_max = true;
                    s.max_steps = value
                        .parse()
                        .ok()
                        .filter(|&m| m > 0)
                        .ok_or_else(|| format!("schedule max-steps {value:?} is not a positive number"))?;
                }
                "d" | "c" => {
                    if seen_path {
                        return Err("schedule has two paths".to_string());
                    }
                    seen_path = true;
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
                            .map_err(|_| {
                                format!("schedule path {:?} is not numbers separated by dots", abbreviate(value))
                            })?;
                    }
                }
                other => return Err(format!("schedule has an unknown field {other:?}; {form}")),
            }
        }
        for (seen, name) in [
            (seen_p, "p="),
            (seen_bug, "bug="),
            (seen_e, "e="),
            (seen_seed, "seed="),
            (seen_max, "max-steps="),
            (seen_path, "d= or c="),
        ] {
            if !seen {
                return Err(format!("schedule lacks its {name} field; {form}"));
            }
        }
        if s.kind == PathKind::Delays && s.explorer.is_none() {
            return Err("a delay path (d=) needs an explorer (e=NAME)".to_string());
        }
        Ok(s)
    }

    /// Parse either a text form or a JSON file's contents.
    pub fn parse(input: &str) -> Result<Schedule, String> {
        let t = input.trim_start();
        if t.starts_with('{') {
            serde_json::from_str(t).map_err(|e| format!("schedule file is not valid schedule JSON: {e}"))
        } else {
            Schedule::from_text(t)
        }
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

fn abbreviate(s: &str) -> String {
    if s.chars().count() > 60 {
        format!("{}...", s.chars().take(57).collect::<String>())
    } else {
        s.to_string()
    }
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
        assert_eq!(
            sample().to_text(),
            "mcheck1:2pc:p=clients=2,participants=2:bug=1:e=rtc:seed=7:max-steps=10000:d=12.3.40"
        );
        let mut c = Schedule::new(PathKind::Choices, None, 0, 500, vec![]);
        c.model = "twophase".into();
        c.deadlock = true;
        assert_eq!(
            c.to_text(),
            "mcheck1:twophase:p=-:bug=-:e=-:seed=0:max-steps=500:deadlock:c="
        );
        assert_eq!(Schedule::from_text(&c.to_text()).unwrap(), c);
    }

    #[test]
    fn round_trip() {
        let s = sample();
        assert_eq!(Schedule::from_text(&s.to_text()).unwrap(), s);
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(Schedule::parse(&json).unwrap(), s);
    }

    #[test]
    fn errors_name_the_field() {
        let e = Schedule::from_text("mcheck1:2pc:p=-:bug=x:e=rtc:seed=1:max-steps=10:d=").unwrap_err();
        assert!(e.contains("bug \"x\""), "{e}");
        let e = Schedule::from_text("hello").unwrap_err();
        assert!(e.starts_with("not a schedule"), "{e}");
        let e = Schedule::from_text("mcheck1:2pc:p=-:bug=-:e=rtc:seed=1:d=1").unwrap_err();
        assert!(e.contains("max-steps="), "{e}");
        let e = Schedule::from_text("mcheck1:2pc:p=-:bug=-:e=-:seed=1:max-steps=3:d=1").unwrap_err();
        assert!(e.contains("needs an explorer"), "{e}");
        let e = Schedule::from_text("mcheck9:2pc").unwrap_err();
        assert!(e.contains("not supported"), "{e}");
    }
}
