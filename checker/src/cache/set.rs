//! The single-threaded state cache: [`FingerprintSet`], and its compact
//! form for large sets (`compact`).

mod compact;

use super::Insert;
use super::fingerprint::nonzero;
use compact::Compact;

/// Bytes per slot of the tables.
pub(super) const SLOT_BYTES: usize = size_of::<u64>();
/// The first table of a growing [`FingerprintSet`] (8 KiB).
pub(super) const INITIAL_SLOTS: usize = 1024;

/// The home slot of a fingerprint in a table of `slots` slots: the high
/// bits of the (already uniform) fingerprint, by multiply-shift.
#[inline(always)]
pub(super) fn home(fp: u64, slots: usize) -> usize {
    ((u128::from(fp) * slots as u128) >> 64) as usize
}

/// How many entries a table of `slots` slots holds before it is full:
/// 90%, and always at least one slot empty (so that probes end).
/// `slots` is at least 1 (callers exclude an empty table).
#[inline]
pub(super) const fn full_load(slots: usize) -> usize {
    let spare = slots / 10;
    slots - if spare == 0 { 1 } else { spare }
}

/// How many entries a table of `slots` slots holds before it doubles: 75%.
#[inline]
pub(super) const fn grow_load(slots: usize) -> usize {
    slots / 4 * 3
}

/// The largest power-of-two slot count whose table fits in `budget` bytes
/// (0 when not even one slot fits).
pub(super) fn max_slots_within(budget: usize) -> usize {
    let n = budget / SLOT_BYTES;
    if n == 0 {
        0
    } else {
        1usize << (usize::BITS - 1 - n.leading_zeros())
    }
}

/// Hints the CPU to bring the cache line at `p` into L1.
#[inline(always)]
pub(super) fn prefetch_ptr(p: *const u64) {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: prefetching is a hint; it never faults, even on an
        // invalid address, and has no effect on memory.
        unsafe { core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p as *const i8) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = p;
    }
}

/// The largest table a [`FingerprintSet`] keeps as one piece (8 MiB): the
/// next growth turns the set compact, or, for a set that may not (a
/// compact form's stash, or a budget too small for the compact form),
/// splits it into [`SHARDS`] shards.
const SPLIT_SLOTS: usize = 1 << 20;
/// log2 of the number of shards of a large [`FingerprintSet`].
pub(super) const SHARD_BITS: u32 = 6;
/// The number of shards of a large [`FingerprintSet`]: each grows on its
/// own, so growth holds at most 1/64 of the table twice.
pub(super) const SHARDS: usize = 1 << SHARD_BITS;

/// log2 of the buckets of the compact form when it starts (2^19 buckets of
/// 64 bytes: 32 MiB), so that it keeps 40 + 19 = 59 bits of each
/// fingerprint.
const COMPACT_A_MIN: u32 = 19;

/// One open-addressing table of a [`FingerprintSet`] (linear probing,
/// 0 = empty slot).
#[derive(Debug, Default)]
struct Shard {
    /// A power of two slots (or none yet).
    slots: Vec<u64>,
    /// `slots.len() - 1` (0 when empty).
    mask: usize,
    /// Entries in this table.
    len: usize,
    /// The entry count at which the next new insert grows this table or,
    /// at its largest size, answers `Full`.
    limit: usize,
}

impl Shard {
    /// A table of `slots` slots (a power of two) holding the entries of
    /// `old`; `largest` says whether it may not grow any more.
    fn with_entries(slots: usize, largest: bool, old: impl IntoIterator<Item = u64>, shift: u32) -> Shard {
        let mut t = Shard {
            slots: vec![0u64; slots],
            mask: slots - 1,
            len: 0,
            limit: if largest { full_load(slots) } else { grow_load(slots) },
        };
        for fp in old {
            if fp != 0 {
                t.place(fp, shift);
                t.len += 1;
            }
        }
        t
    }

