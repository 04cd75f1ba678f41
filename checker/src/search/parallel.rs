//! Parallel stratified search (DESIGN §3, "Parallel SES"): opt-in with more
//! than one thread for SES and PB.
//!
//! Stratum 0 (one work item: the initial state) runs on the calling thread.
//! Every later stratum splits its work items, in frontier order, into
//! chunks that run on a rayon pool. Each chunk is an ordinary
//! [`stratified`](super::stratified) search (the one search loop, not a
//! copy) with its own stack, its own next-stratum frontier and its own
//! path nodes, sharing
//!
//! * the state cache ([`SharedCache`]): a state is inserted, counted and
//!   expanded by exactly one worker, so run to exhaustion the distinct
//!   states are exactly the reachable set, as in the sequential search;
//! * the merged path arena of the earlier strata, read-only: a chunk's new
//!   nodes get ids after it, and are renumbered when the chunk is merged,
//!   so that every delay path stays replayable;
//! * the counters the budgets judge (states, transitions) and a halt flag:
//!   a violation, a budget or an error in one chunk stops all of them
//!   within 4096 transitions.
//!
//! After the stratum the chunks' frontiers are concatenated in chunk order
//! (so in the order of the work items they came from) and the path nodes
//! appended. What depends on the race between workers: which worker
//! reaches a state first, hence the counts of transitions and deferrals,
//! the per-stratum split of states and the counterexample found. What does
//! not: the set of states visited when run to exhaustion, the outcome and
//! `verified` (every state that enters the cache gets a frame that takes
//! all its choices, in this stratum or a later one).

use super::order::ChoiceOrder;
use super::progress::Meter;
use super::stratified::{cache_budget, Entry, PathNode, Search, SearchResult, StateCache, Stop, ROOT};
use super::SearchError;
use crate::cache::{FingerprintSet, Insert};
use crate::config::{Config, Progress};
use crate::program::Program;
use crate::report::{BoundedBy, Report};
use rayon::prelude::*;
use std::mem::size_of;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// The number of shards of [`SharedCache`] (a power of two).
const SHARDS: usize = 64;
/// Chunks per thread in one stratum: enough to balance uneven work items.
const CHUNKS_PER_THREAD: usize = 16;

/// The shared state cache of a parallel search: fingerprints spread over
/// 64 shards by their low bits (a [`FingerprintSet`] places them by their
/// high bits), each a [`FingerprintSet`] behind a mutex with an equal
/// share of the budget.
///
/// Contract: among all threads, exactly one insert of a fingerprint answers
/// [`Insert::New`]; a shard at its share of the budget answers
/// [`Insert::Full`] for new fingerprints (sound: the search re-explores).
/// Unlike [`crate::cache::ConcurrentFingerprintSet`], it grows on demand,
/// so that a large budget does not allocate (and touch) the whole table up
/// front.
#[derive(Debug)]
pub struct SharedCache {
    shards: Box<[Mutex<FingerprintSet>]>,
}

impl SharedCache {
    /// An empty cache of at most `budget` bytes (`None`: no limit).
    pub fn new(budget: Option<usize>) -> Self {
        let share = budget.map(|b| b / SHARDS);
        SharedCache {
            shards: (0..SHARDS).map(|_| Mutex::new(FingerprintSet::new(share))).collect(),
        }
    }

