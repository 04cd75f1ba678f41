//! Tests of the single-threaded state cache.

use super::*;
use crate::cache::fingerprint;
use crate::cache::fingerprint::ZERO_REPLACEMENT;
use crate::cache::tests::fill;

#[test]
fn new_then_present() {
    let mut s = FingerprintSet::new(None);
    assert!(s.is_empty());
    assert_eq!(s.bytes(), 0);
    assert!(!s.contains(42));
    assert_eq!(s.insert(42), Insert::New);
    assert_eq!(s.insert(42), Insert::Present);
    assert_eq!(s.insert(43), Insert::New);
    assert_eq!(s.len(), 2);
    assert!(s.contains(42) && s.contains(43) && !s.contains(44));
    // 0 is stored as its replacement, never as an empty slot.
    assert_eq!(s.insert(0), Insert::New);
    assert_eq!(s.insert(ZERO_REPLACEMENT), Insert::Present);
    assert!(s.contains(0));
    assert_eq!(s.len(), 3);
    assert_eq!(s.capacity(), INITIAL_SLOTS);
    assert_eq!(s.bytes(), 8192);
}

#[test]
fn growth_keeps_every_element() {
    let mut s = FingerprintSet::new(None);
    let fps: Vec<u64> = (0..100_000u64).map(|i| fingerprint(&i)).collect();
    for (k, &fp) in fps.iter().enumerate() {
        assert_eq!(s.insert(fp), Insert::New);
        assert_eq!(s.len(), k + 1);
        assert!(s.len() <= s.capacity() * 3 / 4);
    }
    // 100,000 entries at most 75% full: 2^18 = 262,144 slots (2^17 holds 98,304).
    assert_eq!(s.capacity(), 262_144);
    assert!(!s.is_full());
    for &fp in &fps {
        assert!(s.contains(fp));
        assert_eq!(s.insert(fp), Insert::Present);
    }
    assert_eq!(s.len(), 100_000);
    // Colliding home slots (all small values map to slot 0) probe on.
    let mut t = FingerprintSet::new(None);
    for x in 1..=5000u64 {
        assert_eq!(t.insert(x), Insert::New);
    }
    for x in 1..=5000u64 {
        assert_eq!(t.insert(x), Insert::Present);
    }
    assert!(!t.contains(5001));
}

/// Inserts the fingerprints of 0..n, checking the budget after each:
/// those inserted, and the first i refused as full.
#[test]
fn budget_is_respected_and_full_is_reported() {
    // 100 KiB: the largest power-of-two table is 8192 slots (64 KiB),
    // full at 90%: 8192 - 819 = 7373 entries.
    let budget = 100 << 10;
    let mut s = FingerprintSet::new(Some(budget));
    let (inserted, first_full) = fill(&mut s, 10_000, budget);
    assert_eq!(first_full, Some(7373));
    assert_eq!(inserted.len(), 7373);
    assert_eq!(s.len(), 7373);
    assert_eq!(s.capacity(), 8192);
    assert_eq!(s.bytes(), 65_536);
    assert!(s.is_full());
    for &fp in &inserted {
        assert_eq!(s.insert(fp), Insert::Present);
    }
    // Nothing fits in less than one slot; a tiny budget is at most it.
    let mut none = FingerprintSet::new(Some(7));
    assert!(none.is_full());
    assert_eq!(none.insert(5), Insert::Full);
    assert_eq!(none.bytes(), 0);
    let mut tiny = FingerprintSet::new(Some(100));
    let results: Vec<Insert> = (1..=20u64).map(|x| tiny.insert(fingerprint(&x))).collect();
    // 8 slots, at most 8 - 1 = 7 entries.
    assert_eq!(results.iter().filter(|&&r| r == Insert::New).count(), 7);
    assert_eq!(tiny.bytes(), 64);
}

#[test]
fn batch_matches_one_by_one() {
    let fps: Vec<u64> = (0..3000u64).map(|i| fingerprint(&(i % 1000))).collect();
    let mut a = FingerprintSet::new(Some(16 << 10));
    let mut b = FingerprintSet::new(Some(16 << 10));
    let one: Vec<Insert> = fps.iter().map(|&fp| a.insert(fp)).collect();
    let mut batch = Vec::new();
    for chunk in fps.chunks(7) {
        b.insert_batch(chunk, &mut batch);
    }
    assert_eq!(one, batch);
    assert_eq!(one.iter().filter(|&&r| r == Insert::New).count(), 1000);
    assert_eq!(a.len(), b.len());
}

