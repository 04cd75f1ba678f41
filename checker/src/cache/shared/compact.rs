//! The compact table of a [`SharedCache`](super::SharedCache) shard: the
//! quotiented buckets of the single-threaded compact form
//! ([`bucket`](crate::cache::bucket)'s layout) made safe for concurrent
//! inserts (ARCHITECTURE.md, "The shared cache").
//!
//! A shard keeps the top [`KEPT`] bits of a fingerprint (its shard says
//! 4 more, its low bits). In a table of `2^a` buckets the top `a` of them
//! are the bucket's index and the other `KEPT - a <= 40` bits the stored
//! field. A bucket is eight atomic words: word 0 holds tags 0 to 7, word 1
//! tags 8 to 11, the count (its byte 4), the flags (its byte 5: locked,
//! moved, overflowed, rewriting) and the count of fields replaced (its
//! bytes 6 and 7), words 2 to 7 the rests, two per word.
//!
//! * A look-up loads word 1 (acquire), then the tags and the rests of the
//!   first `count` fields, then word 1 again (after an acquire fence): a
//!   writer changes word 1 before it writes a field and publishes the field
//!   by its release store of word 1, so a look-up that reads word 1 twice
//!   the same, not rewriting, read whole fields (an append writes past the
//!   count; a replacement marks word 1 "rewriting", then fences, then
//!   overwrites); else it looks again (a sequence lock).
//! * An insert of an absent field locks the bucket by a compare-and-swap of
//!   word 1 from the exact value its look-up read (so nothing changed
//!   since), writes the tag and the rest, and stores word 1 with the count
//!   one higher and the lock off. In a full bucket the field takes the
//!   place of the oldest (the replaced count, modulo 12, says which), which
//!   goes first to the stash, an 8-byte [`Plain`] table, and the bucket is
//!   marked overflowed: as in the single-threaded table, recent states,
//!   which the search looks up most, stay in the buckets. The stash is
//!   looked at only for an overflowed bucket, which stays full.
//! * A growth freezes every bucket (sets "moved" once it is unlocked) and
//!   the stash's empty slots, and copies the entries into a table twice
//!   the size. A frozen bucket still answers for the fields it holds; a
//!   value absent from it is [`Probe::Moved`], which the shard's side set
//!   answers until the new table is published ([`super`]).

use super::Probe;
use super::plain::Plain;
use crate::cache::bucket::{BUCKET_BYTES, FIELD_BITS, FIELDS, field, grow_limit, holds, rest, tag};
use crate::cache::region::{Region, Zeroable};
use std::hint::spin_loop;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicU64, AtomicUsize, fence};

/// log2 of the buckets of a shard's first compact table: 2^15 of 64 bytes
/// (2 MiB, the smallest table on huge pages; the 8-byte table it replaces
/// is 512 KiB).
pub(super) const A_MIN: u32 = 15;
/// The top bits of a fingerprint a compact shard keeps: 40 + [`A_MIN`].
pub(super) const KEPT: u32 = FIELD_BITS + A_MIN;

/// Where the count is in word 1.
const COUNT_SHIFT: u32 = 32;
/// Word 1's flags: a writer holds the bucket; a growth froze it; it
/// overflowed into the stash.
const LOCKED: u64 = 1 << 40;
const MOVED: u64 = 1 << 41;
const OVERFLOWED: u64 = 1 << 42;
/// Word 1's flag that the holder of a full bucket is rewriting a field
/// (with [`LOCKED`]): the sequence lock's "write in progress".
const REWRITING: u64 = 1 << 43;
/// Where the count of replaced fields is in word 1: its top 16 bits.
const REPLACED_SHIFT: u32 = 48;

/// One cache line of eight atomic words.
#[repr(C, align(64))]
struct Bucket([AtomicU64; BUCKET_BYTES / 8]);

// SAFETY: zero words are an empty, unlocked bucket; atomics have no drop.
unsafe impl Zeroable for Bucket {}

#[inline(always)]
fn count(w1: u64) -> usize {
    ((w1 >> COUNT_SHIFT) & 0xff) as usize
}

