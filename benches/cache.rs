//! State-cache micro-benchmarks: fingerprinting, single inserts against
//! batched (prefetched) inserts into a table far larger than the CPU cache,
//! with the workload of ARCHITECTURE.md, "The state cache" (most successors already present).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcheck_checker::cache::{FingerprintSet, Insert, fingerprint};
use std::hint::black_box;

/// Entries in the prefilled table (64 MiB table at about 60% load).
const PREFILL: u64 = 5_000_000;
/// Look-ups per measured iteration.
const OPS: u64 = 1 << 16;

/// A table holding the fingerprints of 0..PREFILL.
fn prefilled() -> FingerprintSet {
    let mut s = FingerprintSet::new(Some(64 << 20));
    for i in 0..PREFILL {
        s.insert(fingerprint(&i));
    }
    s
}

/// Fingerprints of which about 92% are present (as in TwoPhase: ARCHITECTURE.md, "Performance design").
fn workload() -> Vec<u64> {
    (0..OPS)
        .map(|k| {
            let i = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) % PREFILL;
            if k % 25 < 2 {
                fingerprint(&(PREFILL + k))
            } else {
                fingerprint(&i)
            }
        })
        .collect()
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("cache");
    g.throughput(Throughput::Elements(OPS));
    g.bench_function("fingerprint_tuple", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for i in 0..OPS {
                acc ^= fingerprint(&(i as u32, i, [i as u8; 6]));
            }
            black_box(acc)
        })
    });
    // The same table serves every iteration: the ~8% new fingerprints are
    // new in the first one only, so this measures mostly-present look-ups.
    let mut table = prefilled();
    let fps = workload();
    g.bench_function("insert_one_by_one", |b| {
        b.iter(|| {
            let mut news = 0u32;
            for &fp in &fps {
                news += u32::from(table.insert(fp) == Insert::New);
            }
            black_box(news)
        })
    });
    g.bench_function("insert_batch_16", |b| {
        let mut out = Vec::with_capacity(16);
        b.iter(|| {
            let mut news = 0u32;
            for chunk in fps.chunks(16) {
                out.clear();
                table.insert_batch(chunk, &mut out);
                news += out.iter().filter(|&&r| r == Insert::New).count() as u32;
            }
            black_box(news)
        })
    });
    // As in the search: each fingerprint comes from hashing a state (here
    // a 64-byte array), so the out-of-order window reaches fewer look-ups.
    let states: Vec<[u64; 8]> = (0..OPS)
        .map(|k| {
            let i = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) % PREFILL;
            [i, i ^ 1, i + 2, 3, 4, 5, 6, i * 7]
        })
        .collect();
    g.bench_function("hash_and_insert_one_by_one", |b| {
        b.iter(|| {
            let mut news = 0u32;
            for st in &states {
                news += u32::from(table.insert(fingerprint(st)) == Insert::New);
            }
            black_box(news)
        })
    });
    let mut out = Vec::with_capacity(16);
    let mut batch = [0u64; 16];
    g.bench_function("hash_and_insert_batch_16", |b| {
        b.iter(|| {
            let mut news = 0u32;
            for chunk in states.chunks(16) {
                for (f, st) in batch.iter_mut().zip(chunk) {
                    *f = fingerprint(st);
                }
                out.clear();
                table.insert_batch(&batch[..chunk.len()], &mut out);
                news += out.iter().filter(|&&r| r == Insert::New).count() as u32;
            }
            black_box(news)
        })
    });
    g.finish();
}

criterion_group! {
    name = cache;
    config = Criterion::default().sample_size(20);
    targets = benches
}
criterion_main!(cache);
