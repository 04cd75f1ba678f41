//! Checking a [`Model`]: a search, a replay or a shrink of the program a
//! model builds, whose schedules are complete (model name, parameters, bug,
//! expected violation, model digest, trail of choice points, checksum), so
//! that a library user gets the same counterexamples as `mcheck run --save`.
//!
//! `tests/all/library.rs` of the `mcheck` crate shows them in use.

use crate::config::Config;
use crate::coverage::{CountedOver, Coverage, Covered, Property, Status, reached_property};
use crate::explorer::Explorer;
use crate::instance::Instance;
use crate::model::{Model, ModelInfo, Params};
use crate::program::{Program, ProgramExt};
use crate::races::{ExplainError, Explanation, explain};
use crate::replay::{ReplayError, model_digest, replay_watched};
use crate::report::{Outcome, Report};
use crate::run;
use crate::schedule::Schedule;
use crate::search::exec::Execution;
use crate::search::{self, SearchError, Strategy};
use crate::shrink::{ShrinkError, Shrunk, shrink};
use crate::watch::{Watch, Watched};

/// Run `strategy` (with `explorer` where it uses one) on the program that
/// `model` builds from `params` and `bug`, and complete the counterexample,
/// if any: the model's name, parameters and bug, `config.deadlock`, the
/// violation and its step, the model digest and the trail, sealed. The
/// counterexample is replayed to record the trail: if it does not reproduce
/// the violation exactly, that is a bug in mcheck
/// ([`SearchError::Internal`]).
///
/// `params` must be resolved against the model's parameters
/// ([`Params::resolve`]) and `bug` one of its bugs, else
/// [`SearchError::Input`].
///
/// ```
/// use mcheck_checker::explorers::RunToCompletion;
/// use mcheck_checker::{check_model, Config, Params, Strategy};
/// use mcheck_models::lostupdate::LostUpdate;
///
/// let params = Params::resolve("lostupdate", &mcheck_models::lostupdate::PARAMS, &[("clients".into(), "2".into())]).unwrap();
/// let report = check_model(&LostUpdate, &params, Some(1), &Strategy::Ses, RunToCompletion::new(), &Config::default()).unwrap();
/// let schedule = report.schedule.unwrap();
/// assert!(schedule.to_text().starts_with("mcheck2:lostupdate:p=clients=2,increments=3:bug=1:e=rtc:"));
/// ```
pub fn check_model<M: Model, E: Explorer>(
    model: &M,
    params: &Params,
    bug: Option<u32>,
    strategy: &Strategy,
    explorer: E,
    config: &Config,
) -> Result<Report, SearchError> {
    let instance = resolved(model, params, bug)?;
    Ok(check_instance(model, &instance, strategy, explorer, config, false)?.report)
}

/// What a check found: the report and, when it has a violation, the
/// counterexample replayed once.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The report, its schedule complete.
    pub report: Report,
    /// The one traced replay of the report's schedule, if it has one.
    pub counterexample: Option<Counterexample>,
}

/// A counterexample replayed once: the execution that gives its trace and
/// its diagrams, and the races explained from that same execution.
#[derive(Clone, Debug)]
pub struct Counterexample {
    /// The traced replay (trace and trail).
    pub execution: Execution,
    /// Its races (`None` when not asked for).
    pub explanation: Option<Result<Explanation, ExplainError>>,
}

/// [`check_model`] on an instance resolved once ([`Instance`]), with the
/// counterexample's replay kept, its races explained when `explain`.
pub fn check_instance<M: Model, E: Explorer>(
    model: &M,
    instance: &Instance,
    strategy: &Strategy,
    explorer: E,
    config: &Config,
    explain: bool,
) -> Result<Checked, SearchError> {
    let program = instance.build(model);
    let report = run::run(&program, explorer.clone(), strategy, config)?;
    complete_report(&model.info(), instance, &program, explorer, config, report, explain)
}

/// `params` and `bug` resolved for `model`, an error for people otherwise.
fn resolved<M: Model>(model: &M, params: &Params, bug: Option<u32>) -> Result<Instance, SearchError> {
    Instance::resolve(model, params, bug).map_err(|e| SearchError::Input(e.to_string()))
}

