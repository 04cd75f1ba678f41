//! [`ThreadCache`]: a global allocator that keeps each thread's freed
//! small blocks for that thread's next allocations.
//!
//! The states of machine models own heap memory (the machines' queues,
//! the world's slots), and SES frees the states it deferred a stratum
//! earlier in bursts, as their entries retire. Those bursts overflow the
//! system allocator's per-thread cache (glibc keeps 7 blocks of a size)
//! into its shared bins, where they are split, merged and sorted again:
//! 15 to 31% of SES's time on paxos and chain, against DFS's frees, which
//! come back soon enough to stay in that cache (ARCHITECTURE.md,
//! "Performance design"). This allocator keeps a thread's freed blocks of up
//! to [`MAX_CACHED`] bytes in one plain list per size class, up to
//! [`CLASS_BYTES`] a class and [`THREAD_BYTES`] a thread, and hands the
//! last block freed out first; everything else goes to [`System`]. The
//! blocks kept are memory the program held just before: they stay in the
//! process's resident memory, so the search's memory budget counts them.
//!
//! The `mcheck` binary installs it; a binary of one's own opts in with
//!
//! ```
//! #[global_allocator]
//! static ALLOC: mcheck_checker::alloc::ThreadCache = mcheck_checker::alloc::ThreadCache;
//! ```
//!
//! **Contract kept**: a block of a size class is a [`System`] block of the
//! class's whole size (a multiple of 16 up to [`MAX_CACHED`], aligned to
//! 16), so any request of that class fits any block of it; a block freed
//! on one thread may be reused by another, whose list it joins. A
//! thread's lists go back to [`System`] when the thread exits; the frees
//! after that (other thread-locals' destructors) go straight to it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ptr;

/// The largest request kept in a size class.
pub const MAX_CACHED: usize = 1024;

/// The most bytes one size class keeps per thread.
pub const CLASS_BYTES: usize = 4 << 20;

/// The most bytes a thread keeps in all its classes.
pub const THREAD_BYTES: usize = 64 << 20;

/// Size classes are multiples of this, and so is their alignment.
const GRAIN: usize = 16;
const CLASSES: usize = MAX_CACHED / GRAIN;

/// The global allocator (see the module docs). A unit value: the lists
/// are per thread, not per value.
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadCache;

/// A thread's lists: for each class, its last freed block, whose first
/// word points to the block freed before it, and how many there are.
struct Lists {
    head: [Cell<*mut u8>; CLASSES],
    len: [Cell<u32>; CLASSES],
    /// The bytes listed in all classes.
    bytes: Cell<usize>,
    state: Cell<State>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// The thread has not allocated yet.
    Unset,
    /// Its exit's flush is being registered (an allocation from inside
    /// the registration goes to [`System`]).
    Registering,
    /// Its lists are in use.
    Live,
    /// Its lists were flushed (the thread is exiting).
    Done,
}

thread_local! {
    /// No drop glue, so reaching it never registers anything or fails.
    static LISTS: Lists = const {
        Lists {
            head: [const { Cell::new(ptr::null_mut()) }; CLASSES],
            len: [const { Cell::new(0) }; CLASSES],
            bytes: Cell::new(0),
            state: Cell::new(State::Unset),
        }
    };
    /// Reached once per thread, so that its drop flushes the lists when
    /// the thread exits.
    static FLUSH: Flush = const { Flush };
}

struct Flush;

impl Drop for Flush {
    fn drop(&mut self) {
        let _ = LISTS.try_with(|lists| {
            lists.state.set(State::Done);
            for class in 0..CLASSES {
                while let Some(block) = lists.pop(class) {
                    // SAFETY: a listed block is a System block of its
                    // class's layout, owned by the list.
                    unsafe { System.dealloc(block, class_layout(class)) };
                }
            }
        });
    }
}

/// The size class of `layout`; `None` for a block too large or too aligned
/// to cache.
#[inline(always)]
fn class(layout: Layout) -> Option<usize> {
    (layout.size() <= MAX_CACHED && layout.align() <= GRAIN).then(|| layout.size().saturating_sub(1) / GRAIN)
}

