//! The state cache: a set of 64-bit state fingerprints under a memory budget
//! (ARCHITECTURE.md, "The state cache" and "Performance design").
//!
//! * [`fingerprint`] hashes a program state with [`FpHasher`], a small fixed
//!   hash function that gives the same value on every platform, CPU and
//!   build (schedule files store digests computed with it). It never
//!   returns 0, the empty-slot marker of the tables.
//! * [`FingerprintSet`] is the single-threaded cache: open addressing over
//!   a `Vec<u64>` with linear probing, no per-entry allocation. Without a
//!   budget it doubles on demand; with one it grows up to the largest
//!   power-of-two table that fits the budget, fills it to 90% and then
//!   answers [`Insert::Full`] for new fingerprints (the search stays sound,
//!   it only re-explores). [`FingerprintSet::insert_batch`] prefetches the
//!   slots of a whole batch before inserting, so that the cache misses of
//!   one state's successors overlap (one miss per probe is the floor: ARCHITECTURE.md, "Performance design").
//! * [`SharedCache`] is the cache of a parallel search: 16 shards of atomic
//!   8-byte slots that turn compact past 512 KiB (the same buckets, made
//!   safe for concurrent inserts), looked up without a lock, inserted by
//!   a compare-and-swap, grown under a per-shard lock.
//!
//! The optimised search holds either as an `AnyCache` (one type, so it is
//! compiled once for both), the plain search a `FingerprintSet`; both
//! through `StateCache`.

mod bucket;
mod fingerprint;
mod owned;
mod region;
mod set;
mod shared;

pub use fingerprint::{FpHasher, fingerprint};
pub use owned::{OwnedCache, owner};
pub use set::FingerprintSet;
pub use shared::{Handle as SharedHandle, SharedCache};

/// The fingerprint the exhaustive searches cache for `s`: its own
/// [`fingerprint`], or with `symmetry` its orbit's
/// ([`crate::Symmetry::canonical_fingerprint`], never 0). Without symmetry
/// the path is the plain fingerprint behind one predictable branch.
#[inline(always)]
pub fn state_fingerprint<P: crate::Program + ?Sized>(program: &P, s: &P::State, symmetry: bool) -> u64 {
    keyed_fingerprint(program, s, symmetry, |_| {})
}

/// [`state_fingerprint`], telling `keyed` the orbit's fingerprint when it
/// keys `s` by one (for the check of a symmetry declaration).
#[inline(always)]
pub fn keyed_fingerprint<P: crate::Program + ?Sized>(
    program: &P,
    s: &P::State,
    symmetry: bool,
    keyed: impl FnOnce(u64),
) -> u64 {
    if symmetry && let Some(fp) = crate::program::ProgramExt::canonical_fingerprint(program, s) {
        keyed(fp);
        return fingerprint::nonzero(fp);
    }
    fingerprint(s)
}

/// The hasher of the in-memory maps and sets of the engine (and its
/// tests): ahash with fixed keys, so that iteration orders, hence results,
/// are the same in every run.
pub const FIXED_HASHER: ahash::RandomState = ahash::RandomState::with_seeds(
    0x243F_6A88_85A3_08D3,
    0x1319_8A2E_0370_7344,
    0xA409_3822_299F_31D0,
    0x082E_FA98_EC4E_6C89,
);

/// A hash set with the [`FIXED_HASHER`].
pub type FixedHashSet<T> = hashbrown::HashSet<T, ahash::RandomState>;

/// The result of an insert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Insert {
    /// Not there before; now it is.
    New,
    /// Already there.
    Present,
    /// Not there and not inserted: the table is at its budget.
    Full,
    /// Another worker's (an [`OwnedCache`] of the distributed SES): not
    /// looked up here, and not sent lately; the search sends the state
    /// to its owner.
    Elsewhere,
}

/// The state cache as the search loop sees it: the single-threaded
/// [`FingerprintSet`], or a handle on the [`SharedCache`] of a parallel
/// search.
///
/// Contract: `insert` keeps [`FingerprintSet::insert`]'s: `New` exactly
/// once per fingerprint (among all threads), `Present` for every later
/// insert of it, `Full` when the budget stops the cache from growing.
pub(crate) trait StateCache {
    /// Inserts a fingerprint.
    fn insert(&mut self, fp: u64) -> Insert;
    /// The bytes the whole cache holds.
    fn bytes(&self) -> usize;
    /// The bits of each fingerprint the cache keeps (64, or fewer once a
    /// table is compact): the collision bound is computed with them.
    fn fingerprint_bits(&self) -> u32;
    /// Starts loading the slot of `fp` into the CPU cache (a hint).
    fn prefetch(&self, _fp: u64) {}
    /// Whether `fp` is in the cache; `false` if the cache cannot tell
    /// cheaply (the search then only skips an optimisation).
    fn contains(&self, _fp: u64) -> bool {
        false
    }
}