/// [`check_model`] with [`Strategy::Ses`], for a caller that holds the
/// explorer as its own type (the registry's built-in explorers, each with
/// its own instance of the search: ARCHITECTURE.md, "The registry"), where
/// the search runs on the program as it is ([`run::runs_unwrapped`]).
/// `Ok(None)` where it would not (a symmetry or liveness check wraps it):
/// run [`check_model`] then, with a general explorer, so that only the
/// plain search is instantiated per explorer.
pub fn check_model_ses<M: Model, E: Explorer>(
    model: &M,
    instance: &Instance,
    explorer: E,
    config: &Config,
    explain: bool,
) -> Result<Option<Checked>, SearchError> {
    let program = instance.build(model);
    if !run::runs_unwrapped(&program, config) {
        return Ok(None);
    }
    let mut report = search::ses(&program, explorer.clone(), config)?;
    report.monitors = run::monitors(&program, &Strategy::Ses, config);
    let checked = complete_report(&model.info(), instance, &program, explorer, config, report, explain)?;
    Ok(Some(checked))
}

/// The model that built a program and the instance it built it for:
/// what names a counterexample's model, parameters and bug. `None` for a
/// plain program, whose schedules name no model.
type Named<'a> = Option<(&'a ModelInfo, &'a Instance)>;

/// [`check_instance`] for a plain program that no [`Model`] builds: the
/// report of [`run::run`], its counterexample completed as far as a
/// program allows (the deadlock flag, the expected violation, the digest
/// and the trail, sealed; no model, so its text form starts with
/// `mcheck2:-:` and it replays with [`crate::replay()`], not `mcheck
/// replay`) and replayed once, its races explained when `explain`.
///
/// ```
/// use mcheck_checker::check::check_program;
/// use mcheck_checker::explorers::RunToCompletion;
/// use mcheck_checker::testing::RandomProgram;
/// use mcheck_checker::{Config, Strategy};
///
/// let program = RandomProgram::generate(7, false, true);
/// let checked = check_program(&program, &Strategy::Ses, RunToCompletion::new(), &Config::default(), false).unwrap();
/// assert_eq!(checked.report.is_violation(), program.oracle().violation_reachable);
/// assert_eq!(checked.report.is_violation(), checked.counterexample.is_some());
/// ```
pub fn check_program<P: Program, E: Explorer>(
    program: &P,
    strategy: &Strategy,
    explorer: E,
    config: &Config,
    explain: bool,
) -> Result<Checked, SearchError> {
    let report = run::run(program, explorer.clone(), strategy, config)?;
    complete_watched(None, Watched::bare(program), explorer, config, report, explain)
}

/// A search for the reachability property `property` (one of
/// [`Covers::sometimes`](crate::Covers::sometimes)) of the program `model`
/// builds for `instance`, as `mcheck run --coverage` runs one (ARCHITECTURE.md,
/// "Coverage and reachability"): with `strategy`, `explorer` and the
/// budgets of `config`, every execution ends with the violation
/// [`reached`](crate::coverage::reached) where the property holds. So a
/// report whose violation is that mark reached it, and its complete
/// schedule replays to that state ([`replay_model`]); another violation
/// is a bug found first; `verified` proves the property unreachable.
/// [`SearchError::Input`] names the program's properties when it has no
/// `property`.
pub fn check_reaching_instance<M: Model, E: Explorer>(
    model: &M,
    instance: &Instance,
    property: &str,
    strategy: &Strategy,
    explorer: E,
    config: &Config,
    explain: bool,
) -> Result<Checked, SearchError> {
    let program = instance.build(model);
    let i = property_index(&program, property)?;
    reaching(
        Some((&model.info(), instance)),
        &program,
        i,
        (strategy, explorer),
        config,
        explain,
    )
}

/// [`check_reaching_instance`] for a plain program that no [`Model`]
/// builds; its schedule is completed as [`check_program`]'s.
pub fn check_program_reaching<P: Program, E: Explorer>(
    program: &P,
    property: &str,
    strategy: &Strategy,
    explorer: E,
    config: &Config,
    explain: bool,
) -> Result<Checked, SearchError> {
    let i = property_index(program, property)?;
    reaching(None, program, i, (strategy, explorer), config, explain)
}

