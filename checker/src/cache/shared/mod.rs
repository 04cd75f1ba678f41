//! The shared state cache of a parallel search: [`SharedCache`], lock-free
//! on every path but growth (ARCHITECTURE.md, "The shared cache").

mod compact;
mod plain;

use super::Insert;
use super::bucket::grow_limit;
use super::fingerprint::nonzero;
use super::set::{INITIAL_SLOTS, SLOT_BYTES, grow_load, max_slots_within, prefetch_ptr};
use super::{FIXED_HASHER, FixedHashSet};
use compact::{A_MIN, Compact, KEPT};
use plain::Plain;
use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize};
use std::sync::{Mutex, MutexGuard, TryLockError};

/// The number of shards of [`SharedCache`] (a power of two): few enough
/// that a shard's tables are large (a compact one is at least 2 MiB, so
/// that it gets huge pages: at 1 MiB, without them, a parallel DFS of
/// TwoPhase with 9 RMs took 3.0 s on 2 threads rather than 2.35 s).
const SHARDS: usize = 16;

/// The largest 8-byte table of a shard (512 KiB): the next growth turns
/// the shard compact, at 16 * 512 KiB = 8 MiB, as the single-threaded set
/// does (ARCHITECTURE.md, "The shared cache").
const PLAIN_MAX_SLOTS: usize = 1 << 16;

/// A slot that a growth has frozen: its table is being (or has been)
/// replaced, and the insert goes to the next one. No fingerprint is
/// stored as this value ([`key`]).
const MOVED: u64 = u64::MAX;

/// The value stored for `fp`: never 0 (empty) nor [`MOVED`]. One
/// comparison for the two, which no search meets but at odds of 2^-63.
#[inline(always)]
fn key(fp: u64) -> u64 {
    if fp.wrapping_add(1) <= 1 { rare_key(fp) } else { fp }
}

/// [`key`] of 0 or [`MOVED`].
#[cold]
#[inline(never)]
fn rare_key(fp: u64) -> u64 {
    if fp == MOVED { MOVED - 1 } else { nonzero(fp) }
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

/// What an attempt to grow a shard did.
enum Grown {
    /// Grown, or grown by another thread since: retry the insert.
    Retry,
    /// The table is at its largest size.
    Full,
    /// Another thread holds the shard's lock (it is growing it).
    Busy,
}

/// What a probe of one table found.
enum Probe {
    Present,
    New,
    /// Absent from a frozen table: the shard's side set answers, or
    /// once the growth is over the table that replaced it.
    Moved,
    /// Absent, and the shard is at the table's limit.
    AtLimit,
}

/// A shard's table: 8-byte slots of whole fingerprints, or past
/// [`PLAIN_MAX_SLOTS`] compact buckets.
enum Table {
    Plain(Plain),
    Compact(Compact),
}

/// A table's size: slots of a plain one, log2 buckets of a compact one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Size {
    Plain(usize),
    Compact(u32),
}

impl fmt::Debug for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Table")
            .field("size", &self.size())
            .field("units", &self.units())
            .finish()
    }
}

impl Size {
    /// The entries a table of this size holds before it grows (a shard
    /// at its largest table holds more).
    fn grow_limit(self) -> usize {
        match self {
            Size::Plain(slots) => grow_load(slots),
            Size::Compact(a) => grow_limit(a),
        }
    }
}

impl Table {
    /// An empty table of `size`, or one holding `entries` (values as
    /// [`freeze`](Self::freeze) gives them), which no other thread sees
    /// yet; `largest` says whether it may not grow.
    fn with_entries(size: Size, largest: bool, entries: &[u64]) -> Table {
        match size {
            Size::Plain(slots) => {
                let t = Plain::new(slots, largest);
                for &e in entries {
                    t.place(e);
                }
                Table::Plain(t)
            }
            Size::Compact(a) => Table::Compact(Compact::with_entries(a, largest, entries)),
        }
    }

    fn size(&self) -> Size {
        match self {
            Table::Plain(t) => Size::Plain(t.slots.len()),
            Table::Compact(t) => Size::Compact(t.a()),
        }
    }

    /// Its bytes, in 8-byte units.
    fn units(&self) -> usize {
        match self {
            Table::Plain(t) => t.slots.len(),
            Table::Compact(t) => t.units(),
        }
    }

