//! Re-executing a counterexample's steps in another order: the one loop
//! that runs the original execution (with views) and every race variant
//! (ARCHITECTURE.md, "Races").
//!
//! A plan is a list of steps, each "this actor, receiving this message"
//! (by its text and what the network did with it) or, for a step that
//! takes no message, "this actor, this alternative". At each planned step:
//!
//! * the actor is not enabled: the step is **postponed**: it is retried,
//!   oldest first, before every later step, and taken as soon as its actor
//!   is enabled;
//! * the actor is enabled: the plan's alternative is tried first, then the
//!   others in order; the first whose step receives the wanted message is
//!   taken. When none does, the plan's alternative (or 0 when it is out of
//!   range) is taken anyway and the step counts as **changed**.
//!
//! After the plan, when asked to *complete*, the run goes on with the first
//! enabled actor's alternative 0 at every step (postponed steps still
//! first) until nothing is enabled or the step limit is reached, so that a
//! violation checked at the end of the protocol can still show. Postponed
//! steps never taken are **impossible**. The run stops at a violation; when
//! it ends with nothing enabled and deadlocks are violations, the deadlock
//! check runs.

use crate::program::ProgramExt;
use crate::program::{ActorId, Event, Program, StateView, StepTrace};
use crate::report::Found;

/// What the network did with a message a step took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Action {
    /// Delivered (handled or ignored).
    Deliver,
    /// Dropped by the network.
    Drop,
    /// Delivered and kept pending.
    Duplicate,
}

/// The message a step took: its text and what the network did with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Receipt {
    pub text: String,
    pub action: Action,
}

/// The receipt of a traced step that took a message (`resumed`: the actor
/// was suspended at a choice, so the step continues a handler instead).
pub(super) fn receipt(t: &StepTrace, resumed: bool) -> Option<Receipt> {
    // The machine runtime's notes (machine/network.rs) name the action.
    let noted = |prefix: &str| t.notes.iter().any(|n| n.starts_with(prefix));
    let action = if noted("dropped by the network") {
        Action::Drop
    } else if noted("duplicated by the network") {
        Action::Duplicate
    } else {
        Action::Deliver
    };
    let text = t.handled.clone().filter(|_| !resumed)?;
    Some(Receipt { text, action })
}

/// One planned step.
#[derive(Clone, Debug)]
pub(super) struct Planned {
    pub actor: ActorId,
    pub alt: u32,
    pub wants: Option<Receipt>,
}

/// One step as it ran.
#[derive(Clone, Debug)]
pub(super) struct Ran {
    pub trace: StepTrace,
    /// Receivers of the messages sent, in `trace.sent`'s order (messages
    /// to halted machines left out).
    pub sent_to: Vec<ActorId>,
    /// Actors created.
    pub created: Vec<ActorId>,
}

/// The result of running a plan.
#[derive(Clone, Debug, Default)]
pub(super) struct Run {
    pub steps: Vec<Ran>,
    /// `views[0]` is the initial state's, `views[i + 1]` the state's after
    /// step i (when asked for).
    pub views: Vec<StateView>,
    pub violation: Option<Found>,
    /// Planned steps whose actor was not enabled.
    pub skipped: Vec<usize>,
    /// Planned steps that could not receive the wanted message.
    pub changed: Vec<usize>,
}

/// The view of `s`: the program's own, or the `Debug` of the whole state.
pub(super) fn view_of<P: Program>(program: &P, s: &P::State) -> StateView {
    program.view(s).unwrap_or_else(|| StateView {
        actors: Vec::new(),
        monitors: format!("{s:?}"),
    })
}

/// How to run a plan.
#[derive(Clone, Copy, Debug)]
pub(super) struct Mode {
    /// Deadlocks are violations.
    pub deadlock: bool,
    /// Record the view of every state.
    pub views: bool,
    /// Go on after the plan, up to this many steps in all (0: stop at the
    /// end of the plan).
    pub complete: usize,
}

/// Run `plan` from the initial state (see the module's docs).
pub(super) fn run<P: Program>(program: &P, plan: &[Planned], mode: Mode) -> Run {
    let mut s = program.initial();
    let mut out = Run::default();
    if mode.views {
        out.views.push(view_of(program, &s));
    }
    let mut en = Vec::new();
    let mut events = Vec::new();
    let mut postponed: Vec<usize> = Vec::new();
    let mut next = 0;
    let default = Planned {
        actor: ActorId(0),
        alt: 0,
        wants: None,
    };
    loop {
        en.clear();
        program.enabled(&s, &mut en);
        let enabled = |a: ActorId| en.iter().find(|e| e.actor == a).map(|e| e.alternatives);
        // The step to take: a postponed one whose actor is enabled, else
        // the next planned one (postponed when its actor is not enabled),
        // else, when completing, the first enabled actor.
        let mut pick = postponed
            .iter()
            .position(|&i| enabled(plan[i].actor).is_some())
            .map(|k| postponed.remove(k));
        while pick.is_none() && next < plan.len() {
            if enabled(plan[next].actor).is_some() {
                pick = Some(next);
            } else {
                postponed.push(next);
            }
            next += 1;
        }
        let p = match pick {
            Some(i) => &plan[i],
            None if next >= plan.len() && out.steps.len() < mode.complete && !en.is_empty() => &Planned {
                actor: en[0].actor,
                ..default.clone()
            },
            None => break,
        };
        let n = enabled(p.actor).expect("picked an enabled actor");
        let base = StepTrace {
            step: out.steps.len(),
            actor: p.actor,
            actor_name: program.actor_name(&s, p.actor),
            alternatives: n,
            ..StepTrace::default()
        };
        let first = if p.alt < n { p.alt } else { 0 };
        let mut fallback = None;
        let mut chosen = None;
        for alt in std::iter::once(first).chain((0..n).filter(|&a| a != first)) {
            let mut after = s.clone();
            let mut t = StepTrace {
                alternative: alt,
                ..base.clone()
            };
            events.clear();
            let result = program.execute_traced(&mut after, p.actor, alt, &mut events, &mut t);
            let attempt = (after, t, result, events.clone());
            match &p.wants {
                Some(w) if receipt(&attempt.1, false).as_ref() != Some(w) => {
                    fallback.get_or_insert(attempt);
                }
                _ => {
                    chosen = Some(attempt);
                    break;
                }
            }
        }
        let (after, trace, result, events) = match chosen {
            Some(c) => c,
            None => {
                out.changed.extend(pick);
                fallback.expect("an enabled actor has at least one alternative")
            }
        };
        s = after;
        let step = out.steps.len();
        out.steps.push(Ran {
            sent_to: events
                .iter()
                .filter_map(|e| match e {
                    Event::Sent { to, .. } => Some(*to),
                    _ => None,
                })
                .collect(),
            created: events
                .iter()
                .filter_map(|e| match e {
                    Event::Created(info) => Some(info.id),
                    _ => None,
                })
                .collect(),
            trace,
        });
        if mode.views {
            out.views.push(view_of(program, &s));
        }
        if let Err(violation) = result {
            out.violation = Some(Found { violation, step });
            out.skipped = postponed;
            return out;
        }
    }
    out.skipped = postponed;
    if mode.deadlock && en.is_empty() {
        out.violation = program.deadlock(&s).map(|violation| Found {
            violation,
            step: out.steps.len(),
        });
    }
    out
}
