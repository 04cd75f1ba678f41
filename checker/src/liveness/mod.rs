//! Liveness checking (ARCHITECTURE.md, "Liveness").
//!
//! A program marks states **hot** ([`Program::liveness`], whose
//! [`Monitors`](crate::program::Monitors) say so): some monitor is owed
//! something. A liveness violation is
//!
//! * a reachable cycle of hot states that is **weakly fair**: every actor
//!   enabled at every state of the cycle takes a step in it (an actor that
//!   could always move is not starved forever by the scheduler; one that
//!   is sometimes disabled, waiting for a message, need not run), or
//! * a reachable terminal state (nothing enabled) that is hot.
//!
//! [`check`] finds them exactly, after an exhaustive search has verified
//! the program's safety: it builds the reachable graph breadth first by
//! fingerprint (`graph`), decomposes its hot part into strongly connected
//! components (`scc`) and reports the fair one reached first, as a lasso
//! (`lasso`): a choice path to the cycle's first state and the cycle.
//! [`replay_lasso`] checks a lasso. The sampling strategies run on
//! [`Temperature`] instead, which reports *possible* violations.

mod graph;
mod lasso;
mod scc;
mod temperature;

pub use lasso::{cycle_of, replay_lasso};
pub use temperature::{Temperature, Tempered};

use crate::config::Config;
use crate::program::{Program, ViolationKind};
use crate::report::{BoundedBy, Found, Outcome, Report};
use crate::schedule::{PathKind, Schedule};
use std::time::Instant;

/// Whether a monitor of `program` is hot in `s` (never, for a program
/// without [`Program::liveness`]).
pub fn is_hot<P: Program>(program: &P, s: &P::State) -> bool {
    program.liveness().is_some_and(|m| m.hot(s))
}

/// What the liveness check measured.
#[derive(Clone, Debug, PartialEq)]
pub struct LivenessStats {
    /// States in the graph.
    pub states: u64,
    /// Transitions in the graph.
    pub transitions: u64,
    /// Hot states.
    pub hot: u64,
    /// Bytes the graph stored on top of the fingerprints' map entries
    /// included (tree edges, edge offsets, temperatures, edges).
    pub bytes: u64,
    /// Wall-clock seconds.
    pub elapsed_s: f64,
}

/// The result of [`check`].
#[derive(Clone, Debug)]
pub enum Liveness {
    /// No fair hot cycle and no terminal hot state is reachable.
    Holds(LivenessStats),
    /// A violation and its lasso (a choice path, its cycle in
    /// [`Schedule::cycle`]; the model fields are the caller's to fill).
    Violated(Found, Box<Schedule>, LivenessStats),
    /// A budget of `config` stopped the graph's construction.
    Bounded(BoundedBy),
}

/// Look for a liveness violation of `program` over its whole reachable
/// state graph (see the module docs), within `config`'s state, time and
/// stop budgets. Transitions that violate safety lead nowhere.
pub fn check<P: Program>(program: &P, config: &Config) -> Liveness {
    let started = Instant::now();
    let g = match graph::build(program, config, started) {
        Ok(g) => g,
        Err(by) => return Liveness::Bounded(by),
    };
    let stats = |g: &graph::Graph| LivenessStats {
        states: g.len() as u64,
        transitions: g.edges.len() as u64,
        hot: g.hot.iter().filter(|h| **h).count() as u64,
        bytes: g.bytes(),
        elapsed_s: started.elapsed().as_secs_f64(),
    };
    let terminal = (0..g.len() as u32).find(|&i| g.hot[i as usize] && g.out(i).is_empty());
    let scc = scc::fair_hot_scc(&g);
    let entry = scc.as_ref().and_then(|c| c.iter().copied().min());
    let (entry, cycle) = match (terminal, entry, scc) {
        (Some(t), Some(e), _) if t < e => (t, Vec::new()),
        (_, Some(e), Some(c)) => (e, lasso::fair_cycle(&g, &c, e)),
        (Some(t), ..) => (t, Vec::new()),
        _ => return Liveness::Holds(stats(&g)),
    };
    let mut schedule = Schedule::new(PathKind::Choices, None, config.seed, config.max_steps, g.stem(entry));
    schedule.cycle = cycle;
    // The replay names the monitor and checks the lasso.
    let ex = replay_lasso(program, &schedule, false);
    let stats = stats(&g);
    match ex.violation {
        Some(found) if found.violation.kind == ViolationKind::Liveness => {
            schedule.expect(&found.violation, found.step);
            Liveness::Violated(found, Box::new(schedule), stats)
        }
        // The graph is keyed by fingerprint: a lasso that does not replay
        // means a collision or a nondeterministic program. Say so rather
        // than claim anything.
        _ => Liveness::Bounded(BoundedBy::States),
    }
}

/// Run [`check`] after an exhaustive search whose `report` is verified,
/// and fold its result into the report: a liveness violation with its
/// lasso, `bounded` when a budget stopped it, and a note with what it
/// stored and measured either way.
pub fn check_into<P: Program>(program: &P, config: &Config, report: &mut Report) {
    if !report.is_verified() {
        return;
    }
    let note = |s: &LivenessStats| {
        format!(
            "liveness: {} states ({} hot), {} transitions, {} bytes of graph ({:.1} per state), {:.2} s",
            s.states,
            s.hot,
            s.transitions,
            s.bytes,
            s.bytes as f64 / s.states.max(1) as f64,
            s.elapsed_s
        )
    };
    match check(program, config) {
        Liveness::Holds(s) => report
            .notes
            .push(note(&s) + ": no fair hot cycle, no terminal hot state"),
        Liveness::Violated(found, schedule, s) => {
            report.notes.push(note(&s));
            report.outcome = Outcome::Violation;
            report.violation = Some(found);
            report.schedule = Some(*schedule);
            report.collision_probability = None;
        }
        Liveness::Bounded(by) => {
            report.outcome = Outcome::Bounded;
            report.bounded_by = Some(by);
            report.collision_probability = None;
            report
                .notes
                .push("liveness: the state graph was not completed, nothing is claimed about liveness".into());
        }
    }
}