    /// Inserts `fp` into a shard of `len` entries, counting it there: in
    /// an 8-byte table at once, in a compact one in `pending` first,
    /// added to `len` once it reaches `batch` (see [`Handle`]); with
    /// `slack` (another thread is growing the shard) past the limit that
    /// starts a growth, up to the table's hard one.
    #[inline(always)]
    fn insert(&self, fp: u64, len: &AtomicUsize, pending: &mut u32, batch: u32, slack: bool) -> Probe {
        match self {
            Table::Plain(t) => t.insert(fp, len, slack),
            Table::Compact(t) => {
                let probe = t.insert(fp, || len.load(Relaxed) + *pending as usize, slack);
                if matches!(probe, Probe::New) {
                    *pending += 1;
                    if *pending >= batch {
                        add_pending(len, pending);
                    }
                }
                probe
            }
        }
    }

    #[inline(always)]
    fn contains(&self, fp: u64) -> Option<bool> {
        match self {
            Table::Plain(t) => t.contains(fp),
            Table::Compact(t) => t.contains(fp),
        }
    }

    /// The address of the line a look-up of `fp` reads first.
    #[inline(always)]
    fn line(&self, fp: u64) -> *const u64 {
        match self {
            Table::Plain(t) => t.slots.wrap(t.home(fp)).as_ptr(),
            Table::Compact(t) => t.line(fp),
        }
    }

    /// Adds `fp`, absent, to a table no other thread sees yet.
    fn add(&self, fp: u64) {
        match self {
            Table::Plain(t) => t.place(fp),
            Table::Compact(t) => t.add(fp),
        }
    }

    /// Whether a shard of `len` entries must grow before it takes another.
    fn at_limit(&self, len: usize) -> bool {
        match self {
            Table::Plain(t) => len >= t.limit,
            Table::Compact(t) => t.at_limit(len),
        }
    }

    /// Freezes the table (no insert lands in it after this) and calls `f`
    /// with every entry.
    fn freeze(&self, f: impl FnMut(u64)) {
        match self {
            Table::Plain(t) => t.freeze(f),
            Table::Compact(t) => t.freeze(f),
        }
    }
}

/// Locks `m`. What this module guards is only appended to or replaced
/// whole under its lock: a panic while holding it leaves it consistent.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
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
    /// The shard's share of the budget, in 8-byte units.
    max_units: usize,
    /// The current table last, after the ones it replaced, which stay
    /// alive until [`SharedCache::reclaim`] (a reader may still be probing
    /// them). Locked only to grow and to reclaim.
    tables: Mutex<Vec<Owned>>,
    /// The fingerprints inserted while a growth builds the next table.
    side: Mutex<Side>,
    /// The entry count, on a cache line of its own, so that a thread
    /// adding to it does not evict the table pointer the others read.
    len: Padded<AtomicUsize>,
}

/// A shard's side set: while a growth builds the table that replaces a
/// frozen one, an insert that finds its fingerprint absent from the frozen
/// table stores it here instead of waiting for the growth (the other
/// thread found a new state in the growing shard within microseconds, and
/// waited for most of every growth: ARCHITECTURE.md, "The shared cache"); the growth adds
/// them to the new table before it publishes it, under this lock.
#[derive(Debug)]
struct Side {
    /// The address of the frozen table the set extends (0: no growth).
    frozen: usize,
    /// How many it may take: what the new table holds below its own
    /// growth limit beside the frozen table's entries (an insert past it
    /// waits for the growth).
    room: usize,
    set: FixedHashSet<u64>,
}

impl Shard {
    fn new(max_units: usize) -> Shard {
        let mut shard = Shard {
            table: AtomicPtr::new(std::ptr::null_mut()),
            max_units,
            tables: Mutex::new(Vec::new()),
            side: Mutex::new(Side {
                frozen: 0,
                room: 0,
                set: FixedHashSet::with_hasher(FIXED_HASHER),
            }),
            len: Padded::default(),
        };
        let slots = INITIAL_SLOTS.min(max_slots_within(max_units * SLOT_BYTES));
        if slots > 0 {
            let size = Size::Plain(slots);
            let first = Owned::new(Box::new(Table::with_entries(size, shard.next(size).is_none(), &[])));
            shard.table = AtomicPtr::new(first.0.as_ptr());
            shard.tables.get_mut().unwrap_or_else(|e| e.into_inner()).push(first);
        }
        shard
    }

