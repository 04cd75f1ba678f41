//! Replaying a [`Schedule`] on a program, and checking that it reproduces
//! what it recorded (ARCHITECTURE.md, "Counterexamples: schedules and replay").
//!
//! [`replay`] takes the explorer the schedule names (and checks that it is
//! that one), seeds it with the schedule's own seed, runs the execution, and
//! compares it with everything the schedule carries: the trail of choice
//! points (step by step) and the expected violation (kind, machine, message
//! and step). A mismatch is a [`ReplayError`] that says what differs and
//! why, as far as the schedule's checksum and the model's digest can tell
//! ([`Cause`]): an edited schedule is never blamed on the model.
//!
//! [`follow`] only runs the path (shrinking tries candidates with it).

use crate::cache::fingerprint;
use crate::explorer::{Explorer, prepare};
use crate::model::ParamError;
use crate::program::{Program, Violation, ViolationKind};
use crate::report::Found;
use crate::schedule::{ParseError, PathKind, Schedule, TrailStep};
use crate::search::exec::{ChoiceDriver, DelayDriver, End, Execution, execute_watched};
use crate::watch::Watched;
use std::fmt;

/// A digest of the model's name, parameters and bug as the schedule names
/// them, and of `program`'s initial state, as 16 hex digits: what
/// [`Schedule::digest`] records, so that a replay can tell "the model
/// changed" from "the model is nondeterministic".
pub fn model_digest<P: Program>(program: &P, schedule: &Schedule) -> String {
    let s0 = fingerprint(&program.initial());
    let content = (schedule.model.as_str(), &schedule.params, schedule.bug, s0);
    format!("{:016x}", fingerprint(&content))
}

/// Run `schedule`'s path on `program`, without comparing the outcome with
/// what the schedule expects. For a delay path, `explorer` must be the
/// explorer the schedule names, fresh (this seeds and initialises it with
/// the schedule's seed); for a choice path it is not used. `traced` builds
/// the human trace and the trail.
///
/// A path that cannot be followed (a choice that the state does not offer)
/// ends the execution with [`End::Diverged`].
pub fn follow<P: Program, E: Explorer>(
    program: &P,
    explorer: Option<E>,
    schedule: &Schedule,
    traced: bool,
) -> Result<Execution, ReplayError> {
    follow_watched(Watched::bare(program), explorer, schedule, traced)
}

/// [`follow`] with the run's watch told of every step (a lasso's replay
/// records its own, [`crate::liveness::replay_lasso`]).
pub fn follow_watched<P: Program, E: Explorer>(
    program: Watched<'_, P>,
    explorer: Option<E>,
    schedule: &Schedule,
    traced: bool,
) -> Result<Execution, ReplayError> {
    // A lasso of the exhaustive check: a cycle, or a choice path whose
    // end state is terminal and hot (the violation is at that state).
    let terminal = schedule.kind == PathKind::Choices && schedule.expected_step == Some(schedule.path.len());
    if !schedule.cycle.is_empty() || (terminal && expects(schedule, ViolationKind::Liveness)) {
        return Ok(crate::liveness::replay_lasso(program.program(), schedule, traced));
    }
    if expects(schedule, ViolationKind::PossibleLiveness) || expects(schedule, ViolationKind::Liveness) {
        // Found by a sampling strategy's wrapper, which checks it again:
        // at the step that ended the execution hot, or at the step limit
        // (whose message names the hot streak, which the path alone sets:
        // any threshold below it reproduces it).
        // It judges terminal states as deadlocks are judged, and reports a
        // real deadlock only when the schedule counts them.
        let tempered = crate::liveness::Temperature::watched(program, schedule.max_steps, 0, schedule.deadlock);
        let judged = Schedule {
            deadlock: true,
            ..schedule.clone()
        };
        return follow_path(Watched::bare(&tempered), explorer, &judged, traced);
    }
    follow_path(program, explorer, schedule, traced)
}

/// Whether `schedule` expects a violation of `kind`.
fn expects(schedule: &Schedule, kind: ViolationKind) -> bool {
    schedule.expected.as_ref().is_some_and(|v| v.kind == kind)
}