/// Implements [`StateCache`] for `$cache` by its inherent methods.
macro_rules! state_cache_by {
    ($cache:ty) => {
        impl StateCache for $cache {
            #[inline(always)]
            fn insert(&mut self, fp: u64) -> Insert {
                <$cache>::insert(self, fp)
            }
            fn bytes(&self) -> usize {
                <$cache>::bytes(self)
            }
            fn fingerprint_bits(&self) -> u32 {
                <$cache>::fingerprint_bits(self)
            }
            #[inline(always)]
            fn prefetch(&self, fp: u64) {
                <$cache>::prefetch(self, fp)
            }
            #[inline(always)]
            fn contains(&self, fp: u64) -> bool {
                <$cache>::contains(self, fp)
            }
        }
    };
}

state_cache_by!(FingerprintSet);

/// The cache the search runs on: the single-threaded [`FingerprintSet`] or
/// a handle on a parallel search's [`SharedCache`], chosen at run time, so
/// that the search is instantiated once for both (a look-up costs one
/// predictable branch more).
#[derive(Debug)]
pub(crate) enum AnyCache<'a> {
    /// A single-threaded search's.
    Local(FingerprintSet),
    /// A worker's of a parallel search.
    Shared(SharedHandle<'a>),
    /// A worker's of the distributed SES: its own keys, and the keys it
    /// sent lately.
    Owned(OwnedCache),
}

impl AnyCache<'_> {
    /// Whether this cache holds `fp`'s state's key if any cache does: a
    /// distributed worker's owns only its part ([`OwnedCache::owns`]).
    #[inline]
    pub(crate) fn owns(&self, fp: u64) -> bool {
        match self {
            AnyCache::Owned(c) => c.owns(fp),
            AnyCache::Local(_) | AnyCache::Shared(_) => true,
        }
    }
}

impl StateCache for AnyCache<'_> {
    #[inline(always)]
    fn insert(&mut self, fp: u64) -> Insert {
        match self {
            AnyCache::Local(c) => c.insert(fp),
            AnyCache::Shared(c) => c.insert(fp),
            AnyCache::Owned(c) => c.insert(fp),
        }
    }
    fn bytes(&self) -> usize {
        match self {
            AnyCache::Local(c) => c.bytes(),
            AnyCache::Shared(c) => c.bytes(),
            AnyCache::Owned(c) => c.bytes(),
        }
    }
    fn fingerprint_bits(&self) -> u32 {
        match self {
            AnyCache::Local(c) => c.fingerprint_bits(),
            AnyCache::Shared(c) => c.fingerprint_bits(),
            AnyCache::Owned(c) => c.fingerprint_bits(),
        }
    }
    #[inline(always)]
    fn prefetch(&self, fp: u64) {
        match self {
            AnyCache::Local(c) => c.prefetch(fp),
            AnyCache::Shared(c) => c.prefetch(fp),
            AnyCache::Owned(c) => c.prefetch(fp),
        }
    }
    #[inline(always)]
    fn contains(&self, fp: u64) -> bool {
        match self {
            AnyCache::Local(c) => c.contains(fp),
            AnyCache::Shared(c) => c.contains(fp),
            AnyCache::Owned(c) => c.contains(fp),
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::{Insert, StateCache, fingerprint};

    /// Inserts the fingerprints of `0..n` (distinct) into `s`, checking
    /// that the cache never exceeds `budget` bytes and that a fingerprint
    /// answered `Full` is not in it: the fingerprints inserted, and the
    /// first `i` answered `Full`.
    pub(crate) fn fill<S: StateCache>(s: &mut S, n: u64, budget: usize) -> (Vec<u64>, Option<u64>) {
        let mut inserted = Vec::new();
        let mut first_full = None;
        for i in 0..n {
            let fp = fingerprint(&i);
            match s.insert(fp) {
                Insert::New => inserted.push(fp),
                Insert::Full => {
                    first_full.get_or_insert(i);
                    assert!(!s.contains(fp));
                }
                Insert::Present => panic!("distinct fingerprints"),
                Insert::Elsewhere => panic!("one cache owns every key"),
            }
            assert!(s.bytes() <= budget);
        }
        (inserted, first_full)
    }
}
