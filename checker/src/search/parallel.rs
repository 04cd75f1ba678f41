//! Parallel stratified search (ARCHITECTURE.md §3, "Parallel SES"): opt-in
//! with more than one thread for SES and PB.
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
/// violation's path replays.
pub(super) fn run<P: Program, O: ChoiceOrder>(
    program: &P,
    root: O,
    config: &Config,
    mut report: Report,
    threads: usize,
) -> Result<SearchResult, SearchError> {
    let threads = threads.max(1);
    report.threads = threads;
    let cache = SharedCache::new(cache_budget(config));
    let shared = Shared::new(config.progress.clone());
    let mut main = Search::on_shared_cache(program, config, &cache, report);
    let stop = main.explore(root, |main, work| stratum(main, work, &shared, threads));
    shared.finish_meter();
    Ok(main.finish(stop?))
}

/// Runs one stratum's work items on `threads` threads and merges the chunks into
/// `main` in chunk order.
fn stratum<'a, P: Program, O: ChoiceOrder>(
    main: &mut Search<'a, P, O, &'a SharedCache>,
    work: &mut Vec<Entry<P::State, O>>,
    shared: &Shared,
    threads: usize,
) -> Result<Option<Stop>, SearchError> {
    let pieces = work.len().min(threads * CHUNKS_PER_THREAD).max(1);
    main.share_totals(shared, work.len());
    let chunks: Vec<_> = split(std::mem::take(work), pieces)
        .into_iter()
        .map(Mutex::new)
        .collect();
    let fork = main.fork();
    let outs = run_indexed(
        threads,
        chunks.len(),
        || (),
        |_, i| {
            let items = std::mem::take(&mut *chunks[i].lock().unwrap_or_else(|e| e.into_inner()));
            let out = fork.run(shared, items);
            if !out.as_ref().is_ok_and(|c| c.lets_others_go_on()) {
                shared.halt();
            }
            out
        },
    );
    let chunks = outs.into_iter().collect::<Result<Vec<_>, _>>()?;
    let stop = main.merge(chunks)?;
    if stop.is_none() && shared.is_halted() {
        return Err(SearchError::Internal(
            "a parallel worker halted the search without a reason".into(),
        ));
    }
    Ok(stop)
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

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn split_keeps_the_order_and_balances() {
        let parts = split((0..10).collect(), 4);
        assert_eq!(parts, vec![vec![0, 1, 2], vec![3, 4, 5], vec![6, 7], vec![8, 9]]);
        assert_eq!(split(Vec::<u8>::new(), 3), vec![Vec::<u8>::new(); 3]);
    }
}