    fn shard(&self, i: usize) -> MutexGuard<'_, FingerprintSet> {
        // A panic while holding a shard cannot leave it inconsistent for
        // readers that only insert: take the guard even if poisoned.
        self.shards[i].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Inserts `fp` (see the type's contract).
    #[inline]
    pub fn insert(&self, fp: u64) -> Insert {
        self.shard(fp as usize & (SHARDS - 1)).insert(fp)
    }

    /// The number of fingerprints in the cache.
    pub fn len(&self) -> usize {
        (0..SHARDS).map(|i| self.shard(i).len()).sum()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes allocated by all shards.
    pub fn bytes(&self) -> usize {
        (0..SHARDS).map(|i| self.shard(i).bytes()).sum()
    }
}

impl StateCache for &SharedCache {
    #[inline]
    fn insert(&mut self, fp: u64) -> Insert {
        SharedCache::insert(self, fp)
    }
    fn bytes(&self) -> usize {
        SharedCache::bytes(self)
    }
    #[inline]
    fn contains(&self, fp: u64) -> bool {
        self.shard(fp as usize & (SHARDS - 1)).contains(fp)
    }
    /// A hint: only when the shard is free, so it never waits.
    #[inline]
    fn prefetch(&self, fp: u64) {
        if let Ok(shard) = self.shards[fp as usize & (SHARDS - 1)].try_lock() {
            shard.prefetch(fp);
        }
    }
}

/// What the workers of one search share besides the cache: the totals the
/// budgets judge, the halt flag and the progress line.
pub(super) struct Shared {
    halted: AtomicBool,
    states: AtomicU64,
    transitions: AtomicU64,
    /// Bytes held outside the workers (the stratum's work items, the
    /// merged path arena), counted in their memory checks.
    base_bytes: AtomicU64,
    meter: Mutex<Meter>,
}

impl Shared {
    fn new(progress: Progress) -> Self {
        Shared {
            halted: AtomicBool::new(false),
            states: AtomicU64::new(0),
            transitions: AtomicU64::new(0),
            base_bytes: AtomicU64::new(0),
            meter: Mutex::new(Meter::new(progress)),
        }
    }

    /// Adds a worker's new states and transitions; returns the totals and
    /// the bytes held outside the workers.
    pub(super) fn add(&self, states: u64, transitions: u64) -> (u64, u64, u64) {
        let s = self.states.fetch_add(states, Ordering::Relaxed) + states;
        let t = self.transitions.fetch_add(transitions, Ordering::Relaxed) + transitions;
        (s, t, self.base_bytes.load(Ordering::Relaxed))
    }

    /// Whether some worker stopped the search.
    pub(super) fn is_halted(&self) -> bool {
        self.halted.load(Ordering::Relaxed)
    }

    fn halt(&self) {
        self.halted.store(true, Ordering::Relaxed)
    }

    /// The progress meter, unless another worker is using it.
    pub(super) fn meter(&self) -> Option<MutexGuard<'_, Meter>> {
        self.meter.try_lock().ok()
    }
}

/// What one chunk of a stratum produced.
struct Chunk<S, O> {
    stop: Option<Stop>,
    search: Option<ChunkSearch<S, O>>,
}

/// The parts of a finished chunk's search that the merge needs.
struct ChunkSearch<S, O> {
    frontier: Vec<Entry<S, O>>,
    nodes: Vec<PathNode>,
    report: Report,
    stratum: crate::report::Stratum,
    violation: Option<super::stratified::RawViolation>,
    cut: bool,
    peak_bytes: u64,
    retired: Vec<super::stratified::Retired>,
}

/// The stratified search of [`super::stratified::run`] on `threads` worker
/// threads (at least 2 to be useful; 1 works too). Same arguments and
/// result; `report.threads` is set to `threads`. Counts may differ from
/// run to run; run to exhaustion, the states counted are exactly the
/// reachable ones, and a violation's path replays.
pub fn run<P: Program, O: ChoiceOrder>(
    program: &P,
    root: O,
    config: &Config,
    mut report: Report,
    threads: usize,
) -> Result<SearchResult, SearchError> {
    let threads = threads.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| SearchError::Input(format!("cannot start {threads} threads: {e}")))?;
    report.threads = threads;
    let cache = SharedCache::new(cache_budget(config));
    let shared = Shared::new(config.progress.clone());
    let mut main = Search::new(program, config, &cache, report);
    let stop = explore(&mut main, program, config, root, &shared, &pool, threads);
    if let Ok(mut meter) = shared.meter.lock() {
        meter.finish();
    }
    Ok(main.finish(stop?))
}

/// The loop over strata of the sequential search, with each stratum after
/// the first run by [`stratum`].
fn explore<'a, P: Program, O: ChoiceOrder>(
    main: &mut Search<'a, P, O, &'a SharedCache>,
    program: &P,
    config: &Config,
    root: O,
    shared: &Shared,
    pool: &rayon::ThreadPool,
    threads: usize,
) -> Result<Option<Stop>, SearchError> {
    let mut started = Instant::now();
    let mut stop = main.start(root)?;
    loop {
        main.close_stratum(started, stop.is_none());
        if stop.is_some() || (main.frontier.is_empty() && !main.owed_later()) {
            return Ok(stop);
        }
        if config.max_delays.is_some_and(|m| main.bound >= m) {
            return Ok(Some(Stop::Budget(BoundedBy::MaxDelays)));
        }
        main.bound += 1;
        started = Instant::now();
        let work = std::mem::take(&mut main.frontier);
        stop = stratum(main, program, config, work, shared, pool, threads)?;
    }
}

