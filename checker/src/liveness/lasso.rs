//! Lassos: building one from a fair hot SCC of the graph, and replaying
//! one, checking that its cycle returns to the state it starts from, stays
//! hot and is fair (ARCHITECTURE.md, "Liveness").

use super::graph::{Graph, NONE};
use super::scc::membership;
use crate::cache::fingerprint;
use crate::program::{Enabled, Hot, Program, Violation, ViolationKind};
use crate::report::Found;
use crate::schedule::Schedule;
use crate::search::exec::{ChoiceDriver, End, Execution, choice_at, execute_watched};
use crate::watch::{Watch, Watched};
use std::collections::VecDeque;
use std::sync::Mutex;

/// The cycle (choice indices) from `entry` through the states of `scc`
/// that visits, for every actor enabled somewhere in it, a state where it
/// is disabled or else one of its edges inside, and returns to `entry`:
/// a weakly fair cycle when the SCC is fair.
pub(super) fn fair_cycle(g: &Graph, scc: &[u32], entry: u32) -> Vec<u64> {
    let inside = membership(scc);
    let mut actors: Vec<u32> = scc.iter().flat_map(|&i| g.out(i).iter().map(|e| e.actor)).collect();
    actors.sort_unstable();
    actors.dedup();
    let (mut cycle, mut at) = (Vec::new(), entry);
    for a in actors {
        let disabled = scc.iter().copied().find(|&i| g.out(i).iter().all(|e| e.actor != a));
        let target = match disabled {
            Some(i) => route(g, &inside, at, |s| s == i),
            None => route(g, &inside, at, |s| {
                g.out(s).iter().any(|e| e.actor == a && e.to != NONE && inside(e.to))
            }),
        };
        cycle.extend(target.0);
        at = target.1;
        if disabled.is_none() {
            let (k, e) = (g.out(at).iter().enumerate())
                .find(|(_, e)| e.actor == a && e.to != NONE && inside(e.to))
                .map(|(k, e)| (k, *e))
                .expect("route ends at a state with such an edge");
            cycle.push(k as u64);
            at = e.to;
        }
    }
    if cycle.is_empty() {
        // At least one step: any edge inside, then back.
        let (k, e) = (g.out(at).iter().enumerate())
            .find(|(_, e)| e.to != NONE && inside(e.to))
            .map(|(k, e)| (k, *e))
            .expect("a nontrivial SCC has an edge inside");
        cycle.push(k as u64);
        at = e.to;
    }
    cycle.extend(route(g, &inside, at, |s| s == entry).0);
    cycle
}

/// The shortest path (choice indices) inside the SCC from `from` to a
/// state satisfying `goal`, and that state.
fn route(g: &Graph, inside: &impl Fn(u32) -> bool, from: u32, goal: impl Fn(u32) -> bool) -> (Vec<u64>, u32) {
    let mut back: hashbrown::HashMap<u32, (u32, u64), ahash::RandomState> =
        hashbrown::HashMap::with_hasher(crate::cache::FIXED_HASHER);
    let mut queue = VecDeque::from([from]);
    back.insert(from, (NONE, 0));
    while let Some(s) = queue.pop_front() {
        if goal(s) {
            let (mut path, mut x) = (Vec::new(), s);
            while x != from {
                let (p, k) = back[&x];
                path.push(k);
                x = p;
            }
            path.reverse();
            return (path, s);
        }
        for (k, e) in g.out(s).iter().enumerate() {
            if e.to != NONE && inside(e.to) && !back.contains_key(&e.to) {
                back.insert(e.to, (s, k as u64));
                queue.push_back(e.to);
            }
        }
    }
    // Unreachable inside a strongly connected component.
    (Vec::new(), from)
}

/// The state after each step of an execution, as a liveness replay needs
/// it: fingerprint, temperature and the actors enabled.
#[derive(Debug)]
struct Seen {
    fp: u64,
    hot: Option<Hot>,
    enabled: Vec<Enabled>,
}

/// The watch that records [`Seen`] after every step of a replay.
struct Recorder<'p, P> {
    inner: &'p P,
    seen: Mutex<Vec<Seen>>,
}

impl<P: Program> Recorder<'_, P> {
    fn record(&self, s: &P::State) {
        let mut en = Vec::new();
        self.inner.enabled(s, &mut en);
        let seen = Seen {
            fp: fingerprint(s),
            hot: self.inner.liveness().and_then(|m| m.owed(s)),
            enabled: en,
        };
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).push(seen);
    }
}

