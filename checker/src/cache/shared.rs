//! The shared state cache of a parallel search: [`SharedCache`], lock-free
//! on every path but growth (ARCHITECTURE.md §9, "The shared cache").

use super::fingerprint::nonzero;
use super::region::Region;
use super::set::{full_load, grow_load, home, max_slots_within, prefetch_ptr, INITIAL_SLOTS, SLOT_BYTES};
use super::Insert;
use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize};
use std::sync::{Mutex, MutexGuard};

/// The number of shards of [`SharedCache`] (a power of two).
const SHARDS: usize = 64;

/// A slot that a growth has frozen: its table is being (or has been)
/// replaced, and the insert goes to the next one. No fingerprint is
/// stored as this value ([`key`]).
const MOVED: u64 = u64::MAX;

/// The value stored for `fp`: never 0 (empty) nor [`MOVED`].
#[inline(always)]
fn key(fp: u64) -> u64 {
    let fp = nonzero(fp);
    if fp == MOVED {
        MOVED - 1
    } else {
        fp
    }
}

/// One open-addressing table of a shard: linear probing over atomic
/// slots, 0 empty, [`MOVED`] frozen by a growth.
struct Table {
    /// Huge-page backed where the system allows (see [`Region`]).
    slots: Region<AtomicU64>,
    /// The entry count of the shard at which an insert of an absent
    /// fingerprint grows the shard or, at its largest size, answers `Full`.
    limit: usize,
}

impl fmt::Debug for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Table")
            .field("slots", &self.slots.len())
            .field("limit", &self.limit)
            .finish()
    }
}

/// A table owned through a raw pointer, so that the references readers
/// take from the published pointer stay valid wherever the owner moves.
struct Owned(NonNull<Table>);

// SAFETY: `Owned` is the only owner of its table, which is `Send` and
// `Sync` (atomics and plain data).
unsafe impl Send for Owned {}

impl Owned {
    fn new(table: Box<Table>) -> Owned {
        Owned(NonNull::from(Box::leak(table)))
    }

    fn get(&self) -> &Table {
        // SAFETY: the pointer came from a leaked box, freed only on drop.
        unsafe { self.0.as_ref() }
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: the pointer came from `Box::leak` and is dropped once.
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
    }
}

impl fmt::Debug for Owned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

/// What a probe of one table found.
enum Probe {
    Present,
    New,
    /// The table is frozen: retry in the one that replaces it.
    Moved,
    /// Absent, and the shard is at the table's limit.
    AtLimit,
}

impl Table {
    /// An empty table of `slots` slots (a power of two); `largest` says
    /// whether it may not grow any more.
    fn new(slots: usize, largest: bool) -> Box<Table> {
        Box::new(Table {
            slots: Region::zeroed(slots),
            limit: if largest { full_load(slots) } else { grow_load(slots) },
        })
    }

    #[inline(always)]
    fn home(&self, fp: u64) -> usize {
        home(fp, self.slots.len())
    }

    /// Looks `fp` up and claims an empty slot for it if absent, counting
    /// it in `len`. A slot changes only from 0 to a fingerprint (by the
    /// claiming compare-and-swap, so two threads never both claim one
    /// fingerprint: the loser sees the winner's value) or from 0 to
    /// [`MOVED`]; so a probe that meets `fp` is done, and one that meets an
    /// empty slot before `fp` knows `fp` is absent.
    #[inline(always)]
    fn insert(&self, fp: u64, len: &AtomicUsize) -> Probe {
        let mask = self.slots.len() - 1;
        let mut i = self.home(fp);
        for _ in 0..self.slots.len() {
            let mut s = self.slots[i].load(Acquire);
            loop {
                if s == fp {
                    return Probe::Present;
                }
                if s == MOVED {
                    return Probe::Moved;
                }
                if s != 0 {
                    break;
                }
                if len.load(Relaxed) >= self.limit {
                    return Probe::AtLimit;
                }
                match self.slots[i].compare_exchange(0, fp, AcqRel, Acquire) {
                    Ok(_) => {
                        len.fetch_add(1, Relaxed);
                        return Probe::New;
                    }
                    Err(now) => s = now,
                }
            }
            i = (i + 1) & mask;
        }
        // Every slot is taken: only a table at its limit gets here.
        Probe::AtLimit
    }

