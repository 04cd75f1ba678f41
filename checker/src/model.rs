//! Models: a program with a name, parameters and seeded bugs, built from a
//! configuration. The CLI's registry holds models; a test builds one
//! directly (`TwoPc::default().build(&params, Some(1))`).

use crate::explorers::{AnyExplorer, ExplorerSpec};
use crate::program::Program;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// One integer parameter of a model (`--set name=value`), made with
/// [`ParamSpec::new`] (a `const fn`, for a model's table of parameters).
///
/// ```
/// use mcheck_checker::ParamSpec;
///
/// const CLIENTS: ParamSpec = ParamSpec::new("clients", 3, 1..=60, "number of clients").exhaustive_max(5);
/// assert_eq!((CLIENTS.default, CLIENTS.min, CLIENTS.max, CLIENTS.exhaustive_max), (3, 1, 60, 5));
/// ```
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct ParamSpec {
    /// The parameter's name.
    pub name: &'static str,
    /// Its default value.
    pub default: u64,
    /// The smallest valid value.
    pub min: u64,
    /// The largest valid value.
    pub max: u64,
    /// The largest value at which the exhaustive strategies (ses, dfs, pb)
    /// can be expected to finish in the model's default configuration
    /// otherwise; values from here to `max` are for the sampling
    /// strategies (long workloads). Equal to `max` when every valid value
    /// is fine; `mcheck run` warns (on stderr and in the report's notes)
    /// when an exhaustive strategy runs beyond it (see [`Params::beyond_exhaustive`]).
    pub exhaustive_max: u64,
    /// What it means.
    pub description: &'static str,
}

/// One seeded bug, made with [`BugSpec::new`] (a `const fn`, for a
/// [`SeededBug::TABLE`]).
///
/// ```
/// use mcheck_checker::BugSpec;
///
/// const BLIND_WRITE: BugSpec = BugSpec::new(1, "blind-write", "the client writes without a compare-and-swap");
/// assert_eq!((BLIND_WRITE.id, BLIND_WRITE.name), (1, "blind-write"));
/// ```
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct BugSpec {
    /// Its number (`--bug N`), from 1.
    pub id: u32,
    /// A short name (`"commit-after-timeout-abort"`).
    pub name: &'static str,
    /// One paragraph that explains the race: which messages, which
    /// interleaving, what the monitor sees.
    pub description: &'static str,
}

impl ParamSpec {
    /// The parameter `name`, `default` unless set, valid from
    /// `range.start()` to `range.end()`, with what it means; an exhaustive
    /// search can be expected to finish anywhere in its range (see
    /// [`ParamSpec::exhaustive_max`] to say otherwise).
    pub const fn new(
        name: &'static str,
        default: u64,
        range: std::ops::RangeInclusive<u64>,
        description: &'static str,
    ) -> ParamSpec {
        ParamSpec {
            name,
            default,
            min: *range.start(),
            max: *range.end(),
            exhaustive_max: *range.end(),
            description,
        }
    }

    /// This parameter with [`ParamSpec::exhaustive_max`] set to `value`:
    /// the exhaustive strategies can be expected to finish up to `value`,
    /// and the values above it are for sampling (long workloads).
    pub const fn exhaustive_max(mut self, value: u64) -> ParamSpec {
        self.exhaustive_max = value;
        self
    }
}

impl BugSpec {
    /// Seeded bug number `id` (from 1), with a short `name` and a
    /// `description` of the race.
    pub const fn new(id: u32, name: &'static str, description: &'static str) -> BugSpec {
        BugSpec { id, name, description }
    }
}