/// [`follow`] of a path (no lasso).
fn follow_path<P: Program, E: Explorer>(
    program: Watched<'_, P>,
    explorer: Option<E>,
    schedule: &Schedule,
    traced: bool,
) -> Result<Execution, ReplayError> {
    let (max, deadlock) = (schedule.max_steps, schedule.deadlock);
    Ok(match schedule.kind {
        PathKind::Delays => {
            let wanted = schedule
                .explorer
                .as_deref()
                .ok_or(ReplayError::Invalid(ParseError::ExplorerNeeded))?;
            let explorer = explorer.ok_or_else(|| ReplayError::MissingExplorer {
                wanted: wanted.to_string(),
            })?;
            if explorer.name() != wanted {
                return Err(ReplayError::WrongExplorer {
                    wanted: wanted.to_string(),
                    given: explorer.name().to_string(),
                });
            }
            let explorer = prepare(program.program(), explorer, schedule.explorer_seed);
            execute_watched(
                program,
                &mut DelayDriver::new(explorer, &schedule.path),
                max,
                deadlock,
                traced,
            )
        }
        PathKind::Choices => execute_watched(program, &mut ChoiceDriver::new(&schedule.path), max, deadlock, traced),
    })
}

/// Replay `schedule` on `program` (`explorer` as for [`follow`]) and check
/// it: the trail of choice points, when the schedule has one, must match
/// step by step, the path must be followable, and the violation must be
/// the expected one (kind, machine, message, and step when recorded).
/// Without an expectation any outcome is accepted: the caller looks at
/// [`Execution::violation`].
///
/// ```
/// use mcheck_checker::explorers::RunToCompletion;
/// use mcheck_checker::testing::RandomProgram;
/// use mcheck_checker::{replay, search, Config, Schedule};
///
/// let program = RandomProgram::generate(1, false, true);
/// let report = search::ses(&program, RunToCompletion::new(), &Config::default()).unwrap();
/// if let Some(schedule) = report.schedule {
///     let text = schedule.to_text(); // what a test prints, or a person pastes
///     let parsed: Schedule = text.parse().unwrap();
///     let execution = replay(&program, Some(RunToCompletion::new()), &parsed, false).unwrap();
///     assert_eq!(execution.violation, report.violation);
/// }
/// ```
pub fn replay<P: Program, E: Explorer>(
    program: &P,
    explorer: Option<E>,
    schedule: &Schedule,
    traced: bool,
) -> Result<Execution, ReplayError> {
    replay_watched(Watched::bare(program), explorer, schedule, traced)
}

/// [`replay`] with the run's watch told of every step: a reachability
/// property's schedule replays to the state where the property holds only
/// when watched by [`crate::coverage::Covered::reaching`].
pub fn replay_watched<P: Program, E: Explorer>(
    program: Watched<'_, P>,
    explorer: Option<E>,
    schedule: &Schedule,
    traced: bool,
) -> Result<Execution, ReplayError> {
    let mut ex = follow_watched(program, explorer, schedule, traced || !schedule.trail.is_empty())?;
    if !traced {
        ex.trace.clear();
    }
    let diverged = |step: usize, what: Divergence| ReplayError::Diverged {
        step,
        what,
        cause: Cause::of(program.program(), schedule),
    };
    if let Some((step, (want, got))) = schedule
        .trail
        .iter()
        .zip(&ex.trail)
        .enumerate()
        .find(|(_, (want, got))| want != got)
    {
        return Err(diverged(
            step,
            Divergence::Trail {
                expected: *want,
                got: *got,
            },
        ));
    }
    if ex.end == End::Diverged {
        let message = ex.error.clone().unwrap_or_default();
        let prefix = format!("step {}: ", ex.steps);
        let message = message.strip_prefix(&prefix).unwrap_or(&message).to_string();
        return Err(diverged(ex.steps, Divergence::Unfollowable { message }));
    }
    if ex.trail.len() < schedule.trail.len() {
        return Err(diverged(
            ex.trail.len(),
            Divergence::Ended {
                expected_steps: schedule.trail.len(),
                steps: ex.steps,
                end: end_text(&ex),
            },
        ));
    }
    if let Some(expected) = &schedule.expected {
        let differs = differences(expected, schedule.expected_step, ex.violation.as_ref());
        if !differs.is_empty() {
            return Err(ReplayError::NotReproduced(Box::new(NotReproduced {
                expected: expected.clone(),
                expected_step: schedule.expected_step,
                got: ex.violation.clone(),
                differs,
                cause: Cause::of(program.program(), schedule),
                execution: ex,
            })));
        }
    }
    Ok(ex)
}