    /// Whether `fp` is in the table (`None`: the table is frozen where the
    /// probe went).
    #[inline]
    fn contains(&self, fp: u64) -> Option<bool> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(fp);
        for _ in 0..self.slots.len() {
            match self.slots[i].load(Acquire) {
                s if s == fp => return Some(true),
                0 => return Some(false),
                MOVED => return None,
                _ => i = (i + 1) & mask,
            }
        }
        Some(false)
    }

    /// Stores `fp`, known to be absent, in a table no other thread sees
    /// yet.
    fn place(&self, fp: u64) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(fp);
        while self.slots[i].load(Relaxed) != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i].store(fp, Relaxed);
    }
}

/// One cache line of its own, so that a counter written by one thread does
/// not evict what the others read.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Padded<T>(T);

/// One shard: its current table and the tables growth replaced.
#[derive(Debug)]
#[repr(align(64))]
struct Shard {
    /// The current table (null: no slot fits the budget): the last of
    /// `tables`.
    table: AtomicPtr<Table>,
    /// The largest table, in slots.
    max_slots: usize,
    /// The current table last, after the ones it replaced, which stay
    /// alive until [`SharedCache::reclaim`] (a reader may still be probing
    /// them). Locked only to grow and to reclaim.
    tables: Mutex<Vec<Owned>>,
}

impl Shard {
    fn new(max_slots: usize) -> Shard {
        let mut tables = Vec::new();
        let mut table = std::ptr::null_mut();
        if max_slots > 0 {
            let slots = INITIAL_SLOTS.min(max_slots);
            let first = Owned::new(Table::new(slots, slots >= max_slots));
            table = first.0.as_ptr();
            tables.push(first);
        }
        Shard {
            table: AtomicPtr::new(table),
            max_slots,
            tables: Mutex::new(tables),
        }
    }

    /// The current table.
    #[inline(always)]
    fn current(&self) -> Option<&Table> {
        let p = self.table.load(Acquire);
        // SAFETY: `p` is null or points to a table owned by `tables`,
        // fully built before it was published (release store, acquire
        // load). A table is freed only by `SharedCache::reclaim`, whose
        // contract is that no thread is inside a method of the cache, so
        // it outlives this borrow of `self`.
        unsafe { p.as_ref() }
    }

