//! Parallel stratified search (ARCHITECTURE.md, "Parallel SES, PB and DFS"): opt-in
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
use super::stratified::{Entry, Remap, Search, SearchResult, Shared, Spares, Stop, cache_budget};
use super::threads::run_indexed;
use crate::cache::SharedCache;
use crate::config::Config;
use crate::program::Program;
use crate::report::Report;
use crate::watch::{Watched, Watching};
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
    program: Watched<'_, P>,
    root: O,
    config: &Config,
    report: Report,
    threads: usize,
    spread: Option<usize>,
) -> Result<SearchResult, SearchError> {
    // One instance per program type in builds with debug assertions (the
    // tests'): `Watching::<_, true>` runs without a watch too (see
    // `Watching`).
    match program.watch() {
        #[cfg(not(debug_assertions))]
        None => run_as::<P, O, false>(program, root, config, report, threads, spread),
        _ => run_as::<P, O, true>(program, root, config, report, threads, spread),
    }
}

/// [`run`] instantiated for a watch there (`W`) or not.
fn run_as<P: Program, O: ChoiceOrder, const W: bool>(
    program: Watched<'_, P>,
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
    let mut main = Search::<P, O, W>::on_shared_cache(Watching::new(program), config, &cache, report);
    let mut spares = Spares::default();
    let stop = main.explore(root, |main, work| {
        if spread.is_some_and(|n| work.len() as u64 + main.frontier_len() >= n as u64) {
            main.lift_bound();
        }
        stratum(main, work, &mut spares, &cache, &shared, threads)
    });
    shared.finish_meter();
    Ok(main.finish(stop?))
}

/// Runs one stratum's work items (`work`, then the lists the last merge
/// kept) on `threads` threads, with buffers from `spares`, and merges the
/// chunks into `main` in chunk order.
fn stratum<'a, P: Program, O: ChoiceOrder, const W: bool>(
    main: &mut Search<'a, P, O, W>,
    work: &mut Vec<Entry<P::State, O>>,
    spares: &mut Spares<P::State, O>,
    cache: &SharedCache,
    shared: &Shared,
    threads: usize,
) -> Result<Option<Stop>, SearchError> {
    let lists = main.take_lists(work);
    let total: usize = lists.iter().map(|(list, _)| list.len()).sum();
    let pieces = total.min(threads * CHUNKS_PER_THREAD).max(1);
    main.share_totals(shared, total);
    // Sorted by capacity, for `take_fitting`.
    spares.lists.sort_unstable_by_key(Vec::capacity);
    let chunks: Vec<_> = split(lists, pieces, &mut spares.lists)
        .into_iter()
        .map(Mutex::new)
        .collect();
    let last = spares.last;
    let pool = Mutex::new(std::mem::take(spares));
    let fork = main.fork(cache);
    let outs = run_indexed(
        threads,
        chunks.len(),
        || (),
        |_, i| {
            let items = std::mem::replace(
                &mut *chunks[i].lock().unwrap_or_else(|e| e.into_inner()),
                (Vec::new(), Remap::NONE),
            );
            let buffers = {
                let mut pool = pool.lock().unwrap_or_else(|e| e.into_inner());
                let need = expected_frontier(items.0.len(), last);
                (
                    take_fitting(&mut pool.lists, need),
                    pool.nodes.pop().unwrap_or_default(),
                )
            };
            let out = fork.run(shared, items, buffers);
            if !out.as_ref().is_ok_and(|c| c.lets_others_go_on()) {
                shared.halt();
            }
            out
        },
    );
    // SAFETY: the workers are joined and this thread is not inside a
    // method of the cache: nobody probes a table growth replaced.
    unsafe { cache.reclaim() };
    *spares = pool.into_inner().unwrap_or_else(|e| e.into_inner());
    let chunks = outs.into_iter().collect::<Result<Vec<_>, _>>()?;
    let stop = main.merge(chunks, spares)?;
    spares.last = (main.frontier_len() as usize, total);
    if stop.is_none() && shared.is_halted() {
        return Err(SearchError::Internal(
            "a parallel worker halted the search without a reason".into(),
        ));
    }
    Ok(stop)
}

/// The spare buffer for `need` entries from `spares`, sorted by capacity
/// (and left sorted): the smallest that holds them, else the largest
/// (which then grows), else a new one. Handed out largest first, every
/// buffer grew in turn to the largest that any chunk had needed, into
/// fresh pages (ARCHITECTURE.md, "Parallel SES, PB and DFS").
fn take_fitting<T>(spares: &mut Vec<Vec<T>>, need: usize) -> Vec<T> {
    let fit = spares.partition_point(|list| list.capacity() < need);
    if fit < spares.len() {
        spares.remove(fit)
    } else {
        spares.pop().unwrap_or_default()
    }
}

/// The entries that a chunk of `items` work items is expected to defer:
/// as many per item as in the last stratum (`last`: its frontier and its
/// work items), within a quarter and four times as many, and a tenth more.
fn expected_frontier(items: usize, (frontier, work): (usize, usize)) -> usize {
    let per_item = (items as u128 * frontier as u128 / work.max(1) as u128) as usize;
    let expected = per_item.clamp(items / 4, items.saturating_mul(4));
    expected.saturating_add(expected / 10)
}

