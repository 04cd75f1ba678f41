//! Checking a [`Model`]: a search, a replay or a shrink of the program a
//! model builds, whose schedules are complete (model name, parameters, bug,
//! expected violation, model digest, trail of choice points, checksum), so
//! that a library user gets the same counterexamples as `mcheck run --save`.
//!
//! `tests/all/library.rs` of the `mcheck` crate shows them in use.

use crate::config::Config;
use crate::coverage::{reached_property, CountedOver, Coverage, Covered, Property, Status};
use crate::explorer::Explorer;
use crate::model::{Model, ModelInfo, ParamError, Params};
use crate::program::Program;
use crate::replay::{model_digest, replay, ReplayError};
use crate::report::{Outcome, Report};
use crate::schedule::Schedule;
use crate::search::exec::Execution;
use crate::search::{self, SearchError, Strategy};
use crate::shrink::{shrink, ShrinkError, Shrunk};

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
pub fn check_model<M: Model, E: Explorer>(
    model: &M,
    params: &Params,
    bug: Option<u32>,
    strategy: &Strategy,
    explorer: E,
    config: &Config,
) -> Result<Report, SearchError> {
    let (params, program) = build_program(model, params, bug)?;
    let mut report = search::run(&program, explorer.clone(), strategy, config)?;
    complete_report(&model.info(), &params, bug, &program, explorer, config, &mut report)?;
    Ok(report)
}

/// [`check_model`] with [`Strategy::Ses`], for a caller that holds the
/// explorer as its own type (the registry's built-in explorers, each with
/// its own instance of the search: ARCHITECTURE.md §1, "registry"), where
/// the search runs on the program as it is ([`search::runs_unwrapped`]).
/// `Ok(None)` where it would not (a symmetry or liveness check wraps it):
/// run [`check_model`] then, with a general explorer, so that only the
/// plain search is instantiated per explorer.
pub fn check_model_ses<M: Model, E: Explorer>(
    model: &M,
    params: &Params,
    bug: Option<u32>,
    explorer: E,
    config: &Config,
) -> Result<Option<Report>, SearchError> {
    let (params, program) = build_program(model, params, bug)?;
    if !search::runs_unwrapped(&program, config) {
        return Ok(None);
    }
    let mut report = search::ses(&program, explorer.clone(), config)?;
    report.monitors = search::monitors(&program, &Strategy::Ses, config);
    complete_report(&model.info(), &params, bug, &program, explorer, config, &mut report)?;
    Ok(Some(report))
}

/// [`check_model`]'s search on a coverage wrapper of the program that
/// the model `info` describes builds from `params` and `bug`
/// ([`search::run_covered`]), its counterexample completed.
fn check_covered<P: Program, E: Explorer>(
    info: &ModelInfo,
    params: &Params,
    bug: Option<u32>,
    program: &Covered<'_, P>,
    strategy: &Strategy,
    explorer: E,
    config: &Config,
) -> Result<Report, SearchError> {
    let mut report = search::run_covered(program, explorer.clone(), strategy, config)?;
    complete_report(info, params, bug, program, explorer, config, &mut report)?;
    Ok(report)
}

/// The program `model` builds from `params` and `bug` (checked and mapped
/// as [`check_model`] does), with the parameters it runs with: for a
/// search outside this crate (the distributed SES), which then calls
/// [`complete_report`].
pub fn build_program<M: Model>(
    model: &M,
    params: &Params,
    bug: Option<u32>,
) -> Result<(Params, M::Program), SearchError> {
    let info = model.info();
    let params = resolve(model, &info, params, bug).map_err(|e| SearchError::Input(e.to_string()))?;
    let program = model.build(&params, bug);
    Ok((params, program))
}

/// Complete the counterexample of `report` (a search of `program`, built by
/// the model `info` describes from `params` and `bug`, with `explorer`):
/// its model fields, expectation, digest and trail, checked by a replay.
pub fn complete_report<P: Program, E: Explorer>(
    info: &ModelInfo,
    params: &Params,
    bug: Option<u32>,
    program: &P,
    explorer: E,
    config: &Config,
    report: &mut Report,
) -> Result<(), SearchError> {
    if let (Some(schedule), Some(found)) = (report.schedule.as_mut(), report.violation.as_ref()) {
        schedule.model = info.name.to_string();
        schedule.params = params.0.clone();
        schedule.bug = bug;
        schedule.deadlock = config.deadlock;
        schedule.expect(&found.violation, found.step);
        complete(program, Some(explorer), schedule)
            .map_err(|e| SearchError::Internal(format!("the counterexample does not replay: {e}")))?;
    }
    Ok(())
}