/// The index of `program`'s reachability property `name`, or an input
/// error naming the ones it has.
fn property_index<P: Program>(program: &P, name: &str) -> Result<usize, SearchError> {
    let names = program.sometimes();
    names.iter().position(|n| *n == name).ok_or_else(|| {
        SearchError::Input(match names.is_empty() {
            true => format!("the program has no reachability property {name:?}; it declares none"),
            false => format!(
                "the program has no reachability property {name:?}; its properties: {}",
                names.join(", ")
            ),
        })
    })
}

/// The search for reachability property number `property` of `program`
/// (built as `named` says), its counterexample completed.
fn reaching<P: Program, E: Explorer>(
    named: Named<'_>,
    program: &P,
    property: usize,
    searched: (&Strategy, E),
    config: &Config,
    explain: bool,
) -> Result<Checked, SearchError> {
    let reach = Covered::reaching(program, property)
        .ok_or_else(|| SearchError::Internal(format!("reachability property {property} vanished")))?;
    check_covered(named, (program, &reach), searched, config, explain)
}

/// [`check_model`]'s search of `program` (built as `named` says), watched
/// by `covered` ([`run::run_watched`]), its counterexample completed
/// (replayed watched only when `covered` seeks a property, so that the
/// replay is not counted).
fn check_covered<P: Program, E: Explorer>(
    named: Named<'_>,
    (program, covered): (&P, &Covered<'_, P>),
    (strategy, explorer): (&Strategy, E),
    config: &Config,
    explain: bool,
) -> Result<Checked, SearchError> {
    let mut report = run::run_watched(program, Some(covered), explorer.clone(), strategy, config)?;
    report.monitors.extend(covered.over().map(|_| "coverage".to_string()));
    report
        .monitors
        .extend(covered.property().map(|p| format!("reachability of {p}")));
    let reach = covered.property().map(|_| covered as &dyn Watch<P::State>);
    complete_watched(named, Watched::new(program, reach), explorer, config, report, explain)
}

/// Complete the counterexample of `report` (a search of `program`, built by
/// the model `info` describes for `instance`, with `explorer`): its model
/// fields, expectation, digest and trail, checked by its one replay, which
/// the result keeps (its races explained when `explain`).
pub fn complete_report<P: Program, E: Explorer>(
    info: &ModelInfo,
    instance: &Instance,
    program: &P,
    explorer: E,
    config: &Config,
    report: Report,
    explain: bool,
) -> Result<Checked, SearchError> {
    complete_watched(
        Some((info, instance)),
        Watched::bare(program),
        explorer,
        config,
        report,
        explain,
    )
}

/// [`complete_report`] with the replay watched as the search was.
fn complete_watched<P: Program, E: Explorer>(
    named: Named<'_>,
    program: Watched<'_, P>,
    explorer: E,
    config: &Config,
    mut report: Report,
    explain: bool,
) -> Result<Checked, SearchError> {
    let mut counterexample = None;
    if let (Some(schedule), Some(found)) = (report.schedule.as_mut(), report.violation.as_ref()) {
        if let Some((info, instance)) = named {
            schedule.model = info.name.to_string();
            schedule.params = instance.params().0.clone();
            schedule.bug = instance.bug();
        }
        schedule.deadlock = config.deadlock;
        schedule.expect(&found.violation, found.step);
        // A portfolio's counterexample may be a stratified sample of
        // another built-in explorer than the run's.
        let execution = match schedule.explorer.as_deref().filter(|&name| name != explorer.name()) {
            Some(name) => match crate::explorers::builtin(name) {
                Some(other) => complete(program, Some(other), schedule),
                None => complete(program, Some(explorer), schedule),
            },
            None => complete(program, Some(explorer), schedule),
        }
        .map_err(|e| SearchError::Internal(format!("the counterexample does not replay: {e}")))?;
        counterexample = Some(explained(program.program(), execution, schedule, explain));
    }
    Ok(Checked { report, counterexample })
}

/// The counterexample of `execution`, the replay of `schedule` on
/// `program`, with its races when `explain`.
fn explained<P: Program>(program: &P, execution: Execution, schedule: &Schedule, explain_it: bool) -> Counterexample {
    let explanation = explain_it.then(|| explain(program, &execution, schedule.deadlock, schedule.max_steps));
    Counterexample { execution, explanation }
}

/// [`check_model`] with the coverage section (ARCHITECTURE.md,
/// "Coverage and reachability"): the search counts what each step
/// exercises; then, unless it found a violation, one search per
/// reachability property of the program, with the same strategy,
/// explorer and budgets, looks for a state where it holds. A property
/// reached comes with a complete schedule that replays to that state
/// ([`replay_model`]); one that an exhaustive search proves unreachable
/// turns a `verified` outcome into [`Outcome::Unreached`].
///
/// ```
/// use mcheck_checker::check::check_coverage;
/// use mcheck_checker::explorers::RunToCompletion;
/// use mcheck_checker::{Config, Params, PropertyStatus, Strategy};
/// use mcheck_models::lostupdate::LostUpdate;
///
/// let params = Params::resolve("lostupdate", &mcheck_models::lostupdate::PARAMS, &[("clients".into(), "2".into())]).unwrap();
/// let report = check_coverage(&LostUpdate, &params, None, &Strategy::Ses, RunToCompletion::new(), &Config::default()).unwrap();
/// let properties = report.coverage.unwrap().properties;
/// assert!(properties.iter().all(|p| p.status == PropertyStatus::Reached));
/// ```
pub fn check_coverage<M: Model, E: Explorer>(
    model: &M,
    params: &Params,
    bug: Option<u32>,
    strategy: &Strategy,
    explorer: E,
    config: &Config,
) -> Result<Report, SearchError> {
    let instance = resolved(model, params, bug)?;
    Ok(check_coverage_instance(model, &instance, strategy, explorer, config, false)?.report)
}

/// [`check_coverage`] on an instance resolved once, as [`check_instance`].
pub fn check_coverage_instance<M: Model, E: Explorer>(
    model: &M,
    instance: &Instance,
    strategy: &Strategy,
    explorer: E,
    config: &Config,
    explain: bool,
) -> Result<Checked, SearchError> {
    let info = model.info();
    let program = instance.build(model);
    let over = if strategy.is_exhaustive() {
        CountedOver::DistinctTransitions
    } else {
        CountedOver::Executions
    };
    let counted = Covered::new(&program, over);
    let searched = (strategy, explorer.clone());
    let Checked {
        mut report,
        counterexample,
    } = check_covered(Some((&info, instance)), (&program, &counted), searched, config, explain)?;
    let mut properties = Vec::new();
    if report.outcome != Outcome::Violation {
        let initial = program.initial();
        for (i, name) in program.sometimes().into_iter().enumerate() {
            let mut p = Property {
                name: name.to_string(),
                status: Status::NotSeen,
                steps: None,
                schedule: None,
            };
            if program.holds(&initial, i) {
                (p.status, p.steps) = (Status::Reached, Some(0));
            } else {
                let searched = (strategy, explorer.clone());
                let r = reaching(Some((&info, instance)), &program, i, searched, config, false)?.report;
                match (&r.violation, r.schedule) {
                    (Some(found), Some(schedule)) if reached_property(&found.violation) == Some(name) => {
                        (p.status, p.steps, p.schedule) = (Status::Reached, Some(found.step + 1), Some(schedule));
                    }
                    _ if r.outcome == Outcome::Verified => p.status = Status::Unreached,
                    _ => {}
                }
            }
            properties.push(p);
        }
    }
    let coverage = Coverage {
        counted_over: over,
        entries: counted.entries(),
        properties,
    };
    if report.outcome == Outcome::Verified && coverage.unreached().next().is_some() {
        report.outcome = Outcome::Unreached;
        let names: Vec<&str> = coverage.unreached().map(|p| p.name.as_str()).collect();
        report.notes.push(format!(
            "every reachable state was covered and none violates, but no reachable state satisfies the reachability propert{} {}: the verification is vacuous there",
            if names.len() == 1 { "y" } else { "ies" },
            names.join(", ")
        ));
    }
    report.coverage = Some(coverage);
    Ok(Checked { report, counterexample })
}

/// Replay `schedule` (see [`replay`](crate::replay())) on the program that `model` builds
/// from the schedule's parameters and bug. `explorer` is the explorer the
/// schedule names, fresh, for a delay path.
///
/// ```
/// use mcheck_checker::explorers::RunToCompletion;
/// use mcheck_checker::{replay_model, Schedule};
/// use mcheck_models::lostupdate::LostUpdate;
///
/// // What `mcheck run lostupdate --bug 1 --set clients=2,increments=1` prints.
/// let text = "mcheck2:lostupdate:p=clients=2,increments=1:bug=1:e=rtc:seed=0:max-steps=10000:v=monitor:at=9:by=counter:msg=all+2+clients+are+done+but+the+counter+is+1+instead+of+2%3A+an+increment+was+lost:d=1:sum=e4fc47ee22c00e30";
/// let schedule: Schedule = text.parse().unwrap();
/// let execution = replay_model(&LostUpdate, Some(RunToCompletion::new()), &schedule, true).unwrap();
/// assert_eq!((execution.steps, execution.trace.len()), (10, 10));
/// ```
pub fn replay_model<M: Model, E: Explorer>(
    model: &M,
    explorer: Option<E>,
    schedule: &Schedule,
    traced: bool,
) -> Result<Execution, ReplayError> {
    let program = Instance::of_schedule(model, schedule)?.build(model);
    // A schedule that a property's search made replays to the property.
    let reach = Covered::reaching_expected(&program, schedule.expected.as_ref());
    let watch = reach.as_ref().map(|r| r as &dyn Watch<_>);
    replay_watched(Watched::new(&program, watch), explorer, schedule, traced)
}

/// Shrink `schedule` (see [`shrink`]) on the program that `model` builds
/// from the schedule's parameters and bug; the result is complete, as
/// [`check_model`]'s.
///
/// ```
/// use mcheck_checker::explorers::RunToCompletion;
/// use mcheck_checker::{check_model, shrink_model, Config, Instance, Strategy};
/// use mcheck_models::lostupdate::LostUpdate;
///
/// let params = Instance::defaults(&LostUpdate).params().clone();
/// let report = check_model(&LostUpdate, &params, Some(1), &Strategy::Rs, RunToCompletion::new(), &Config::default()).unwrap();
/// let walk = report.schedule.unwrap();
/// let shrunk = shrink_model(&LostUpdate, None::<RunToCompletion>, &walk, 1000).unwrap();
/// assert!(shrunk.after.1 <= shrunk.before.1);
/// assert!(shrunk.violation.same_bug(&report.violation.unwrap().violation));
/// ```
pub fn shrink_model<M: Model, E: Explorer>(
    model: &M,
    explorer: Option<E>,
    schedule: &Schedule,
    max_attempts: u64,
) -> Result<Shrunk, ShrinkError> {
    let program = Instance::of_schedule(model, schedule)?.build(model);
    let mut shrunk = shrink(&program, explorer.clone(), schedule, max_attempts)?;
    complete(Watched::bare(&program), explorer, &mut shrunk.schedule)
        .map_err(|e| ShrinkError::Internal(format!("the shrunk schedule does not replay: {e}")))?;
    Ok(shrunk)
}

/// Record the model digest and the trail of `schedule` (whose model fields
/// and expectation are filled), sealed; checks that it replays, and
/// returns that traced replay.
fn complete<P: Program, E: Explorer>(
    program: Watched<'_, P>,
    explorer: Option<E>,
    schedule: &mut Schedule,
) -> Result<Execution, ReplayError> {
    schedule.trail.clear();
    schedule.digest = model_digest(program.program(), schedule);
    schedule.seal();
    let execution = replay_watched(program, explorer, schedule, true)?;
    schedule.trail = execution.trail.clone();
    Ok(execution)
}

/// Replay `schedule` once on the program `model` builds for it (as
/// [`replay_model`]) and explain its races from that execution: the
/// counterexample of a schedule that no check of this process completed
/// (a shrunk one, a distributed run's).
pub fn counterexample_model<M: Model, E: Explorer>(
    model: &M,
    explorer: Option<E>,
    schedule: &Schedule,
) -> Result<Counterexample, ReplayError> {
    let program = Instance::of_schedule(model, schedule)?.build(model);
    let reach = Covered::reaching_expected(&program, schedule.expected.as_ref());
    let watch = reach.as_ref().map(|r| r as &dyn Watch<_>);
    let execution = replay_watched(Watched::new(&program, watch), explorer, schedule, true)?;
    Ok(explained(&program, execution, schedule, true))
}