/// Runs one stratum's work items on the pool and merges the chunks into
/// `main` in chunk order.
fn stratum<'a, P: Program, O: ChoiceOrder>(
    main: &mut Search<'a, P, O, &'a SharedCache>,
    program: &P,
    config: &Config,
    work: Vec<Entry<P::State, O>>,
    shared: &Shared,
    pool: &rayon::ThreadPool,
    threads: usize,
) -> Result<Option<Stop>, SearchError> {
    let pieces = work.len().min(threads * CHUNKS_PER_THREAD).max(1);
    let base_bytes = work.len() * size_of::<Entry<P::State, O>>() + main.arena.nodes.capacity() * size_of::<PathNode>();
    let chunks = split(work, pieces);
    shared.states.store(main.report.states, Ordering::Relaxed);
    shared.transitions.store(main.report.transitions, Ordering::Relaxed);
    shared.base_bytes.store(base_bytes as u64, Ordering::Relaxed);
    let (cache, bound, started) = (main.cache, main.bound, main.started);
    let below: &[PathNode] = &main.arena.nodes;
    let base = below.len();
    let outs: Vec<Result<Chunk<P::State, O>, SearchError>> = pool.install(|| {
        chunks
            .into_par_iter()
            .map(|items| {
                let out = work_chunk(program, config, cache, shared, below, bound, started, items);
                if !matches!(
                    out,
                    Ok(Chunk {
                        stop: None | Some(Stop::Halted),
                        ..
                    })
                ) {
                    shared.halt();
                }
                out
            })
            .collect()
    });
    let mut stop: Option<Stop> = None;
    let mut error = None;
    for out in outs {
        let chunk = match out {
            Ok(chunk) => chunk,
            Err(e) => {
                error.get_or_insert(e);
                continue;
            }
        };
        let Some(c) = chunk.search else { continue };
        merge_counts(main, &c);
        // Renumber the chunk's nodes after those merged so far.
        let offset = main.arena.nodes.len();
        if offset + c.nodes.len() >= ROOT as usize {
            return Err(SearchError::Internal("more than 4 billion path nodes".into()));
        }
        let remap = |id: u32| {
            if (id as usize) >= base && id < ROOT {
                (id as usize - base + offset) as u32
            } else {
                id
            }
        };
        main.arena.nodes.extend(c.nodes.iter().map(|n| PathNode {
            parent: remap(n.parent),
            ..*n
        }));
        main.frontier.extend(c.frontier.into_iter().map(|mut e| {
            e.node = remap(e.node);
            e
        }));
        // The first violation in chunk order wins, then the first budget.
        match chunk.stop {
            Some(Stop::Violation) if !matches!(stop, Some(Stop::Violation)) => {
                stop = Some(Stop::Violation);
                main.violation = c.violation;
            }
            Some(Stop::Budget(by)) if stop.is_none() => stop = Some(Stop::Budget(by)),
            _ => {}
        }
    }
    if let Some(e) = error {
        return Err(e);
    }
    if stop.is_none() && shared.is_halted() {
        return Err(SearchError::Internal(
            "a parallel worker halted the search without a reason".into(),
        ));
    }
    main.peak_bytes = main.peak_bytes.max(main.search_bytes());
    Ok(stop)
}

/// Adds a chunk's statistics to the main search's.
fn merge_counts<P: Program, O: ChoiceOrder>(main: &mut Search<'_, P, O, &SharedCache>, c: &ChunkSearch<P::State, O>) {
    let r = &mut main.report;
    r.states += c.report.states;
    r.transitions += c.report.transitions;
    r.deferrals += c.report.deferrals;
    r.cache_full |= c.report.cache_full;
    let s = &mut main.stratum;
    s.new_states += c.stratum.new_states;
    s.transitions += c.stratum.transitions;
    s.deferrals += c.stratum.deferrals;
    main.cut |= c.cut;
    main.peak_bytes = main.peak_bytes.max(c.peak_bytes);
    if main.retired.len() < c.retired.len() {
        main.retired.resize(c.retired.len(), Default::default());
    }
    for (m, r) in main.retired.iter_mut().zip(&c.retired) {
        m.add(r);
    }
}

/// Splits `work` into `pieces` contiguous chunks of nearly equal length,
/// in order.
fn split<T>(work: Vec<T>, pieces: usize) -> Vec<Vec<T>> {
    let (n, pieces) = (work.len(), pieces.max(1));
    let mut out: Vec<Vec<T>> = Vec::with_capacity(pieces);
    let mut it = work.into_iter();
    for i in 0..pieces {
        let len = n / pieces + usize::from(i < n % pieces);
        out.push(it.by_ref().take(len).collect());
    }
    out
}

/// Runs one chunk of work items as a worker search at `bound`.
#[allow(clippy::too_many_arguments)]
fn work_chunk<'a, P: Program, O: ChoiceOrder>(
    program: &'a P,
    config: &'a Config,
    cache: &'a SharedCache,
    shared: &'a Shared,
    below: &'a [PathNode],
    bound: u32,
    started: Instant,
    mut items: Vec<Entry<P::State, O>>,
) -> Result<Chunk<P::State, O>, SearchError> {
    if shared.is_halted() {
        return Ok(Chunk {
            stop: Some(Stop::Halted),
            search: None,
        });
    }
    let mut w = Search::new(program, config, cache, Report::new("", None, config.seed, 1));
    w.meter = Meter::new(Progress::Off);
    w.arena.below = below;
    w.bound = bound;
    w.started = started;
    w.shared = Some(shared);
    let stop = w.run_work(&mut items)?;
    Ok(Chunk {
        stop,
        search: Some(ChunkSearch {
            frontier: w.frontier,
            nodes: w.arena.nodes,
            report: w.report,
            stratum: w.stratum,
            violation: w.violation,
            cut: w.cut,
            peak_bytes: w.peak_bytes,
            retired: w.retired,
        }),
    })
}
