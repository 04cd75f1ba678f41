//! Linearizability checking of one long history (ARCHITECTURE.md, "Linearizability"): 1,000
//! operations on 10 keys from 8 clients, linearizable (the search must
//! find a full linearization) and with one stale read (it must exhaust the
//! failing key). Target: under 100 ms each.

use criterion::{Criterion, criterion_group, criterion_main};
use mcheck_checker::lin::{History, KvMap, KvOp, KvRet, SequentialSpec, check};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::hint::black_box;

const OPS: usize = 1_000;
const KEYS: u64 = 10;
const CLIENTS: u32 = 8;

/// A history of a simulated map: each of 8 clients invokes an operation,
/// which takes effect at a random later moment and returns at a random
/// moment after that, until 1,000 operations were invoked (every one
/// returns). With `stale`, the last read of key 0 returns the value before
/// the last write of it that returned first.
fn history(seed: u64) -> History<KvMap> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let spec = KvMap;
    let mut state = spec.init();
    let mut h = History::new();
    let mut clients: Vec<Option<(KvOp, Option<KvRet>)>> = vec![None; CLIENTS as usize];
    let mut invoked = 0;
    let mut value = 0;
    while invoked < OPS || clients.iter().any(Option::is_some) {
        let c = rng.random_range(0..CLIENTS) as usize;
        match clients[c].take() {
            None if invoked < OPS => {
                let key = rng.random_range(0..KEYS);
                let op = if rng.random_range(0..2) == 0 {
                    KvOp::Get(key)
                } else {
                    value += 1;
                    KvOp::Put(key, value)
                };
                h.invoke(c as u32, op);
                clients[c] = Some((op, None));
                invoked += 1;
            }
            None => {}
            Some((op, None)) => {
                let (next, ret) = spec.apply(&state, &op);
                state = next;
                clients[c] = Some((op, Some(ret)));
            }
            Some((_, Some(ret))) => h.respond(c as u32, ret),
        }
    }
    h
}

/// The history with a final stale read of a key: a put of a new value
/// returns, then a get of the same key returns the initial none.
fn stale(seed: u64) -> History<KvMap> {
    let mut h = history(seed);
    h.invoke(0, KvOp::Put(0, 1_000_000));
    h.respond(0, KvRet::Ok);
    h.invoke(1, KvOp::Get(0));
    h.respond(1, KvRet::Value(None));
    h
}

fn bench(c: &mut Criterion) {
    let ok = history(1);
    assert!(check(&KvMap, &ok).expect("well formed").is_ok());
    let bad = stale(1);
    assert!(check(&KvMap, &bad).expect("well formed").is_err());
    let mut g = c.benchmark_group("lin");
    g.bench_function("kv_1000_ops_10_keys_8_clients", |b| {
        b.iter(|| check(&KvMap, black_box(&ok)).expect("well formed").is_ok())
    });
    g.bench_function("kv_1000_ops_stale_read", |b| {
        b.iter(|| check(&KvMap, black_box(&bad)).expect("well formed").is_err())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
