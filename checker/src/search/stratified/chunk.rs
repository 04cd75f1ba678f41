//! The narrow interface of the parallel driver: fork a worker search for a
//! chunk of a stratum's work items, run it, and merge what it produced
//! into the main search.

use super::budget::interrupted_or_late;
use super::retire::Owed;
use super::{Entry, PathNode, RawViolation, Remap, Search, Shared, Stop, UNBOUNDED, WorkList};
use crate::cache::{AnyCache, SharedCache};
use crate::config::{Config, Progress};
use crate::program::Program;
use crate::report::{Report, Stratum};
use crate::search::error::SearchError;
use crate::search::order::ChoiceOrder;
use crate::search::progress::Meter;
use crate::watch::Watching;
use std::mem::size_of;
use std::time::Instant;

/// What the worker searches of one stratum start from: the main search's
/// program, settings, cache, bound and start time, and its path arena
/// (read-only).
#[derive(Debug)]
pub(in crate::search) struct Fork<'w, P: Program, const W: bool> {
    program: Watching<'w, P, W>,
    config: &'w Config,
    cache: &'w SharedCache,
    strategy: &'w str,
    below: &'w [PathNode],
    bound: u32,
    started: Instant,
}

// Not derived: `P` need not be `Clone` for a reference to it to be copied.
impl<P: Program, const W: bool> Clone for Fork<'_, P, W> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P: Program, const W: bool> Copy for Fork<'_, P, W> {}

/// The parallel driver's emptied buffers, reused from one stratum to the
/// next so that their pages stay mapped (ARCHITECTURE.md, "Parallel SES, PB and DFS"): work lists
/// and worker frontiers, and workers' path nodes.
pub(in crate::search) struct Spares<S, O> {
    pub(in crate::search) lists: Vec<Vec<Entry<S, O>>>,
    pub(in crate::search) nodes: Vec<Vec<PathNode>>,
    /// The last stratum's frontier and work items, which size the next
    /// stratum's worker frontiers.
    pub(in crate::search) last: (usize, usize),
}

impl<S, O> Default for Spares<S, O> {
    fn default() -> Self {
        Spares {
            lists: Vec::new(),
            nodes: Vec::new(),
            last: (1, 1),
        }
    }
}

/// What one chunk of a stratum produced: how it stopped, and (unless it
/// found the search halted before it started) the worker's frontier, path
/// nodes and counts.
pub(in crate::search) struct Chunk<S, O> {
    stop: Option<Stop>,
    worker: Option<Worker<S, O>>,
    /// The chunk's work list, emptied, for reuse.
    spare: Vec<Entry<S, O>>,
}

/// The parts of a finished worker search that the merge needs.
struct Worker<S, O> {
    frontier: Vec<Entry<S, O>>,
    nodes: Vec<PathNode>,
    report: Report,
    stratum: Stratum,
    violation: Option<RawViolation>,
    cut: bool,
    peak_bytes: u64,
    retired: Owed,
    revisits: u64,
}

impl<S, O> std::fmt::Debug for Worker<S, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("frontier", &self.frontier.len())
            .field("nodes", &self.nodes.len())
            .field("stratum", &self.stratum)
            .finish_non_exhaustive()
    }
}

impl<S, O> std::fmt::Debug for Chunk<S, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chunk")
            .field("stop", &self.stop)
            .field("worker", &self.worker)
            .finish_non_exhaustive()
    }
}

impl<S, O> Chunk<S, O> {
    /// Whether the other chunks may go on: this one neither found a
    /// violation nor hit a budget.
    pub(in crate::search) fn lets_others_go_on(&self) -> bool {
        matches!(self.stop, None | Some(Stop::Halted))
    }
}

impl<'w, P: Program, const W: bool> Fork<'w, P, W> {
    /// Runs `items` (a chunk of the stratum's work items, in order, whose
    /// path nodes `remap` renumbers first) as a worker search that shares
    /// `shared`'s counters and halt flag, and keeps its frontier in
    /// `frontier` and its path nodes in `nodes` (empty buffers from
    /// [`Spares`]).
    pub(in crate::search) fn run<O: ChoiceOrder>(
        self,
        shared: &'w Shared,
        (mut items, remap): WorkList<P::State, O>,
        (frontier, nodes): (Vec<Entry<P::State, O>>, Vec<PathNode>),
    ) -> Result<Chunk<P::State, O>, SearchError> {
        let early = if shared.is_halted() {
            Some(Stop::Halted)
        } else {
            interrupted_or_late(self.config, self.started)
        };
        if early.is_some() {
            items.clear();
            return Ok(Chunk {
                stop: early,
                worker: None,
                spare: items,
            });
        }
        if remap != Remap::NONE {
            for e in &mut items {
                e.node = remap.apply(e.node);
            }
        }
        let report = Report::new(self.strategy, None, self.config.seed, 1);
        let mut w = Search::new(self.program, self.config, AnyCache::Shared(self.cache.handle()), report);
        w.meter = Meter::new(Progress::Off);
        w.arena.below = self.below;
        w.bound = self.bound;
        w.started = self.started;
        w.shared = Some(shared);
        w.frontier = frontier;
        w.arena.nodes = nodes;
        let stop = w.run_work(&mut items)?;
        // A stopped chunk leaves items it did not resume.
        items.clear();
        Ok(Chunk {
            stop,
            worker: Some(Worker {
                frontier: w.frontier,
                nodes: w.arena.nodes,
                report: w.report,
                stratum: w.stratum,
                violation: w.violation,
                cut: w.cut,
                peak_bytes: w.peak_bytes,
                retired: w.retired,
                revisits: w.revisits,
            }),
            spare: items,
        })
    }
}

