//! Shrinking a counterexample while the same bug (violation kind and
//! machine, [`Violation::same_bug`]) still occurs, after QuickCheck: the
//! result never has more delays or more steps than the input.
//!
//! * Delay paths: first fewer delays (drop each delay in turn), then
//!   earlier delay positions (move each delay as early as possible, by
//!   halving the distance to the previous one).
//! * Choice paths: delta debugging (ddmin) on the steps, then simpler
//!   choices (each index lowered towards 0).

use crate::explorer::Explorer;
use crate::program::{Program, Violation};
use crate::schedule::{PathKind, Schedule};
use crate::search::exec;

/// What shrinking did.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The shrunk schedule (model fields copied from the input; the trail
    /// is left empty for the caller to recompute).
    pub schedule: Schedule,
    /// The violation it reproduces.
    pub violation: Violation,
    /// Delays and steps before.
    pub before: (usize, usize),
    /// Delays and steps after.
    pub after: (usize, usize),
    /// Replays tried.
    pub attempts: u64,
}

struct Shrinker<'a, P, F> {
    program: &'a P,
    explorer: F,
    target: Violation,
    best: Schedule,
    best_steps: usize,
    attempts: u64,
    max_attempts: u64,
}

impl<P: Program, E: Explorer, F: Fn(u64) -> Option<E>> Shrinker<'_, P, F> {
    /// Steps of `candidate` if it reproduces the bug in no more steps.
    fn check(&mut self, candidate: &Schedule) -> Option<usize> {
        if self.attempts >= self.max_attempts {
            return None;
        }
        self.attempts += 1;
        let e = (self.explorer)(candidate.explorer_seed);
        let ex = exec::replay(self.program, e, candidate, false).ok()?;
        let v = ex.violation?;
        (v.violation.same_bug(&self.target) && ex.steps <= self.best_steps).then_some(ex.steps)
    }

    fn accept(&mut self, candidate: Schedule) -> bool {
        match self.check(&candidate) {
            Some(steps) => {
                self.best = candidate;
                self.best_steps = steps;
                true
            }
            None => false,
        }
    }

    fn with_path(&self, path: Vec<u64>) -> Schedule {
        Schedule {
            path,
            ..self.best.clone()
        }
    }

    fn delays(&mut self) {
        let positions = |path: &[u64]| {
            let mut at = 0;
            path.iter()
                .map(|p| {
                    at += p;
                    at
                })
                .collect::<Vec<u64>>()
        };
        let path_of = |at: &[u64]| {
            let mut prev = 0;
            at.iter()
                .map(|&a| {
                    let p = a - prev;
                    prev = a;
                    p
                })
                .collect::<Vec<u64>>()
        };
        let mut changed = true;
        while changed {
            changed = false;
            // Fewer delays.
            let mut k = 0;
            while k < self.best.path.len() {
                let mut at = positions(&self.best.path);
                at.remove(k);
                if self.accept(self.with_path(path_of(&at))) {
                    changed = true;
                } else {
                    k += 1;
                }
            }
            // Earlier positions.
            for k in 0..self.best.path.len() {
                loop {
                    let at = positions(&self.best.path);
                    let lo = if k == 0 { 0 } else { at[k - 1] };
                    if at[k] == lo {
                        break;
                    }
                    let mut moved = false;
                    // Try the earliest first, then halfway, then one step.
                    for target in [lo, lo + (at[k] - lo) / 2, at[k] - 1] {
                        if target >= at[k] {
                            continue;
                        }
                        let mut cand = at.clone();
                        cand[k] = target;
                        if self.accept(self.with_path(path_of(&cand))) {
                            moved = true;
                            changed = true;
                            break;
                        }
                    }
                    if !moved {
                        break;
                    }
                }
            }
        }
    }

    fn choices(&mut self) {
        // ddmin: remove chunks of n parts, refining.
        let mut n = 2usize;
        while self.best.path.len() >= 2 {
            let len = self.best.path.len();
            let chunk = len.div_ceil(n);
            let mut reduced = false;
            let mut start = 0;
            while start < self.best.path.len() {
                let end = (start + chunk).min(self.best.path.len());
                let mut cand = self.best.path.clone();
                cand.drain(start..end);
                if !cand.is_empty() && self.accept(self.with_path(cand)) {
                    reduced = true;
                } else {
                    start = end;
                }
            }
            if reduced {
                n = n.saturating_sub(1).max(2);
            } else if chunk == 1 {
                break;
            } else {
                n = (n * 2).min(len);
            }
            if self.attempts >= self.max_attempts {
                break;
            }
        }
        // Simpler choices.
        for k in 0..self.best.path.len() {
            while self.best.path[k] > 0 {
                let mut cand = self.best.path.clone();
                cand[k] = 0;
                if self.accept(self.with_path(cand)) {
                    break;
                }
                let mut cand = self.best.path.clone();
                cand[k] -= 1;
                if !self.accept(self.with_path(cand)) {
                    break;
                }
            }
        }
    }
}

/// Shrink `schedule`, which must reproduce a violation on `program`.
/// `explorer(seed)` gives a fresh, prepared explorer for delay paths (see
/// [`exec::prepare_explorer`]), `None` for choice paths. At most
/// `max_attempts` replays.
pub fn shrink<P: Program, E: Explorer>(
    program: &P,
    explorer: impl Fn(u64) -> Option<E>,
    schedule: &Schedule,
    max_attempts: u64,
) -> Result<Shrunk, String> {
    let ex = exec::replay(program, explorer(schedule.explorer_seed), schedule, false)?;
    let Some(found) = ex.violation else {
        return Err(format!(
            "the schedule does not reproduce a violation (the replay ended after {} steps), so there is nothing to shrink",
            ex.steps
        ));
    };
    let mut s = Shrinker {
        program,
        explorer,
        target: found.violation.clone(),
        best: schedule.clone(),
        best_steps: ex.steps,
        attempts: 0,
        max_attempts,
    };
    let before = (schedule.delays(), ex.steps);
    match schedule.kind {
        PathKind::Delays => s.delays(),
        PathKind::Choices => s.choices(),
    }
    let e = (s.explorer)(s.best.explorer_seed);
    let last = exec::replay(program, e, &s.best, false)?;
    let violation = last.violation.map(|f| f.violation).unwrap_or(found.violation);
    let mut schedule = s.best;
    if schedule.kind == PathKind::Choices {
        schedule.path.truncate(last.steps);
    }
    schedule.expected = Some(violation.clone());
    schedule.trail.clear();
    Ok(Shrunk {
        after: (schedule.delays(), last.steps),
        schedule,
        violation,
        before,
        attempts: s.attempts,
    })
}
