//! The compact form of a large [`FingerprintSet`](super::FingerprintSet):
//! quotiented buckets of 40-bit fields in one table that grows in place
//! (ARCHITECTURE.md, "The state cache").
//!
//! The set keeps the top `W` bits of a fingerprint (`W = 40 + a_min`,
//! fixed when the set turns compact). In a table of `2^a` buckets the top
//! `a` of those bits are the bucket's index (not stored: the position says
//! them) and the other `W - a <= 40` bits are the stored field. A bucket is
//! one 64-byte cache line ([`bucket`](crate::cache::bucket)'s layout): 12
//! fields of 40 bits (their low bytes together, then their other 32 bits),
//! a count, an "overflowed" flag and the next victim. A fingerprint whose
//! bucket is full takes the place of the bucket's oldest field, which goes
//! to the stash (a plain table of the same `W` bits, top-aligned), so that
//! the recent states, which the search looks up most, stay in the buckets;
//! the stash is looked at only for a full bucket. The table doubles in place
//! ([`Region::grow`]): bucket `b` splits into `2b` and `2b + 1` by the top
//! bit of each field, which moves from the field to the index, so nothing
//! is lost and every entry always keeps `W` bits.

use super::{FingerprintSet, prefetch_ptr};
use crate::cache::Insert;
use crate::cache::bucket::{BUCKET_BYTES, COUNT, FIELD_BITS, FIELDS, RESTS, field, grow_limit, holds, rest, tag};
use crate::cache::region::{Region, Zeroable};

/// Where a bucket's "overflowed into the stash" flag is.
const OVERFLOWED: usize = COUNT + 1;
/// Where a full bucket's next victim is: the field an absent value takes
/// the place of (moving it to the stash), its oldest.
const VICTIM: usize = COUNT + 2;

/// One cache line of fields ([`bucket`](crate::cache::bucket)'s layout).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Bucket([u8; BUCKET_BYTES]);

// SAFETY: a bucket of zero bytes is an empty bucket; bytes have no drop.
unsafe impl Zeroable for Bucket {}

impl Bucket {
    const EMPTY: Bucket = Bucket([0; BUCKET_BYTES]);

    /// The rest of field `i` (less than [`FIELDS`]).
    #[inline(always)]
    fn rest(&self, i: usize) -> u32 {
        let mut w = [0u8; 4];
        w.copy_from_slice(&self.0[RESTS + 4 * i..RESTS + 4 * i + 4]);
        u32::from_le_bytes(w)
    }

    /// Field `i` (less than [`FIELDS`]).
    #[inline(always)]
    fn field(&self, i: usize) -> u64 {
        field(self.0[i], self.rest(i))
    }

    #[inline(always)]
    fn count(&self) -> usize {
        usize::from(self.0[COUNT])
    }

    #[inline(always)]
    fn holds(&self, f: u64) -> bool {
        let head: &[u8; 16] = self.0[..16].try_into().expect("16 bytes");
        holds(head, self.count(), f, |i| self.rest(i))
    }

    /// Writes `f` as field `i` (less than [`FIELDS`]).
    #[inline(always)]
    fn set(&mut self, i: usize, f: u64) {
        self.0[i] = tag(f);
        self.0[RESTS + 4 * i..RESTS + 4 * i + 4].copy_from_slice(&rest(f).to_le_bytes());
    }

    /// Appends `f` (the bucket has room).
    #[inline(always)]
    fn push(&mut self, f: u64) {
        self.set(self.count(), f);
        self.0[COUNT] += 1;
    }

    /// Stores `f` in a full bucket in place of its oldest field, which it
    /// returns: the victims go round the fields, which were appended in
    /// order.
    #[inline(always)]
    fn replace_oldest(&mut self, f: u64) -> u64 {
        let i = usize::from(self.0[VICTIM]);
        let old = self.field(i);
        self.set(i, f);
        self.0[VICTIM] = ((i + 1) % FIELDS) as u8;
        self.0[OVERFLOWED] = 1;
        old
    }
}