/// The layout of a block of `class`: its whole size.
#[inline(always)]
fn class_layout(class: usize) -> Layout {
    // SAFETY: a non-zero multiple of 16 with alignment 16.
    unsafe { Layout::from_size_align_unchecked(GRAIN * (class + 1), GRAIN) }
}

/// How many blocks `class` keeps.
#[inline(always)]
fn cap(class: usize) -> u32 {
    (CLASS_BYTES / (GRAIN * (class + 1))) as u32
}

impl Lists {
    #[inline(always)]
    fn pop(&self, class: usize) -> Option<*mut u8> {
        let block = self.head[class].get();
        if block.is_null() {
            return None;
        }
        // SAFETY: a listed block's first word is the next block's address.
        self.head[class].set(unsafe { block.cast::<*mut u8>().read() });
        self.len[class].set(self.len[class].get() - 1);
        self.bytes.set(self.bytes.get() - GRAIN * (class + 1));
        Some(block)
    }

    /// Lists `block`; false (and nothing kept) when the class is full.
    #[inline(always)]
    fn push(&self, class: usize, block: *mut u8) -> bool {
        let len = self.len[class].get();
        let bytes = self.bytes.get() + GRAIN * (class + 1);
        if len >= cap(class) || bytes > THREAD_BYTES {
            return false;
        }
        // SAFETY: the caller gives up `block`, at least 16 bytes aligned
        // to 16: its first word is free to hold the list's link.
        unsafe { block.cast::<*mut u8>().write(self.head[class].get()) };
        self.head[class].set(block);
        self.len[class].set(len + 1);
        self.bytes.set(bytes);
        true
    }
}

/// Runs `f` on this thread's lists, registering their flush first on the
/// thread's first call; `None` while that registration runs and once the
/// thread is exiting.
#[inline(always)]
fn with_lists<R>(f: impl FnOnce(&Lists) -> R) -> Option<R> {
    LISTS
        .try_with(|lists| match lists.state.get() {
            State::Live => Some(f(lists)),
            State::Unset => {
                lists.state.set(State::Registering);
                if FLUSH.try_with(|_| ()).is_ok() {
                    lists.state.set(State::Live);
                    Some(f(lists))
                } else {
                    lists.state.set(State::Done);
                    None
                }
            }
            State::Registering | State::Done => None,
        })
        .ok()
        .flatten()
}

