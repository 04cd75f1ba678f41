//! The search as one worker of the distributed SES runs it (the public
//! face is `search/part/`): on an [`OwnedCache`](crate::cache::OwnedCache),
//! whose look-up of another worker's key answers `Elsewhere`, so that the
//! step sends that successor ([`Away`]) instead of exploring it; the
//! strata stepwise, as the dataflow opens them; and the states other
//! workers send, [`accept`](Search::accept_state)ed into the current
//! stratum.

use super::arena::PathNode;
use super::{AnyCache, Piece, REMOTE, ROOT, RawViolation, Remote, Search, Stop};
use crate::cache::OwnedCache;
use crate::cache::{Insert, StateCache};
use crate::config::Config;
use crate::program::Program;
use crate::report::Report;
use crate::search::error::SearchError;
use crate::search::order::ChoiceOrder;
use crate::watch::{Watched, Watching};

/// Whether a worker's search is instantiated with the watch: as
/// [`run`](super::run) is in builds with debug assertions (the tests'),
/// so that the worker adds no instance of its own.
pub(in crate::search) const PART_WATCHED: bool = cfg!(debug_assertions);

/// The entries a worker resumes between two looks at its outbox.
const CHUNK: usize = 256;

/// A successor that another worker owns: the state, the order there, its
/// cache key, the cost paid on its path, its depth, and its path: the
/// path node of the state it is a successor of, and the index of the
/// choice there that reached it.
pub(in crate::search) struct Away<S, O> {
    pub(in crate::search) state: S,
    pub(in crate::search) order: O,
    pub(in crate::search) key: u64,
    pub(in crate::search) cost: u32,
    pub(in crate::search) depth: u32,
    pub(in crate::search) node: u32,
    pub(in crate::search) index: u32,
}

impl<'a, P: Program, O: ChoiceOrder, const W: bool> Search<'a, P, O, W> {
    /// A worker's search of `program` on `cache`, reporting into `report`,
    /// at bound 0 with nothing explored.
    pub(in crate::search) fn on_owned_cache(
        program: Watched<'a, P>,
        config: &'a Config,
        cache: OwnedCache,
        report: Report,
    ) -> Self {
        Search::new(Watching::new(program), config, AnyCache::Owned(cache), report)
    }

    /// The cache key of `s` with the order `d` there.
    pub(in crate::search) fn key_of_state(&self, s: &P::State, d: &O) -> u64 {
        self.key(self.fp(s), d)
    }

    /// Stratum 0 from s0 with the order `root`, if this worker's cache
    /// owns s0's key; else nothing.
    pub(in crate::search) fn start_part(&mut self, root: O) -> Result<Option<Stop>, SearchError> {
        let s0 = self.program.initial();
        let key = self.key(self.fp(&s0), &root);
        if self.config.use_cache && !self.cache.owns(key) {
            return Ok(None);
        }
        self.start(root)
    }

    /// The next stratum: the frontier becomes its entries, and the next
    /// frontier takes the buffer of this stratum's (all resumed, or the
    /// worker halted), so that their pages stay mapped from one stratum
    /// to the next.
    pub(in crate::search) fn open_stratum(&mut self) {
        self.bound += 1;
        self.queued.clear();
        std::mem::swap(&mut self.queued, &mut self.frontier);
        self.queued.reverse();
        self.deferred.clear();
    }

    /// Resumes this stratum's entries in order, [`CHUNK`] at a time, while
    /// `go_on` says so of the successors waiting to be sent.
    pub(in crate::search) fn resume_part(
        &mut self,
        go_on: impl Fn(usize) -> bool,
    ) -> Result<Option<Stop>, SearchError> {
        let mut chunk = Vec::with_capacity(CHUNK.min(self.queued.len()));
        while !self.queued.is_empty() && go_on(self.away.len()) {
            let from = self.queued.len().saturating_sub(CHUNK);
            chunk.extend(self.queued.drain(from..).rev());
            if let Some(stop) = self.run_work(&mut chunk)? {
                return Ok(Some(stop));
            }
        }
        Ok(None)
    }