    /// The size a table of `size` grows to within the budget, if any: an
    /// 8-byte table doubles up to [`PLAIN_MAX_SLOTS`], then turns compact
    /// if the budget lets the compact table double at least once (else
    /// it goes on doubling); a compact one doubles.
    fn next(&self, size: Size) -> Option<Size> {
        let fits = |a: u32| compact::units(a, compact::min_stash(a)) <= self.max_units;
        let next = match size {
            Size::Plain(n) if 2 * n > PLAIN_MAX_SLOTS && fits(A_MIN + 1) => Size::Compact(A_MIN),
            Size::Plain(n) => Size::Plain(2 * n),
            Size::Compact(a) => Size::Compact(a + 1),
        };
        let fits = match next {
            Size::Plain(n) => n <= self.max_units,
            Size::Compact(a) => fits(a),
        };
        fits.then_some(next)
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

    /// The 8-byte units of its tables alive (under its lock).
    fn units(&self) -> usize {
        self.lock().iter().map(|t| t.get().units()).sum()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Owned>> {
        lock(&self.tables)
    }

    /// Whether `fp`, absent from the frozen table `t`, is in the side set
    /// (`None`: the growth is over, retry in the current table); if not,
    /// and `insert` says where to count it, it is inserted (if the set is
    /// out of room, this waits for the growth and answers `None`).
    #[cold]
    #[inline(never)]
    fn side(&self, t: &Table, fp: u64, insert: Option<&AtomicUsize>) -> Option<bool> {
        let mut side = lock(&self.side);
        if side.frozen != t as *const Table as usize {
            return None;
        }
        let found = side.set.contains(&fp);
        if let (false, Some(len)) = (found, insert) {
            if side.set.len() >= side.room {
                drop(side);
                drop(self.lock());
                return None;
            }
            side.set.insert(fp);
            len.fetch_add(1, Relaxed);
        }
        Some(found)
    }

    /// Replaces `old` (if it is still the current table) by a larger one
    /// holding its entries, adding its units to `units` and setting
    /// `compact` if it is compact. Does not wait for the lock: another
    /// thread holding it is growing the shard (or waits for that), and
    /// the caller inserts past the limit meanwhile rather than wait (on
    /// two threads, one waited for the other's growths for 4 to 11% of a
    /// parallel DFS's time: ARCHITECTURE.md, "The shared cache").
    #[cold]
    #[inline(never)]
    fn grow(&self, old: &Table, len: usize, units: &AtomicUsize, compact: &AtomicBool) -> Grown {
        let mut tables = match self.tables.try_lock() {
            Ok(tables) => tables,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return Grown::Busy,
        };
        if !std::ptr::eq(self.table.load(Acquire), old) || !old.at_limit(len) {
            return Grown::Retry;
        }
        let Some(size) = self.next(old.size()) else {
            return Grown::Full;
        };
        let entries = self.freeze(old, len, size.grow_limit().saturating_sub(len));
        let next = Table::with_entries(size, self.next(size).is_none(), &entries);
        if matches!(size, Size::Compact(_)) {
            compact.store(true, Relaxed);
        }
        units.fetch_add(next.units(), Relaxed);
        self.publish(next, &mut tables);
        Grown::Retry
    }

    /// Opens the side set for `old` (the current table, of `len`
    /// entries), with `room` for that many, and freezes `old`: its
    /// entries. Frozen, an insert racing with the copy either lands before
    /// its slot or bucket is copied or meets the mark and goes to the side
    /// set. Under the tables' lock.
    fn freeze(&self, old: &Table, len: usize, room: usize) -> Vec<u64> {
        let mut side = lock(&self.side);
        (side.frozen, side.room) = (old as *const Table as usize, room);
        drop(side);
        let mut entries = Vec::with_capacity(len);
        old.freeze(|e| entries.push(e));
        entries
    }

    /// Adds the side set's fingerprints to `next` (built from the frozen
    /// table's entries), makes it the current table and closes the side
    /// set, all under the side set's lock; `tables` (locked) keeps it.
    fn publish(&self, next: Table, tables: &mut Vec<Owned>) {
        let mut side = lock(&self.side);
        for &fp in side.set.iter() {
            next.add(fp);
        }
        let next = Owned::new(Box::new(next));
        self.table.store(next.0.as_ptr(), Release);
        side.set.clear();
        side.frozen = 0;
        drop(side);
        tables.push(next);
    }
}

/// The shared state cache of a parallel search: fingerprints spread over
/// 16 shards by their low bits, each an open-addressing table of atomic
/// 8-byte slots placed by the high bits (then compact buckets), with an
/// equal share of the budget.
/// Look-ups and inserts take no lock: a look-up is plain loads and an
/// insert one compare-and-swap, so threads that find states already
/// cached (most look-ups) write nothing they share. A shard at 75% load
/// doubles under its own lock, freezing the old table as it copies it;
/// meanwhile no insert waits: other threads' inserts go on past the limit,
/// a frozen table answers for what it holds, and a fingerprint absent
/// from it goes to the shard's side set (`Side`), which the growth adds
/// to the new table before publishing it. The old tables stay allocated until the
/// parallel driver `reclaim`s them between strata, so
/// within a stratum the cache may hold up to 1.5 times its tables.
///
/// Contract: among all threads, exactly one insert of a fingerprint answers
/// [`Insert::New`]; a shard at its share of the budget answers
/// [`Insert::Full`] for new fingerprints (sound: the search re-explores).
/// Past 2^18 slots a shard turns compact (`compact`): then it keeps
/// `COMPACT_BITS` of each fingerprint, as the single-threaded set does.
#[derive(Debug)]
pub struct SharedCache {
    /// In place (no pointer to follow): a look-up finds its shard at a
    /// fixed offset from the cache.
    shards: [Shard; SHARDS],
    /// The bytes of all tables alive, replaced ones included, in 8-byte
    /// units, kept as they change so that [`bytes`](Self::bytes), which
    /// the budgets read every few thousand transitions, takes no lock
    /// (summing the shards under their locks cost 2% of a parallel DFS
    /// and waited for growths).
    units: Padded<AtomicUsize>,
    /// Whether a shard has turned compact (then the cache keeps
    /// `COMPACT_BITS` of each fingerprint).
    compact: AtomicBool,
}

/// The bits of a fingerprint a compact shard keeps: the top [`KEPT`] in
/// its table, and the low 4 that chose the shard.
const COMPACT_BITS: u32 = KEPT + SHARDS.trailing_zeros();

impl SharedCache {
    /// An empty cache of at most `budget` bytes (`None`: no limit).
    pub fn new(budget: Option<usize>) -> Self {
        let max_units = match budget {
            Some(b) => b / SHARDS / SLOT_BYTES,
            None => 1usize << (usize::BITS - 5 - SHARDS.trailing_zeros()),
        };
        // An array, so that a shard's index (masked) needs no bounds check.
        let shards: [Shard; SHARDS] = std::array::from_fn(|_| Shard::new(max_units));
        let units = shards.iter().map(Shard::units).sum();
        SharedCache {
            shards,
            units: Padded(AtomicUsize::new(units)),
            compact: AtomicBool::new(false),
        }
    }

    /// The shard of `fp`.
    #[inline(always)]
    fn index(fp: u64) -> usize {
        fp as usize & (SHARDS - 1)
    }

    /// Inserts `fp` (see the type's contract), counting it in its shard's
    /// count at once. A search's workers insert through a [`Handle`].
    #[inline(always)]
    pub fn insert(&self, fp: u64) -> Insert {
        self.insert_counted(fp, &mut [0; SHARDS], 1)
    }

    /// A handle that inserts into this cache and counts the new entries
    /// of compact shards in batches (see [`Handle`]).
    pub fn handle(&self) -> Handle<'_> {
        Handle {
            cache: self,
            pending: [0; SHARDS],
        }
    }

    /// Inserts `fp`, counting a new entry of a compact shard in
    /// `pending` until that shard's reaches `batch`.
    #[inline(always)]
    fn insert_counted(&self, fp: u64, pending: &mut [u32; SHARDS], batch: u32) -> Insert {
        let fp = key(fp);
        let k = Self::index(fp);
        let (shard, pending) = (&self.shards[k], &mut pending[k]);
        let len = &shard.len.0;
        let mut slack = false;
        loop {
            let Some(t) = shard.current() else {
                return Insert::Full;
            };
            match t.insert(fp, len, pending, batch, slack) {
                Probe::Present => return Insert::Present,
                Probe::New => return Insert::New,
                // The shard's count with this thread's new entries in it
                // is at least what the table judged (so a growth does
                // not find the shard below its limit and send the insert
                // back).
                Probe::AtLimit if !slack => {
                    add_pending(len, pending);
                    match shard.grow(t, len.load(Relaxed), &self.units.0, &self.compact) {
                        Grown::Retry => {}
                        Grown::Full => return Insert::Full,
                        Grown::Busy => slack = true,
                    }
                }
                // Absent from a frozen table: the side set answers while
                // the growth lasts.
                Probe::Moved => match shard.side(t, fp, Some(len)) {
                    Some(true) => return Insert::Present,
                    Some(false) => return Insert::New,
                    None => slack = false,
                },
                // At the hard limit while another thread grows the shard:
                // the growth holds the lock until the new table is current.
                Probe::AtLimit => {
                    slack = false;
                    drop(shard.lock());
                }
            }
        }
    }

    /// Whether `fp` is in the cache.
    #[inline(always)]
    pub fn contains(&self, fp: u64) -> bool {
        let fp = key(fp);
        let shard = &self.shards[Self::index(fp)];
        loop {
            let Some(t) = shard.current() else {
                return false;
            };
            match t.contains(fp) {
                Some(found) => return found,
                None => {
                    if let Some(found) = shard.side(t, fp, None) {
                        return found;
                    }
                }
            }
        }
    }

    /// Hints the CPU to fetch the slot or bucket of `fp` (a load of the
    /// shard's table pointer, no lock). `fp` as it is, not its `key`:
    /// the two differ only for 0 and `u64::MAX`, whose hint may go to
    /// another line.
    #[inline(always)]
    pub fn prefetch(&self, fp: u64) {
        if let Some(t) = self.shards[Self::index(fp)].current() {
            prefetch_ptr(t.line(fp));
        }
    }

    /// The number of fingerprints in the cache (those inserted through a
    /// [`Handle`] counted once it has added them: when it is dropped at
    /// the latest).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.len.0.load(Relaxed)).sum()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bits of each fingerprint the cache keeps: all 64, or
    /// `COMPACT_BITS` once a shard is compact.
    pub fn fingerprint_bits(&self) -> u32 {
        if self.compact.load(Relaxed) { COMPACT_BITS } else { 64 }
    }

    /// The bytes allocated by all shards, the tables growth replaced
    /// included.
    pub fn bytes(&self) -> usize {
        self.units.0.load(Relaxed) * SLOT_BYTES
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
            let freed: usize = tables.drain(..keep).map(|t| t.get().units()).sum();
            self.units.0.fetch_sub(freed, Relaxed);
        }
    }
}