impl<P: Program> Watch<P::State> for Recorder<'_, P> {
    fn after(&self, s: &P::State, result: Result<(), Violation>) -> Result<(), Violation> {
        if result.is_ok() {
            self.record(s);
        }
        result
    }
}

/// The message of a liveness violation: a cycle of `len` steps (0: the
/// execution ends) along which `hot` stays hot.
pub(super) fn message(hot: &Hot, len: usize) -> String {
    if len == 0 {
        format!("the execution ends with the monitor hot: {}", hot.owed)
    } else {
        format!(
            "a fair cycle of {len} steps along which the monitor stays hot: {}",
            hot.owed
        )
    }
}

/// Replay the lasso of `schedule` (its choice path, then its cycle) and
/// check it: the path is followed, the cycle returns to the state it
/// started from, every state of the cycle is hot and the cycle is weakly
/// fair (every actor enabled throughout it takes a step in it); or, with
/// no cycle, the path ends in a terminal hot state. The execution's
/// violation is the liveness violation found, at the step where the cycle
/// starts; `error` says what failed otherwise. The step limit does not
/// apply to a lasso.
pub fn replay_lasso<P: Program>(program: &P, schedule: &Schedule, traced: bool) -> Execution {
    let rec = Recorder {
        inner: program,
        seen: Mutex::new(Vec::new()),
    };
    rec.record(&program.initial());
    let choices: Vec<u64> = schedule.path.iter().chain(&schedule.cycle).copied().collect();
    let watched = Watched::new(program, Some(&rec));
    let mut ex = execute_watched(
        watched,
        &mut ChoiceDriver::new(&choices),
        choices.len() + 1,
        false,
        traced,
    );
    let seen = rec.seen.into_inner().unwrap_or_else(|e| e.into_inner());
    let (stem, len) = (schedule.path.len(), schedule.cycle.len());
    if ex.end == End::Violation || ex.end == End::Diverged || ex.steps != stem + len {
        return ex;
    }
    let fail = |ex: &mut Execution, why: String| {
        ex.end = End::Diverged;
        ex.error = Some(why);
    };
    let cycle = &seen[stem..=stem + len];
    let Some(hot) = cycle[0].hot.clone() else {
        fail(
            &mut ex,
            format!("step {stem}: the lasso's state is cold, no monitor is hot"),
        );
        return ex;
    };
    if len == 0 {
        if !cycle[0].enabled.is_empty() {
            fail(
                &mut ex,
                format!("step {stem}: the execution does not end (actors are enabled)"),
            );
            return ex;
        }
    } else if cycle[len].fp != cycle[0].fp {
        fail(
            &mut ex,
            format!(
                "step {}: the cycle does not return to the state it started from",
                stem + len
            ),
        );
        return ex;
    } else if let Some(k) = cycle.iter().position(|s| s.hot.is_none()) {
        fail(&mut ex, format!("step {}: a state of the cycle is cold", stem + k));
        return ex;
    } else if let Some(a) = unfair(&cycle[..len], &choices[stem..]) {
        fail(
            &mut ex,
            format!("the cycle is unfair: actor #{a} is enabled throughout it and never runs"),
        );
        return ex;
    }
    ex.end = End::Violation;
    ex.violation = Some(Found {
        violation: hot.violation(ViolationKind::Liveness, message(&hot, len)),
        step: stem,
    });
    ex
}

/// The cycle of a replayed lasso ([`replay_lasso`]): the steps `start..end`
/// after which the execution is back in the state it had before `start`.
/// `None` for every other execution (a lasso that ends hot has no cycle).
pub fn cycle_of(ex: &Execution) -> Option<std::ops::Range<usize>> {
    let f = ex.violation.as_ref()?;
    let lasso = ex.end == End::Violation && f.violation.kind == ViolationKind::Liveness;
    (lasso && ex.steps > f.step).then_some(f.step..ex.steps)
}

/// An actor enabled at every state of the cycle (`states`, the state
/// before each step) that none of its steps (`choices`) runs.
fn unfair(states: &[Seen], choices: &[u64]) -> Option<u32> {
    let ran: Vec<u32> = states
        .iter()
        .zip(choices)
        .filter_map(|(s, &c)| choice_at(&s.enabled, c).map(|(a, _)| a.0))
        .collect();
    let enabled = |s: &Seen, a: u32| s.enabled.iter().any(|e| e.actor.0 == a);
    let first = states.first()?;
    first
        .enabled
        .iter()
        .map(|e| e.actor.0)
        .find(|&a| states.iter().all(|s| enabled(s, a)) && !ran.contains(&a))
}