    /// The slots of its tables alive (under its lock).
    fn slots(&self) -> usize {
        self.lock().iter().map(|t| t.get().slots.len()).sum()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Owned>> {
        // The tables are only appended to under the lock: a panic while
        // holding it leaves them consistent.
        self.tables.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Replaces `old` (if it is still the current table) by one twice its
    /// size holding its entries, adding its slots to `slots`: `Some(Full)`
    /// if it is at its largest size, `None` to retry the insert (in
    /// whichever table is current).
    #[cold]
    #[inline(never)]
    fn grow(&self, old: &Table, len: usize, slots: &AtomicUsize) -> Option<Insert> {
        let mut tables = self.lock();
        if !std::ptr::eq(self.table.load(Acquire), old) || len < old.limit {
            return None;
        }
        let n = old.slots.len();
        if n >= self.max_slots {
            return Some(Insert::Full);
        }
        let next = Table::new(n * 2, n * 2 >= self.max_slots);
        // Freeze every empty slot, so that an insert racing with the copy
        // either lands before its slot is copied or sees MOVED and retries
        // in the new table.
        for slot in old.slots.iter() {
            let mut s = slot.load(Acquire);
            while s == 0 {
                match slot.compare_exchange(0, MOVED, AcqRel, Acquire) {
                    Ok(_) => break,
                    Err(now) => s = now,
                }
            }
            if s != 0 && s != MOVED {
                next.place(s);
            }
        }
        let next = Owned::new(next);
        self.table.store(next.0.as_ptr(), Release);
        tables.push(next);
        slots.fetch_add(n * 2, Relaxed);
        None
    }
}

/// The shared state cache of a parallel search: fingerprints spread over
/// 64 shards by their low bits, each an open-addressing table of atomic
/// 8-byte slots placed by the high bits, with an equal share of the budget.
/// Look-ups and inserts take no lock: a look-up is plain loads and an
/// insert one compare-and-swap, so threads that find states already
/// cached (most look-ups) write nothing they share. A shard at 75% load
/// doubles under its own lock, freezing the empty slots of the old table
/// as it copies it; inserts that meet a frozen slot wait for the copy and
/// retry in the new table. The old tables stay allocated until the
/// parallel driver [`reclaim`](Self::reclaim)s them between strata, so
/// within a stratum the cache may hold up to 1.5 times its tables.
///
/// Contract: among all threads, exactly one insert of a fingerprint answers
/// [`Insert::New`]; a shard at its share of the budget answers
/// [`Insert::Full`] for new fingerprints (sound: the search re-explores).
/// Whole fingerprints are kept (the compact form is single-threaded).
#[derive(Debug)]
pub struct SharedCache {
    shards: Box<[Shard]>,
    /// Each shard's entry count, one cache line each.
    lens: Box<[Padded<AtomicUsize>]>,
    /// The slots of all tables alive, replaced ones included, kept as
    /// they change so that [`bytes`](Self::bytes), which the budgets read
    /// every few thousand transitions, takes no lock (summing the shards
    /// under their locks cost 2% of a parallel DFS and waited for growths).
    slots: Padded<AtomicUsize>,
}

impl SharedCache {
    /// An empty cache of at most `budget` bytes (`None`: no limit).
    pub fn new(budget: Option<usize>) -> Self {
        let max_slots = match budget {
            Some(b) => max_slots_within(b / SHARDS),
            None => 1usize << (usize::BITS - 5 - SHARDS.trailing_zeros()),
        };
        let shards: Box<[Shard]> = (0..SHARDS).map(|_| Shard::new(max_slots)).collect();
        let slots = shards.iter().map(Shard::slots).sum();
        SharedCache {
            shards,
            lens: (0..SHARDS).map(|_| Padded::default()).collect(),
            slots: Padded(AtomicUsize::new(slots)),
        }
    }

    /// The shard of `fp`.
    #[inline(always)]
    fn index(fp: u64) -> usize {
        fp as usize & (SHARDS - 1)
    }

    /// Inserts `fp` (see the type's contract).
    #[inline]
    pub fn insert(&self, fp: u64) -> Insert {
        let fp = key(fp);
        let k = Self::index(fp);
        let (shard, len) = (&self.shards[k], &self.lens[k].0);
        loop {
            let Some(t) = shard.current() else {
                return Insert::Full;
            };
            match t.insert(fp, len) {
                Probe::Present => return Insert::Present,
                Probe::New => return Insert::New,
                // The growth holds the lock until the new table is current.
                Probe::Moved => drop(shard.lock()),
                Probe::AtLimit => {
                    if let Some(full) = shard.grow(t, len.load(Relaxed), &self.slots.0) {
                        return full;
                    }
                }
            }
        }
    }

    /// Whether `fp` is in the cache.
    #[inline]
    pub fn contains(&self, fp: u64) -> bool {
        let fp = key(fp);
        let shard = &self.shards[Self::index(fp)];
        loop {
            match shard.current().map(|t| t.contains(fp)) {
                None => return false,
                Some(Some(found)) => return found,
                Some(None) => drop(shard.lock()),
            }
        }
    }

    /// Hints the CPU to fetch the slot of `fp` (a load of the shard's
    /// table pointer, no lock).
    #[inline]
    pub fn prefetch(&self, fp: u64) {
        let fp = key(fp);
        if let Some(t) = self.shards[Self::index(fp)].current() {
            prefetch_ptr(t.slots[t.home(fp)].as_ptr());
        }
    }

    /// The number of fingerprints in the cache.
    pub fn len(&self) -> usize {
        self.lens.iter().map(|l| l.0.load(Relaxed)).sum()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bits of each fingerprint the cache keeps: all 64.
    pub fn fingerprint_bits(&self) -> u32 {
        64
    }

    /// The bytes allocated by all shards, the tables growth replaced
    /// included.
    pub fn bytes(&self) -> usize {
        self.slots.0.load(Relaxed) * SLOT_BYTES
    }

    /// Frees the tables that growth replaced.
    ///
    /// # Safety
    ///
    /// No other thread may be inside a method of this cache, or enter one,
    /// until this returns (the parallel driver calls it between strata,
    /// when its workers have been joined): a lock-free reader may still be
    /// probing a replaced table.
    pub(crate) unsafe fn reclaim(&self) {
        for shard in self.shards.iter() {
            let mut tables = shard.lock();
            let keep = tables.len().saturating_sub(1);
            let freed: usize = tables.drain(..keep).map(|t| t.get().slots.len()).sum();
            self.slots.0.fetch_sub(freed, Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::fingerprint;

    /// Threads insert overlapping ranges while the shards grow from 8 KiB
    /// to 64 times that: every fingerprint is `New` exactly once among
    /// them, and every one is found afterwards.
    #[test]
    fn each_fingerprint_is_new_once_among_threads() {
        for threads in [2u64, 3] {
            let s = SharedCache::new(None);
            let run = |t: u64| {
                // Thread t inserts [t * 40,000, t * 40,000 + 60,000), half
                // of it forwards and half backwards, so ranges overlap.
                let range: Vec<u64> = if t.is_multiple_of(2) {
                    (t * 40_000..t * 40_000 + 60_000).collect()
                } else {
                    (t * 40_000..t * 40_000 + 60_000).rev().collect()
                };
                let mut news = Vec::new();
                for i in range {
                    match s.insert(fingerprint(&i)) {
                        Insert::New => news.push(i),
                        Insert::Present => {}
                        Insert::Full => panic!("no budget, never full"),
                    }
                }
                news
            };
            let mut all: Vec<u64> = std::thread::scope(|sc| {
                let handles: Vec<_> = (0..threads).map(|t| sc.spawn(move || run(t))).collect();
                handles.into_iter().flat_map(|h| h.join().expect("thread")).collect()
            });
            let n = (threads - 1) * 40_000 + 60_000;
            assert_eq!(s.len(), n as usize);
            all.sort_unstable();
            assert_eq!(all, (0..n).collect::<Vec<u64>>(), "{threads} threads");
            assert!((0..n).all(|i| s.contains(fingerprint(&i))));
            assert!(!s.contains(fingerprint(&n)));
            // Grown: 64 shards of 1,024 slots hold 49,152 entries at most.
            let before = s.bytes();
            assert!(before > 2 * 64 * INITIAL_SLOTS * SLOT_BYTES, "{before}");
            // The running count is the tables' own sum, replaced ones included.
            let alive: usize = s.shards.iter().map(Shard::slots).sum();
            assert_eq!(before, alive * SLOT_BYTES);
            // SAFETY: the threads are joined; nothing else uses `s`.
            unsafe { s.reclaim() };
            let slots: usize = s
                .shards
                .iter()
                .map(|sh| sh.current().map_or(0, |t| t.slots.len()))
                .sum();
            assert_eq!(s.bytes(), slots * SLOT_BYTES);
            assert!(s.bytes() < before);
            assert!((0..n).all(|i| s.contains(fingerprint(&i))));
        }
    }

    /// A budget of 64 KiB gives each shard 1 KiB: 128 slots, full at
    /// 128 - 12 = 116 entries; the cache never exceeds the budget.
    #[test]
    fn budget_is_shared_among_the_shards() {
        let budget = 64 << 10;
        let s = SharedCache::new(Some(budget));
        let news = (0..100_000u64)
            .filter(|i| s.insert(fingerprint(i)) == Insert::New)
            .count();
        assert_eq!(news, 64 * 116);
        assert_eq!(s.len(), news);
        assert_eq!(s.bytes(), budget);
        assert!((0..100_000u64).all(|i| s.insert(fingerprint(&i)) != Insert::New));
        // Not one slot per shard: everything is full.
        let tiny = SharedCache::new(Some(100));
        assert_eq!(tiny.insert(7), Insert::Full);
        assert_eq!(tiny.bytes(), 0);
    }

    /// The two values a slot cannot hold are stored as others.
    #[test]
    fn zero_and_the_frozen_marker_are_fingerprints_too() {
        let s = SharedCache::new(None);
        assert_eq!(s.insert(0), Insert::New);
        assert_eq!(s.insert(MOVED), Insert::New);
        assert_eq!(s.insert(0), Insert::Present);
        assert_eq!(s.insert(MOVED), Insert::Present);
        assert!(s.contains(0) && s.contains(MOVED));
        assert_eq!(s.len(), 2);
    }
}