impl Bucket {
    /// The bucket's first 16 bytes, given word 1.
    #[inline(always)]
    fn head(&self, w1: u64) -> [u8; 16] {
        let w0 = self.0[0].load(Relaxed);
        (u128::from(w0) | u128::from(w1) << 64).to_le_bytes()
    }

    /// The word holding field `i`'s rest, and the rest's shift in it.
    /// `& 7`: in bounds for any `i` (a field's index is below 12), so that
    /// the look-up needs no bounds check.
    #[inline(always)]
    fn rest_word(&self, i: usize) -> (&AtomicU64, u32) {
        (&self.0[(2 + i / 2) & 7], 32 * (i % 2) as u32)
    }

    #[inline(always)]
    fn rest(&self, i: usize) -> u32 {
        let (word, shift) = self.rest_word(i);
        (word.load(Relaxed) >> shift) as u32
    }

    /// Whether field `f` is among the fields counted in `w1`, which was
    /// loaded with acquire ordering.
    #[inline(always)]
    fn holds(&self, w1: u64, f: u64) -> bool {
        holds(&self.head(w1), count(w1), f, |i| self.rest(i))
    }

    /// A consistent look at the bucket for field `f`, starting from word
    /// 1 as `w1` (loaded with acquire ordering): word 1 as it was
    /// throughout the look, and whether `f` is among its fields. The
    /// sequence lock's reader: it waits while a field is being rewritten
    /// ([`REWRITING`]), and looks again if word 1 changed meanwhile.
    #[inline(always)]
    fn look(&self, f: u64, mut w1: u64) -> (u64, bool) {
        loop {
            if w1 & REWRITING == 0 {
                let held = self.holds(w1, f);
                fence(Acquire);
                let now = self.0[1].load(Relaxed);
                if now == w1 {
                    return (w1, held);
                }
            }
            spin_loop();
            w1 = self.0[1].load(Acquire);
        }
    }

    /// Field `i` of a bucket the caller holds, whose word 1 is `w1`.
    fn field_at(&self, i: usize, w1: u64) -> u64 {
        field(self.head(w1)[i], self.rest(i))
    }

    /// Writes `f` over the oldest field of a full bucket the caller holds,
    /// whose word 1 is `w1`; returns word 1 with one more field replaced
    /// and the tag if it lives there.
    fn replace_oldest(&self, f: u64, w1: u64) -> u64 {
        let i = oldest(w1);
        let t = u64::from(tag(f));
        let mut w1 = w1.wrapping_add(1 << REPLACED_SHIFT);
        if i < 8 {
            set_bits(&self.0[0], 0xff << (8 * i), t << (8 * i));
        } else {
            w1 = w1 & !(0xff << (8 * (i - 8))) | t << (8 * (i - 8));
        }
        let (word, shift) = self.rest_word(i);
        set_bits(word, 0xffff_ffff << shift, u64::from(rest(f)) << shift);
        w1
    }

    /// Appends field `f` to a bucket no other thread sees yet; if it is
    /// full, marks it overflowed and answers false (the value goes to the
    /// stash).
    fn put(&self, f: u64) -> bool {
        let w1 = self.0[1].load(Relaxed);
        let i = count(w1);
        if i < FIELDS {
            self.0[1].store(self.write(i, f, w1), Relaxed);
            true
        } else {
            self.0[1].store(w1 | OVERFLOWED, Relaxed);
            false
        }
    }

    /// Writes `f` as field `i` (the caller holds the bucket, or nobody
    /// else sees it) and returns word 1 with it counted: `w1` plus the
    /// count, and the tag if it lives in word 1.
    #[inline(always)]
    fn write(&self, i: usize, f: u64, w1: u64) -> u64 {
        let t = u64::from(tag(f));
        let mut w1 = w1 + (1 << COUNT_SHIFT);
        if i < 8 {
            set_bits(&self.0[0], 0, t << (8 * i));
        } else {
            w1 |= t << (8 * (i - 8));
        }
        let (word, shift) = self.rest_word(i);
        set_bits(word, 0, u64::from(rest(f)) << shift);
        w1
    }
}

