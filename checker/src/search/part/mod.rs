//! One worker's part of the distributed SES on the optimised search (the
//! `mcheck-distributed` crate runs one per worker): the states it owns
//! ([`owner`](crate::cache::owner)) are looked up in its part of the
//! cache and explored here; a successor another worker owns is not looked
//! up or explored but handed out ([`Part::away`]) to be sent there,
//! unless it was sent lately; the states other workers send are
//! [`accept`](Part::accept)ed. The strata go stepwise, as the dataflow
//! opens them: [`start`](Part::start), then for each stratum
//! [`open`](Part::open), [`resume_while`](Part::resume_while) and the
//! states received, then [`close_stratum`](Part::close_stratum).
//!
//! Contract: the calls come from one thread; `accept` gets only states
//! this worker owns, in the stratum they were sent in or a later one
//! (the dataflow's order); after a stop (`Some` from a call) only the
//! queries and [`halt`](Part::halt) are called.

use super::stratified::{PART_WATCHED, Search, Stop};
pub use super::stratified::{Piece, Remote};
use crate::cache::{AnyCache, OwnedCache, StateCache};
use crate::config::Config;
use crate::program::Program;
use crate::report::{BoundedBy, Found, Report};
use crate::search::error::SearchError;
use crate::search::order::ChoiceOrder;
use crate::watch::Watched;
use std::sync::Arc;

/// Why a worker's search stopped before its work was done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// It found a violation ([`Part::violation`]).
    Violation,
    /// A budget ran out: the stop flag, the time, `max_states` or the
    /// memory.
    Budget(BoundedBy),
}

impl From<Stop> for Stopped {
    /// A budget's stop (a worker's search is not halted by another
    /// through it; a halt reads as an interruption, as in a report).
    fn from(stop: Stop) -> Stopped {
        match stop {
            Stop::Violation => Stopped::Violation,
            Stop::Budget(by) => Stopped::Budget(by),
            Stop::Halted => Stopped::Budget(BoundedBy::Interrupted),
        }
    }
}

/// A successor another worker owns, as [`Part::away`] hands it out and
/// that worker's [`Part::accept`] takes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer<S, O> {
    /// The state.
    pub state: S,
    /// The order at the state.
    pub order: O,
    /// Its cache key.
    pub key: u64,
    /// The cost paid on its path.
    pub cost: u32,
    /// Its depth: the steps from s0.
    pub depth: u32,
    /// Its path from s0: the path of the state it is a successor of, as
    /// the (worker, path node there) that holds it (`None`: the empty
    /// path; [`Part::path_here`] on that worker expands it), and the
    /// index of the choice there that reached it.
    pub via: Option<Remote>,
    /// See [`via`](Transfer::via).
    pub index: u32,
}

/// One worker's search.
pub struct Part<P: Program + 'static, O: 'static> {
    search: Search<'static, P, O, PART_WATCHED>,
    /// The order at s0, until [`start`](Part::start).
    root: Option<O>,
    me: u32,
}

impl<P: Program + 'static, O: ChoiceOrder + 'static> Part<P, O> {
    /// Worker `me` of `peers` of `program` with the order `root` at s0,
    /// `cache_bytes` for its part of the cache (`None`: no budget), the
    /// table of keys sent if `config.shortcuts.sent`, reporting into
    /// `report`.
    ///
    /// The search borrows the program and the configuration for as long as
    /// the dataflow's operators, which must own what they hold, keep it:
    /// both are leaked, a reference count and one configuration a worker
    /// and run.
    pub fn new(
        program: Arc<P>,
        root: O,
        config: Config,
        me: u32,
        peers: u32,
        cache_bytes: Option<usize>,
        report: Report,
    ) -> Self {
        let program: &'static P = Box::leak(Box::new(program));
        let config: &'static Config = Box::leak(Box::new(config));
        let cache = OwnedCache::new(cache_bytes, me, peers, config.shortcuts.sent);
        Part {
            search: Search::on_owned_cache(Watched::new(program, None), config, cache, report),
            root: Some(root),
            me,
        }
    }

    /// Stratum 0: from s0, if this worker owns it.
    pub fn start(&mut self) -> Result<Option<Stopped>, SearchError> {
        let Some(root) = self.root.take() else {
            return Err(SearchError::Internal("a worker started twice".into()));
        };
        Ok(self.search.start_part(root)?.map(Stopped::from))
    }

