//! # mcheck-registry: the models a CLI knows, behind one object-safe trait
//!
//! Each model is generic over its own program type; the registry holds
//! them behind [`DynModel`] and picks explorers by name (built-in or
//! model-specific). The work itself (complete schedules, checked replays)
//! is the checker's [`mcheck_checker::check`].
//!
//! This is the one crate where the searches are instantiated for every
//! shipped model ([`Registry::builtin`]), each once per program type on
//! [`AnyExplorer`], the one runtime form of an explorer; it is a crate of
//! its own so that this code is compiled once, not once for the `mcheck`
//! library and again for its unit tests.
#![deny(missing_docs)]
#![deny(missing_debug_implementations)]
#![forbid(unsafe_code)]

use mcheck_checker::check::{
    Checked, Counterexample, check_coverage_instance, check_instance, complete_report, counterexample_model,
    replay_model, shrink_model,
};
use mcheck_checker::explorers::{AnyExplorer, BUILTIN, builtin};
use mcheck_checker::races::explain;
use mcheck_checker::search::Strategy;
use mcheck_checker::{
    Config, Execution, ExplainError, Explanation, Instance, Model, ModelInfo, ParamError, ParseError, Program,
    ReplayError, Report, Schedule, SearchError, ShrinkError, Shrunk,
};
use mcheck_distributed::Layout;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt;
use std::sync::Arc;

/// A model behind an object-safe interface (implemented for every
/// [`Model`]).
pub trait DynModel: Send + Sync {
    /// Name, params, bugs, explorers.
    fn info(&self) -> ModelInfo;
    /// `overrides` (as `--set` gives them) and `bug` resolved once for
    /// this model ([`Instance::from_overrides`]): what every other call
    /// of a run takes.
    fn resolve(&self, overrides: &[(String, String)], bug: Option<u32>) -> Result<Instance, Error>;
    /// Run `strategy` on the model's program for `instance`, with the
    /// explorer named `explorer` (validated even when the strategy uses
    /// none); see [`check_instance`]. The counterexample is replayed once,
    /// its races explained when `explain`.
    fn check(
        &self,
        instance: &Instance,
        strategy: &Strategy,
        explorer: &str,
        config: &Config,
        explain: bool,
    ) -> Result<Checked, Error>;
    /// [`DynModel::check`] with the coverage section and the reachability
    /// properties ([`check_coverage_instance`]).
    fn check_coverage(
        &self,
        instance: &Instance,
        strategy: &Strategy,
        explorer: &str,
        config: &Config,
        explain: bool,
    ) -> Result<Checked, Error>;
    /// Replay `schedule` on the model built from its parameters and bug,
    /// with the explorer it names, and check it; see [`replay_model`].
    fn replay(&self, schedule: &Schedule, traced: bool) -> Result<Execution, Error>;
    /// Replay `schedule` once and explain its races from that execution;
    /// see [`counterexample_model`].
    fn counterexample(&self, schedule: &Schedule) -> Result<Counterexample, Error>;
    /// Shrink `schedule` with at most `max_attempts` replays; see
    /// [`shrink_model`].
    fn shrink(&self, schedule: &Schedule, max_attempts: u64) -> Result<Shrunk, Error>;
    /// Explain `execution`, a traced replay of `schedule`, without
    /// replaying it again: states, happens-before order, races; see
    /// [`explain`].
    fn explain(&self, schedule: &Schedule, execution: &Execution) -> Result<Explanation, Error>;
    /// The groups of interchangeable actors the model declares at its
    /// default parameters ([`mcheck_checker::Symmetry::groups`]).
    fn symmetry_groups(&self) -> Vec<String>;
    /// SES on timely dataflow (`mcheck_distributed::ses`) on this
    /// process's part of `layout`: the report on process 0, `None` on the
    /// others.
    fn check_distributed(
        &self,
        instance: &Instance,
        explorer: &str,
        config: &Config,
        layout: &Layout,
    ) -> Result<Option<Report>, Error>;
}