/// A model's seeded bugs as an enum, one variant per bug, with the one
/// table that gives each variant its `--bug` number, name and description.
///
/// Models gate their faulty code on variants (`cfg.bug == Some(Bug::NoResend)`),
/// list [`SeededBug::specs`] in [`ModelInfo::bugs`], and turn the number
/// [`Model::build`] receives into a variant with [`SeededBug::from_build`].
///
/// # Contract
///
/// Every variant appears exactly once in [`SeededBug::TABLE`], with ids
/// `1..=n` in order.
pub trait SeededBug: Copy + Eq + fmt::Debug + Send + Sync + 'static {
    /// Every bug with its spec (whose `id` is its `--bug` number), in id
    /// order.
    const TABLE: &'static [(Self, BugSpec)];

    /// The bug numbered `id`, if there is one.
    fn from_id(id: u32) -> Option<Self> {
        Self::TABLE.iter().find(|(_, s)| s.id == id).map(|(b, _)| *b)
    }

    /// Its spec (number, name, description).
    fn spec(self) -> &'static BugSpec {
        match Self::TABLE.iter().find(|(b, _)| *b == self) {
            Some((_, s)) => s,
            None => panic!("mcheck bug: seeded bug {self:?} is missing from its table"),
        }
    }

    /// Its `--bug` number.
    fn id(self) -> u32 {
        self.spec().id
    }

    /// The list [`ModelInfo::bugs`] shows.
    fn specs() -> Vec<BugSpec> {
        Self::TABLE.iter().map(|(_, s)| s.clone()).collect()
    }

    /// The bug number that [`Model::build`] received (already checked
    /// against [`SeededBug::specs`]) as a variant. Panics on a number that
    /// is not in the table: that is a bug in the caller.
    fn from_build(bug: Option<u32>) -> Option<Self> {
        bug.map(|id| match Self::from_id(id) {
            Some(b) => b,
            None => panic!(
                "mcheck bug: seeded bug {id} was not checked; valid bugs: 1 to {}",
                Self::TABLE.len()
            ),
        })
    }
}

/// What `mcheck list` shows about a model, built with [`ModelInfo::new`]
/// and its builder methods.
///
/// ```
/// use mcheck_checker::{BugSpec, ModelInfo, ParamSpec};
///
/// let info = ModelInfo::new("bank", "clients check a balance, then withdraw")
///     .param(ParamSpec::new("clients", 2, 1..=4, "number of clients"))
///     .bug(BugSpec::new(1, "check-then-act", "the account does not check again"));
/// assert_eq!((info.params.len(), info.bugs[0].id, info.notes), (1, 1, ""));
/// ```
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct ModelInfo {
    /// The name `mcheck run` takes.
    pub name: &'static str,
    /// One paragraph on the protocol and its monitors.
    pub description: &'static str,
    /// Its parameters.
    pub params: Vec<ParamSpec>,
    /// Its seeded bugs.
    pub bugs: Vec<BugSpec>,
    /// Explorers that only this model offers.
    pub explorers: Vec<ExplorerSpec>,
    /// The strategy and explorer to use by default for this model's bugs,
    /// when it differs from the CLI's default (documented per bug).
    pub notes: &'static str,
}

impl ModelInfo {
    /// The model `name` (what `mcheck run` takes), described in one
    /// paragraph, without parameters, bugs, explorers or notes yet.
    pub fn new(name: &'static str, description: &'static str) -> ModelInfo {
        ModelInfo {
            name,
            description,
            params: Vec::new(),
            bugs: Vec::new(),
            explorers: Vec::new(),
            notes: "",
        }
    }

    /// With the parameter `spec` added.
    pub fn param(mut self, spec: ParamSpec) -> ModelInfo {
        self.params.push(spec);
        self
    }

    /// With the parameters `specs` added (a model's table of them).
    pub fn params(mut self, specs: impl IntoIterator<Item = ParamSpec>) -> ModelInfo {
        self.params.extend(specs);
        self
    }

    /// With the seeded bug `spec` added.
    pub fn bug(mut self, spec: BugSpec) -> ModelInfo {
        self.bugs.push(spec);
        self
    }

    /// With the seeded bugs `specs` added ([`SeededBug::specs`]).
    pub fn bugs(mut self, specs: impl IntoIterator<Item = BugSpec>) -> ModelInfo {
        self.bugs.extend(specs);
        self
    }

    /// With the model's own explorer `spec` added (built by
    /// [`Model::explorer`]).
    pub fn explorer(mut self, spec: ExplorerSpec) -> ModelInfo {
        self.explorers.push(spec);
        self
    }

    /// With [`ModelInfo::notes`] set to `notes`.
    pub fn notes(mut self, notes: &'static str) -> ModelInfo {
        self.notes = notes;
        self
    }
}

/// Resolved parameter values: every parameter of the model, in name order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Params(pub BTreeMap<String, u64>);

impl Params {
    /// The value of `name`. Panics if the model has no such parameter: that
    /// is a bug in the model, since `resolve` filled in every one.
    pub fn get(&self, name: &str) -> u64 {
        match self.0.get(name) {
            Some(v) => *v,
            None => panic!("mcheck bug: parameter {name:?} was not resolved"),
        }
    }

    /// `get` as a `usize`.
    pub fn usize(&self, name: &str) -> usize {
        self.get(name) as usize
    }

    /// Set `name` to `value`. Panics if the model has no such parameter
    /// (a bug in the model, as for [`Params::get`]).
    pub fn set(&mut self, name: &str, value: u64) {
        match self.0.get_mut(name) {
            Some(v) => *v = value,
            None => panic!("mcheck bug: parameter {name:?} was not resolved"),
        }
    }

