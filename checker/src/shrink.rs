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
use crate::replay::{ReplayError, end_text, follow, replay};
use crate::schedule::{PathKind, Schedule};
use std::fmt;

/// What shrinking did.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The shrunk schedule: model fields copied from the input, the
    /// violation and its step expected, sealed; the trail is left empty
    /// (see [`crate::check::shrink_model`], which records it).
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

struct Shrinker<'a, P, E> {
    program: &'a P,
    explorer: Option<E>,
    target: Violation,
    best: Schedule,
    best_steps: usize,
    attempts: u64,
    max_attempts: u64,
}

impl<P: Program, E: Explorer> Shrinker<'_, P, E> {
    /// Steps of `candidate` if it reproduces the bug in no more steps.
    fn check(&mut self, candidate: &Schedule) -> Option<usize> {
        if self.attempts >= self.max_attempts {
            return None;
        }
        self.attempts += 1;
        let ex = follow(self.program, self.explorer.clone(), candidate, false).ok()?;
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

/// Shrink `schedule`, which must reproduce a violation on `program`, and
/// the one it expects if it records one (see [`replay`]; `explorer` as
/// there: the schedule's own, fresh, for a delay path). At most
/// `max_attempts` replays.
pub fn shrink<P: Program, E: Explorer>(
    program: &P,
    explorer: Option<E>,
    schedule: &Schedule,
    max_attempts: u64,
) -> Result<Shrunk, ShrinkError> {
    let ex = replay(program, explorer.clone(), schedule, false)?;
    let Some(found) = ex.violation else {
        return Err(ShrinkError::NothingToShrink {
            steps: ex.steps,
            end: end_text(&ex),
        });
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
    let last = follow(program, s.explorer.clone(), &s.best, false)?;
    let Some(last_found) = last
        .violation
        .clone()
        .filter(|f| f.violation.same_bug(&found.violation))
    else {
        return Err(ShrinkError::Internal(format!(
            "the shrunk schedule {} no longer reproduces {} ({})",
            s.best,
            found.violation,
            end_text(&last)
        )));
    };
    let mut schedule = s.best;
    if schedule.kind == PathKind::Choices {
        schedule.path.truncate(last.steps);
    }
    schedule.expect(&last_found.violation, last_found.step);
    schedule.trail.clear();
    schedule.seal();
    Ok(Shrunk {
        after: (schedule.delays(), last.steps),
        schedule,
        violation: last_found.violation,
        before,
        attempts: s.attempts,
    })
}

/// Why a schedule could not be shrunk.
#[derive(Clone, Debug)]
pub enum ShrinkError {
    /// It does not replay as it records.
    Replay(ReplayError),
    /// Its replay finds no violation.
    NothingToShrink {
        /// Steps executed.
        steps: usize,
        /// How the replay ended, in words.
        end: String,
    },
    /// A bug in mcheck.
    Internal(String),
}

impl From<ReplayError> for ShrinkError {
    fn from(e: ReplayError) -> Self {
        ShrinkError::Replay(e)
    }
}

impl fmt::Display for ShrinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShrinkError::Replay(e) => write!(f, "cannot shrink: {e}"),
            ShrinkError::NothingToShrink { steps, end } => write!(
                f,
                "the schedule does not reproduce a violation (the replay ended after {steps} steps: {end}), so there is nothing to shrink"
            ),
            ShrinkError::Internal(m) => write!(f, "internal error (a bug in mcheck, please report it): {m}"),
        }
    }
}

impl std::error::Error for ShrinkError {}