    /// Visits a state another worker sent (`s` with the order `d`, key
    /// `key`, `cost` paid at `depth`, reached by choice `index` of the
    /// state whose path worker `via.0` holds as its node `via.1`; `None`:
    /// the empty path): dropped if cached, else counted and explored in
    /// this stratum, as a successor reached here would be. Its path is a
    /// node here that names the other worker's, and one for the choice.
    pub(in crate::search) fn accept_state(
        &mut self,
        s: P::State,
        d: O,
        key: u64,
        (cost, depth): (u32, u32),
        (via, index): (Option<Remote>, u32),
    ) -> Result<Option<Stop>, SearchError> {
        if self.config.use_cache {
            match self.cache.insert(key) {
                Insert::Present => return Ok(None),
                Insert::New => {
                    self.program.count_state(&s);
                    self.report.states += 1;
                    self.stratum.new_states += 1;
                }
                Insert::Full => {
                    self.report.cache_full = true;
                    self.revisits += 1;
                }
                Insert::Elsewhere => {
                    return Err(SearchError::Internal(format!(
                        "a worker received the state {key:#x}, which another worker owns"
                    )));
                }
            }
        }
        let node = match via {
            None => ROOT,
            Some((worker, node)) => self.arena.push(PathNode {
                parent: REMOTE,
                depth: worker,
                count: node,
            })?,
        };
        let node = self.child_node(node, depth.saturating_sub(1), index)?;
        if let Some(stop) = self.push_frame(s, d, cost, depth, node, None, None)? {
            return Ok(Some(stop));
        }
        match self.run_stack()? {
            Some(stop) => Ok(Some(stop)),
            None => Ok(self.budgets_due()),
        }
    }

    /// The successors to send, taken, each with its parent's path for
    /// the worker it goes to: `None` if empty, else the (worker, node)
    /// that holds it, this worker's (`me`) unless the node names another's.
    pub(in crate::search) fn take_away(
        &mut self,
        me: u32,
    ) -> impl Iterator<Item = (Away<P::State, O>, Option<Remote>)> + '_ {
        let arena = &self.arena;
        self.away.drain(..).map(move |a| {
            let via = (a.node != ROOT).then(|| arena.remote(a.node).unwrap_or((me, a.node)));
            (a, via)
        })
    }

    /// The pairs of node `node`'s path held here, and the (worker, node)
    /// that holds the path before them, if another worker does.
    pub(in crate::search) fn path_here(&self, node: u32) -> Piece {
        self.arena.expand_here(node)
    }

    /// Records the stratum, which took `elapsed_s` of work.
    pub(in crate::search) fn close_part_stratum(&mut self, elapsed_s: f64) {
        self.close_stratum(elapsed_s, true);
    }

    /// Closes the strata that retired entries still owe counts to (as the
    /// single search's loop over strata does before it ends).
    pub(in crate::search) fn close_owed(&mut self) {
        while self.owed_later() {
            self.bound += 1;
            self.close_stratum(0.0, true);
        }
    }

    /// Drops the stack, the frontier and the entries still queued: the
    /// worker does nothing more.
    pub(in crate::search) fn halt_part(&mut self) {
        self.stack.clear();
        self.frontier = Vec::new();
        self.queued = Vec::new();
        self.away.clear();
    }

    /// Entries still to resume in this stratum, and those deferred to the
    /// next.
    pub(in crate::search) fn queued_and_deferred(&self) -> (usize, usize) {
        (self.queued.len(), self.frontier.len())
    }

    /// The report so far.
    pub(in crate::search) fn report(&self) -> &Report {
        &self.report
    }

    /// The violation found, with its path.
    pub(in crate::search) fn raw_violation(&self) -> Option<&RawViolation> {
        self.violation.as_ref()
    }

    /// The current stratum's bound, and whether some execution was cut at
    /// the step limit.
    pub(in crate::search) fn bound_and_cut(&self) -> (u32, bool) {
        (self.bound, self.cut)
    }

    /// The cache.
    pub(in crate::search) fn any_cache(&self) -> &AnyCache<'a> {
        &self.cache
    }
}