/// The oldest field of a full bucket whose word 1 is `w1`: the fields
/// were appended in order, and are replaced in turn.
#[inline(always)]
fn oldest(w1: u64) -> usize {
    (w1 >> REPLACED_SHIFT) as usize % FIELDS
}

/// Replaces the bits of `mask` in `word` by `bits` (0: sets `bits`); only
/// the bucket's holder writes the word: a load and a store rather than a
/// locked read-modify-write, since no other thread writes the word
/// meanwhile (readers take what the release store of word 1 publishes).
#[inline(always)]
fn set_bits(word: &AtomicU64, mask: u64, bits: u64) {
    word.store(word.load(Relaxed) & !mask | bits, Relaxed);
}

/// The stash's value for the kept bits `v`: top-aligned, with the low bit
/// set so that it is never 0 (nor [`super::MOVED`]: `KEPT` < 63).
#[inline(always)]
fn stash_key(v: u64) -> u64 {
    v << (64 - KEPT) | 1
}

/// The bucket index, field and kept bits of `fp` in a table whose
/// bucket is a fingerprint's top `64 - bucket_shift` bits.
#[inline(always)]
fn split(fp: u64, bucket_shift: u32, field_mask: u64) -> (usize, u64, u64) {
    (
        (fp >> bucket_shift) as usize,
        (fp >> (64 - KEPT)) & field_mask,
        fp >> (64 - KEPT),
    )
}

/// A compact table of `2^a` buckets and its stash.
pub(super) struct Compact {
    buckets: Region<Bucket>,
    a: u32,
    /// `64 - a`: a fingerprint's bucket is its top `a` bits.
    bucket_shift: u32,
    /// The mask of a field's `KEPT - a` bits.
    field_mask: u64,
    /// The shard's entry count at which an insert of an absent value
    /// answers [`Probe::AtLimit`].
    pub(super) limit: usize,
    /// The same while another thread grows the shard: every field taken.
    hard: usize,
    stash: Plain,
    /// The stash's entry count.
    stash_len: AtomicUsize,
}

impl Compact {
    /// A table of `2^a` buckets (`a >= A_MIN`) holding `entries` (values
    /// as [`freeze`](Self::freeze) gives them, or whole fingerprints),
    /// which no other thread sees yet; `largest`: it may not grow.
    pub(super) fn with_entries(a: u32, largest: bool, entries: &[u64]) -> Compact {
        debug_assert!(a >= A_MIN);
        let buckets: Region<Bucket> = Region::zeroed(1 << a);
        let (bucket_shift, field_mask) = (64 - a, (1 << (KEPT - a)) - 1);
        let mut over = Vec::new();
        for &x in entries {
            let (b, f, v) = split(x, bucket_shift, field_mask);
            if !buckets[b].put(f) {
                over.push(stash_key(v));
            }
        }
        // A slot per bucket, or room for what overflowed.
        let slots = min_stash(a).max((2 * over.len()).next_power_of_two());
        let stash = Plain::new(slots, largest);
        for &k in &over {
            stash.place(k);
        }
        Compact {
            buckets,
            a,
            bucket_shift,
            field_mask,
            limit: if largest { FIELDS << a } else { grow_limit(a) },
            hard: FIELDS << a,
            stash,
            stash_len: AtomicUsize::new(over.len()),
        }
    }

    /// Adds `fp`, absent, to a table no other thread sees yet (its stash
    /// has room: at least a slot per bucket, and few are added).
    pub(super) fn add(&self, fp: u64) {
        let (bucket, f, v) = self.place(fp);
        if !bucket.put(f) {
            self.stash.place(stash_key(v));
            self.stash_len.fetch_add(1, Relaxed);
        }
    }

    /// log2 of the bucket count.
    pub(super) fn a(&self) -> u32 {
        self.a
    }

    /// The table's bytes in 8-byte units (buckets and stash).
    pub(super) fn units(&self) -> usize {
        units(self.a, self.stash.slots.len())
    }

    /// Whether the shard (of `len` entries) or the stash is at its limit.
    pub(super) fn at_limit(&self, len: usize) -> bool {
        len >= self.limit || self.stash_len.load(Relaxed) >= self.stash.limit
    }

