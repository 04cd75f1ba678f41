//! The registry of models the CLI knows, with type erasure: each model is
//! generic over its own program type; the registry holds them behind one
//! object-safe trait, and picks explorers by name (built-in or
//! model-specific).

use mcheck_checker::cache::fingerprint;
use mcheck_checker::search::{self, exec, Strategy};
use mcheck_checker::shrink::{self, Shrunk};
use mcheck_checker::{BoxedExplorer, Config, Model, ModelInfo, Params, Program, Report, Schedule};
use mcheck_explorers::AnyExplorer;

/// The result of replaying a schedule.
#[derive(Debug)]
pub struct Replayed {
    /// The execution, with its trace and trail.
    pub execution: exec::Execution,
    /// The digest of the model as built for the schedule.
    pub digest: String,
}

/// A model behind an object-safe interface (implemented for every
/// [`Model`]).
pub trait DynModel: Send + Sync {
    /// Name, params, bugs, explorers.
    fn info(&self) -> ModelInfo;
    /// [`Model::effective_params`]: the parameters a run with `bug` uses.
    fn effective_params(&self, params: &Params, bug: Option<u32>) -> Params;
    /// Run `strategy` on the model built from `params` and `bug`.
    fn check(
        &self,
        params: &Params,
        bug: Option<u32>,
        strategy: &Strategy,
        explorer: &str,
        config: &Config,
    ) -> Result<Report, String>;
    /// Replay `schedule` (whose parameters and bug were validated).
    fn replay(&self, params: &Params, schedule: &Schedule, traced: bool) -> Result<Replayed, String>;
    /// A digest of the model's name, parameters, bug and initial state.
    fn digest(&self, params: &Params, bug: Option<u32>) -> String;
    /// Shrink `schedule` (whose parameters and bug were validated) with at
    /// most `max_attempts` replays; the result carries its trail.
    fn shrink(&self, params: &Params, schedule: &Schedule, max_attempts: u64) -> Result<Shrunk, String>;
}

/// The explorer named `name` for model `m`: a built-in one or one of the
/// model's own. Errors list the valid names.
pub fn explorer_for<M: Model>(m: &M, name: &str) -> Result<AnyExplorer, String> {
    if let Some(e) = mcheck_explorers::builtin(name) {
        return Ok(e);
    }
    if let Some(e) = m.explorer(name) {
        return Ok(AnyExplorer::Custom(e));
    }
    let info = m.info();
    let mut valid: Vec<&str> = mcheck_explorers::BUILTIN.iter().map(|e| e.name).collect();
    valid.extend(info.explorers.iter().map(|e| e.name));
    Err(format!(
        "unknown explorer {name:?} for model {}; valid explorers: {}",
        info.name,
        valid.join(", ")
    ))
}

/// Record the trail of choice points of `schedule`, for the
/// nondeterminism check of a later replay.
fn fill_trail<P: Program>(program: &P, explorer: AnyExplorer, schedule: &mut Schedule) {
    let explorer = schedule
        .explorer
        .as_ref()
        .map(|_| exec::prepare_explorer(program, explorer, schedule.explorer_seed));
    if let Ok(ex) = exec::replay(program, explorer, schedule, true) {
        schedule.trail = ex.trail;
    }
}

fn digest_of<M: Model>(m: &M, program: &M::Program, params: &Params, bug: Option<u32>) -> String {
    let s0 = program.initial();
    format!("{:016x}", fingerprint(&(m.info().name, params, bug, fingerprint(&s0))))
}

impl<M: Model> DynModel for M {
    fn info(&self) -> ModelInfo {
        Model::info(self)
    }

    fn effective_params(&self, params: &Params, bug: Option<u32>) -> Params {
        Model::effective_params(self, params, bug)
    }