impl<'a, P: Program, O: ChoiceOrder, const W: bool> Search<'a, P, O, W> {
    /// The main search of a parallel run, on `cache`.
    pub(in crate::search) fn on_shared_cache(
        program: Watching<'a, P, W>,
        config: &'a Config,
        cache: &'a SharedCache,
        report: Report,
    ) -> Self {
        Search::new(program, config, AnyCache::Shared(cache.handle()), report)
    }

    /// What the workers of the current stratum start from, on `cache`
    /// (the one this search runs on).
    pub(in crate::search) fn fork<'f>(&'f self, cache: &'f SharedCache) -> Fork<'f, P, W> {
        Fork {
            program: self.program,
            config: self.config,
            cache,
            strategy: &self.report.strategy,
            below: &self.arena.nodes,
            bound: self.bound,
            started: self.started,
        }
    }

    /// Runs the current stratum without a bound: every work item takes
    /// all its remaining choices, and what retired entries owe the later
    /// strata is owed to this one, the last of `retired` (which
    /// `close_stratum` reads for a stratum at [`UNBOUNDED`]).
    pub(in crate::search) fn lift_bound(&mut self) {
        self.retired.lift(self.bound as usize);
        self.bound = UNBOUNDED;
    }

    /// Sets `shared`'s totals for a stratum of `work_items` work items.
    pub(in crate::search) fn share_totals(&self, shared: &Shared, work_items: usize) {
        let held = work_items * size_of::<Entry<P::State, O>>();
        shared.reset(
            self.report.states,
            self.report.transitions,
            held as u64 + self.arena_bytes(),
        );
    }

    /// Merges the chunks of a stratum, in chunk order, into this search:
    /// counts, path nodes (renumbered after those merged so far) and
    /// frontiers. The first violation in chunk order wins, then the first
    /// budget. The chunks' emptied buffers go to `spares`.
    pub(in crate::search) fn merge(
        &mut self,
        chunks: Vec<Chunk<P::State, O>>,
        spares: &mut Spares<P::State, O>,
    ) -> Result<Option<Stop>, SearchError> {
        let base = self.arena.nodes.len();
        let mut stop: Option<Stop> = None;
        for chunk in chunks {
            let mut violation = None;
            if let Some(w) = chunk.worker {
                self.merge_counts(&w);
                let remap = self.arena.append(&w.nodes, base)?;
                let mut nodes = w.nodes;
                nodes.clear();
                spares.nodes.push(nodes);
                // Kept as it is, after the frontiers before it: the next
                // stratum's workers renumber its nodes.
                if w.frontier.is_empty() {
                    spares.lists.push(w.frontier);
                } else {
                    self.pending.push((w.frontier, remap));
                }
                violation = w.violation;
            }
            spares.lists.push(chunk.spare);
            match chunk.stop {
                Some(Stop::Violation) if stop != Some(Stop::Violation) => {
                    stop = Some(Stop::Violation);
                    self.violation = violation;
                }
                Some(Stop::Budget(by)) if stop.is_none() => stop = Some(Stop::Budget(by)),
                _ => {}
            }
        }
        self.peak_bytes = self.peak_bytes.max(self.search_bytes());
        Ok(stop)
    }

    /// The next frontier's lists, in order, each with the renumbering of
    /// its path nodes: `work` (the main search's own frontier, swapped
    /// out by `explore`; empty after a parallel stratum) first, then the
    /// workers' frontiers that the last merge kept.
    pub(in crate::search) fn take_lists(&mut self, work: &mut Vec<Entry<P::State, O>>) -> Vec<WorkList<P::State, O>> {
        let mut lists = Vec::with_capacity(self.pending.len() + 1);
        if !work.is_empty() {
            lists.push((std::mem::take(work), Remap::NONE));
        }
        lists.append(&mut self.pending);
        lists
    }

    /// Adds a worker's statistics to this search's.
    fn merge_counts(&mut self, w: &Worker<P::State, O>) {
        let r = &mut self.report;
        r.states += w.report.states;
        r.transitions += w.report.transitions;
        r.deferrals += w.report.deferrals;
        r.cache_full |= w.report.cache_full;
        let s = &mut self.stratum;
        s.new_states += w.stratum.new_states;
        s.transitions += w.stratum.transitions;
        s.deferrals += w.stratum.deferrals;
        self.cut |= w.cut;
        self.revisits += w.revisits;
        self.peak_bytes = self.peak_bytes.max(w.peak_bytes);
        self.retired.add(&w.retired);
    }
}