    /// The bucket of `fp` and its field.
    #[inline(always)]
    fn place(&self, fp: u64) -> (&Bucket, u64, u64) {
        let (b, f, v) = split(fp, self.bucket_shift, self.field_mask);
        debug_assert_eq!(b as u64, v >> (KEPT - self.a));
        (self.buckets.wrap(b), f, v)
    }

    /// The address of the bucket of `fp`, to prefetch.
    #[inline(always)]
    pub(super) fn line(&self, fp: u64) -> *const u64 {
        self.place(fp).0.0.as_ptr().cast()
    }

    /// Inserts `fp` (see the module's protocol) into a shard of `len()`
    /// entries as the caller sees them (asked only for an absent value);
    /// the caller counts a [`Probe::New`]. With `slack` (another thread is
    /// growing the shard) up to the hard limits.
    #[inline(always)]
    pub(super) fn insert(&self, fp: u64, len: impl Fn() -> usize, slack: bool) -> Probe {
        let (bucket, f, v) = self.place(fp);
        let mut w1 = bucket.0[1].load(Acquire);
        loop {
            // A frozen bucket's fields are complete, and so is what
            // overflowed from it: a value is absent (`Moved`) only if
            // neither holds it.
            let (now, held) = bucket.look(f, w1);
            w1 = now;
            if held {
                return Probe::Present;
            }
            if w1 & OVERFLOWED != 0 {
                match self.stash.contains(stash_key(v)) {
                    Some(true) => return Probe::Present,
                    Some(false) => {}
                    // A growth froze the stash after the bucket.
                    None => return Probe::Moved,
                }
            }
            if w1 & MOVED != 0 {
                return Probe::Moved;
            }
            if w1 & LOCKED != 0 {
                spin_loop();
                w1 = bucket.0[1].load(Acquire);
                continue;
            }
            if len() >= if slack { self.hard } else { self.limit } {
                return Probe::AtLimit;
            }
            let i = count(w1);
            match bucket.0[1].compare_exchange(w1, w1 | LOCKED, AcqRel, Acquire) {
                // Held, with the fields looked at: none is `f`.
                Ok(_) if i < FIELDS => {
                    bucket.0[1].store(bucket.write(i, f, w1), Release);
                    return Probe::New;
                }
                Ok(_) => return self.insert_full(bucket, f, v, w1, slack),
                Err(now) => w1 = now,
            }
        }
    }

    /// Stores the absent field `f` (of kept bits `v`) in the full `bucket`,
    /// which the caller holds (its word 1 was `w1`), in place of the
    /// oldest field, which goes to the stash first; if the stash cannot
    /// take it, nothing changes and its answer is the insert's.
    #[cold]
    #[inline(never)]
    fn insert_full(&self, bucket: &Bucket, f: u64, v: u64, w1: u64, slack: bool) -> Probe {
        // The replacement's writes come after the mark (the sequence
        // lock's writer side).
        bucket.0[1].store(w1 | LOCKED | REWRITING, Relaxed);
        fence(Release);
        let low = KEPT - self.a;
        let old = (v >> low) << low | bucket.field_at(oldest(w1), w1);
        match self.stash.insert(stash_key(old), &self.stash_len, slack) {
            Probe::New | Probe::Present => {
                let w = bucket.replace_oldest(f, w1 | OVERFLOWED);
                bucket.0[1].store(w, Release);
                Probe::New
            }
            other => {
                bucket.0[1].store(w1, Release);
                other
            }
        }
    }

    /// Whether `fp` is in the table (`None`: frozen where the look-up went).
    #[inline(always)]
    pub(super) fn contains(&self, fp: u64) -> Option<bool> {
        let (bucket, f, v) = self.place(fp);
        let (w1, held) = bucket.look(f, bucket.0[1].load(Acquire));
        if held {
            Some(true)
        } else if w1 & OVERFLOWED != 0 {
            self.stash.contains(stash_key(v))
        } else if w1 & MOVED != 0 {
            None
        } else {
            Some(false)
        }
    }

