//! Models: a program with a name, parameters and seeded bugs, built from a
//! configuration. The CLI's registry holds models; a test builds one
//! directly (`TwoPc::default().build(&params, Some(1))`).

use crate::explorer::BoxedExplorer;
use crate::program::Program;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// One integer parameter of a model (`--set name=value`).
#[derive(Clone, Debug, Serialize)]
pub struct ParamSpec {
    /// The parameter's name.
    pub name: &'static str,
    /// Its default value.
    pub default: u64,
    /// The smallest valid value.
    pub min: u64,
    /// The largest valid value.
    pub max: u64,
    /// What it means.
    pub description: &'static str,
}

/// One seeded bug.
#[derive(Clone, Debug, Serialize)]
pub struct BugSpec {
    /// Its number (`--bug N`), from 1.
    pub id: u32,
    /// A short name (`"commit-after-timeout-abort"`).
    pub name: &'static str,
    /// One paragraph that explains the race: which messages, which
    /// interleaving, what the monitor sees.
    pub description: &'static str,
}

/// A model-specific explorer (for example chain replication's custom one).
#[derive(Clone, Debug, Serialize)]
pub struct ExplorerSpec {
    /// The name `--explorer` takes.
    pub name: &'static str,
    /// What it does.
    pub description: &'static str,
}

/// What `mcheck list` shows about a model.
#[derive(Clone, Debug, Serialize)]
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

    /// Defaults of `specs` overridden by `overrides` (`name=value` pairs).
    /// Errors name the bad parameter or value and the valid ones.
    pub fn resolve(model: &str, specs: &[ParamSpec], overrides: &[(String, String)]) -> Result<Params, String> {
        let mut map: BTreeMap<String, u64> = specs.iter().map(|p| (p.name.to_string(), p.default)).collect();
        for (k, v) in overrides {
            let Some(spec) = specs.iter().find(|p| p.name == k) else {
                let valid: Vec<&str> = specs.iter().map(|p| p.name).collect();
                return Err(if valid.is_empty() {
                    format!("model {model} has no parameter {k:?}; it takes no parameters")
                } else {
                    format!(
                        "model {model} has no parameter {k:?}; valid parameters: {}",
                        valid.join(", ")
                    )
                });
            };
            let value: u64 = v.trim().parse().map_err(|_| {
                format!(
                    "parameter {k} of model {model} takes a whole number from {} to {}, not {v:?}",
                    spec.min, spec.max
                )
            })?;
            if value < spec.min || value > spec.max {
                return Err(format!(
                    "parameter {k} of model {model} must be from {} to {}, not {value}",
                    spec.min, spec.max
                ));
            }
            map.insert(k.clone(), value);
        }
        Ok(Params(map))
    }

    /// The parameters that differ from their defaults, as `name=value` pairs.
    pub fn non_default(&self, specs: &[ParamSpec]) -> Vec<(String, u64)> {
        specs
            .iter()
            .filter_map(|s| {
                let v = self.get(s.name);
                (v != s.default).then(|| (s.name.to_string(), v))
            })
            .collect()
    }
}

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
    fn build(&self, params: &Params, bug: Option<u32>) -> Self::Program;

    /// Build the model-specific explorer named `name` (one of
    /// `info().explorers`), or `None`.
    fn explorer(&self, _name: &str) -> Option<BoxedExplorer> {
        None
    }
}
