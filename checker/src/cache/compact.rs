//! The compact form of a large [`FingerprintSet`](super::FingerprintSet):
//! quotiented buckets of 40-bit fields (ARCHITECTURE.md §9, "The compact
//! cache").
//!
//! A fingerprint picks its shard by its top [`SHARD_BITS`] bits; the next
//! `W` bits (`W = 40 + a_min`, fixed when the set turns compact) are all
//! the set keeps of it. In a shard of `2^a` buckets, the top `a` of those
//! `W` bits are the bucket's index (not stored: the position says them)
//! and the other `W - a <= 40` bits are the stored field. A bucket is one
//! 64-byte cache line: 12 fields of 5 bytes, a count and an "overflowed"
//! flag. A fingerprint whose bucket is full goes to the shard's stash (a
//! small plain table of the same `W` bits); the stash is looked at only for
//! a full bucket. A shard doubles on its own (so the peak holds at most
//! 1/64 of the buckets twice); doubling moves one bit from the field to the
//! index and loses nothing, so every entry always keeps `6 + W` bits.

use super::set::{prefetch_ptr, SHARDS, SHARD_BITS};
use super::{FingerprintSet, Insert};

/// Fields per bucket.
const FIELDS: usize = 12;
/// Bytes per field.
const FIELD_BYTES: usize = 5;
/// The mask of a field's bits.
const FIELD_MASK: u64 = (1 << (8 * FIELD_BYTES)) - 1;
/// Where a bucket's count is.
const COUNT: usize = FIELDS * FIELD_BYTES;
/// Where a bucket's "overflowed into the stash" flag is.
const OVERFLOWED: usize = COUNT + 1;
/// Bytes per bucket: one cache line.
pub(super) const BUCKET_BYTES: usize = 64;

/// One cache line of fields.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Bucket([u8; BUCKET_BYTES]);

impl Bucket {
    const EMPTY: Bucket = Bucket([0; BUCKET_BYTES]);

    /// Field `i` (less than [`FIELDS`]); the 8-byte read stays inside the line.
    #[inline(always)]
    fn field(&self, i: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&self.0[i * FIELD_BYTES..i * FIELD_BYTES + 8]);
        u64::from_le_bytes(w) & FIELD_MASK
    }

    #[inline(always)]
    fn count(&self) -> usize {
        usize::from(self.0[COUNT])
    }

    #[inline(always)]
    fn holds(&self, f: u64) -> bool {
        (0..self.count()).any(|i| self.field(i) == f)
    }

    /// Appends `f` (the bucket has room).
    #[inline(always)]
    fn push(&mut self, f: u64) {
        let i = self.count();
        self.0[i * FIELD_BYTES..(i + 1) * FIELD_BYTES].copy_from_slice(&f.to_le_bytes()[..FIELD_BYTES]);
        self.0[COUNT] += 1;
    }
}

/// One shard: `2^a` buckets and a stash.
#[derive(Debug)]
struct Shard {
    buckets: Vec<Bucket>,
    /// log2 of the bucket count.
    a: u32,
    /// Entries in buckets and stash.
    len: usize,
    /// Fingerprints whose bucket was full, as their `W` bits top-aligned.
    stash: FingerprintSet,
}

/// The compact sets's shards and their common parameters.
#[derive(Debug)]
pub(super) struct Compact {
    shards: Vec<Shard>,
    /// The bits kept below the shard bits (`40 + a_min`).
    w: u32,
    /// The largest bucket count of a shard, as log2.
    a_max: u32,
    /// The budget of one shard's stash (`None`: no limit).
    stash_budget: Option<usize>,
    len: usize,
}

/// The entries a shard of `2^a` buckets holds before it doubles: 7/8.
#[inline]
const fn grow_limit(a: u32) -> usize {
    (FIELDS << a) / 8 * 7
}