/// Adds a handle's `pending` new entries to their shard's count `len`
/// (writing the shared count only if there are any).
#[inline(always)]
fn add_pending(len: &AtomicUsize, pending: &mut u32) {
    if *pending > 0 {
        len.fetch_add(std::mem::take(pending) as usize, Relaxed);
    }
}

/// A search worker's handle on a [`SharedCache`]: its inserts count a new
/// entry of a compact shard in a count of its own, added to the shard's
/// shared one every 64 entries and when the handle is dropped. A
/// shared count written on every insert moved its cache line between the
/// cores on nearly every new state (ARCHITECTURE.md, "The shared cache"). A shard may so
/// pass its growth limit by up to 64 entries per thread, a small
/// part of a compact table's hundreds of thousands; 8-byte tables, which
/// are small and fill exactly, are counted at once.
#[derive(Debug)]
pub struct Handle<'a> {
    cache: &'a SharedCache,
    pending: [u32; SHARDS],
}

/// The new entries a [`Handle`] counts on its own before it adds them to
/// their shard's count.
const BATCH: u32 = 64;

impl<'a> Handle<'a> {
    /// Inserts `fp` (see [`SharedCache`]'s contract).
    #[inline(always)]
    pub fn insert(&mut self, fp: u64) -> Insert {
        self.cache.insert_counted(fp, &mut self.pending, BATCH)
    }

    /// The cache.
    pub fn cache(&self) -> &'a SharedCache {
        self.cache
    }

    /// [`SharedCache::contains`].
    #[inline(always)]
    pub fn contains(&self, fp: u64) -> bool {
        self.cache.contains(fp)
    }

    /// [`SharedCache::prefetch`].
    #[inline(always)]
    pub fn prefetch(&self, fp: u64) {
        self.cache.prefetch(fp)
    }

    /// [`SharedCache::bytes`].
    pub fn bytes(&self) -> usize {
        self.cache.bytes()
    }

    /// [`SharedCache::fingerprint_bits`].
    pub fn fingerprint_bits(&self) -> u32 {
        self.cache.fingerprint_bits()
    }
}

impl Drop for Handle<'_> {
    fn drop(&mut self) {
        for (shard, pending) in self.cache.shards.iter().zip(&mut self.pending) {
            add_pending(&shard.len.0, pending);
        }
    }
}

#[cfg(test)]
mod tests;