/// What of the expected violation the replay did not reproduce (every
/// field when it found none).
fn differences(expected: &Violation, step: Option<usize>, got: Option<&Found>) -> Vec<Field> {
    let Some(got) = got else {
        return vec![Field::Kind, Field::Machine, Field::Message, Field::Step];
    };
    let v = &got.violation;
    [
        (v.kind != expected.kind, Field::Kind),
        (v.machine != expected.machine, Field::Machine),
        (v.message != expected.message, Field::Message),
        (step.is_some_and(|s| s != got.step), Field::Step),
    ]
    .into_iter()
    .filter_map(|(differs, field)| differs.then_some(field))
    .collect()
}

/// How an execution ended, in words.
pub fn end_text(ex: &Execution) -> String {
    match ex.end {
        End::Violation => "violation".into(),
        End::Terminal => "terminated (nothing enabled)".into(),
        End::MaxSteps => "reached max-steps".into(),
        End::PathEnd => "end of the schedule's path".into(),
        End::Diverged => format!("diverged: {}", ex.error.as_deref().unwrap_or("?")),
    }
}

/// Why a replay did not reproduce its schedule.
#[derive(Clone, Debug)]
pub enum ReplayError {
    /// The schedule is malformed (built in code with a delay path and no
    /// explorer, say).
    Invalid(ParseError),
    /// A delay path needs its explorer and none was given.
    MissingExplorer {
        /// The explorer the schedule names.
        wanted: String,
    },
    /// The explorer given is not the one the schedule names.
    WrongExplorer {
        /// The explorer the schedule names.
        wanted: String,
        /// The one given.
        given: String,
    },
    /// The schedule is for another model.
    WrongModel {
        /// The model the schedule names.
        schedule: String,
        /// The model asked to replay it.
        model: String,
    },
    /// The schedule's parameters or bug do not fit the model.
    NotForModel(ParamError),
    /// The execution left the recorded one at `step`.
    Diverged {
        /// The step (from 0).
        step: usize,
        /// What differs there.
        what: Divergence,
        /// Why, as far as can be told.
        cause: Cause,
    },
    /// The execution followed the schedule but did not end with the
    /// expected violation.
    NotReproduced(Box<NotReproduced>),
}

/// What differs at the step where a replay diverged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Divergence {
    /// Another choice point than the recorded one.
    Trail {
        /// The recorded choice point.
        expected: TrailStep,
        /// The replay's.
        got: TrailStep,
    },
    /// The execution stopped before the recorded trail did.
    Ended {
        /// The recorded trail's length.
        expected_steps: usize,
        /// Steps executed.
        steps: usize,
        /// How the execution ended, in words.
        end: String,
    },
    /// The path takes a choice that the state does not offer.
    Unfollowable {
        /// Which choice, and what the state offers.
        message: String,
    },
}

/// A replay that did not end with the expected violation.
#[derive(Clone, Debug)]
pub struct NotReproduced {
    /// The violation the schedule expects.
    pub expected: Violation,
    /// At which step, if recorded.
    pub expected_step: Option<usize>,
    /// What the replay found instead, if anything.
    pub got: Option<Found>,
    /// The fields that differ (all of them when nothing was found).
    pub differs: Vec<Field>,
    /// Why, as far as can be told.
    pub cause: Cause,
    /// The execution, traced if asked.
    pub execution: Execution,
}

/// A field of an expected violation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// [`Violation::kind`].
    Kind,
    /// [`Violation::machine`].
    Machine,
    /// [`Violation::message`].
    Message,
    /// The step.
    Step,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Field::Kind => "kind",
            Field::Machine => "machine",
            Field::Message => "message",
            Field::Step => "step",
        }
    }
}

