//! A mistaken symmetry declaration is not silently accepted
//! (ARCHITECTURE.md, "Symmetry"): with `--symmetry`, `run::run`
//! watches the search with [`OrbitsChecked`], which checks the declaration
//! at a sample of the states the search keys by their canonical
//! fingerprint, and turns a mismatch into [`SymmetryMismatch`] instead of
//! an answer.
//!
//! Two checks, both at the sampled states only:
//!
//! * the program's own ([`crate::Symmetry::check`]): the machine runtime
//!   applies a random permutation of a declared group and compares the
//!   verdicts, the enabled set, `receive`/`delivery` and the canonical
//!   fingerprint of the state and its image;
//! * a generic one for every program, plain ones included: the first state
//!   sampled of an orbit is its *witness*; a later, different state with
//!   the same canonical fingerprint must agree with it on what a
//!   permutation keeps (hot or not, deadlock or not, the number of
//!   alternatives, the violation kinds of its steps and their successors'
//!   temperature).
//!
//! Sampling is by canonical fingerprint (a fixed 1 in [`RATE`], so every
//! state of a sampled orbit is checked, on any number of threads) and
//! bounded ([`MAX_CHECKS`]), so the cost is a few percent of a symmetric
//! search and nothing without `--symmetry`.

use crate::cache::{FIXED_HASHER, fingerprint};
pub use crate::program::SymmetryMismatch;
use crate::program::{Program, ProgramExt, Violation, ViolationKind};
use crate::watch::Watch;
use hashbrown::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// One orbit in this many is checked.
pub const RATE: u64 = 32;

/// At most this many checks per search.
pub const MAX_CHECKS: usize = 2048;

/// The initial state is checked with this many permutations.
pub const INITIAL_CHECKS: u64 = 16;

/// What the generic check compares between two states of one orbit.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Signature {
    hot: bool,
    deadlock: bool,
    /// Per step, sorted: its violation's kind, or whether its successor is
    /// hot.
    steps: Vec<Result<bool, &'static str>>,
}

/// The watch that checks a program's symmetry declaration at the sampled
/// states a search keys by their orbit (see the module docs).
pub struct OrbitsChecked<'p, P: Program> {
    program: &'p P,
    initial: Option<u64>,
    initial_done: AtomicBool,
    checks: AtomicUsize,
    failed: AtomicBool,
    mismatch: Mutex<Option<SymmetryMismatch>>,
    witnesses: Mutex<HashMap<u64, (u64, Signature), ahash::RandomState>>,
}

impl<P: Program> fmt::Debug for OrbitsChecked<'_, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OrbitsChecked").finish_non_exhaustive()
    }
}

/// The violation that stops the search once a mismatch is recorded (never
/// reported: `run::run` returns the mismatch instead).
fn stop() -> Violation {
    Violation::new(
        ViolationKind::Assertion,
        "symmetry",
        "the symmetry declaration does not hold",
    )
}

impl<'p, P: Program> OrbitsChecked<'p, P> {
    /// The check of `program`'s declaration, to watch a search of it.
    pub fn new(program: &'p P) -> Self {
        OrbitsChecked {
            program,
            initial: program.canonical_fingerprint(&program.initial()),
            initial_done: AtomicBool::new(false),
            checks: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
            mismatch: Mutex::new(None),
            witnesses: Mutex::new(HashMap::with_hasher(FIXED_HASHER)),
        }
    }

    /// The first mismatch found, if any.
    pub fn mismatch(&self) -> Option<SymmetryMismatch> {
        self.mismatch.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// How many states were checked.
    pub fn checks(&self) -> usize {
        self.checks.load(Ordering::Relaxed).min(MAX_CHECKS)
    }

    fn record(&self, m: SymmetryMismatch) {
        let mut slot = self.mismatch.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert(m);
        self.failed.store(true, Ordering::Relaxed);
    }

    fn observe(&self, s: &P::State, canonical: u64) {
        if self.failed.load(Ordering::Relaxed) {
            return;
        }
        if Some(canonical) == self.initial && !self.initial_done.swap(true, Ordering::Relaxed) {
            // The initial state, with several permutations: a model whose
            // declared machines differ from the start is told at once.
            for seed in 0..INITIAL_CHECKS {
                if let Err(m) = self.program.check_symmetry(s, fingerprint(&(canonical, seed))) {
                    return self.record(m);
                }
            }
        }
        if !fingerprint(&(canonical, 0x5EED_u64)).is_multiple_of(RATE) {
            return;
        }
        if self.checks.fetch_add(1, Ordering::Relaxed) >= MAX_CHECKS {
            return;
        }
        if let Err(m) = self.program.check_symmetry(s, canonical) {
            return self.record(m);
        }
        let own = fingerprint(s);
        let mut witnesses = self.witnesses.lock().unwrap_or_else(|e| e.into_inner());
        let known = witnesses.get(&canonical).cloned();
        match known {
            None => {
                let sig = self.signature(s);
                witnesses.insert(canonical, (own, sig));
            }
            Some((fp, _)) if fp == own => {}
            Some((_, sig)) => {
                drop(witnesses);
                let mine = self.signature(s);
                if mine != sig {
                    self.record(SymmetryMismatch {
                        group: self.program.symmetry_groups().join("; "),
                        permutation: "two states with the same canonical fingerprint".into(),
                        what: format!("what the states do ({sig:?} and {mine:?})"),
                    });
                }
            }
        }
    }

    fn signature(&self, s: &P::State) -> Signature {
        let mut en = Vec::new();
        self.program.enabled(s, &mut en);
        let mut steps: Vec<Result<bool, &'static str>> = Vec::new();
        for e in &en {
            for alt in 0..e.alternatives {
                let mut c = s.clone();
                steps.push(match self.program.execute(&mut c, e.actor, alt, &mut Vec::new()) {
                    Ok(()) => Ok(crate::liveness::is_hot(self.program, &c)),
                    Err(v) => Err(v.kind.as_str()),
                });
            }
        }
        steps.sort_unstable();
        Signature {
            hot: crate::liveness::is_hot(self.program, s),
            deadlock: en.is_empty() && self.program.deadlock(s).is_some(),
            steps,
        }
    }
}

impl<P: Program> Watch<P::State> for OrbitsChecked<'_, P> {
    /// The search keys `s` by `canonical`: `s` is checked if sampled.
    #[inline]
    fn keyed(&self, s: &P::State, canonical: u64) {
        self.observe(s, canonical);
    }

    /// Once a mismatch is recorded, every step ends the execution, so that
    /// the search stops soon.
    #[inline]
    fn after(&self, _s: &P::State, result: Result<(), Violation>) -> Result<(), Violation> {
        if self.failed.load(Ordering::Relaxed) {
            return Err(stop());
        }
        result
    }
}