impl Compact {
    /// The largest log2 bucket count of a shard whose buckets fit in 7/8 of
    /// `budget` (the stashes get the rest); `None` without a budget.
    pub(super) fn a_max_within(budget: Option<usize>) -> u32 {
        match budget {
            None => 40,
            Some(b) => {
                let per_shard = b / 8 * 7 / SHARDS / BUCKET_BYTES;
                if per_shard == 0 {
                    0
                } else {
                    usize::BITS - 1 - per_shard.leading_zeros()
                }
            }
        }
    }

    /// An empty compact set of shards of `2^a_min` buckets, keeping
    /// `6 + 40 + a_min` bits of each fingerprint, within `budget`.
    pub(super) fn new(a_min: u32, budget: Option<usize>) -> Compact {
        let stash_budget = budget.map(|b| b / 8 / SHARDS);
        Compact {
            shards: (0..SHARDS)
                .map(|_| Shard {
                    buckets: vec![Bucket::EMPTY; 1 << a_min],
                    a: a_min,
                    len: 0,
                    stash: FingerprintSet::new(stash_budget),
                })
                .collect(),
            w: 40 + a_min,
            a_max: Self::a_max_within(budget),
            stash_budget,
            len: 0,
        }
    }

    /// The bits of a fingerprint this set keeps (shard bits included).
    pub(super) fn bits(&self) -> u32 {
        SHARD_BITS + self.w
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Slots of buckets and stashes.
    pub(super) fn capacity(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.buckets.len() * FIELDS + s.stash.capacity())
            .sum()
    }

    pub(super) fn bytes(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.buckets.len() * BUCKET_BYTES + s.stash.bytes())
            .sum()
    }

    /// Whether some shard is at its largest size with a full stash.
    pub(super) fn is_full(&self) -> bool {
        self.shards.iter().any(|s| s.a >= self.a_max && s.stash.is_full())
    }

    /// The shard of `fp` and its kept bits `v` (`W` of them, right-aligned).
    #[inline(always)]
    fn split(&self, fp: u64) -> (usize, u64) {
        ((fp >> (64 - SHARD_BITS)) as usize, (fp << SHARD_BITS) >> (64 - self.w))
    }

    /// Bucket index and field of `v` in a shard of `2^a` buckets.
    #[inline(always)]
    fn place(&self, v: u64, a: u32) -> (usize, u64) {
        let low = self.w - a;
        ((v >> low) as usize, v & ((1 << low) - 1))
    }

    /// The stash key of `v`: top-aligned, so that the stash's home slots spread.
    #[inline(always)]
    fn stash_key(&self, v: u64) -> u64 {
        v << (64 - self.w)
    }

    #[inline]
    pub(super) fn prefetch(&self, fp: u64) {
        let (k, v) = self.split(fp);
        let s = &self.shards[k];
        let (b, _) = self.place(v, s.a);
        prefetch_ptr(s.buckets[b].0.as_ptr() as *const u64);
    }

    #[inline]
    pub(super) fn contains(&self, fp: u64) -> bool {
        let (k, v) = self.split(fp);
        let s = &self.shards[k];
        let (b, f) = self.place(v, s.a);
        let bucket = &s.buckets[b];
        bucket.holds(f) || (bucket.0[OVERFLOWED] != 0 && s.stash.contains(self.stash_key(v)))
    }

    /// Inserts `fp` (already non-zero): `New`, `Present`, or `Full` when
    /// its bucket and its shard's stash are full at the largest size.
    #[inline]
    pub(super) fn insert(&mut self, fp: u64) -> Insert {
        let (k, v) = self.split(fp);
        let (a, w) = (self.shards[k].a, self.w);
        let (b, f) = self.place(v, a);
        let bucket = &self.shards[k].buckets[b];
        if bucket.holds(f) {
            return Insert::Present;
        }
        if bucket.count() == FIELDS && self.shards[k].stash.contains(v << (64 - w)) {
            return Insert::Present;
        }
        if self.shards[k].len >= grow_limit(a) && a < self.a_max {
            self.grow(k);
        }
        let r = self.shards[k].put(v, w);
        if r == Insert::New {
            self.len += 1;
        }
        r
    }

    /// Doubles shard `k`'s buckets, moving every entry.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, k: usize) {
        let w = self.w;
        let old = &mut self.shards[k];
        let a = old.a;
        let old_len = old.len;
        let buckets = std::mem::take(&mut old.buckets);
        let stash = std::mem::replace(&mut old.stash, FingerprintSet::new(self.stash_budget));
        let mut new = Shard {
            buckets: vec![Bucket::EMPTY; 1 << (a + 1)],
            a: a + 1,
            len: 0,
            stash: FingerprintSet::new(self.stash_budget),
        };
        let low = w - a;
        for (b, bucket) in buckets.iter().enumerate() {
            for i in 0..bucket.count() {
                new.put(((b as u64) << low) | bucket.field(i), w);
            }
        }
        drop(buckets);
        for key in stash.entries() {
            new.put(key >> (64 - w), w);
        }
        // A stash at its budget may drop an entry (sound: re-explored).
        self.len = self.len - old_len + new.len;
        self.shards[k] = new;
    }
}