#[test]
fn ten_million_states_in_128_mib() {
    const N: u64 = 10_000_000;
    let budget = 128 << 20;
    let mut s = FingerprintSet::new(Some(budget));
    let mut out = Vec::with_capacity(16);
    let mut batch = [0u64; 16];
    for base in (0..N).step_by(16) {
        for (k, b) in batch.iter_mut().enumerate() {
            *b = fingerprint(&(base + k as u64));
        }
        out.clear();
        s.insert_batch(&batch, &mut out);
        assert!(out.iter().all(|&r| r == Insert::New));
    }
    assert_eq!(s.len(), 10_000_000);
    assert!(s.bytes() <= budget);
    // Compact past 32 MiB: 2^19 buckets of 64 bytes, doubled in place
    // once to 2^20 (64 MiB, 12,582,912 fields, 79% full), and the stash
    // (8 MiB of 8-byte slots), 59 bits kept of each fingerprint: 7.55
    // bytes per state (8-byte slots took 2^24 of them: 13.4 bytes per
    // state).
    assert_eq!(s.fingerprint_bits(), 59);
    assert_eq!(s.capacity(), 13_631_488);
    assert_eq!(s.bytes(), 75_497_472);
    assert!(s.bytes_per_entry().is_some_and(|b| b <= 7.55));
    assert!(!s.is_full());
    for i in 0..N {
        assert_eq!(s.insert(fingerprint(&i)), Insert::Present);
    }
    assert_eq!(s.len(), 10_000_000);
}

#[test]
fn sharded_budget_fills_every_shard_and_keeps_every_element() {
    // 8 MiB: 2^20 slots in all; the split gives 64 shards that may grow
    // to 2^14 slots each and fill at 2^14 - 1638 = 14,746 entries.
    let budget = 8 << 20;
    let mut s = FingerprintSet::new(Some(budget));
    let (_, first_full) = fill(&mut s, 1_000_000, budget);
    // Not split: 2^20 slots is the largest table, so one table, full at 90%.
    assert_eq!(s.capacity(), 1 << 20);
    assert_eq!(s.len(), full_load(1 << 20));
    assert_eq!(first_full, Some(full_load(1 << 20) as u64));
    // 64 MiB: split at 2^21 slots; each shard fills on its own.
    let budget = 64 << 20;
    let mut s = FingerprintSet::new(Some(budget));
    let n = 8_000_000u64;
    let (inserted, _) = fill(&mut s, n, budget);
    let full = n - inserted.len() as u64;
    assert_eq!(s.capacity(), 1 << 23);
    assert_eq!(s.bytes(), budget);
    assert!(s.is_full());
    // Every shard is at 90% of 2^17 slots: 64 * 117,965 entries.
    assert_eq!(s.len(), 64 * full_load(1 << 17));
    assert_eq!(full, n - s.len() as u64);
    let present = (0..n).filter(|&i| s.contains(fingerprint(&i))).count();
    assert_eq!(present, s.len());
}

#[test]
fn the_set_turns_compact_where_its_one_table_would_split() {
    // One table of 8-byte slots holds 3/4 of 2^20 = 786,432 fingerprints
    // (8 MiB); the next one would double it past `SPLIT_SLOTS`, so the set
    // moves every entry into 2^19 compact buckets (32 MiB, 59 bits kept)
    // instead of splitting into shards.
    let limit = (SPLIT_SLOTS / 4 * 3) as u64;
    let mut s = FingerprintSet::new(None);
    for i in 0..limit {
        assert_eq!(s.insert(fingerprint(&i)), Insert::New);
    }
    assert_eq!((s.fingerprint_bits(), s.capacity(), s.bytes()), (64, 1 << 20, 8 << 20));
    assert_eq!(s.insert(fingerprint(&limit)), Insert::New);
    // 2^19 buckets of 12 fields, 1.5 per bucket: none overflowed, so the
    // stash has no table yet.
    assert_eq!(
        (s.fingerprint_bits(), s.capacity(), s.bytes()),
        (59, 12 << 19, 32 << 20)
    );
    assert_eq!(s.len(), limit as usize + 1);
    assert!((0..=limit).all(|i| s.insert(fingerprint(&i)) == Insert::Present));
    assert_eq!(s.insert(fingerprint(&(limit + 1))), Insert::New);
    // A set that may not turn compact (a budget below the compact form's
    // 32 MiB of buckets in 7/8 of it) splits into 64 shards there.
    let budget = 32 << 20;
    let mut t = FingerprintSet::new(Some(budget));
    for i in 0..=limit {
        assert_eq!(t.insert(fingerprint(&i)), Insert::New);
    }
    assert_eq!((t.fingerprint_bits(), t.capacity(), t.bytes()), (64, 1 << 21, 16 << 20));
}
