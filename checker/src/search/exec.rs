//! Executing one schedule from the initial state (the drivers that replay
//! uses), and the conversion of the search's raw paths into schedules.
//!
//! A [`Driver`] picks the choice at every step; [`execute`] runs the program
//! with it, optionally building the human trace and the trail of choice
//! points.

use super::error::SearchError;
use super::order::{ChoiceOrder, Composed, EnabledSet};
use crate::cache::fingerprint;
use crate::explorer::Explorer;
use crate::program::ProgramExt;
use crate::program::{ActorId, Enabled, Event, Program, StepTrace};
use crate::report::Found;
use crate::schedule::{PathKind, Schedule, TrailStep};
use crate::watch::Watched;

/// How an execution ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// A violation (see [`Execution::violation`]).
    Violation,
    /// Nothing is enabled.
    Terminal,
    /// The step limit was reached.
    MaxSteps,
    /// A choice path ran out of choices.
    PathEnd,
    /// The driver could not follow its schedule (see [`Execution::error`]).
    Diverged,
}

/// The result of one execution.
#[derive(Clone, Debug)]
pub struct Execution {
    /// Steps executed.
    pub steps: usize,
    /// How it ended.
    pub end: End,
    /// The violation, if any.
    pub violation: Option<Found>,
    /// The human trace (when asked for).
    pub trace: Vec<StepTrace>,
    /// The choice points met (when asked for).
    pub trail: Vec<TrailStep>,
    /// Why the driver diverged.
    pub error: Option<String>,
}

/// Picks the choice of each step.
pub trait Driver {
    /// The choice at step `step`, or `Ok(None)` to stop (path exhausted),
    /// or `Err` when the schedule cannot be followed.
    fn choose(&mut self, step: usize, en: &[Enabled], ids: &[ActorId]) -> Result<Option<(ActorId, u32)>, String>;
    /// Observe the transition just taken.
    fn observe(&mut self, actor: ActorId, events: &[Event]);
}

/// A digest of an enabled set, for the trail.
pub fn enabled_digest(en: &[Enabled]) -> u64 {
    let pairs: Vec<(u32, u32)> = en.iter().map(|e| (e.actor.0, e.alternatives)).collect();
    fingerprint(&pairs)
}

/// Run `program` from its initial state as `driver` says, for at most
/// `max_steps` steps.
pub fn execute<P: Program, D: Driver>(
    program: &P,
    driver: &mut D,
    max_steps: usize,
    deadlock: bool,
    traced: bool,
) -> Execution {
    execute_watched(Watched::bare(program), driver, max_steps, deadlock, traced)
}

/// [`execute`] with the run's watch told of every step.
pub fn execute_watched<P: Program, D: Driver>(
    program: Watched<'_, P>,
    driver: &mut D,
    max_steps: usize,
    deadlock: bool,
    traced: bool,
) -> Execution {
    let mut s = program.initial();
    let mut en = Vec::new();
    let mut ids = Vec::new();
    let mut events = Vec::new();
    let mut ex = Execution {
        steps: 0,
        end: End::MaxSteps,
        violation: None,
        trace: Vec::new(),
        trail: Vec::new(),
        error: None,
    };
    while ex.steps < max_steps {
        en.clear();
        program.enabled(&s, &mut en);
        if en.is_empty() {
            ex.end = End::Terminal;
            if deadlock && let Some(v) = program.deadlock(&s) {
                ex.end = End::Violation;
                ex.violation = Some(Found {
                    violation: v,
                    step: ex.steps,
                });
            }
            return ex;
        }
        ids.clear();
        ids.extend(en.iter().map(|e| e.actor));
        let (actor, alt) = match driver.choose(ex.steps, &en, &ids) {
            Ok(Some(c)) => c,
            Ok(None) => {
                ex.end = End::PathEnd;
                return ex;
            }
            Err(e) => {
                ex.end = End::Diverged;
                ex.error = Some(e);
                return ex;
            }
        };
        let alternatives = match ids.binary_search(&actor) {
            Ok(i) => en[i].alternatives,
            Err(_) => {
                ex.end = End::Diverged;
                ex.error = Some(format!(
                    "step {}: actor {actor} is not enabled (enabled: {ids:?})",
                    ex.steps
                ));
                return ex;
            }
        };
        if alt >= alternatives {
            ex.end = End::Diverged;
            ex.error = Some(format!(
                "step {}: actor {actor} has {alternatives} alternatives, not {}",
                ex.steps,
                alt + 1
            ));
            return ex;
        }
        if traced {
            ex.trail.push(TrailStep {
                actor: actor.0,
                alt,
                enabled: enabled_digest(&en),
            });
        }
        events.clear();
        let result = if traced {
            let mut t = StepTrace {
                step: ex.steps,
                actor,
                actor_name: program.actor_name(&s, actor),
                alternative: alt,
                alternatives,
                ..StepTrace::default()
            };
            let r = program.execute_traced(&mut s, actor, alt, &mut events, &mut t);
            ex.trace.push(t);
            r
        } else {
            program.execute(&mut s, actor, alt, &mut events)
        };
        if let Err(v) = result {
            ex.end = End::Violation;
            ex.violation = Some(Found {
                violation: v,
                step: ex.steps,
            });
            ex.steps += 1;
            return ex;
        }
        driver.observe(actor, &events);
        ex.steps += 1;
    }
    ex
}

/// Follows a delay path with an explorer (the composed delay rule).
#[derive(Debug)]
pub struct DelayDriver<E> {
    order: Composed<E>,
    /// Steps at which a delay is taken, non-decreasing.
    delays_at: Vec<u64>,
    cursor: usize,
}