    /// The home slot of `fp` (the bits below the shard bits, `shift` of them
    /// dropped).
    #[inline(always)]
    fn home(&self, fp: u64, shift: u32) -> usize {
        home(fp << shift, self.slots.len())
    }

    /// Stores `fp`, known to be absent, in its first free slot (not counted).
    #[inline]
    fn place(&mut self, fp: u64, shift: u32) {
        let mut i = self.home(fp, shift);
        while self.slots[i] != 0 {
            i = (i + 1) & self.mask;
        }
        self.slots[i] = fp;
    }

    /// Looks `fp` up: `Ok(true)` present, `Ok(false)` inserted, `Err(())`
    /// absent and at the limit (nothing changed).
    #[inline(always)]
    fn insert(&mut self, fp: u64, shift: u32) -> Result<bool, ()> {
        if self.slots.is_empty() {
            return Err(());
        }
        let mut i = self.home(fp, shift);
        loop {
            let s = self.slots[i];
            if s == fp {
                return Ok(true);
            }
            if s == 0 {
                if self.len < self.limit {
                    self.slots[i] = fp;
                    self.len += 1;
                    return Ok(false);
                }
                return Err(());
            }
            i = (i + 1) & self.mask;
        }
    }

    #[inline(always)]
    fn contains(&self, fp: u64, shift: u32) -> bool {
        if self.slots.is_empty() {
            return false;
        }
        let mut i = self.home(fp, shift);
        loop {
            let s = self.slots[i];
            if s == fp {
                return true;
            }
            if s == 0 {
                return false;
            }
            i = (i + 1) & self.mask;
        }
    }
}

/// The single-threaded state cache: a set of non-zero 64-bit fingerprints
/// in open-addressing tables (linear probing, 0 = empty slot).
///
/// Up to 2^20 slots (8 MiB) it is one table that doubles on demand; the
/// next growth splits it into 64 shards, chosen by the fingerprint's top
/// 6 bits, that double independently. So a growing table holds the old
/// and new copies of one shard only (1/64 of it), not of the whole table:
/// the peak is the final table plus 1/32 of it.
///
/// Contract:
/// * [`insert`](Self::insert) answers `New` exactly once per distinct
///   fingerprint, `Present` for every later insert of it, and `Full` only
///   for a fingerprint that is not in the set when the budget is used up
///   (when sharded, when its shard is: a shard gets 1/64 of the budget).
/// * With a budget, the tables never exceed it: [`bytes`](Self::bytes)
///   `<= budget` at all times. (While a table doubles, its old copy, half
///   the new one's size, is alive until the rehash ends.)
/// * The fingerprint 0 is stored as the value [`fingerprint`](super::fingerprint()) gives for a
///   hash of 0, so the set never confuses it with an empty slot.
#[derive(Debug)]
pub struct FingerprintSet {
    /// One table, or [`SHARDS`] of them.
    shards: Vec<Shard>,
    /// 0 while one table, else [`SHARD_BITS`]: the top bits that pick a
    /// shard, dropped from the fingerprint for its home slot.
    shard_bits: u32,
    /// Entries in all tables.
    len: usize,
    /// The largest total size allowed, in slots (a power of two, or 0).
    max_slots: usize,
    /// The budget in bytes (`None`: none).
    budget: Option<usize>,
    /// The compact form, once the set has turned compact (then `shards`
    /// is empty).
    compact: Option<Box<Compact>>,
    /// Whether the set may turn compact (not the compact form's stash,
    /// whose entries its growth reads back).
    compactable: bool,
}

impl Default for FingerprintSet {
    fn default() -> Self {
        Self::new(None)
    }
}

impl FingerprintSet {
    /// An empty set that may use at most `budget` bytes (`None`: grow on
    /// demand without limit). Allocates nothing until the first insert.
    pub fn new(budget: Option<usize>) -> Self {
        let max_slots = match budget {
            Some(b) => max_slots_within(b),
            None => 1usize << (usize::BITS - 5),
        };
        FingerprintSet {
            shards: vec![Shard::default()],
            shard_bits: 0,
            len: 0,
            max_slots,
            budget,
            compact: None,
            compactable: true,
        }
    }