// SAFETY: every block handed out is a System block at least as large and
// as aligned as asked (a class's blocks are its whole size, aligned to 16),
// and every block taken back either joins a list or goes back to System
// with the layout System gave it.
unsafe impl GlobalAlloc for ThreadCache {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe {
            match class(layout) {
                None => System.alloc(layout),
                Some(c) => match with_lists(|lists| lists.pop(c)).flatten() {
                    Some(block) => block,
                    None => System.alloc(class_layout(c)),
                },
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe {
            match class(layout) {
                None => System.dealloc(ptr, layout),
                Some(c) => {
                    if with_lists(|lists| lists.push(c, ptr)) != Some(true) {
                        System.dealloc(ptr, class_layout(c));
                    }
                }
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        unsafe {
            match class(layout) {
                // The system's own, which can skip zeroing fresh pages.
                None => System.alloc_zeroed(layout),
                Some(_) => {
                    let block = self.alloc(layout);
                    if !block.is_null() {
                        block.write_bytes(0, layout.size());
                    }
                    block
                }
            }
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe {
            // SAFETY: the caller guarantees that `new_size`, rounded up to
            // `layout.align()`, does not overflow.
            let new = Layout::from_size_align_unchecked(new_size, layout.align());
            match (class(layout), class(new)) {
                // The block is its class's whole size already.
                (Some(a), Some(b)) if a == b => ptr,
                (None, None) => System.realloc(ptr, layout, new_size),
                _ => {
                    let block = self.alloc(new);
                    if !block.is_null() {
                        ptr::copy_nonoverlapping(ptr, block, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    block
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many blocks this thread's list of `class` holds.
    fn cached(class: usize) -> u32 {
        LISTS.with(|lists| lists.len[class].get())
    }

    fn layout(size: usize) -> Layout {
        Layout::from_size_align(size, 8).unwrap()
    }

    /// A block freed is the next one of its class handed out, whatever
    /// the size asked within the class, and a class keeps `cap` blocks.
    #[test]
    fn a_freed_block_is_reused_by_its_class_up_to_the_cap() {
        let a = ThreadCache;
        // Sizes 33 to 48 are class 2 (48-byte blocks).
        assert_eq!(
            (class(layout(33)), class(layout(48)), class(layout(49))),
            (Some(2), Some(2), Some(3))
        );
        assert_eq!(
            (class(layout(1)), class(layout(16)), class(layout(1024))),
            (Some(0), Some(0), Some(63))
        );
        assert_eq!(class(layout(1025)), None);
        assert_eq!(class(Layout::from_size_align(64, 32).unwrap()), None);
        unsafe {
            let p = a.alloc(layout(40));
            p.write_bytes(7, 48);
            let before = cached(2);
            a.dealloc(p, layout(40));
            assert_eq!(cached(2), before + 1);
            let q = a.alloc(layout(33));
            assert_eq!(q, p);
            assert_eq!(cached(2), before);
            a.dealloc(q, layout(33));
            // Fill class 63 (1024-byte blocks: sizes 1009 to 1024) past its cap.
            let cap = cap(63) as usize;
            assert_eq!(cap, CLASS_BYTES / 1024);
            let blocks: Vec<*mut u8> = (0..cap + 10).map(|_| a.alloc(layout(1010))).collect();
            for &b in &blocks {
                a.dealloc(b, layout(1010));
            }
            assert_eq!(cached(63) as usize, cap);
            // Handed out last freed first: the cap's worth that fit.
            let again: Vec<*mut u8> = (0..cap).map(|_| a.alloc(layout(1024))).collect();
            let kept: Vec<*mut u8> = blocks[..cap].iter().rev().copied().collect();
            assert_eq!(again, kept);
            assert_eq!(cached(63), 0);
            for b in again {
                a.dealloc(b, layout(1024));
            }
        }
    }

    /// A thread keeps at most [`THREAD_BYTES`] in all, and what it refuses
    /// is less than one block short of that.
    #[test]
    fn a_thread_keeps_at_most_its_bytes_in_all() {
        std::thread::spawn(|| {
            let a = ThreadCache;
            let size = |c: usize| GRAIN * (c + 1);
            let blocks: Vec<(usize, *mut u8)> = (32..CLASSES)
                .flat_map(|c| (0..cap(c)).map(move |_| (c, unsafe { ThreadCache.alloc(layout(size(c))) })))
                .collect();
            for &(c, b) in &blocks {
                unsafe { a.dealloc(b, layout(size(c))) };
            }
            let freed: usize = blocks.iter().map(|&(c, _)| size(c)).sum();
            let kept: usize = (32..CLASSES).map(|c| cached(c) as usize * size(c)).sum();
            assert!(freed > THREAD_BYTES, "{freed}");
            assert!(kept <= THREAD_BYTES && kept > THREAD_BYTES - MAX_CACHED, "{kept}");
            assert_eq!(LISTS.with(|lists| lists.bytes.get()), kept);
        })
        .join()
        .unwrap();
    }

    /// Growing and shrinking keeps the bytes, within a class, across
    /// classes, and to and from blocks too large to cache; zeroed blocks
    /// are zero even when reused.
    #[test]
    fn realloc_keeps_the_bytes_and_zeroed_blocks_are_zero() {
        let a = ThreadCache;
        unsafe {
            let sizes = [5usize, 16, 17, 100, 1024, 1025, 5000, 700, 8, 3000, 64];
            let mut size = 3;
            let mut p = a.alloc(layout(size));
            for (i, b) in (0..size).enumerate() {
                p.add(b).write(i as u8);
            }
            for &next in &sizes {
                p = a.realloc(p, layout(size), next);
                for b in 0..size.min(next) {
                    assert_eq!(p.add(b).read(), (b % 251) as u8, "byte {b} from {size} to {next}");
                }
                for b in 0..next {
                    p.add(b).write((b % 251) as u8);
                }
                size = next;
            }
            a.dealloc(p, layout(size));
            for size in [24, 2000] {
                let dirty = a.alloc(layout(size));
                dirty.write_bytes(0xAB, size);
                a.dealloc(dirty, layout(size));
                let z = a.alloc_zeroed(layout(size));
                assert!((0..size).all(|b| z.add(b).read() == 0));
                a.dealloc(z, layout(size));
            }
        }
    }

    /// A thread's lists go back to the system when it exits, and a block
    /// freed on another thread joins that thread's lists.
    #[test]
    fn a_threads_lists_are_flushed_at_exit_and_take_other_threads_blocks() {
        let a = ThreadCache;
        let block = unsafe { a.alloc(layout(200)) } as usize;
        let (kept, reused) = std::thread::spawn(move || {
            let a = ThreadCache;
            unsafe { a.dealloc(block as *mut u8, layout(200)) };
            let kept = cached(12);
            let again = unsafe { a.alloc(layout(195)) };
            unsafe { a.dealloc(again, layout(195)) };
            (kept, again as usize == block)
        })
        .join()
        .unwrap();
        assert_eq!((kept, reused), (1, true));
        std::thread::spawn(|| {
            let a = ThreadCache;
            let blocks: Vec<usize> = (0..100).map(|_| unsafe { a.alloc(layout(300)) } as usize).collect();
            for b in blocks {
                unsafe { a.dealloc(b as *mut u8, layout(300)) };
            }
            assert_eq!(cached(18), 100);
            let flush = Flush;
            drop(flush);
            assert_eq!(cached(18), 0);
            // After the flush the thread's frees and allocations go to
            // the system.
            let p = unsafe { a.alloc(layout(300)) };
            unsafe { a.dealloc(p, layout(300)) };
            assert_eq!(cached(18), 0);
        })
        .join()
        .unwrap();
    }

    /// Blocks made on one thread and freed on another keep their bytes
    /// while alive, though both threads reuse every block freed to them
    /// and write over it: no block is handed out twice.
    #[test]
    fn blocks_freed_across_threads_are_never_handed_out_twice() {
        use rand::{Rng, SeedableRng};
        use rand_xoshiro::Xoshiro256PlusPlus;
        use std::sync::mpsc;
        /// Makes a block of `size` bytes filled with `mark`.
        fn make(size: usize, mark: u8) -> usize {
            let p = unsafe { ThreadCache.alloc(layout(size)) };
            unsafe { p.write_bytes(mark, size) };
            p as usize
        }
        /// Checks that the block still holds `mark` and frees it.
        fn free((p, size, mark): (usize, usize, u8)) {
            let p = p as *mut u8;
            assert!(
                (0..size).all(|b| unsafe { p.add(b).read() } == mark),
                "block of {size} bytes overwritten"
            );
            unsafe { ThreadCache.dealloc(p, layout(size)) };
        }
        let (tx, rx) = mpsc::sync_channel::<(usize, usize, u8)>(64);
        let producer = std::thread::spawn(move || {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
            let mut own = Vec::new();
            for i in 0..30_000u32 {
                let size = rng.random_range(1..=1100);
                let block = (make(size, i as u8), size, i as u8);
                if rng.random_bool(0.5) {
                    tx.send(block).unwrap();
                } else {
                    own.push(block);
                }
                if own.len() > 100 {
                    free(own.swap_remove(rng.random_range(0..own.len())));
                }
            }
            own.into_iter().for_each(free);
        });
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(8);
        let mut own = Vec::new();
        for (n, block) in rx.into_iter().enumerate() {
            free(block);
            let size = rng.random_range(1..=1100);
            own.push((make(size, n as u8 ^ 0x5A), size, n as u8 ^ 0x5A));
            if own.len() > 50 {
                free(own.swap_remove(rng.random_range(0..own.len())));
            }
        }
        own.into_iter().for_each(free);
        producer.join().unwrap();
    }
}