impl<E: Explorer> DelayDriver<E> {
    /// Follow `path` (p0, p1, ...: steps between delays) with `explorer`,
    /// already seeded and initialised.
    pub fn new(explorer: E, path: &[u64]) -> Self {
        let mut at = 0u64;
        let delays_at = path
            .iter()
            .map(|p| {
                at += p;
                at
            })
            .collect();
        DelayDriver {
            order: Composed::new(explorer),
            delays_at,
            cursor: 0,
        }
    }
}

impl<E: Explorer> Driver for DelayDriver<E> {
    fn choose(&mut self, step: usize, en: &[Enabled], ids: &[ActorId]) -> Result<Option<(ActorId, u32)>, String> {
        let set = EnabledSet::new(en, ids);
        while self.cursor < self.delays_at.len() && self.delays_at[self.cursor] == step as u64 {
            self.order.advance(&set);
            self.cursor += 1;
        }
        Ok(Some(self.order.current(&set)))
    }
    fn observe(&mut self, actor: ActorId, events: &[Event]) {
        self.order = self.order.child(actor, events);
    }
}

/// Follows a choice path: at each step, the index of the choice among the
/// alternatives of the enabled actors in id order.
#[derive(Debug)]
pub struct ChoiceDriver<'a> {
    path: &'a [u64],
}

impl<'a> ChoiceDriver<'a> {
    /// Follow `path`.
    pub fn new(path: &'a [u64]) -> Self {
        ChoiceDriver { path }
    }
}

/// The choice with flat index `index` (alternatives of the enabled actors
/// in id order), if there is one.
pub fn choice_at(en: &[Enabled], mut index: u64) -> Option<(ActorId, u32)> {
    for e in en {
        if index < e.alternatives as u64 {
            return Some((e.actor, index as u32));
        }
        index -= e.alternatives as u64;
    }
    None
}

/// The flat index of a choice (inverse of [`choice_at`]).
pub fn index_of(en: &[Enabled], actor: ActorId, alt: u32) -> u64 {
    let mut index = 0u64;
    for e in en {
        if e.actor == actor {
            return index + alt as u64;
        }
        index += e.alternatives as u64;
    }
    index
}

impl Driver for ChoiceDriver<'_> {
    fn choose(&mut self, step: usize, en: &[Enabled], _ids: &[ActorId]) -> Result<Option<(ActorId, u32)>, String> {
        let Some(&index) = self.path.get(step) else {
            return Ok(None);
        };
        let total: u64 = en.iter().map(|e| e.alternatives as u64).sum();
        choice_at(en, index)
            .map(Some)
            .ok_or_else(|| format!("step {step}: the schedule takes choice {index} but the state has only {total}"))
    }
    fn observe(&mut self, _actor: ActorId, _events: &[Event]) {}
}

/// Follows a choice order with advances at given depths, recording the flat
/// choice index of every step (turns a PB/DFS raw path into a choice path).
struct AdvanceDriver<O> {
    order: O,
    advances: Vec<(u32, u32)>,
    cursor: usize,
    taken: Vec<u64>,
}

impl<O: ChoiceOrder> Driver for AdvanceDriver<O> {
    fn choose(&mut self, step: usize, en: &[Enabled], ids: &[ActorId]) -> Result<Option<(ActorId, u32)>, String> {
        let set = EnabledSet::new(en, ids);
        while self.cursor < self.advances.len() && self.advances[self.cursor].0 as usize == step {
            for _ in 0..self.advances[self.cursor].1 {
                self.order.advance(&set);
            }
            self.cursor += 1;
        }
        let (actor, alt) = self.order.current(&set);
        self.taken.push(index_of(en, actor, alt));
        Ok(Some((actor, alt)))
    }
    fn observe(&mut self, actor: ActorId, events: &[Event]) {
        self.order = self.order.child(actor, events);
    }
}

/// The choice path of the first `steps` steps of the execution that
/// `advances` describe under `root` (a search's raw path).
pub(super) fn choices_path<P: Program, O: ChoiceOrder>(
    program: &P,
    root: O,
    advances: Vec<(u32, u32)>,
    steps: usize,
) -> Result<Vec<u64>, SearchError> {
    let mut d = AdvanceDriver {
        order: root,
        advances,
        cursor: 0,
        taken: Vec::new(),
    };
    let ex = execute(program, &mut d, steps, false, false);
    if ex.error.is_some() || d.taken.len() != steps {
        return Err(SearchError::Internal(format!(
            "the search's path of {steps} steps replays as {} steps ({:?}{}); is the program deterministic?",
            d.taken.len(),
            ex.end,
            ex.error.map(|e| format!(": {e}")).unwrap_or_default()
        )));
    }
    Ok(d.taken)
}

/// The schedule of a counterexample: `path` (of `kind`) with the explorer
/// and its seed, the step limit, whether deadlocks are violations, and the
/// violation `found` it reproduces, so that it replays on its own.
pub(super) fn schedule(
    kind: PathKind,
    explorer: Option<&str>,
    seed: u64,
    max_steps: usize,
    deadlock: bool,
    path: Vec<u64>,
    found: &Found,
) -> Schedule {
    let mut schedule = Schedule::new(kind, explorer, seed, max_steps, path);
    schedule.deadlock = deadlock;
    schedule.expect(&found.violation, found.step);
    schedule
}

/// The delay path (p0, p1, ...) of a list of (depth, count) advances.
pub fn delay_path(advances: &[(u32, u32)]) -> Vec<u64> {
    let mut out = Vec::new();
    let mut prev = 0u64;
    for &(depth, count) in advances {
        for _ in 0..count {
            out.push(depth as u64 - prev);
            prev = depth as u64;
        }
    }
    out
}