/// The explorer named `name` for model `m`: a built-in one or one of the
/// model's own.
pub fn explorer_for<M: Model>(m: &M, name: &str) -> Result<AnyExplorer, Error> {
    if let Some(e) = builtin(name).or_else(|| m.explorer(name)) {
        return Ok(e);
    }
    let info = m.info();
    let mut valid: Vec<String> = BUILTIN.iter().map(|e| e.name.to_string()).collect();
    valid.extend(info.explorers.iter().map(|e| e.name.to_string()));
    Err(Error::UnknownExplorer {
        name: name.to_string(),
        model: info.name.to_string(),
        valid,
    })
}

/// The explorer a schedule names, if any.
fn schedule_explorer<M: Model>(m: &M, schedule: &Schedule) -> Result<Option<AnyExplorer>, Error> {
    schedule
        .explorer
        .as_deref()
        .map(|name| explorer_for(m, name))
        .transpose()
}

impl<M: Model> DynModel for M
where
    <M::Program as Program>::State: Serialize + DeserializeOwned,
{
    fn info(&self) -> ModelInfo {
        Model::info(self)
    }

    fn resolve(&self, overrides: &[(String, String)], bug: Option<u32>) -> Result<Instance, Error> {
        Ok(Instance::from_overrides(self, overrides, bug)?)
    }

    fn check(
        &self,
        instance: &Instance,
        strategy: &Strategy,
        explorer: &str,
        config: &Config,
        explain: bool,
    ) -> Result<Checked, Error> {
        let any = explorer_for(self, explorer)?;
        Ok(check_instance(self, instance, strategy, any, config, explain)?)
    }

    fn check_coverage(
        &self,
        instance: &Instance,
        strategy: &Strategy,
        explorer: &str,
        config: &Config,
        explain: bool,
    ) -> Result<Checked, Error> {
        // On `AnyExplorer` alone (ARCHITECTURE.md, "The registry"): the
        // coverage search wraps the program twice (counted, and one search
        // per reachability property), and an instance of each per built-in
        // explorer cost a quarter or more of this crate's compile time, for a
        // search 1.09x faster.
        let e = explorer_for(self, explorer)?;
        Ok(check_coverage_instance(self, instance, strategy, e, config, explain)?)
    }

    fn replay(&self, schedule: &Schedule, traced: bool) -> Result<Execution, Error> {
        Ok(replay_model(
            self,
            schedule_explorer(self, schedule)?,
            schedule,
            traced,
        )?)
    }

    fn counterexample(&self, schedule: &Schedule) -> Result<Counterexample, Error> {
        Ok(counterexample_model(
            self,
            schedule_explorer(self, schedule)?,
            schedule,
        )?)
    }

    fn shrink(&self, schedule: &Schedule, max_attempts: u64) -> Result<Shrunk, Error> {
        Ok(shrink_model(
            self,
            schedule_explorer(self, schedule)?,
            schedule,
            max_attempts,
        )?)
    }

    fn explain(&self, schedule: &Schedule, execution: &Execution) -> Result<Explanation, Error> {
        let program = Instance::of_schedule(self, schedule)?.build(self);
        Ok(explain(&program, execution, schedule.deadlock, schedule.max_steps)?)
    }

    fn check_distributed(
        &self,
        instance: &Instance,
        explorer: &str,
        config: &Config,
        layout: &Layout,
    ) -> Result<Option<Report>, Error> {
        // On `AnyExplorer` alone, as the coverage search: no slower here
        // (TwoPhase rms=7 on one worker, 1.50 s against 1.53 s).
        let explorer = explorer_for(self, explorer)?;
        let program = Arc::new(instance.build(self));
        let report = mcheck_distributed::ses(Arc::clone(&program), explorer.clone(), config, layout)?;
        let info = Model::info(self);
        let complete = |r| complete_report(&info, instance, &*program, explorer, config, r, false);
        Ok(report.map(complete).transpose()?.map(|c| c.report))
    }

    fn symmetry_groups(&self) -> Vec<String> {
        mcheck_checker::ProgramExt::symmetry_groups(&Instance::defaults(self).build(self))
    }
}

