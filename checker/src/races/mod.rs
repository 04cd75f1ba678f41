//! Explaining a counterexample: its happens-before order, its races, and
//! which races the violation depends on (ARCHITECTURE.md, "Races").
//!
//! [`explain`] re-executes a traced execution step by step, recording a
//! [`StateView`] of every state (each actor's state and inbox, the
//! monitors), matches every message with the steps that sent and took it,
//! computes vector clocks over sends, receipts and creations, and lists the
//! races: two messages received by the same actor that could have been
//! received in the other order. For each race it runs a *variant*: the same
//! steps with the two receipts flipped (the second message's send and its
//! causal past moved before the point that fixed the order), everything
//! else kept where possible, and says whether the violation still happens
//! and which steps the flip made impossible or changed.

mod hb;
mod text;
mod variant;

use crate::explorer::Explorer;
use crate::instance::Instance;
use crate::model::Model;
use crate::program::{ActorId, Program, StateView, StepTrace};
use crate::replay::{ReplayError, replay};
use crate::report::Found;
use crate::schedule::Schedule;
use crate::search::exec::Execution;
use serde::Serialize;
use std::fmt;
use variant::{Mode, Planned, receipt, run};

/// A message of the execution.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Message {
    /// The sender; `None` for a message the set-up queued.
    pub from: Option<ActorId>,
    /// The sender's name (`"set-up"` for the set-up).
    pub from_name: String,
    /// The receiver.
    pub to: ActorId,
    /// The receiver's name.
    pub to_name: String,
    /// The message, as text (its `Debug`).
    pub text: String,
    /// The step that sent it (`None`: the set-up).
    pub sent_at: Option<usize>,
    /// The step that received it, if any.
    pub received_at: Option<usize>,
    /// The step at which the network dropped it, if it did.
    pub dropped_at: Option<usize>,
    /// The steps that received a duplicate of it.
    pub duplicated_at: Vec<usize>,
    /// True when the network delivers it unordered.
    pub unordered: bool,
}

/// A race variant: the execution re-run with one race flipped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Variant {
    /// The violation of the variant, if it has one.
    pub violation: Option<Found>,
    /// True when that violation is the counterexample's bug (same kind and
    /// machine, [`crate::Violation::same_bug`]).
    pub violates: bool,
    /// Steps the variant ran.
    pub steps: usize,
    /// Steps moved before the point that fixed the order (the second
    /// message's send and its causal past).
    pub moved: usize,
    /// Steps of the counterexample (by their original index) the flip made
    /// impossible: their actor was never enabled again.
    pub impossible: Vec<usize>,
    /// Steps of the counterexample that ran but could not receive the
    /// message they received originally.
    pub changed: Vec<usize>,
}

/// A race: `first` was received before `second` (received later or still
/// in flight at the end) by the same actor, and could have been received
/// after it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Race {
    /// Index of the message received first, in [`Explanation::messages`].
    pub first: usize,
    /// Index of the message received second.
    pub second: usize,
    /// True when either is delivered unordered.
    pub unordered: bool,
    /// The execution with the two receipts flipped.
    pub variant: Variant,
}

impl Race {
    /// True when flipping the race removes the violation.
    pub fn responsible(&self) -> bool {
        !self.variant.violates
    }
}

/// A counterexample explained: its steps with the state after each, its
/// messages, happens-before order and races.
#[derive(Clone, Debug, Serialize)]
pub struct Explanation {
    /// The steps.
    pub trace: Vec<StepTrace>,
    /// `views[0]` is the initial state's; `views[i + 1]` the state's after
    /// step i (after a violating step: as far as the step got).
    pub views: Vec<StateView>,
    /// The violation.
    pub violation: Option<Found>,
    /// Every message sent (or queued by the set-up) and taken.
    pub messages: Vec<Message>,
    /// The vector clock of each step (indexed by actor id).
    pub clocks: Vec<Vec<u32>>,
    /// The races, ordered by the second receipt, then the first.
    pub races: Vec<Race>,
}

/// Why an execution cannot be explained.
#[derive(Clone, Debug)]
pub enum ExplainError {
    /// The execution was not traced (it has no trail of choices).
    NotTraced,
    /// Re-executing the execution's choices gave another execution (the
    /// program is nondeterministic).
    Differs {
        /// The first step that differs.
        step: usize,
    },
    /// The schedule did not replay.
    Replay(ReplayError),
}

