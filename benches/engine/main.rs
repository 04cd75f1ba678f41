//! Throughput of the exhaustive searches on `twophase-packed` (TwoPhase
//! packed into a `u64`, the comparison model): distinct states per second of DFS and of SES with each
//! explorer, one thread, on 7 resource managers (296,448 states). Each
//! search's deferrals, peak frontier and memory are printed once before it
//! is timed; then DFS and SES (RR, RTC) on two threads. Beside them the
//! floor ([`floor`]), a search written for TwoPhase alone, at 7 and at 9
//! resource managers (10,340,352 states, where the tables leave the CPU
//! caches): the engine's DFS against it, side by side; and the SES floor
//! ([`floor_ses`], round robin), the engine's SES with round robin
//! against it. SES runs on each explorer's own type, as `mcheck run`
//! does. Last, the parallel search's shared cache alone: distinct
//! fingerprints inserted on one and on two threads. Run with `cargo bench -p mcheck-bench --bench engine` (`-- rms9` for the
//! large group only).

mod floor;
mod floor_ses;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use mcheck_checker::cache::{SharedCache, fingerprint};
use mcheck_checker::explorers::{ProbabilisticRoundRobin, RoundRobin, RunToCompletion};
use mcheck_checker::search;
use mcheck_checker::{Config, Explorer, Model, Params, Report};
use mcheck_models::twophase_packed::TwoPhasePacked;
use std::hint::black_box;

fn twophase(rms: u64) -> <TwoPhasePacked as Model>::Program {
    let info = TwoPhasePacked.info();
    let params = Params::resolve(info.name, &info.params, &[("rms".into(), rms.to_string())]).unwrap();
    TwoPhasePacked.build(&params, None)
}

/// Prints what a DFS run found and what its cache cost (and, on several
/// threads, how its work was spread).
fn describe_dfs(label: &str, r: &Report) {
    println!(
        "twophase-packed rms=7 {label}: {} states, {} transitions, {:.1} MiB cache ({:.1} bytes/state) {}",
        r.states,
        r.transitions,
        r.cache_bytes as f64 / (1 << 20) as f64,
        r.cache_bytes as f64 / r.states as f64,
        r.notes.join("; ")
    );
}

fn engine(c: &mut Criterion) {
    let config = Config::default();
    let mut g = c.benchmark_group("twophase-packed-rms7");
    g.sample_size(10);
    let p = twophase(7);
    let dfs = search::dfs(&p, &config).unwrap();
    g.throughput(Throughput::Elements(dfs.states));
    describe_dfs("dfs", &dfs);
    g.bench_function("dfs", |b| b.iter(|| search::dfs(&p, &config).unwrap()));
    bench_floor(&mut g, 7, &dfs);
    let rr = bench_ses(&mut g, &p, RoundRobin::new(), &config);
    bench_ses_floor(&mut g, 7, &rr);
    bench_ses(&mut g, &p, RunToCompletion::new(), &config);
    bench_ses(&mut g, &p, ProbabilisticRoundRobin::new(0), &config);
    // Both cores: parallel DFS and SES on the shared cache.
    let two = Config::default().threads(2);
    describe_dfs("dfs -j 2", &search::dfs(&p, &two).unwrap());
    g.bench_function("dfs-j2", |b| b.iter(|| search::dfs(&p, &two).unwrap()));
    g.bench_function("ses-rr-j2", |b| {
        b.iter(|| search::ses(&p, RoundRobin::new(), &two).unwrap())
    });
    g.bench_function("ses-rtc-j2", |b| {
        b.iter(|| search::ses(&p, RunToCompletion::new(), &two).unwrap())
    });
    g.finish();
    // Where the tables leave the CPU caches: the engine's DFS and the floor.
    let mut g = c.benchmark_group("twophase-packed-rms9");
    g.sample_size(10);
    let p = twophase(9);
    let dfs = search::dfs(&p, &config).unwrap();
    g.throughput(Throughput::Elements(dfs.states));
    g.bench_function("dfs", |b| b.iter(|| search::dfs(&p, &config).unwrap()));
    bench_floor(&mut g, 9, &dfs);
    let rr = search::ses(&p, RoundRobin::new(), &config).unwrap();
    g.bench_function("ses-rr", |b| {
        b.iter(|| search::ses(&p, RoundRobin::new(), &config).unwrap())
    });
    bench_ses_floor(&mut g, 9, &rr);
    g.finish();
}