/// What can go wrong behind the registry: a name it does not know, or the
/// checker's own errors.
#[derive(Clone, Debug)]
pub enum Error {
    /// No model of that name.
    UnknownModel {
        /// The name asked for.
        name: String,
        /// The registered models.
        valid: Vec<String>,
    },
    /// Neither a built-in explorer nor one of the model's.
    UnknownExplorer {
        /// The name asked for.
        name: String,
        /// The model.
        model: String,
        /// The explorers it can use.
        valid: Vec<String>,
    },
    /// The search failed.
    Search(SearchError),
    /// A schedule does not parse.
    Schedule(ParseError),
    /// A schedule does not replay as it records.
    Replay(ReplayError),
    /// A schedule cannot be shrunk.
    Shrink(ShrinkError),
    /// A counterexample cannot be explained.
    Explain(ExplainError),
    /// Parameters or a bug the model does not have.
    Params(ParamError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnknownModel { name, valid } => {
                write!(f, "unknown model {name:?}; valid models: {}", valid.join(", "))
            }
            Error::UnknownExplorer { name, model, valid } => write!(
                f,
                "unknown explorer {name:?} for model {model}; valid explorers: {}",
                valid.join(", ")
            ),
            Error::Search(e) => fmt::Display::fmt(e, f),
            Error::Schedule(e) => fmt::Display::fmt(e, f),
            Error::Replay(e) => fmt::Display::fmt(e, f),
            Error::Shrink(e) => fmt::Display::fmt(e, f),
            Error::Explain(e) => fmt::Display::fmt(e, f),
            Error::Params(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for Error {}

/// `From` for each wrapped error.
macro_rules! wraps {
    ($($variant:ident($error:ty)),*) => {$(
        impl From<$error> for Error {
            fn from(e: $error) -> Self {
                Error::$variant(e)
            }
        }
    )*};
}

wraps!(
    Search(SearchError),
    Schedule(ParseError),
    Replay(ReplayError),
    Shrink(ShrinkError),
    Explain(ExplainError),
    Params(ParamError)
);

/// The CLI's edge: errors become the one-line message it prints.
impl From<Error> for String {
    fn from(e: Error) -> String {
        e.to_string()
    }
}

/// The models (and through them, explorers) that a CLI knows.
///
/// ```
/// use mcheck_registry::Registry;
/// use mcheck_checker::{Config, Strategy};
///
/// let registry = Registry::builtin();
/// let model = registry.model("lostupdate").unwrap();
/// let overrides = [("clients".to_string(), "2".to_string()), ("increments".to_string(), "1".to_string())];
/// let instance = model.resolve(&overrides, Some(1)).unwrap();
/// let checked = model.check(&instance, &Strategy::Ses, "rtc", &Config::default(), false).unwrap();
/// assert!(checked.report.is_violation());
/// let unknown = registry.model("lost-update").err().unwrap();
/// assert!(unknown.to_string().contains("lostupdate"), "{unknown}");
/// ```
pub struct Registry {
    models: Vec<Box<dyn DynModel>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.models().map(|m| m.info().name)).finish()
    }
}

impl Default for Registry {
    fn default() -> Self {
        Self::builtin()
    }
}

impl Registry {
    /// No models at all.
    pub fn empty() -> Self {
        Registry { models: Vec::new() }
    }

    /// The models that ship with mcheck.
    pub fn builtin() -> Self {
        Registry::empty()
            .with(mcheck_models::twophase::TwoPhase)
            .with(mcheck_models::twophase_packed::TwoPhasePacked)
            .with(mcheck_models::paxos::Paxos)
            .with(mcheck_models::multipaxos::MultiPaxos)
            .with(mcheck_models::twopc::TwoPc)
            .with(mcheck_models::chain::Chain)
            .with(mcheck_models::lostupdate::LostUpdate)
            .with(mcheck_models::raft::Raft)
    }

    /// Add a model (a user's own, say). Its states derive `Serialize` and
    /// `Deserialize`: the distributed SES sends them between processes.
    pub fn with<M: Model>(mut self, model: M) -> Self
    where
        <M::Program as Program>::State: Serialize + DeserializeOwned,
    {
        self.models.push(Box::new(model));
        self
    }

    /// The models, in registration order.
    pub fn models(&self) -> impl Iterator<Item = &dyn DynModel> {
        self.models.iter().map(|m| m.as_ref())
    }

    /// The model named `name`; the error lists the valid names.
    pub fn model(&self, name: &str) -> Result<&dyn DynModel, Error> {
        self.models()
            .find(|m| m.info().name == name)
            .ok_or_else(|| Error::UnknownModel {
                name: name.to_string(),
                valid: self.models().map(|m| m.info().name.to_string()).collect(),
            })
    }
}