    /// [`new`](Self::new) for a set that keeps whole 8-byte fingerprints
    /// however large it grows (the compact form's stash).
    pub(super) fn plain(budget: Option<usize>) -> Self {
        FingerprintSet {
            compactable: false,
            ..Self::new(budget)
        }
    }

    /// The number of fingerprints in the set.
    #[inline]
    pub fn len(&self) -> usize {
        match &self.compact {
            Some(c) => c.len(),
            None => self.len,
        }
    }

    /// Whether the set holds no fingerprint.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of slots of the current tables.
    #[inline]
    pub fn capacity(&self) -> usize {
        match &self.compact {
            Some(c) => c.capacity(),
            None => self.shards.iter().map(|t| t.slots.len()).sum(),
        }
    }

    /// The bytes allocated by the tables.
    #[inline]
    pub fn bytes(&self) -> usize {
        match &self.compact {
            Some(c) => c.bytes(),
            None => self.capacity() * SLOT_BYTES,
        }
    }

    /// How many bits of each fingerprint the set keeps: 64, or fewer once
    /// it is compact (ARCHITECTURE.md, "The state cache"). Two distinct states whose
    /// fingerprints agree on these bits are one entry, so among n states
    /// some pair is confused with probability at most n^2 / 2^(bits + 1).
    pub fn fingerprint_bits(&self) -> u32 {
        self.compact.as_ref().map_or(64, |c| c.bits())
    }