    /// These values as overrides (`name`, `value` as text), as `--set`
    /// gives them to [`Params::resolve`].
    pub fn as_overrides(&self) -> Vec<(String, String)> {
        self.0.iter().map(|(k, v)| (k.clone(), v.to_string())).collect()
    }

    /// The defaults of `specs`: the one place a model's default parameters
    /// come from (a model's own `Default` configuration is built from them).
    pub fn defaults(specs: &[ParamSpec]) -> Params {
        Params(specs.iter().map(|p| (p.name.to_string(), p.default)).collect())
    }

    /// The parameters of `specs` whose value here is above their
    /// [`ParamSpec::exhaustive_max`], in `specs` order: the warnings an
    /// exhaustive run of `model` with these parameters gets.
    pub fn beyond_exhaustive(&self, model: &str, specs: &[ParamSpec]) -> Vec<BeyondExhaustive> {
        specs
            .iter()
            .filter_map(|p| {
                let value = self.0.get(p.name).copied()?;
                (value > p.exhaustive_max).then(|| BeyondExhaustive {
                    model: model.to_string(),
                    name: p.name,
                    value,
                    exhaustive_max: p.exhaustive_max,
                })
            })
            .collect()
    }

    /// Defaults of `specs` overridden by `overrides` (`name=value` pairs).
    /// Errors name the bad parameter or value and the valid ones.
    ///
    /// ```
    /// use mcheck_checker::{ParamSpec, Params};
    ///
    /// let specs = [ParamSpec::new("clients", 3, 1..=6, "number of clients")];
    /// let set = |v: &str| Params::resolve("lostupdate", &specs, &[("clients".into(), v.into())]);
    /// assert_eq!(set("2").unwrap().to_string(), "clients=2");
    /// let err = set("7").unwrap_err().to_string();
    /// assert_eq!(err, "parameter clients of model lostupdate takes a whole number from 1 to 6, not 7");
    /// ```
    pub fn resolve(model: &str, specs: &[ParamSpec], overrides: &[(String, String)]) -> Result<Params, ParamError> {
        let Params(mut map) = Params::defaults(specs);
        for (k, v) in overrides {
            let Some(spec) = specs.iter().find(|p| p.name == k) else {
                return Err(ParamError::UnknownParam {
                    model: model.to_string(),
                    name: k.clone(),
                    valid: specs.iter().map(|p| p.name).collect(),
                });
            };
            let out_of = |value: String| ParamError::BadValue {
                model: model.to_string(),
                name: k.clone(),
                value,
                min: spec.min,
                max: spec.max,
            };
            let value: u64 = v.trim().parse().map_err(|_| out_of(format!("{v:?}")))?;
            if value < spec.min || value > spec.max {
                return Err(out_of(value.to_string()));
            }
            map.insert(k.clone(), value);
        }
        Ok(Params(map))
    }
}

/// A parameter set beyond its [`ParamSpec::exhaustive_max`] for a run of
/// an exhaustive strategy: the search is valid but will not finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BeyondExhaustive {
    /// The model's name.
    pub model: String,
    /// The parameter.
    pub name: &'static str,
    /// Its value.
    pub value: u64,
    /// The largest value at which exhaustive search can be expected to finish.
    pub exhaustive_max: u64,
}

impl fmt::Display for BeyondExhaustive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let BeyondExhaustive {
            model,
            name,
            value,
            exhaustive_max,
        } = self;
        write!(
            f,
            "{name}={value} is beyond {exhaustive_max}, the largest {name} of model {model} at which an exhaustive search (ses, dfs, pb) can be expected to finish: it may still find a violation, but it will most likely stop at a budget before covering the state space; use a sampling strategy (ss, rs, irs, pct) for long workloads, or {name} <= {exhaustive_max}"
        )
    }
}

