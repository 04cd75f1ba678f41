//! Parallel stratified search (ARCHITECTURE.md §3, "Parallel SES"): opt-in
//! with more than one thread for SES, PB and DFS.
//!
//! DFS has a single stratum; on several threads it runs as this search
//! with the [`Natural`](super::order::Natural) order charging one per move
//! (`spread`): its first strata, which defer every choice but the first,
//! spread the work over many work items, and the first stratum with at
//! least `spread` of them runs without a bound, each item depth-first to
//! the end of its remaining choices. Every state is still expanded once,
//! with all its choices, so the states and transitions are DFS's.
//!
//! Stratum 0 (one work item: the initial state) runs on the calling thread.
//! Every later stratum splits its work items, in frontier order, into
//! chunks that run on `threads` threads. Each chunk is an ordinary
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
//!   within a few hundred transitions of each worker.
//!
//! After the stratum the chunks' frontiers are concatenated in chunk order
//! (so in the order of the work items they came from) and the path nodes
//! appended. What depends on the race between workers: which worker
//! reaches a state first, hence the counts of transitions and deferrals,
//! the per-stratum split of states and the counterexample found. What does
//! not: the set of states visited when run to exhaustion, the outcome and
//! `verified` (every state that enters the cache gets a frame that takes
//! all its choices, in this stratum or a later one).

use super::error::SearchError;
use super::order::ChoiceOrder;
use super::stratified::{cache_budget, Entry, Search, SearchResult, Shared, Stop};
use super::threads::run_indexed;
use crate::cache::SharedCache;
use crate::config::Config;
use crate::program::Program;
use crate::report::Report;
use std::sync::Mutex;

/// Chunks per thread in one stratum: enough to balance uneven work items.
const CHUNKS_PER_THREAD: usize = 16;

/// The stratified search of [`super::stratified::run`] on `threads`
/// threads. Same arguments and result; `report.threads` is set to
/// `threads`. Counts may differ from run to run; run to
/// exhaustion, the states counted are exactly the reachable ones, and a
/// violation's path replays. With `spread` (a parallel DFS), the first
/// stratum with at least that many work items runs without a bound.
pub(super) fn run<P: Program, O: ChoiceOrder>(
    program: &P,
    root: O,
    config: &Config,
    mut report: Report,
    threads: usize,
    spread: Option<usize>,
) -> Result<SearchResult, SearchError> {
    let threads = threads.max(1);
    report.threads = threads;
    let cache = SharedCache::new(cache_budget(config));
    let shared = Shared::new(config.progress.clone());
    let mut main = Search::on_shared_cache(program, config, &cache, report);
    // Emptied work lists and worker frontiers, reused from one stratum to
    // the next so that their pages stay mapped.
    let mut spares = Vec::new();
    let stop = main.explore(root, |main, work| {
        if spread.is_some_and(|n| work.len() >= n) {
            main.lift_bound();
        }
        stratum(main, work, &mut spares, &cache, &shared, threads)
    });
    shared.finish_meter();
    Ok(main.finish(stop?))
}

/// Runs one stratum's work items on `threads` threads and merges the chunks into
/// `main` in chunk order.
fn stratum<'a, P: Program, O: ChoiceOrder>(
    main: &mut Search<'a, P, O, &'a SharedCache>,
    work: &mut Vec<Entry<P::State, O>>,
    spares: &mut Vec<Vec<Entry<P::State, O>>>,
    cache: &SharedCache,
    shared: &Shared,
    threads: usize,
) -> Result<Option<Stop>, SearchError> {
    let pieces = work.len().min(threads * CHUNKS_PER_THREAD).max(1);
    main.share_totals(shared, work.len());
    let chunks: Vec<_> = split(work, pieces, spares).into_iter().map(Mutex::new).collect();
    let frontiers = Mutex::new(std::mem::take(spares));
    let fork = main.fork();
    let outs = run_indexed(
        threads,
        chunks.len(),
        || (),
        |_, i| {
            let items = std::mem::take(&mut *chunks[i].lock().unwrap_or_else(|e| e.into_inner()));
            let frontier = frontiers.lock().unwrap_or_else(|e| e.into_inner()).pop();
            let out = fork.run(shared, items, frontier.unwrap_or_default());
            if !out.as_ref().is_ok_and(|c| c.lets_others_go_on()) {
                shared.halt();
            }
            out
        },
    );
    // SAFETY: the workers are joined and this thread is not inside a
    // method of the cache: nobody probes a table growth replaced.
    unsafe { cache.reclaim() };
    *spares = frontiers.into_inner().unwrap_or_else(|e| e.into_inner());
    let chunks = outs.into_iter().collect::<Result<Vec<_>, _>>()?;
    let stop = main.merge(chunks, spares)?;
    if stop.is_none() && shared.is_halted() {
        return Err(SearchError::Internal(
            "a parallel worker halted the search without a reason".into(),
        ));
    }
    Ok(stop)
}

/// Moves `work` into `pieces` contiguous chunks of nearly equal length,
/// in order, in buffers taken from `spares` where it has them.
fn split<T>(work: &mut Vec<T>, pieces: usize, spares: &mut Vec<Vec<T>>) -> Vec<Vec<T>> {
    let (n, pieces) = (work.len(), pieces.max(1));
    let mut out: Vec<Vec<T>> = Vec::with_capacity(pieces);
    let mut it = work.drain(..);
    for i in 0..pieces {
        let len = n / pieces + usize::from(i < n % pieces);
        let mut piece = spares.pop().unwrap_or_default();
        piece.extend(it.by_ref().take(len));
        out.push(piece);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn split_keeps_the_order_and_balances() {
        let mut spares = vec![Vec::with_capacity(100)];
        let mut work = (0..10).collect();
        let parts = split(&mut work, 4, &mut spares);
        assert_eq!(parts, vec![vec![0, 1, 2], vec![3, 4, 5], vec![6, 7], vec![8, 9]]);
        assert!(work.is_empty() && spares.is_empty());
        // The spare buffer was used (for the first piece).
        assert!(parts[0].capacity() >= 100);
        assert_eq!(split(&mut Vec::<u8>::new(), 3, &mut spares), vec![Vec::<u8>::new(); 3]);
    }
}