    /// Every fingerprint in the set (of the 8-byte tables; none once compact).
    pub(super) fn entries(&self) -> impl Iterator<Item = u64> + '_ {
        self.shards
            .iter()
            .flat_map(|t| t.slots.iter().copied())
            .filter(|&fp| fp != 0)
    }

    /// Allocated bytes per stored fingerprint (`None` when empty).
    pub fn bytes_per_entry(&self) -> Option<f64> {
        (!self.is_empty()).then(|| self.bytes() as f64 / self.len() as f64)
    }

    /// Whether the set is at its budget: some new fingerprint would get
    /// [`Insert::Full`] (when sharded: one whose shard is full).
    #[inline]
    pub fn is_full(&self) -> bool {
        if let Some(c) = &self.compact {
            return c.is_full();
        }
        (0..self.shards.len()).any(|k| self.shards[k].len >= self.shards[k].limit && !self.can_grow(k))
    }

    /// The largest size of one table, in slots.
    #[inline]
    fn shard_max(&self) -> usize {
        self.max_slots >> self.shard_bits
    }

    fn can_grow(&self, k: usize) -> bool {
        let t = &self.shards[k];
        if t.slots.is_empty() {
            self.max_slots > 0
        } else {
            t.slots.len() < self.shard_max()
        }
    }

    /// The shard of `fp` (already non-zero).
    #[inline(always)]
    fn shard_of(&self, fp: u64) -> usize {
        home(fp, self.shards.len())
    }

    // The three operations below are in the search's inner loop: inlined
    // whole into it, the compact form's too (ARCHITECTURE.md, "The state cache").

    /// Whether `fp` is in the set.
    #[inline(always)]
    pub fn contains(&self, fp: u64) -> bool {
        let fp = nonzero(fp);
        if let Some(c) = &self.compact {
            return c.contains(fp);
        }
        self.shards[self.shard_of(fp)].contains(fp, self.shard_bits)
    }

    /// Hints the CPU to fetch the home slot of `fp`, ahead of an insert or
    /// look-up of it. `fp` as it is: it differs from what is stored only
    /// for 0, whose hint may go to another line.
    #[inline(always)]
    pub fn prefetch(&self, fp: u64) {
        if let Some(c) = &self.compact {
            return c.prefetch(fp);
        }
        let t = &self.shards[self.shard_of(fp)];
        if !t.slots.is_empty() {
            prefetch_ptr(&t.slots[t.home(fp, self.shard_bits)]);
        }
    }

    /// Inserts `fp`: [`Insert::New`] if it was not there, `Present` if it
    /// was, `Full` if it was not and the budget is used up.
    #[inline(always)]
    pub fn insert(&mut self, fp: u64) -> Insert {
        let fp = nonzero(fp);
        if let Some(c) = self.compact.as_deref_mut() {
            return c.insert(fp);
        }
        let k = self.shard_of(fp);
        match self.shards[k].insert(fp, self.shard_bits) {
            Ok(true) => Insert::Present,
            Ok(false) => {
                self.len += 1;
                Insert::New
            }
            Err(()) => self.insert_absent_slow(k, fp),
        }
    }

    /// Inserts every fingerprint of `fps` in order, appending one result
    /// per fingerprint to `out` (as if [`insert`](Self::insert) were
    /// called on each in turn). The home slots of the whole batch are
    /// prefetched first so that their cache misses overlap.
    pub fn insert_batch(&mut self, fps: &[u64], out: &mut Vec<Insert>) {
        for &fp in fps {
            self.prefetch(fp);
        }
        out.reserve(fps.len());
        for &fp in fps {
            out.push(self.insert(fp));
        }
    }

    /// The insert of a fingerprint known to be absent when its table is at
    /// its limit (or not allocated): grow (or split), or answer `Full`.
    #[cold]
    #[inline(never)]
    fn insert_absent_slow(&mut self, k: usize, fp: u64) -> Insert {
        if !self.can_grow(k) {
            return Insert::Full;
        }
        let cur = self.shards[k].slots.len();
        // Where a set that may turn compact would split, it turns compact
        // (ARCHITECTURE.md, "The state cache"): from 8 MiB, its 8-byte slots' misses cost
        // more than the compact form's (its table on huge pages).
        if self.compactable
            && self.shard_bits == 0
            && cur * 2 > SPLIT_SLOTS
            && Compact::a_max_within(self.budget) > COMPACT_A_MIN
        {
            return self.turn_compact(fp);
        }
        if self.shard_bits == 0 && cur * 2 > SPLIT_SLOTS && cur * 2 >= SHARDS {
            self.split(cur * 2);
        } else {
            let next = if cur == 0 {
                INITIAL_SLOTS.min(self.max_slots)
            } else {
                cur * 2
            };
            let largest = next >= self.shard_max();
            let old = std::mem::take(&mut self.shards[k].slots);
            self.shards[k] = Shard::with_entries(next, largest, old, self.shard_bits);
        }
        let k = self.shard_of(fp);
        match self.shards[k].insert(fp, self.shard_bits) {
            Ok(false) => {
                self.len += 1;
                Insert::New
            }
            // Only a budget of one slot (or a full shard after a split) gets here.
            _ => Insert::Full,
        }
    }

    /// Moves every entry into the compact form and inserts `fp` there.
    fn turn_compact(&mut self, fp: u64) -> Insert {
        let mut c = Compact::new(COMPACT_A_MIN, self.budget);
        for old in self.entries() {
            c.insert(old);
        }
        self.shards = Vec::new();
        let r = c.insert(fp);
        self.compact = Some(Box::new(c));
        r
    }

    /// Splits the one table into [`SHARDS`] tables of `total / SHARDS` slots.
    fn split(&mut self, total: usize) {
        let old = std::mem::take(&mut self.shards[0].slots);
        self.shard_bits = SHARD_BITS;
        let slots = total / SHARDS;
        let largest = slots >= self.shard_max();
        self.shards = (0..SHARDS)
            .map(|_| Shard::with_entries(slots, largest, [], SHARD_BITS))
            .collect();
        for fp in old {
            if fp != 0 {
                let t = &mut self.shards[home(fp, SHARDS)];
                t.place(fp, SHARD_BITS);
                t.len += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests;