/// Parameters or a bug number that do not fit a model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamError {
    /// The model has no parameter `name`.
    UnknownParam {
        /// The model's name.
        model: String,
        /// The parameter asked for.
        name: String,
        /// The model's parameters.
        valid: Vec<&'static str>,
    },
    /// `value` (as given) is not a whole number from `min` to `max`.
    BadValue {
        /// The model's name.
        model: String,
        /// The parameter.
        name: String,
        /// The value as given.
        value: String,
        /// The smallest valid value.
        min: u64,
        /// The largest valid value.
        max: u64,
    },
    /// The model has no seeded bug `bug`.
    UnknownBug {
        /// The model's name.
        model: String,
        /// The bug asked for.
        bug: u32,
        /// The model's bugs, as `id (name)`.
        valid: Vec<String>,
    },
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamError::UnknownParam { model, name, valid } if valid.is_empty() => {
                write!(f, "model {model} has no parameter {name:?}; it takes no parameters")
            }
            ParamError::UnknownParam { model, name, valid } => write!(
                f,
                "model {model} has no parameter {name:?}; valid parameters: {}",
                valid.join(", ")
            ),
            ParamError::BadValue {
                model,
                name,
                value,
                min,
                max,
            } => write!(
                f,
                "parameter {name} of model {model} takes a whole number from {min} to {max}, not {value}"
            ),
            ParamError::UnknownBug { model, bug, valid } if valid.is_empty() => {
                write!(f, "model {model} has no bug {bug}; it has no seeded bugs")
            }
            ParamError::UnknownBug { model, bug, valid } => {
                write!(f, "model {model} has no bug {bug}; valid bugs: {}", valid.join(", "))
            }
        }
    }
}

impl std::error::Error for ParamError {}

impl fmt::Display for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (k, v) in &self.0 {
            if !first {
                f.write_str(",")?;
            }
            first = false;
            write!(f, "{k}={v}")?;
        }
        Ok(())
    }
}

/// A model: a family of programs indexed by parameters and a bug number.
///
/// `build` must be deterministic: the same parameters and bug give a program
/// with the same behaviour, so that a schedule saved today replays tomorrow.
pub trait Model: Send + Sync + 'static {
    /// The program type this model builds.
    type Program: Program + Send + Sync + 'static;

    /// Name, description, parameters, bugs, custom explorers.
    fn info(&self) -> ModelInfo;

    /// Build the program for `params` (already validated against
    /// `info().params`) with seeded bug `bug` switched on (`None`: the
    /// correct version). `bug` has been checked against `info().bugs`.
    /// The program runs with [`Model::effective_params`]`(params, bug)`.
    fn build(&self, params: &Params, bug: Option<u32>) -> Self::Program;

    /// The parameters a program built from `params` (validated) with `bug`
    /// (validated) actually runs with: a model whose bug needs a larger
    /// configuration, or that clamps one parameter to another, says so
    /// here, so that what a run reports (its header, its JSON, its saved
    /// schedule) is what it ran. Default: `params` unchanged.
    ///
    /// # Contract
    ///
    /// * `build(&effective_params(p, b), b)` is the same program as
    ///   `build(p, b)` (a model applies this mapping inside `build` too, so
    ///   a schedule saved with either replays);
    /// * it is idempotent: mapping the mapped parameters changes nothing;
    /// * every value stays within its [`ParamSpec`]'s range.
    ///
    /// Whoever resolves parameters for a run (the CLI, a library entry
    /// point) calls it after [`Params::resolve`] and uses the result
    /// everywhere.
    fn effective_params(&self, params: &Params, _bug: Option<u32>) -> Params {
        params.clone()
    }

    /// Build the model-specific explorer named `name` (one of
    /// `info().explorers`), or `None`: its runtime form, made with
    /// [`AnyExplorer::custom`].
    fn explorer(&self, _name: &str) -> Option<AnyExplorer> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &'static str, default: u64, exhaustive_max: u64) -> ParamSpec {
        ParamSpec::new(name, default, 1..=60, "").exhaustive_max(exhaustive_max)
    }

    #[test]
    fn beyond_exhaustive_names_each_parameter_above_its_cap() {
        let specs = [spec("clients", 3, 60), spec("increments", 3, 5), spec("rounds", 1, 2)];
        let set = |kv: &[(&str, &str)]| {
            let kv: Vec<(String, String)> = kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            Params::resolve("m", &specs, &kv).unwrap()
        };
        assert_eq!(set(&[]).beyond_exhaustive("m", &specs), []);
        assert_eq!(
            set(&[("increments", "5"), ("rounds", "2")]).beyond_exhaustive("m", &specs),
            []
        );
        let beyond = set(&[("increments", "6"), ("clients", "60"), ("rounds", "3")]).beyond_exhaustive("m", &specs);
        let named: Vec<(&str, u64, u64)> = beyond.iter().map(|b| (b.name, b.value, b.exhaustive_max)).collect();
        assert_eq!(named, [("increments", 6, 5), ("rounds", 3, 2)]);
        let text = beyond[0].to_string();
        assert!(
            text.starts_with("increments=6 is beyond 5, the largest increments of model m "),
            "{text}"
        );
        assert!(
            text.contains("(ses, dfs, pb)") && text.ends_with("or increments <= 5"),
            "{text}"
        );
    }
}