/// Why a replay differs from its schedule, decided by the schedule's
/// checksum ([`Schedule::is_edited`]) and the model's digest
/// ([`model_digest`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// The schedule was changed after it was made: its checksum does not
    /// match its contents.
    Edited,
    /// The model changed since the schedule was made: its digest
    /// (parameters, bug, initial state) differs.
    ModelChanged,
    /// Same schedule, same model digest, different behaviour.
    Nondeterministic,
    /// The schedule lacks what it takes to tell.
    Undetermined {
        /// It carries a checksum (so it was not edited).
        sealed: bool,
        /// It carries a model digest (and the digest matches).
        digest: bool,
    },
}

impl Cause {
    /// The cause of a difference between `schedule` and its replay on
    /// `program`.
    pub fn of<P: Program>(program: &P, schedule: &Schedule) -> Cause {
        let edited = schedule.is_edited();
        if edited == Some(true) {
            return Cause::Edited;
        }
        let same_model = (!schedule.digest.is_empty()).then(|| schedule.digest == model_digest(program, schedule));
        match (edited, same_model) {
            (_, Some(false)) => Cause::ModelChanged,
            (Some(false), Some(true)) => Cause::Nondeterministic,
            (edited, same_model) => Cause::Undetermined {
                sealed: edited.is_some(),
                digest: same_model.is_some(),
            },
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Cause::Edited => "the schedule was edited after it was made (its checksum no longer matches its contents): the edit, not the model, changed the outcome",
            Cause::ModelChanged => "the model changed since the schedule was saved (its digest differs: parameters, bug or initial state)",
            Cause::Nondeterministic => "the model is nondeterministic (same schedule, same digest, different behaviour); usual causes: hash-map iteration order, time, global or thread-local state, randomness not from the schedule",
            Cause::Undetermined { sealed: false, digest: false } => "the schedule carries no checksum and no model digest, so it may have been edited, or the model changed or is nondeterministic",
            Cause::Undetermined { sealed: false, digest: true } => "the model's digest is unchanged, so either the schedule was edited (it carries no checksum to tell) or the model is nondeterministic",
            Cause::Undetermined { .. } => "the schedule is as it was made, so the model changed since or is nondeterministic (the text form carries no model digest to tell which)",
        })
    }
}

fn expected_text(v: &Violation, step: Option<usize>) -> String {
    match step {
        Some(s) => format!("{v} at step {s}"),
        None => v.to_string(),
    }
}

impl fmt::Display for NotReproduced {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let expected = expected_text(&self.expected, self.expected_step);
        match &self.got {
            None => write!(
                f,
                "the replay ended ({}) after {} steps without the expected violation ({expected}); {}",
                end_text(&self.execution),
                self.execution.steps,
                self.cause
            ),
            Some(got) => {
                let fields: Vec<&str> = self.differs.iter().map(|d| d.name()).collect();
                write!(
                    f,
                    "the replay did not reproduce the expected violation: the {} differ{} (expected {expected}, got {} at step {}); {}",
                    fields.join(", "),
                    if fields.len() == 1 { "s" } else { "" },
                    got.violation,
                    got.step,
                    self.cause
                )
            }
        }
    }
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Divergence::Trail { expected, got } => write!(f, "expected {expected}, found {got}"),
            Divergence::Ended {
                expected_steps,
                steps,
                end,
            } => write!(
                f,
                "the schedule expects {expected_steps} steps, the replay stopped after {steps} ({end})"
            ),
            Divergence::Unfollowable { message } => f.write_str(message),
        }
    }
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayError::Invalid(e) => fmt::Display::fmt(e, f),
            ReplayError::MissingExplorer { wanted } => {
                write!(
                    f,
                    "the schedule's delay path needs its explorer {wanted:?}, and none was given"
                )
            }
            ReplayError::WrongExplorer { wanted, given } => write!(
                f,
                "the schedule was made with explorer {wanted:?}, not {given:?}: replay it with {wanted:?}"
            ),
            ReplayError::WrongModel { schedule, model } => {
                write!(f, "the schedule is for model {schedule:?}, not {model:?}")
            }
            ReplayError::NotForModel(e) => fmt::Display::fmt(e, f),
            ReplayError::Diverged { step, what, cause } => write!(f, "replay diverged at step {step}: {what}; {cause}"),
            ReplayError::NotReproduced(n) => fmt::Display::fmt(n, f),
        }
    }
}

impl std::error::Error for ReplayError {}