    fn check(
        &self,
        params: &Params,
        bug: Option<u32>,
        strategy: &Strategy,
        explorer: &str,
        config: &Config,
    ) -> Result<Report, String> {
        let explorer = explorer_for(self, explorer)?;
        let program = self.build(params, bug);
        // One instance of the search per built-in explorer: its state is
        // then held without the enum's tag and padding (a frontier entry
        // holds one), and its calls are direct.
        let run = match explorer.clone() {
            AnyExplorer::Rr(e) => search::run(&program, e, strategy, config),
            AnyExplorer::Rtc(e) => search::run(&program, e, strategy, config),
            AnyExplorer::Prr(e) => search::run(&program, e, strategy, config),
            custom @ AnyExplorer::Custom(_) => search::run(&program, custom, strategy, config),
        };
        let mut report = run.map_err(|e| e.to_string())?;
        if let Some(schedule) = report.schedule.as_mut() {
            schedule.model = Model::info(self).name.to_string();
            schedule.params = params.0.clone();
            schedule.bug = bug;
            schedule.deadlock = config.deadlock;
            schedule.expected = report.violation.as_ref().map(|f| f.violation.clone());
            schedule.digest = digest_of(self, &program, params, bug);
            fill_trail(&program, explorer, schedule);
        }
        Ok(report)
    }

    fn shrink(&self, params: &Params, schedule: &Schedule, max_attempts: u64) -> Result<Shrunk, String> {
        let program = self.build(params, schedule.bug);
        let explorer = match &schedule.explorer {
            Some(name) => Some(explorer_for(self, name)?),
            None => None,
        };
        let fresh = |seed: u64| explorer.clone().map(|e| exec::prepare_explorer(&program, e, seed));
        let mut shrunk = shrink::shrink(&program, fresh, schedule, max_attempts)?;
        shrunk.schedule.digest = digest_of(self, &program, params, schedule.bug);
        if let Some(e) = explorer {
            fill_trail(&program, e, &mut shrunk.schedule);
        } else {
            fill_trail(&program, AnyExplorer::Rr(Default::default()), &mut shrunk.schedule);
        }
        Ok(shrunk)
    }

    fn replay(&self, params: &Params, schedule: &Schedule, traced: bool) -> Result<Replayed, String> {
        let program = self.build(params, schedule.bug);
        let explorer = match &schedule.explorer {
            Some(name) => Some(exec::prepare_explorer(
                &program,
                explorer_for(self, name)?,
                schedule.explorer_seed,
            )),
            None => None,
        };
        let execution = exec::replay(&program, explorer, schedule, traced)?;
        Ok(Replayed {
            execution,
            digest: digest_of(self, &program, params, schedule.bug),
        })
    }

    fn digest(&self, params: &Params, bug: Option<u32>) -> String {
        digest_of(self, &self.build(params, bug), params, bug)
    }
}

/// The models (and through them, explorers) that a CLI knows.
pub struct Registry {
    models: Vec<Box<dyn DynModel>>,
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
            .with(mcheck_models::paxos::Paxos)
            .with(mcheck_models::multipaxos::MultiPaxos)
            .with(mcheck_models::twopc::TwoPc)
            .with(mcheck_models::chain::Chain)
            .with(mcheck_models::lostupdate::LostUpdate)
            .with(mcheck_models::raft::Raft)
    }

    /// Add a model (a user's own, say).
    pub fn with<M: Model>(mut self, model: M) -> Self {
        self.models.push(Box::new(model));
        self
    }

    /// The models, in registration order.
    pub fn models(&self) -> impl Iterator<Item = &dyn DynModel> {
        self.models.iter().map(|m| m.as_ref())
    }

    /// The model named `name`; the error lists the valid names.
    pub fn model(&self, name: &str) -> Result<&dyn DynModel, String> {
        self.models().find(|m| m.info().name == name).ok_or_else(|| {
            let names: Vec<&str> = self.models().map(|m| m.info().name).collect();
            format!("unknown model {name:?}; valid models: {}", names.join(", "))
        })
    }
}

/// A boxed explorer, for models that offer their own (re-exported for
/// `Model::explorer` implementations).
pub type CustomExplorer = BoxedExplorer;