/// [`check_model`] with the coverage section (ARCHITECTURE.md §6,
/// "Coverage and reachability"): the search counts what each step
/// exercises; then, unless it found a violation, one search per
/// reachability property of the program, with the same strategy,
/// explorer and budgets, looks for a state where it holds. A property
/// reached comes with a complete schedule that replays to that state
/// ([`replay_model`]); one that an exhaustive search proves unreachable
/// turns a `verified` outcome into [`Outcome::Unreached`].
pub fn check_coverage<M: Model, E: Explorer>(
    model: &M,
    params: &Params,
    bug: Option<u32>,
    strategy: &Strategy,
    explorer: E,
    config: &Config,
) -> Result<Report, SearchError> {
    let info = model.info();
    let (params, program) = build_program(model, params, bug)?;
    let over = if strategy.is_exhaustive() {
        CountedOver::DistinctTransitions
    } else {
        CountedOver::Executions
    };
    let counted = Covered::new(&program, over);
    let mut report = check_covered(&info, &params, bug, &counted, strategy, explorer.clone(), config)?;
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
            } else if let Some(reach) = Covered::reaching(&program, i) {
                let r = check_covered(&info, &params, bug, &reach, strategy, explorer.clone(), config)?;
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
    Ok(report)
}

/// Replay `schedule` (see [`replay`]) on the program that `model` builds
/// from the schedule's parameters and bug. `explorer` is the explorer the
/// schedule names, fresh, for a delay path.
pub fn replay_model<M: Model, E: Explorer>(
    model: &M,
    explorer: Option<E>,
    schedule: &Schedule,
    traced: bool,
) -> Result<Execution, ReplayError> {
    let program = program_for(model, schedule)?;
    // A schedule that a property's search made replays to the property.
    let program = Covered::reaching_expected(&program, schedule.expected.as_ref()).unwrap_or(Covered::off(&program));
    replay(&program, explorer, schedule, traced)
}

/// Shrink `schedule` (see [`shrink`]) on the program that `model` builds
/// from the schedule's parameters and bug; the result is complete, as
/// [`check_model`]'s.
pub fn shrink_model<M: Model, E: Explorer>(
    model: &M,
    explorer: Option<E>,
    schedule: &Schedule,
    max_attempts: u64,
) -> Result<Shrunk, ShrinkError> {
    let program = program_for(model, schedule)?;
    let mut shrunk = shrink(&program, explorer.clone(), schedule, max_attempts)?;
    complete(&program, explorer, &mut shrunk.schedule)
        .map_err(|e| ShrinkError::Internal(format!("the shrunk schedule does not replay: {e}")))?;
    Ok(shrunk)
}

/// Record the model digest and the trail of `schedule` (whose model fields
/// and expectation are filled), sealed; checks that it replays.
fn complete<P: Program, E: Explorer>(
    program: &P,
    explorer: Option<E>,
    schedule: &mut Schedule,
) -> Result<(), ReplayError> {
    schedule.trail.clear();
    schedule.digest = model_digest(program, schedule);
    schedule.seal();
    schedule.trail = replay(program, explorer, schedule, true)?.trail;
    Ok(())
}

/// The program for `schedule`: its model, parameters and bug checked
/// against `model`.
pub(crate) fn program_for<M: Model>(model: &M, schedule: &Schedule) -> Result<M::Program, ReplayError> {
    let info = model.info();
    if schedule.model != info.name {
        return Err(ReplayError::WrongModel {
            schedule: schedule.model.clone(),
            model: info.name.to_string(),
        });
    }
    let params =
        resolve(model, &info, &Params(schedule.params.clone()), schedule.bug).map_err(ReplayError::NotForModel)?;
    Ok(model.build(&params, schedule.bug))
}

/// `params` (possibly partial: defaults fill the rest) and `bug` checked
/// against the model's (`info`; the error names the bad value and the
/// valid ones), then mapped to what the program runs with
/// ([`Model::effective_params`]).
fn resolve<M: Model>(model: &M, info: &ModelInfo, params: &Params, bug: Option<u32>) -> Result<Params, ParamError> {
    if let Some(b) = bug {
        if !info.bugs.iter().any(|x| x.id == b) {
            return Err(ParamError::UnknownBug {
                model: info.name.to_string(),
                bug: b,
                valid: info.bugs.iter().map(|x| format!("{} ({})", x.id, x.name)).collect(),
            });
        }
    }
    let overrides: Vec<(String, String)> = params.0.iter().map(|(k, v)| (k.clone(), v.to_string())).collect();
    let params = Params::resolve(info.name, &info.params, &overrides)?;
    Ok(model.effective_params(&params, bug))
}