    /// Freezes every bucket (once no writer holds it) and the stash, so
    /// that no insert lands in this table any more; calls `f` with every
    /// entry as a value [`with_entries`](Self::with_entries) takes (its
    /// kept bits, top-aligned).
    pub(super) fn freeze(&self, mut f: impl FnMut(u64)) {
        let low = KEPT - self.a;
        for (b, bucket) in self.buckets.iter().enumerate() {
            let w1 = loop {
                let w = bucket.0[1].load(Acquire);
                if w & LOCKED != 0 {
                    spin_loop();
                } else if bucket.0[1].compare_exchange(w, w | MOVED, AcqRel, Acquire).is_ok() {
                    break w;
                }
            };
            let head = bucket.head(w1);
            for (i, &t) in head.iter().enumerate().take(count(w1)) {
                let v = (b as u64) << low | field(t, bucket.rest(i));
                f(v << (64 - KEPT));
            }
        }
        self.stash.freeze(|k| f(k & !1));
    }
}

/// The bytes of a compact table of `2^a` buckets and `stash` slots, in
/// 8-byte units.
pub(super) fn units(a: u32, stash: usize) -> usize {
    ((BUCKET_BYTES / 8) << a) + stash
}

/// The slots of the stash of a table of `2^a` buckets, unless more
/// overflowed when it was built: one per bucket, 12.5% of the buckets'
/// bytes. Its limit (75%) is reached near the buckets' own (7/8 full,
/// 10.5 per bucket: then 0.70 per bucket overflow, in a Poisson model);
/// with half a slot per bucket the stash doubled the table at 9.4 per
/// bucket (TwoPhase, 9 RMs).
pub(super) fn min_stash(a: u32) -> usize {
    1 << a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::fingerprint;

    /// The bucket a value of the table of `2^A_MIN` buckets goes to.
    fn bucket_of(fp: u64) -> u64 {
        fp >> (64 - A_MIN)
    }

    /// Three threads insert the same fingerprints, each in its own order,
    /// into one table: 40,000 spread over the buckets and 40 that share a
    /// bucket (12 fit, 28 overflow into the stash). Each is `New` exactly
    /// once among them; the stash holds what the buckets could not (an
    /// oracle that does not depend on the race: a bucket with k values
    /// overflows k - 12); a frozen table answers `Moved` and gives back
    /// every entry, which a table twice the size holds.
    #[test]
    fn racing_inserts_are_new_once_and_full_buckets_overflow() {
        let mut fps: Vec<u64> = (0..40_000u64).map(|i| fingerprint(&i)).collect();
        fps.extend((0..40u64).map(|i| 0x5A5 << (64 - A_MIN) | fingerprint(&(i + 1_000_000)) >> A_MIN));
        let t = Compact::with_entries(A_MIN, false, &[]);
        let news: Vec<u64> = std::thread::scope(|sc| {
            let handles: Vec<_> = (0..3usize)
                .map(|k| {
                    let (t, fps) = (&t, &fps);
                    sc.spawn(move || {
                        let m = fps.len();
                        (0..m)
                            .map(|i| fps[(i * (2 * k + 1) + k * 977) % m])
                            .filter(|&fp| matches!(t.insert(fp, || 0, false), Probe::New))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().expect("thread")).collect()
        });
        let (mut news, mut all) = (news, fps.clone());
        news.sort_unstable();
        all.sort_unstable();
        assert_eq!(news, all);
        assert!(fps.iter().all(|&fp| t.contains(fp) == Some(true)));
        assert!((1u64..1000).all(|i| t.contains(fingerprint(&(i + 2_000_000))) == Some(false)));
        let mut per_bucket = std::collections::HashMap::new();
        for &fp in &fps {
            *per_bucket.entry(bucket_of(fp)).or_insert(0usize) += 1;
        }
        let overflow: usize = per_bucket.values().map(|&k| k.saturating_sub(FIELDS)).sum();
        assert!(overflow >= 28);
        assert_eq!(t.stash_len.load(Relaxed), overflow);
        // Frozen: no insert lands, every entry comes back; what it holds
        // it still answers for, an absent value is `Moved`.
        let mut entries = Vec::new();
        t.freeze(|e| entries.push(e));
        let absent = fingerprint(&3_000_000u64);
        assert!(matches!(t.insert(absent, || 0, false), Probe::Moved));
        assert_eq!(t.contains(absent), None);
        assert!(matches!(t.insert(fps[0], || 0, false), Probe::Present));
        assert_eq!(t.contains(fps[0]), Some(true));
        let kept = |fp: u64| fp >> (64 - KEPT) << (64 - KEPT);
        let mut want: Vec<u64> = fps.iter().map(|&fp| kept(fp)).collect();
        want.sort_unstable();
        entries.sort_unstable();
        assert_eq!(entries, want);
        let grown = Compact::with_entries(A_MIN + 1, false, &entries);
        assert!(fps.iter().all(|&fp| grown.contains(fp) == Some(true)));
        // Only the top KEPT bits are kept: a fingerprint that differs
        // below them is the same entry.
        assert!(matches!(grown.insert(fps[0] ^ 1, || 0, false), Probe::Present));
    }

    /// One thread inserts 4,000 values of one bucket (3,988 replacements
    /// of its oldest field, each moved to the stash first) while another
    /// looks up, again and again, the last 24 values the first has
    /// finished inserting (those in the bucket and those just moved out):
    /// each is found every time, by `contains` and by `insert`.
    #[test]
    fn look_ups_racing_with_replacements_find_every_value_inserted_before() {
        let t = Compact::with_entries(A_MIN, true, &[]);
        let n = 4_000;
        let fps: Vec<u64> = (0..n as u64)
            .map(|i| 0x5A5 << (64 - A_MIN) | fingerprint(&i) >> A_MIN)
            .collect();
        let done = AtomicUsize::new(0);
        std::thread::scope(|sc| {
            sc.spawn(|| {
                for (k, &fp) in fps.iter().enumerate() {
                    assert!(matches!(t.insert(fp, || 0, false), Probe::New));
                    done.store(k + 1, Release);
                }
            });
            sc.spawn(|| {
                loop {
                    let k = done.load(Acquire);
                    for &fp in &fps[k.saturating_sub(24)..k] {
                        assert_eq!(t.contains(fp), Some(true));
                        assert!(matches!(t.insert(fp, || 0, false), Probe::Present));
                    }
                    if k == n {
                        break;
                    }
                }
            });
        });
        assert!(fps.iter().all(|&fp| t.contains(fp) == Some(true)));
        assert_eq!(t.stash_len.load(Relaxed), n - FIELDS);
        let w1 = t.buckets[0x5A5].0[1].load(Relaxed);
        assert_eq!(w1 >> REPLACED_SHIFT, (n - FIELDS) as u64);
    }

    /// Word 1 keeps tags 8 to 11 below the count, and the flags above it.
    #[test]
    fn a_bucket_keeps_its_fields_in_its_words() {
        let t = Compact::with_entries(A_MIN, true, &[]);
        // Thirteen values of bucket 0: fields 0 to 11, then the stash.
        let fps: Vec<u64> = (1..=13u64).map(|i| (i * 0x01_0101_0101) << (64 - KEPT)).collect();
        assert!(fps.iter().all(|&fp| matches!(t.insert(fp, || 0, false), Probe::New)));
        let w1 = t.buckets[0].0[1].load(Relaxed);
        assert_eq!(count(w1), FIELDS);
        assert_eq!(w1 & (LOCKED | MOVED), 0);
        assert_ne!(w1 & OVERFLOWED, 0);
        // Field 8 (value 9) has its tag in word 1's low byte.
        assert_eq!(w1 & 0xff, (9 * 0x01_0101_0101_u64) & 0xff);
        // The thirteenth took the place of the first, the oldest, which
        // went to the stash; the next to go is the second.
        assert_eq!(t.buckets[0].field_at(0, w1), 13 * 0x01_0101_0101);
        assert_eq!((w1 >> REPLACED_SHIFT, oldest(w1)), (1, 1));
        assert_eq!(t.stash_len.load(Relaxed), 1);
        assert_eq!(t.stash.contains(stash_key(0x01_0101_0101)), Some(true));
        assert!(
            fps.iter()
                .all(|&fp| matches!(t.insert(fp, || 0, false), Probe::Present))
        );
        assert_eq!(t.units(), (8 << A_MIN) + (1 << A_MIN));
    }
}