/// The compact set: `2^a` buckets and a stash.
#[derive(Debug)]
pub(super) struct Compact {
    buckets: Region<Bucket>,
    /// log2 of the bucket count.
    a: u32,
    /// `64 - a` and `64 - w`: a fingerprint's bucket is its top `a` bits,
    /// its field the next `w - a` (kept so that a look-up's shifts need
    /// no arithmetic first).
    bucket_shift: u32,
    field_shift: u32,
    /// The mask of a field's `w - a` bits.
    field_mask: u64,
    /// The bits kept of each fingerprint (its top `w`): `40 + a_min`.
    w: u32,
    /// The largest bucket count, as log2.
    a_max: u32,
    /// Fingerprints whose bucket was full, as their `w` bits top-aligned.
    stash: FingerprintSet,
    /// The stash's budget (`None`: no limit).
    stash_budget: Option<usize>,
    /// Entries in buckets and stash.
    len: usize,
}

impl Compact {
    /// The largest log2 bucket count whose buckets fit in 7/8 of `budget`
    /// (the stash gets the rest); `None` without a budget.
    pub(super) fn a_max_within(budget: Option<usize>) -> u32 {
        match budget {
            None => 46,
            Some(b) => {
                let buckets = b / 8 * 7 / BUCKET_BYTES;
                if buckets == 0 {
                    0
                } else {
                    usize::BITS - 1 - buckets.leading_zeros()
                }
            }
        }
    }

    /// An empty compact set of `2^a_min` buckets, keeping the top
    /// `40 + a_min` bits of each fingerprint, within `budget`.
    pub(super) fn new(a_min: u32, budget: Option<usize>) -> Compact {
        // A bucket index of at least one bit: `bucket_shift` below 64.
        assert!(a_min >= 1, "a compact set needs at least 2 buckets");
        let stash_budget = budget.map(|b| b / 8);
        let w = FIELD_BITS + a_min;
        Compact {
            buckets: Region::zeroed(1 << a_min),
            a: a_min,
            bucket_shift: 64 - a_min,
            field_shift: 64 - w,
            field_mask: (1 << (w - a_min)) - 1,
            w,
            // At least one bit stays in the field (the split needs it).
            a_max: Self::a_max_within(budget).min(w - 1),
            stash: FingerprintSet::plain(stash_budget),
            stash_budget,
            len: 0,
        }
    }

