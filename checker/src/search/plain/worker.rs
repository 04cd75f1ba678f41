//! Where the plain search's successors go, and what a search that does not
//! keep them all is asked besides the stepwise API of [`Plain`]: the hook
//! ([`Route`]) and the calls a distributed worker makes (the
//! `mcheck-distributed` crate: one [`Plain`] per worker, each keeping the
//! states it owns and sending the others, as states, to their owners,
//! which [`accept`](Plain::accept) them).

use super::{Path, Plain, Via};
use crate::cache::FingerprintSet;
use crate::program::Program;
use crate::report::{BoundedBy, Found, Report};
use crate::search::error::SearchError;
use crate::search::order::ChoiceOrder;
use crate::search::stratified::Stop;
use std::fmt;
use std::ops::Deref;

/// Decides where each state the plain search reaches goes: visited here,
/// or handed to [`Route::send`].
///
/// Contract:
/// * [`Route::keep`] is asked for s0 by [`Plain::start`] and for every
///   successor a step reaches that the step limit does not cut, with its
///   cache key, before the cache is looked up, and only when the search
///   has a cache (`Config::use_cache`; without one every successor is
///   visited here). Its answer must depend on the key alone.
/// * A state it keeps is visited as on one thread: looked up in the
///   cache, counted if new, explored.
/// * A successor it does not keep is neither looked up, counted nor
///   explored here: [`Route::send`] gets it, at once and in the order the
///   search reaches them; the step that reached it is counted here. s0 is
///   never sent: every worker starts from it, and its owner explores it.
/// * A state sent to another search must be one that search's route
///   keeps, so that [`Plain::accept`] visits it there.
pub trait Route<S, O> {
    /// Whether the state with cache key `key` is visited here.
    fn keep(&self, key: u64) -> bool;
    /// Takes a successor that [`Route::keep`] did not keep.
    fn send(&mut self, away: Away<S, O>);
}

/// The route of the search on one thread: every state is visited here.
#[derive(Clone, Copy, Debug, Default)]
pub struct Keep;

impl<S, O> Route<S, O> for Keep {
    #[inline(always)]
    fn keep(&self, _key: u64) -> bool {
        true
    }

    /// Never called: every state is kept.
    fn send(&mut self, _away: Away<S, O>) {}
}

/// A successor the route did not keep: what its receiver needs to
/// [`accept`](Plain::accept) it, the state itself with the order there,
/// and the path that reaches it from s0 (what a counterexample found
/// below it replays).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Away<S, O> {
    /// The state.
    pub state: S,
    /// The order at the state.
    pub order: O,
    /// Its cache key.
    pub key: u64,
    /// The cost paid on its path (n of the call that reached it).
    pub cost: u32,
    /// Its depth: the steps from s0.
    pub depth: u32,
    /// Its path from s0.
    pub path: Path,
}

/// Why the plain search stopped before its work was done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// It found a violation ([`Plain::violation`]).
    Violation,
    /// A budget ran out: the stop flag, the time, `max_states`, the
    /// memory, or (on one thread) `max_delays`.
    Budget(BoundedBy),
}

impl From<Stop> for Stopped {
    /// A budget's stop (the plain search is never halted by another
    /// worker; a halt reads as an interruption, as in a report).
    fn from(stop: Stop) -> Stopped {
        match stop {
            Stop::Violation => Stopped::Violation,
            Stop::Budget(by) => Stopped::Budget(by),
            Stop::Halted => Stopped::Budget(BoundedBy::Interrupted),
        }
    }
}

impl From<Stopped> for Stop {
    fn from(stop: Stopped) -> Stop {
        match stop {
            Stopped::Violation => Stop::Violation,
            Stopped::Budget(by) => Stop::Budget(by),
        }
    }
}

impl<P: Program, H: Deref<Target = P>, O: ChoiceOrder, R: Route<P::State, O>> Plain<'_, P, H, O, R> {
    /// Visits a state that another search's route sent here: `s` with the
    /// order `d` there, cost `cost`, at `depth`, reached by `path` (as
    /// [`Away`] carries them), in the current stratum: the step limit's
    /// cut, the cache (`if s' not in cache`), its count, and the DFS of
    /// its subtree. Called between the other calls, never after a stop.
    pub fn accept(
        &mut self,
        s: P::State,
        d: O,
        cost: u32,
        depth: u32,
        path: Path,
    ) -> Result<Option<Stopped>, SearchError> {
        match self.visit(s, d, cost, depth, Via::Path(path))? {
            Some(stop) => Ok(Some(stop)),
            None => self.dfs(),
        }
    }

    /// Whether the cache holds `key` (a received state that needs no
    /// visit, unless at the step limit).
    pub fn cached(&self, key: u64) -> bool {
        self.cache.contains(key)
    }

    /// The cache key of `s` with the order `d` there.
    pub fn cache_key(&self, s: &P::State, d: &O) -> u64 {
        self.key(s, d)
    }

    /// Drops the stack, the frontier and the work: the search does
    /// nothing more (another worker stopped the run, or this one did).
    pub fn halt(&mut self) {
        self.stack.clear();
        self.frontier = Vec::new();
        self.work.clear();
    }

    /// The violation that stopped the search, with its path from s0 (as
    /// [`Path::to_vec`] lists it).
    pub fn violation(&self) -> Option<(&Found, &[(u32, u32)])> {
        self.violation.as_ref().map(|v| (&v.found, &v.advances[..]))
    }

    /// The counts so far: the totals, the strata closed, `cache_full`.
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// The current stratum's bound.
    pub fn bound(&self) -> u32 {
        self.bound
    }

    /// The entries this stratum has still to resume, and those deferred to
    /// the next one.
    pub fn pending(&self) -> (usize, usize) {
        (self.work.len(), self.frontier.len())
    }

    /// Whether some execution was cut at `max_steps`.
    pub fn cut(&self) -> bool {
        self.cut
    }

    /// The order at s0.
    pub fn root(&self) -> &O {
        &self.root
    }

    /// The cache.
    pub fn cache(&self) -> &FingerprintSet {
        &self.cache
    }

    /// The route.
    pub fn route(&mut self) -> &mut R {
        &mut self.route
    }
}

impl<P: Program, H, O, R> fmt::Debug for Plain<'_, P, H, O, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plain")
            .field("bound", &self.bound)
            .field("states", &self.report.states)
            .field("transitions", &self.report.transitions)
            .field("frontier", &self.frontier.len())
            .finish_non_exhaustive()
    }
}
