//! Tests of the shared state cache.

use super::*;
use crate::cache::fingerprint;
use crate::cache::set::{full_load, grow_load};

/// Threads insert overlapping ranges while the shards grow from 8 KiB
/// to 16 times that: every fingerprint is `New` exactly once among
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
                    Insert::Elsewhere => panic!("one cache owns every key"),
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
        // Grown: 16 shards of 1,024 slots hold 12,288 entries at most.
        let before = s.bytes();
        assert!(before > 2 * SHARDS * INITIAL_SLOTS * SLOT_BYTES, "{before}");
        // The running count is the tables' own sum, replaced ones included.
        let alive: usize = s.shards.iter().map(Shard::units).sum();
        assert_eq!(before, alive * SLOT_BYTES);
        // SAFETY: the threads are joined; nothing else uses `s`.
        unsafe { s.reclaim() };
        let slots: usize = s.shards.iter().map(|sh| sh.current().map_or(0, Table::units)).sum();
        assert_eq!(s.bytes(), slots * SLOT_BYTES);
        assert!(s.bytes() < before);
        assert!((0..n).all(|i| s.contains(fingerprint(&i))));
    }
}

/// A budget of 64 KiB gives each shard 4 KiB: 512 slots, full at
/// 512 - 51 = 461 entries; the cache never exceeds the budget.
#[test]
fn budget_is_shared_among_the_shards() {
    let budget = 64 << 10;
    let s = SharedCache::new(Some(budget));
    let news = (0..100_000u64)
        .filter(|i| s.insert(fingerprint(i)) == Insert::New)
        .count();
    assert_eq!(news, 16 * 461);
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

/// A shard stays an 8-byte table up to [`PLAIN_MAX_SLOTS`] slots (3/4
/// full: 49,152 entries) and turns compact at the next entry, the
/// first shard to get there first; the others stay plain.
#[test]
fn a_shard_turns_compact_past_its_largest_plain_table() {
    let s = SharedCache::new(None);
    let limit = PLAIN_MAX_SLOTS / 4 * 3;
    assert_eq!(limit, 49_152);
    let mut per_shard = [0usize; SHARDS];
    for i in 0u64.. {
        let fp = fingerprint(&i);
        assert_eq!(s.insert(fp), Insert::New);
        let k = SharedCache::index(key(fp));
        per_shard[k] += 1;
        if s.fingerprint_bits() == 59 {
            assert_eq!(per_shard[k], limit + 1);
            let size = |k: usize| s.shards[k].current().map(Table::size);
            assert_eq!(size(k), Some(Size::Compact(A_MIN)));
            assert!((0..SHARDS).all(|j| j == k || size(j) == Some(Size::Plain(PLAIN_MAX_SLOTS))));
            assert!(per_shard.iter().all(|&c| c <= limit + 1));
            break;
        }
        assert!(per_shard[k] <= limit, "shard {k} still plain past its limit");
    }
}

/// A handle counts a compact shard's new entries on its own and adds
/// them to the shard's count every [`BATCH`] and when dropped, yet its
/// shard grows at the very entry where counting each at once grows it:
/// shard 0 of two caches takes the same 360,000 fingerprints, directly
/// and (all but ten) through a handle, turning compact past 49,152
/// entries and doubling at 7/8 of 2^15 buckets of 12 fields (344,064) or
/// when the stash fills, whichever comes first.
#[test]
fn a_handle_counts_in_batches_and_grows_where_direct_inserts_do() {
    let n = 360_000;
    let fps: Vec<u64> = (0u64..)
        .map(|i| fingerprint(&i))
        .filter(|&fp| SharedCache::index(key(fp)) == 0)
        .take(n)
        .collect();
    let (direct, batched) = (SharedCache::new(None), SharedCache::new(None));
    let size = |s: &SharedCache| s.shards[0].current().map(Table::size);
    let mut h = batched.handle();
    let mut sizes = vec![size(&direct)];
    for (i, &fp) in fps.iter().enumerate() {
        assert_eq!(direct.insert(fp), Insert::New);
        // Ten entries counted at once put the handle's batches out of
        // step with the table's sizes (all multiples of 64).
        let through = if (100_000..100_010).contains(&i) {
            batched.insert(fp)
        } else {
            h.insert(fp)
        };
        assert_eq!(through, Insert::New);
        assert_eq!(size(&batched), size(&direct), "after {} entries", i + 1);
        assert_eq!(direct.len(), i + 1);
        let pending = i + 1 - batched.len();
        if sizes.last() != Some(&size(&direct)) {
            sizes.push(size(&direct));
            // The insert that grew the table counted all before it: the
            // new table's first entry (the handle's) is the only one
            // pending.
            assert_eq!(pending, usize::from(i + 1 > 49_152), "after {} entries", i + 1);
        } else if matches!(size(&direct), Some(Size::Plain(_))) {
            assert_eq!(pending, 0);
        } else {
            assert!(pending < BATCH as usize);
        }
    }
    let plain_max = Some(Size::Plain(PLAIN_MAX_SLOTS));
    let (compact, doubled) = (Some(Size::Compact(A_MIN)), Some(Size::Compact(A_MIN + 1)));
    assert_eq!(sizes[sizes.len() - 3..], [plain_max, compact, doubled]);
    drop(h);
    assert_eq!(batched.len(), n);
    assert!(fps.iter().all(|&fp| batched.contains(fp)));
}

/// Two threads insert 6 million fingerprints, each in its own order:
/// every shard (375,000 entries) turns compact (past 49,152) and
/// doubles once more (past 344,064 at the latest); still every
/// fingerprint is `New` exactly once and found afterwards, and the
/// cache keeps 59 bits of each. One thread inserts through a handle
/// (which counts a compact shard's new entries in batches), the other
/// counts each at once; once the handle is dropped the count is exact.
#[test]
fn shards_turn_compact_and_grow_under_racing_inserts() {
    let n = 6_000_000u64;
    let s = SharedCache::new(None);
    assert_eq!(s.fingerprint_bits(), 64);
    let news: Vec<u64> = std::thread::scope(|sc| {
        let run = |forwards: bool| {
            let s = &s;
            move || {
                if forwards {
                    let mut h = s.handle();
                    (0..n).filter(|i| h.insert(fingerprint(i)) == Insert::New).collect()
                } else {
                    (0..n)
                        .rev()
                        .filter(|i| s.insert(fingerprint(i)) == Insert::New)
                        .collect::<Vec<_>>()
                }
            }
        };
        let (a, b) = (sc.spawn(run(true)), sc.spawn(run(false)));
        let mut all = a.join().expect("thread");
        all.extend(b.join().expect("thread"));
        all
    });
    assert_eq!(news.len() as u64, n);
    let mut news = news;
    news.sort_unstable();
    assert!(news.iter().copied().eq(0..n));
    assert_eq!(s.len() as u64, n);
    assert_eq!(s.fingerprint_bits(), 59);
    // SAFETY: the threads are joined; nothing else uses `s`.
    unsafe { s.reclaim() };
    assert!((0..n).all(|i| s.contains(fingerprint(&i))));
    assert_eq!((n..n + 100_000).filter(|i| s.contains(fingerprint(i))).count(), 0);
    // Every shard at 2^16 buckets of 64 bytes and a stash of 2^16
    // 8-byte slots: 16 * (4 MiB + 512 KiB), 12.6 bytes per entry.
    assert!(
        s.shards
            .iter()
            .all(|sh| sh.current().map(Table::size) == Some(Size::Compact(16)))
    );
    assert_eq!(s.bytes(), 16 * ((64 << 16) + (8 << 16)));
    assert!(
        (0..n)
            .step_by(997)
            .all(|i| s.insert(fingerprint(&i)) == Insert::Present)
    );
}

/// While another thread holds a shard's lock (as a growth does), inserts
/// into the shard do not wait: they go on past the limit that starts a
/// growth (768 of the first table's 1,024 slots) up to the hard one (90%:
/// 922), and only the next one waits, until the lock is let go; then the
/// shard grows and takes it.
#[test]
fn inserts_go_on_past_the_limit_while_a_shard_grows() {
    use std::sync::mpsc::{RecvTimeoutError, channel};
    use std::time::Duration;
    let s = SharedCache::new(None);
    let mut of_shard_0 = (0u64..)
        .map(|i| fingerprint(&i))
        .filter(|&fp| SharedCache::index(key(fp)) == 0);
    let first: Vec<u64> = of_shard_0.by_ref().take(922).collect();
    let last = of_shard_0.next().expect("endless");
    assert_eq!((grow_load(INITIAL_SLOTS), full_load(INITIAL_SLOTS)), (768, 922));
    std::thread::scope(|sc| {
        let growing = s.shards[0].lock();
        let (tx, rx) = channel();
        let s = &s;
        sc.spawn(move || {
            let news = first.iter().filter(|&&fp| s.insert(fp) == Insert::New).count();
            tx.send(news).expect("receiver");
            tx.send(usize::from(s.insert(last) == Insert::New)).expect("receiver");
        });
        assert_eq!(rx.recv_timeout(Duration::from_secs(60)), Ok(922));
        assert_eq!(s.len(), 922);
        assert_eq!(s.shards[0].current().map(Table::size), Some(Size::Plain(INITIAL_SLOTS)));
        // The 923rd waits for the lock.
        assert_eq!(
            rx.recv_timeout(Duration::from_millis(300)),
            Err(RecvTimeoutError::Timeout)
        );
        drop(growing);
        assert_eq!(rx.recv_timeout(Duration::from_secs(60)), Ok(1));
    });
    assert_eq!(
        s.shards[0].current().map(Table::size),
        Some(Size::Plain(2 * INITIAL_SLOTS))
    );
    assert_eq!(s.len(), 923);
    assert!(
        (0u64..)
            .map(|i| fingerprint(&i))
            .filter(|&fp| SharedCache::index(key(fp)) == 0)
            .take(923)
            .all(|fp| s.contains(fp))
    );
}

/// While a growth builds a shard's next table (its lock held, the old
/// table frozen), inserts do not wait: a fingerprint of the frozen table
/// is `Present`, a new one goes to the side set, `New` exactly once among
/// two threads, up to the set's room; the growth adds the side set to the
/// next table before it publishes it, and every fingerprint is found
/// there.
#[test]
fn inserts_during_a_growth_go_to_the_side_set() {
    use std::sync::mpsc::channel;
    use std::time::Duration;
    let s = SharedCache::new(None);
    let of_shard_0: Vec<u64> = (0u64..)
        .map(|i| fingerprint(&i))
        .filter(|&fp| SharedCache::index(key(fp)) == 0)
        .take(800)
        .collect();
    let (old, new) = of_shard_0.split_at(500);
    assert!(old.iter().all(|&fp| s.insert(fp) == Insert::New));
    let shard = &s.shards[0];
    let mut tables = shard.lock();
    let frozen = shard.current().expect("a table");
    let entries = shard.freeze(frozen, 500, 300);
    assert_eq!(entries.len(), 500);
    let news = std::thread::scope(|sc| {
        let (tx, rx) = channel();
        for forwards in [true, false] {
            let (tx, s) = (tx.clone(), &s);
            sc.spawn(move || {
                let mut order: Vec<u64> = old.iter().chain(new).copied().collect();
                if !forwards {
                    order.reverse();
                }
                let news: Vec<u64> = order.into_iter().filter(|&fp| s.insert(fp) == Insert::New).collect();
                tx.send(news).expect("receiver");
            });
        }
        let mut news: Vec<u64> = (0..2)
            .flat_map(|_| {
                rx.recv_timeout(Duration::from_secs(60))
                    .expect("inserts wait for no growth")
            })
            .collect();
        news.sort_unstable();
        news
    });
    let mut want: Vec<u64> = new.iter().map(|&fp| key(fp)).collect();
    want.sort_unstable();
    assert_eq!(news.iter().map(|&fp| key(fp)).collect::<Vec<_>>(), want);
    assert_eq!(s.len(), 800);
    assert!(of_shard_0.iter().all(|&fp| s.contains(fp)));
    assert!(!s.contains(fingerprint(&u64::MAX)));
    assert_eq!(lock(&shard.side).set.len(), 300);
    // Its room (300) taken, the next new one waits for the growth, then
    // goes to the new table.
    let extra = (0u64..)
        .map(|i| fingerprint(&i))
        .filter(|&fp| SharedCache::index(key(fp)) == 0)
        .nth(800)
        .expect("endless");
    std::thread::scope(|sc| {
        let (tx, rx) = channel();
        let s = &s;
        sc.spawn(move || tx.send(s.insert(extra)).expect("receiver"));
        assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
        let next = Table::with_entries(Size::Plain(2 * INITIAL_SLOTS), false, &entries);
        shard.publish(next, &mut tables);
        drop(tables);
        assert_eq!(rx.recv_timeout(Duration::from_secs(60)), Ok(Insert::New));
    });
    assert!(lock(&shard.side).set.is_empty());
    assert_eq!(shard.current().map(Table::size), Some(Size::Plain(2 * INITIAL_SLOTS)));
    assert!(of_shard_0.iter().all(|&fp| s.insert(fp) == Insert::Present));
    assert_eq!(s.insert(extra), Insert::Present);
    assert_eq!(s.len(), 801);
}