impl Shard {
    /// Stores `v`, known to be absent.
    #[inline(always)]
    fn put(&mut self, v: u64, w: u32) -> Insert {
        let low = w - self.a;
        let bucket = &mut self.buckets[(v >> low) as usize];
        if bucket.count() < FIELDS {
            bucket.push(v & ((1 << low) - 1));
        } else {
            bucket.0[OVERFLOWED] = 1;
            if self.stash.insert(v << (64 - w)) == Insert::Full {
                return Insert::Full;
            }
        }
        self.len += 1;
        Insert::New
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::fingerprint;

    #[test]
    fn fields_round_trip_and_growth_keeps_every_element() {
        let mut b = Bucket::EMPTY;
        for i in 0..FIELDS as u64 {
            b.push(FIELD_MASK - i);
        }
        assert!((0..FIELDS).all(|i| b.field(i) == FIELD_MASK - i as u64));
        assert!(b.holds(FIELD_MASK - 11) && !b.holds(FIELD_MASK - 12));
        // Shards of 2 buckets (a_min = 1): 24 fields each, so most of the
        // first inserts go to the stash before the shards double.
        let mut c = Compact::new(1, None);
        assert_eq!(c.bits(), 6 + 41);
        let n = 200_000u64;
        for i in 0..n {
            assert_eq!(c.insert(fingerprint(&i)), Insert::New, "{i}");
        }
        assert_eq!(c.len(), n as usize);
        assert!((0..n).all(|i| c.contains(fingerprint(&i))));
        assert!((0..n).all(|i| c.insert(fingerprint(&i)) == Insert::Present));
        assert!((n..2 * n).all(|i| !c.contains(fingerprint(&i))));
        // 200,000 entries at most 7/8 full: 2^8 buckets per shard hold
        // 64 * 2688 = 172,032, so the shards are at 2^9 or 2^8.
        let buckets: usize = c.shards.iter().map(|s| s.buckets.len()).sum();
        assert!((64 * 256..=64 * 512).contains(&buckets), "{buckets}");
        assert!(c.shards.iter().all(|s| s.len < grow_limit(s.a)));
    }

    #[test]
    fn fingerprints_that_share_the_kept_bits_are_one_entry() {
        // Only the top 6 + W bits are kept: two fingerprints that differ
        // below them are the same entry (the collision the bound counts).
        let mut c = Compact::new(4, None);
        let fp = 0xDEAD_BEEF_1234_5678u64;
        assert_eq!(c.insert(fp), Insert::New);
        assert_eq!(c.insert(fp ^ 1), Insert::Present);
        assert_eq!(c.insert(fp ^ (1 << (64 - c.bits()))), Insert::New);
    }
}