    /// The next stratum: the entries deferred to it are its work.
    pub fn open(&mut self) {
        self.search.open_stratum();
    }

    /// Resumes this stratum's entries in order while `go_on` says so of
    /// the number of successors waiting to be sent.
    pub fn resume_while(&mut self, go_on: impl Fn(usize) -> bool) -> Result<Option<Stopped>, SearchError> {
        Ok(self.search.resume_part(go_on)?.map(Stopped::from))
    }

    /// Visits a state another worker sent, as [`Transfer`] carries it:
    /// dropped if cached, else counted and its subtree explored in this
    /// stratum.
    pub fn accept(&mut self, t: Transfer<P::State, O>) -> Result<Option<Stopped>, SearchError> {
        let stop = self
            .search
            .accept_state(t.state, t.order, t.key, (t.cost, t.depth), (t.via, t.index))?;
        Ok(stop.map(Stopped::from))
    }

    /// Whether `key` is cached (this worker's), or was sent lately
    /// (another's).
    pub fn cached(&self, key: u64) -> bool {
        self.search.any_cache().contains(key)
    }

    /// The cache key of `s` with the order `d` there.
    pub fn cache_key(&self, s: &P::State, d: &O) -> u64 {
        self.search.key_of_state(s, d)
    }

    /// The successors another worker owns, taken.
    pub fn away(&mut self) -> impl Iterator<Item = Transfer<P::State, O>> + '_ {
        self.search.take_away(self.me).map(|(a, via)| Transfer {
            via,
            index: a.index,
            state: a.state,
            order: a.order,
            key: a.key,
            cost: a.cost,
            depth: a.depth,
        })
    }

    /// The pairs of the path that this worker's path node `node` names
    /// (its (depth, index) pairs held here, as [`violation`](Part::violation)
    /// gives them), and the (worker, node) that holds the path before
    /// them, if another worker does.
    pub fn path_here(&self, node: u32) -> Piece {
        self.search.path_here(node)
    }

    /// Records the current stratum, which took `elapsed_s` of work.
    pub fn close_stratum(&mut self, elapsed_s: f64) {
        self.search.close_part_stratum(elapsed_s);
    }

    /// Closes the current stratum and the later ones that entries retired
    /// in it are owed counts by: the last call.
    pub fn finish(&mut self, elapsed_s: f64) {
        self.search.close_part_stratum(elapsed_s);
        self.search.close_owed();
    }

    /// Drops the work left: the worker does nothing more.
    pub fn halt(&mut self) {
        self.search.halt_part();
    }

    /// The violation that stopped the search, with the piece of its path
    /// held here: its (depth, index) pairs from s0, or from the path that
    /// the (worker, node) given holds ([`path_here`](Part::path_here)
    /// there).
    pub fn violation(&self) -> Option<(&Found, Piece)> {
        self.search
            .raw_violation()
            .map(|v| (&v.found, (v.advances.clone(), v.before)))
    }

    /// The counts so far.
    pub fn report(&self) -> &Report {
        self.search.report()
    }

    /// The current stratum's bound.
    pub fn bound(&self) -> u32 {
        self.search.bound_and_cut().0
    }

    /// Whether some execution was cut at `max_steps`.
    pub fn cut(&self) -> bool {
        self.search.bound_and_cut().1
    }

    /// The entries this stratum has still to resume, and those deferred to
    /// the next.
    pub fn pending(&self) -> (usize, usize) {
        self.search.queued_and_deferred()
    }

    /// The bytes of the cache (its part and the table of keys sent) and
    /// its fingerprints' bits.
    pub fn cache_size(&self) -> (u64, u32) {
        let c = self.search.any_cache();
        (c.bytes() as u64, c.fingerprint_bits())
    }

    /// The successors sent to other workers, and those not sent because
    /// they were sent lately.
    pub fn transfers(&self) -> (u64, u64) {
        match self.search.any_cache() {
            AnyCache::Owned(c) => c.transfers(),
            _ => (0, 0),
        }
    }
}

impl<P: Program + 'static, O: ChoiceOrder + 'static> std::fmt::Debug for Part<P, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = self.report();
        f.debug_struct("Part")
            .field("worker", &self.me)
            .field("bound", &self.bound())
            .field("states", &r.states)
            .field("transitions", &r.transitions)
            .field("pending", &self.pending())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