    /// The bits of a fingerprint this set keeps.
    pub(super) fn bits(&self) -> u32 {
        self.w
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Slots of buckets and stash.
    pub(super) fn capacity(&self) -> usize {
        (FIELDS << self.a) + self.stash.capacity()
    }

    pub(super) fn bytes(&self) -> usize {
        (BUCKET_BYTES << self.a) + self.stash.bytes()
    }

    /// Whether the table is at its largest size with a full stash.
    pub(super) fn is_full(&self) -> bool {
        self.a >= self.a_max && self.stash.is_full()
    }

    /// The kept bits of `fp` (`w` of them, right-aligned).
    #[inline(always)]
    fn kept(&self, fp: u64) -> u64 {
        fp >> (64 - self.w)
    }

    /// Bucket index and field of the kept bits `v`.
    #[inline(always)]
    fn place(&self, v: u64) -> (usize, u64) {
        let low = self.w - self.a;
        ((v >> low) as usize, v & ((1 << low) - 1))
    }

    /// Bucket index and field of `fp`: [`place`](Self::place) of its
    /// kept bits, in two shifts.
    #[inline(always)]
    fn place_fp(&self, fp: u64) -> (usize, u64) {
        let placed = (
            (fp >> self.bucket_shift) as usize,
            (fp >> self.field_shift) & self.field_mask,
        );
        debug_assert_eq!(placed, self.place(self.kept(fp)));
        placed
    }

    /// The stash key of `v`: top-aligned, so that the stash's home slots spread.
    #[inline(always)]
    fn stash_key(&self, v: u64) -> u64 {
        v << (64 - self.w)
    }

    #[inline(always)]
    pub(super) fn prefetch(&self, fp: u64) {
        let b = (fp >> self.bucket_shift) as usize;
        prefetch_ptr(self.buckets.wrap(b).0.as_ptr() as *const u64);
    }

    #[inline(always)]
    pub(super) fn contains(&self, fp: u64) -> bool {
        let (b, f) = self.place_fp(fp);
        let bucket = self.buckets.wrap(b);
        bucket.holds(f) || (bucket.0[OVERFLOWED] != 0 && self.stash_contains(self.kept(fp)))
    }

    /// Inserts `fp` (already non-zero): `New`, `Present`, or `Full` when
    /// its bucket and the stash are full at the largest size.
    #[inline(always)]
    pub(super) fn insert(&mut self, fp: u64) -> Insert {
        let (b, f) = self.place_fp(fp);
        let bucket = self.buckets.wrap(b);
        if bucket.holds(f) {
            return Insert::Present;
        }
        let v = self.kept(fp);
        // Only a bucket that overflowed has entries in the stash.
        if bucket.0[OVERFLOWED] != 0 && self.stash_contains(v) {
            return Insert::Present;
        }
        if self.len >= grow_limit(self.a) && self.a < self.a_max {
            self.grow();
        }
        let r = self.put(v);
        if r == Insert::New {
            self.len += 1;
        }
        r
    }

    /// Stores the kept bits `v`, known to be absent. In a full bucket `v`
    /// takes the place of the oldest field, which goes to the stash: the
    /// search looks up recent states far more often than old ones, so
    /// that the stash, a second cache miss, is rarely looked at for a
    /// state that is there (ARCHITECTURE.md, "The state cache"). `Full` (and nothing
    /// changed) when the stash cannot take it.
    #[inline(always)]
    fn put(&mut self, v: u64) -> Insert {
        let (b, f) = self.place(v);
        let bucket = &mut self.buckets[b];
        if bucket.count() < FIELDS {
            bucket.push(f);
            return Insert::New;
        }
        let mut moved = *bucket;
        let old = moved.replace_oldest(f);
        let r = self.stash_insert((b as u64) << (self.w - self.a) | old);
        if r == Insert::New {
            self.buckets[b] = moved;
        }
        r
    }

    // The stash is a `FingerprintSet`, whose look-ups inline this type's:
    // its two calls stay out of line, or the cycle of inlined calls would
    // leave this type's `insert` out of the search's loop (as it was: 10
    // million calls at rms=8, ARCHITECTURE.md, "The state cache").

    /// Whether the kept bits `v` are in the stash.
    #[inline(never)]
    fn stash_contains(&self, v: u64) -> bool {
        self.stash.contains(self.stash_key(v))
    }

    /// Stores the kept bits `v` in the stash: `New`, or `Full`.
    #[inline(never)]
    fn stash_insert(&mut self, v: u64) -> Insert {
        match self.stash.insert(self.stash_key(v)) {
            Insert::Full => Insert::Full,
            _ => Insert::New,
        }
    }

    /// Doubles the table in place: from the last bucket down, bucket `b`
    /// splits into `2b` (fields whose top bit is 0) and `2b + 1`, both at or
    /// after `b`, so a bucket is read before anything is written over it.
    /// Then the stash's entries are stored again (most find room now).
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let old = 1usize << self.a;
        self.buckets.grow(2 * old);
        let top = 1u64 << (self.w - self.a - 1);
        for b in (0..old).rev() {
            let bucket = self.buckets[b];
            let mut halves = [Bucket::EMPTY; 2];
            // Oldest first (the victim is, once the bucket is full), so
            // that the halves' victims are their oldest too.
            let (n, first) = (bucket.count(), usize::from(bucket.0[VICTIM]));
            for k in 0..n {
                let f = bucket.field((first + k) % n);
                halves[usize::from(f & top != 0)].push(f & (top - 1));
            }
            self.buckets[2 * b..2 * b + 2].copy_from_slice(&halves);
        }
        self.a += 1;
        self.bucket_shift -= 1;
        self.field_mask >>= 1;
        let stash = std::mem::replace(&mut self.stash, FingerprintSet::plain(self.stash_budget));
        // A stash at its budget may drop an entry (sound: re-explored).
        self.len -= stash.len();
        for key in stash.entries() {
            if self.put(key >> (64 - self.w)) == Insert::New {
                self.len += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::StateCache;
    use crate::cache::fingerprint;
    use crate::cache::tests::fill;

    /// The bits of a field: its tag (the low 8) and its rest (the next 32).
    const FIELD_MASK: u64 = (1 << FIELD_BITS) - 1;

    impl StateCache for Compact {
        fn insert(&mut self, fp: u64) -> Insert {
            Compact::insert(self, fp)
        }
        fn bytes(&self) -> usize {
            Compact::bytes(self)
        }
        fn fingerprint_bits(&self) -> u32 {
            self.bits()
        }
        fn contains(&self, fp: u64) -> bool {
            Compact::contains(self, fp)
        }
    }

    #[test]
    fn fields_round_trip_and_growth_keeps_every_element() {
        let mut b = Bucket::EMPTY;
        for i in 0..FIELDS as u64 {
            b.push(FIELD_MASK - i);
        }
        assert!((0..FIELDS).all(|i| b.field(i) == FIELD_MASK - i as u64));
        assert!(b.holds(FIELD_MASK - 11) && !b.holds(FIELD_MASK - 12));
    }

    #[test]
    fn only_fields_in_use_whose_tag_and_rest_both_agree_are_held() {
        // Fields 0x100, 0x200, 0x300: tag 0 each, rests 1, 2, 3.
        let mut b = Bucket::EMPTY;
        for r in 1..=3u64 {
            b.push(r << 8);
        }
        assert!((1..=3u64).all(|r| b.holds(r << 8)));
        // A tag that agrees and a rest that does not.
        assert!(!b.holds(4 << 8));
        // The unused fields read as 0 and the count byte is 3: neither
        // is a field.
        assert!(!b.holds(0) && !b.holds(3));
    }

    #[test]
    fn a_budget_caps_the_table_and_the_stash() {
        // 1 MiB: buckets within 7/8 (2^13 of 64 bytes = 512 KiB), stash 128 KiB.
        let budget = 1 << 20;
        let mut c = Compact::new(7, Some(budget));
        assert_eq!(c.a_max, 13);
        let (inserted, first_full) = fill(&mut c, 200_000, budget);
        assert_eq!(c.a, 13);
        assert!(c.is_full() && first_full.is_some());
        assert_eq!(c.len(), inserted.len());
        let kept = (0..200_000u64).filter(|&i| c.contains(fingerprint(&i))).count();
        assert_eq!(kept, c.len());
    }

    #[test]
    fn a_full_bucket_keeps_its_newest_fields_and_stashes_the_oldest() {
        let mut c = Compact::new(4, None);
        // Twenty fingerprints of bucket 5, field i + 1 with its top bit
        // alternating: the first eight go to the stash as the last eight
        // arrive.
        let w = c.bits();
        let field = |i: u64| (i % 2) << (w - 4 - 1) | (i + 1);
        let fp = |i: u64| 5 << (64 - 4) | field(i) << (64 - w);
        let fps: Vec<u64> = (0..20).map(fp).collect();
        assert!(fps.iter().all(|&f| c.insert(f) == Insert::New));
        assert_eq!((c.len(), c.stash.len()), (20, 8));
        let bucket = c.buckets[5];
        let mut held: Vec<u64> = (0..FIELDS).map(|i| bucket.field(i)).collect();
        held.sort_unstable();
        let mut newest: Vec<u64> = (8..20).map(field).collect();
        newest.sort_unstable();
        assert_eq!(held, newest);
        assert_eq!(bucket.0[VICTIM], 8);
        assert!(fps.iter().all(|&f| c.contains(f) && c.insert(f) == Insert::Present));
        assert!(!c.contains(fp(20)));
        // A doubling splits the bucket by the top bit and stores the
        // stash again: ten each fit in the two halves.
        c.grow();
        assert_eq!((c.len(), c.stash.len()), (20, 0));
        assert!(fps.iter().all(|&f| c.contains(f)));
    }

    #[test]
    fn fingerprints_that_share_the_kept_bits_are_one_entry() {
        // Only the top W bits are kept: two fingerprints that differ
        // below them are the same entry (the collision the bound counts).
        let mut c = Compact::new(4, None);
        let fp = 0xDEAD_BEEF_1234_5678u64;
        assert_eq!(c.insert(fp), Insert::New);
        assert_eq!(c.insert(fp ^ 1), Insert::Present);
        assert_eq!(c.insert(fp ^ (1 << (64 - c.bits()))), Insert::New);
    }
}