/// Cuts `lists` (in order, each with the renumbering of its path nodes)
/// into about `pieces` pieces of about equal length, in order: a list of
/// at most twice the target length is one piece as it is (not copied);
/// a longer one is cut, its later parts moved into buffers taken from
/// `spares` (sorted by capacity: [`take_fitting`]) where it has them.
/// Entries are copied only out of lists much longer than the others (a
/// parallel stratum's lists are the chunks' frontiers, of similar
/// lengths; copying all of them into one list and out again was 10% of a
/// parallel SES's time on TwoPhase).
fn split<T>(lists: Vec<(Vec<T>, Remap)>, pieces: usize, spares: &mut Vec<Vec<T>>) -> Vec<(Vec<T>, Remap)> {
    let total: usize = lists.iter().map(|(list, _)| list.len()).sum();
    let target = total.div_ceil(pieces.max(1)).max(1);
    let mut out = Vec::with_capacity(pieces + lists.len());
    for (mut list, remap) in lists {
        if list.len() <= 2 * target {
            out.push((list, remap));
            continue;
        }
        let parts = list.len().div_ceil(target);
        let mut tails = Vec::with_capacity(parts - 1);
        for k in (1..parts).rev() {
            let from = list.len() * k / (k + 1);
            let mut piece = take_fitting(spares, list.len() - from);
            piece.extend(list.drain(from..));
            tails.push((piece, remap));
        }
        out.push((list, remap));
        out.extend(tails.into_iter().rev());
    }
    if out.is_empty() {
        // A stratum without work items (only retired entries' counts).
        out.push((take_fitting(spares, 0), Remap::NONE));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{Remap, expected_frontier, split, take_fitting};

    /// The lists as plain vectors, to compare.
    fn plain(parts: &[(Vec<u32>, Remap)]) -> Vec<Vec<u32>> {
        parts.iter().map(|(p, _)| p.clone()).collect()
    }

    /// The smallest buffer that holds the need, else the largest, else a
    /// new one; the rest stay sorted.
    #[test]
    fn a_chunk_gets_the_smallest_buffer_that_fits() {
        let mut spares: Vec<Vec<u64>> = [10, 20, 40].into_iter().map(Vec::with_capacity).collect();
        let caps: Vec<usize> = spares.iter().map(Vec::capacity).collect();
        assert!(caps[0] < caps[1] && caps[1] < caps[2]);
        assert_eq!(take_fitting(&mut spares, caps[0] + 1).capacity(), caps[1]);
        assert_eq!(spares.iter().map(Vec::capacity).collect::<Vec<_>>(), [caps[0], caps[2]]);
        assert_eq!(take_fitting(&mut spares, caps[2] + 1).capacity(), caps[2]);
        assert_eq!(take_fitting(&mut spares, caps[0]).capacity(), caps[0]);
        assert!(spares.is_empty());
        assert_eq!(take_fitting(&mut spares, 5).capacity(), 0);
    }

    /// As many entries per work item as the last stratum deferred, within
    /// a quarter and four times the items, and a tenth more.
    #[test]
    fn a_chunk_is_expected_to_defer_as_the_last_stratum_did() {
        assert_eq!(expected_frontier(100, (150, 100)), 165);
        assert_eq!(expected_frontier(100, (1000, 10)), 440);
        assert_eq!(expected_frontier(100, (0, 50)), 27);
        assert_eq!(expected_frontier(0, (150, 100)), 0);
        // Before any stratum: one per item.
        assert_eq!(expected_frontier(100, (1, 1)), 110);
        // After a stratum with no work items: the least, a quarter.
        assert_eq!(expected_frontier(100, (0, 0)), 27);
    }

    #[test]
    fn split_keeps_the_order_and_balances() {
        // One long list: cut into four parts, in order.
        let mut spares = vec![Vec::with_capacity(100)];
        let parts = split(vec![((0..10).collect(), Remap::NONE)], 4, &mut spares);
        assert_eq!(
            plain(&parts),
            vec![vec![0, 1], vec![2, 3], vec![4, 5, 6], vec![7, 8, 9]]
        );
        assert!(spares.is_empty());
        // The spare buffer was used (for the last part, cut first).
        assert!(parts[3].0.capacity() >= 100);
        // Lists of similar lengths are pieces as they are: not copied.
        let lists: Vec<(Vec<u32>, Remap)> = vec![((0..5).collect(), Remap::NONE), ((5..8).collect(), Remap::NONE)];
        let addresses: Vec<*const u32> = lists.iter().map(|(l, _)| l.as_ptr()).collect();
        let parts = split(lists, 3, &mut spares);
        assert_eq!(plain(&parts), vec![(0..5).collect::<Vec<_>>(), (5..8).collect()]);
        assert!(parts.iter().zip(&addresses).all(|((l, _), &a)| l.as_ptr() == a));
        // A list much longer than the others is cut, the others kept.
        let lists = vec![
            (vec![0], Remap::NONE),
            ((1..13).collect(), Remap::NONE),
            (vec![13], Remap::NONE),
        ];
        let parts = split(lists, 7, &mut spares);
        assert_eq!(
            plain(&parts),
            vec![
                vec![0],
                vec![1, 2],
                vec![3, 4],
                vec![5, 6],
                vec![7, 8],
                vec![9, 10],
                vec![11, 12],
                vec![13]
            ]
        );
        // No work: one empty piece.
        assert_eq!(
            plain(&split(Vec::<(Vec<u32>, Remap)>::new(), 3, &mut spares)),
            vec![Vec::<u32>::new()]
        );
    }
}
