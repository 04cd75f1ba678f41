//! The shared state cache of a parallel search: [`SharedCache`].

use super::{FingerprintSet, Insert};
use std::sync::{Mutex, MutexGuard};

/// The number of shards of [`SharedCache`] (a power of two).
const SHARDS: usize = 64;

/// The shared state cache of a parallel search: fingerprints spread over
/// 64 shards by their low bits (a [`FingerprintSet`] places them by their
/// high bits), each a [`FingerprintSet`] behind a mutex with an equal
/// share of the budget. Each shard grows on demand, so that a large
/// budget does not allocate (and touch) the whole table up front.
///
/// Contract: among all threads, exactly one insert of a fingerprint answers
/// [`Insert::New`]; a shard at its share of the budget answers
/// [`Insert::Full`] for new fingerprints (sound: the search re-explores).
#[derive(Debug)]
pub struct SharedCache {
    shards: Box<[Mutex<FingerprintSet>]>,
}

impl SharedCache {
    /// An empty cache of at most `budget` bytes (`None`: no limit).
    pub fn new(budget: Option<usize>) -> Self {
        let share = budget.map(|b| b / SHARDS);
        SharedCache {
            shards: (0..SHARDS).map(|_| Mutex::new(FingerprintSet::new(share))).collect(),
        }
    }

    /// The shard of `fp`.
    #[inline]
    fn index(fp: u64) -> usize {
        fp as usize & (SHARDS - 1)
    }

    fn shard(&self, i: usize) -> MutexGuard<'_, FingerprintSet> {
        // A panic while holding a shard cannot leave it inconsistent for
        // readers that only insert: take the guard even if poisoned.
        self.shards[i].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Inserts `fp` (see the type's contract).
    #[inline]
    pub fn insert(&self, fp: u64) -> Insert {
        self.shard(Self::index(fp)).insert(fp)
    }

    /// Whether `fp` is in the cache.
    #[inline]
    pub fn contains(&self, fp: u64) -> bool {
        self.shard(Self::index(fp)).contains(fp)
    }

    /// Hints the CPU to fetch the slot of `fp`: only when its shard is
    /// free, so it never waits.
    #[inline]
    pub fn prefetch(&self, fp: u64) {
        if let Ok(shard) = self.shards[Self::index(fp)].try_lock() {
            shard.prefetch(fp);
        }
    }

    /// The number of fingerprints in the cache.
    pub fn len(&self) -> usize {
        (0..SHARDS).map(|i| self.shard(i).len()).sum()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The fewest fingerprint bits any shard keeps
    /// ([`FingerprintSet::fingerprint_bits`]).
    pub fn fingerprint_bits(&self) -> u32 {
        (0..SHARDS)
            .map(|i| self.shard(i).fingerprint_bits())
            .min()
            .unwrap_or(64)
    }

    /// The bytes allocated by all shards.
    pub fn bytes(&self) -> usize {
        (0..SHARDS).map(|i| self.shard(i).bytes()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::fingerprint;

    /// Two threads insert overlapping ranges: every fingerprint is `New`
    /// exactly once among them.
    #[test]
    fn each_fingerprint_is_new_once_among_threads() {
        let s = SharedCache::new(None);
        let run = |range: Vec<u64>| {
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
        let (a, b) = std::thread::scope(|sc| {
            let a = sc.spawn(|| run((0..60_000).collect()));
            let b = sc.spawn(|| run((40_000..100_000).rev().collect()));
            (a.join().expect("thread A"), b.join().expect("thread B"))
        });
        assert_eq!(s.len(), 100_000);
        let mut all: Vec<u64> = a.into_iter().chain(b).collect();
        all.sort_unstable();
        assert_eq!(all, (0..100_000).collect::<Vec<u64>>());
        assert!((0..100_000u64).all(|i| s.contains(fingerprint(&i))));
        assert!(!s.contains(fingerprint(&100_000u64)));
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
    }
}
