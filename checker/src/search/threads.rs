//! The one way every parallel strategy runs work on threads: scoped
//! threads that take numbered items in turn until none is left.
//!
//! Threads are started per call, only as many as there are items, and end
//! when the items do: none waits or spins idle, so `-j` far above the core
//! count costs thread starts, not a busy machine.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs `item(scratch, i)` for every `i` in `0..n` on at most `threads`
/// threads (the calling thread is one of them), each with its own
/// `scratch` from `init`; returns the results in index order. Items are
/// taken in index order (each thread takes the next one when it is done).
pub fn run_indexed<S, T, I, F>(threads: usize, n: usize, init: I, item: F) -> Vec<T>
where
    T: Send,
    I: Fn() -> S + Sync,
    F: Fn(&mut S, usize) -> T + Sync,
{
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, T)>> = Mutex::new(Vec::with_capacity(n));
    let work = || {
        let mut scratch = init();
        let mut mine = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                break;
            }
            mine.push((i, item(&mut scratch, i)));
        }
        done.lock().unwrap_or_else(|e| e.into_inner()).extend(mine);
    };
    on_threads(threads.max(1).min(n), &work);
    // Each index was taken once; placed by index, not sorted: a sort per
    // result type was a tenth of the registry's code.
    let mut slots: Vec<Option<T>> = std::iter::repeat_with(|| None).take(n).collect();
    for (i, t) in done.into_inner().unwrap_or_else(|e| e.into_inner()) {
        slots[i] = Some(t);
    }
    debug_assert!(slots.iter().all(Option::is_some), "an index was not run");
    slots.into_iter().flatten().collect()
}

/// Runs `work` on `threads` threads, the calling thread one of them, and
/// returns when every one has returned. Not generic, so the thread
/// machinery is compiled once, not once per [`run_indexed`] caller.
fn on_threads(threads: usize, work: &(dyn Fn() + Sync)) {
    std::thread::scope(|s| {
        for _ in 1..threads {
            // A thread the system refuses only leaves more items to the
            // others.
            if std::thread::Builder::new().spawn_scoped(s, work).is_err() {
                break;
            }
        }
        work();
    });
}

#[cfg(test)]
mod tests {
    use super::run_indexed;

    #[test]
    fn every_item_once_in_order_on_any_thread_count() {
        for threads in [1, 2, 7, 100] {
            let out = run_indexed(
                threads,
                50,
                || 0u32,
                |runs, i| {
                    *runs += 1;
                    i * i
                },
            );
            assert_eq!(out, (0..50).map(|i| i * i).collect::<Vec<_>>(), "{threads} threads");
        }
        assert!(run_indexed(4, 0, || (), |_, i| i).is_empty());
    }
}