/// SES with `explorer` (on its own type) on `p`, twophase-packed with 7 RMs:
/// its counts printed once, then timed; returns the report.
fn bench_ses<E: Explorer + Clone>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    p: &<TwoPhasePacked as Model>::Program,
    explorer: E,
    config: &Config,
) -> Report {
    let e = explorer.name().to_string();
    let r = search::ses(p, explorer.clone(), config).unwrap();
    println!(
        "twophase-packed rms=7 ses-{e}: {} states, {} transitions, {} deferrals, peak frontier {}, {} strata, peak search memory {:.1} MiB",
        r.states,
        r.transitions,
        r.deferrals,
        r.peak_frontier,
        r.strata.len(),
        r.peak_search_bytes as f64 / (1 << 20) as f64
    );
    g.bench_function(format!("ses-{e}"), |b| {
        b.iter(|| search::ses(p, explorer.clone(), config).unwrap())
    });
    r
}

/// The parallel search's shared cache alone: 4 million distinct
/// fingerprints inserted into an empty cache (which grows from its first
/// tables and turns compact on the way), on one thread and split between
/// two, each thread through its own handle and each insert's slot
/// prefetched 16 inserts ahead, as the search's workers do.
fn shared_cache(c: &mut Criterion) {
    const N: u64 = 4_000_000;
    let mut g = c.benchmark_group("shared-cache");
    g.sample_size(10);
    g.throughput(Throughput::Elements(N));
    for threads in [1u64, 2] {
        g.bench_function(format!("insert-new-{threads}t"), |b| {
            b.iter(|| {
                let cache = SharedCache::new(None);
                std::thread::scope(|sc| {
                    for k in 0..threads {
                        let cache = &cache;
                        sc.spawn(move || {
                            let mut cache = cache.handle();
                            let fp = |i: u64| fingerprint(&(i * threads + k));
                            for i in 0..N / threads {
                                cache.prefetch(fp(i + 16));
                                black_box(cache.insert(fp(i)));
                            }
                        });
                    }
                });
                assert_eq!(cache.len() as u64, N);
            })
        });
    }
    g.finish();
}

/// The floor at `rms` resource managers, pipelined and not, once its
/// counts are checked against those of the engine's DFS (`dfs`: states,
/// and transitions, which are TLC's).
fn bench_floor(g: &mut BenchmarkGroup<'_, WallTime>, rms: u32, dfs: &Report) {
    let floor = floor::Floor::new(rms);
    let counts = floor.search(true);
    assert_eq!(
        (counts.states, counts.transitions),
        (dfs.states, dfs.transitions),
        "the floor and the engine disagree on TwoPhase with {rms} RMs"
    );
    assert_eq!(floor.search(false), counts, "the floor's two loops disagree");
    g.bench_function("floor", |b| b.iter(|| floor.search(true)));
    g.bench_function("floor-unpipelined", |b| b.iter(|| floor.search(false)));
}

/// The SES floor at `rms` resource managers, once its counts in every
/// stratum are checked against those of the engine's SES with round robin
/// (`rr`).
fn bench_ses_floor(g: &mut BenchmarkGroup<'_, WallTime>, rms: u32, rr: &Report) {
    let floor = floor_ses::SesFloor::new(rms);
    let strata: Vec<_> = floor
        .search(true)
        .iter()
        .map(|s| (s.states, s.transitions, s.deferrals))
        .collect();
    let engine: Vec<_> = rr
        .strata
        .iter()
        .map(|s| (s.new_states, s.transitions, s.deferrals))
        .collect();
    assert_eq!(
        strata, engine,
        "the SES floor and the engine disagree on TwoPhase with {rms} RMs"
    );
    g.bench_function("ses-floor", |b| b.iter(|| floor.search(true)));
}

criterion_group!(benches, engine, shared_cache);
criterion_main!(benches);