impl fmt::Display for ExplainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExplainError::NotTraced => f.write_str("the execution to explain was not traced (it has no trail)"),
            ExplainError::Differs { step } => write!(
                f,
                "re-executing the counterexample differs from it at step {step}: the model is nondeterministic"
            ),
            ExplainError::Replay(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for ExplainError {}

/// Explain `ex`, an execution of `program` traced by replay (its trail
/// gives the choices); `deadlock` and `max_steps` as in its schedule (a
/// variant runs to the end of the program, at most `max_steps` steps).
pub fn explain<P: Program>(
    program: &P,
    ex: &Execution,
    deadlock: bool,
    max_steps: usize,
) -> Result<Explanation, ExplainError> {
    if ex.trail.len() < ex.trace.len() || (ex.steps > 0 && ex.trail.is_empty()) {
        return Err(ExplainError::NotTraced);
    }
    let plan: Vec<Planned> = ex
        .trail
        .iter()
        .map(|t| Planned {
            actor: ActorId(t.actor),
            alt: t.alt,
            wants: None,
        })
        .collect();
    let mode = Mode {
        deadlock,
        views: true,
        complete: 0,
    };
    let original = run(program, &plan, mode);
    if let Some(step) = (0..ex.trace.len().max(original.steps.len()))
        .find(|&i| ex.trace.get(i) != original.steps.get(i).map(|r| &r.trace))
    {
        return Err(ExplainError::Differs { step });
    }
    let resumed = hb::resumed(&original.steps, &original.views);
    let messages = hb::messages(&original.steps, &original.views, &resumed);
    let clocks = hb::clocks(&original.steps, &messages);
    // The plan of a variant: every step wants what it took originally.
    let plan: Vec<Planned> = original
        .steps
        .iter()
        .zip(&resumed)
        .map(|(r, &resumed)| Planned {
            actor: r.trace.actor,
            alt: r.trace.alternative,
            wants: receipt(&r.trace, resumed),
        })
        .collect();
    let stop = original.violation.as_ref().map(|f| f.step);
    let races = hb::races(&messages, &clocks, stop)
        .into_iter()
        .map(|(first, second, unordered)| {
            let (flipped, order, moved) =
                flip(&plan, &resumed, &clocks, &messages[first], &messages[second], unordered);
            let mode = Mode {
                views: false,
                complete: max_steps,
                ..mode
            };
            let v = run(program, &flipped, mode);
            let violates = match (&v.violation, &original.violation) {
                (Some(a), Some(b)) => a.violation.same_bug(&b.violation),
                _ => false,
            };
            let original_index = |planned: &[usize]| -> Vec<usize> {
                let mut at: Vec<usize> = planned.iter().map(|&i| order[i]).collect();
                at.sort_unstable();
                at
            };
            Race {
                first,
                second,
                unordered,
                variant: Variant {
                    violates,
                    violation: v.violation,
                    steps: v.steps.len(),
                    moved,
                    impossible: original_index(&v.skipped),
                    changed: original_index(&v.changed),
                },
            }
        })
        .collect();
    Ok(Explanation {
        trace: original.steps.into_iter().map(|r| r.trace).collect(),
        views: original.views,
        violation: original.violation,
        messages,
        clocks: clocks.clocks,
        races,
    })
}

/// Replay `schedule` on the program `model` builds (see
/// [`crate::replay_model`]; `explorer` as there) and explain it.
///
/// ```
/// use mcheck_checker::explorers::RunToCompletion;
/// use mcheck_checker::{explain_model, Schedule};
/// use mcheck_models::lostupdate::LostUpdate;
///
/// let text = "mcheck2:lostupdate:p=clients=2,increments=1:bug=1:e=rtc:seed=0:max-steps=10000:v=monitor:at=9:by=counter:msg=all+2+clients+are+done+but+the+counter+is+1+instead+of+2%3A+an+increment+was+lost:d=1:sum=e4fc47ee22c00e30";
/// let schedule: Schedule = text.parse().unwrap();
/// let explained = explain_model(&LostUpdate, Some(RunToCompletion::new()), &schedule).unwrap();
/// // Of its three races, flipping race 2 alone removes the lost update.
/// assert_eq!(explained.races.len(), 3);
/// assert!(explained.summary().contains("race 2: server0 received Read"));
/// ```
pub fn explain_model<M: Model, E: Explorer>(
    model: &M,
    explorer: Option<E>,
    schedule: &Schedule,
) -> Result<Explanation, ExplainError> {
    let program = Instance::of_schedule(model, schedule)
        .map_err(ExplainError::Replay)?
        .build(model);
    let ex = replay(&program, explorer, schedule, true).map_err(ExplainError::Replay)?;
    explain(&program, &ex, schedule.deadlock, schedule.max_steps)
}

/// The plan of the variant of the race (`x` received before `y`): the
/// point that fixed their order is `x`'s send (FIFO) or `x`'s receipt
/// (unordered), taken back to the start of its handler when it continues a
/// choice; `y`'s send and the steps after that point in its causal past
/// move just before it; the receiver takes `y` where it took `x` and `x`
/// where it took `y` (if it did). Returns the plan, the original index of each planned
/// step, and how many steps moved.
fn flip(
    plan: &[Planned],
    resumed: &[bool],
    hb: &hb::Clocks,
    x: &Message,
    y: &Message,
    unordered: bool,
) -> (Vec<Planned>, Vec<usize>, usize) {
    let (rx, ry) = (x.received_at.expect("raced"), y.received_at);
    let mut p = if unordered {
        rx
    } else {
        x.sent_at.expect("FIFO races have sends")
    };
    while p > 0 && resumed[p] {
        p -= 1;
    }
    let moved: Vec<usize> = match y.sent_at {
        Some(k) if k > p => (p + 1..=k).filter(|&t| t == k || hb.before(t, k)).collect(),
        _ => Vec::new(),
    };
    let order: Vec<usize> = (0..p)
        .chain(moved.iter().copied())
        .chain((p..plan.len()).filter(|t| !moved.contains(t)))
        .collect();
    let wants = |m: &Message, at: usize| {
        plan[at].wants.clone().map(|w| variant::Receipt {
            text: m.text.clone(),
            ..w
        })
    };
    let flipped = order
        .iter()
        .map(|&t| match t {
            t if t == rx => Planned {
                wants: wants(y, t),
                ..plan[t].clone()
            },
            t if Some(t) == ry => Planned {
                wants: wants(x, t),
                ..plan[t].clone()
            },
            t => plan[t].clone(),
        })
        .collect();
    (flipped, order, moved.len())
}
