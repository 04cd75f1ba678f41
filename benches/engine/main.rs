//! Throughput of the exhaustive searches on TwoPhase (the comparison
//! model): distinct states per second of DFS and of SES with each
//! explorer, one thread, on 7 resource managers (296,448 states). Each
//! search's deferrals, peak frontier and memory are printed once before it
//! is timed; then DFS and SES (RR, RTC) on two threads. Beside them the
//! floor ([`floor`]), a search written for TwoPhase alone, at 7 and at 9
//! resource managers (10,340,352 states, where the tables leave the CPU
//! caches): the engine's DFS against it, side by side. Run with
//! `cargo bench --bench engine` (`-- rms9` for the large group only).

mod floor;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use mcheck_checker::search;
use mcheck_checker::{Config, Model, Params, Report};
use mcheck_explorers::builtin;
use mcheck_models::twophase::TwoPhase;

fn twophase(rms: u64) -> <TwoPhase as Model>::Program {
    let info = TwoPhase.info();
    let params = Params::resolve("twophase", &info.params, &[("rms".into(), rms.to_string())]).unwrap();
    TwoPhase.build(&params, None)
}

/// Prints what a DFS run found and what its cache cost (and, on several
/// threads, how its work was spread).
fn describe_dfs(label: &str, r: &Report) {
    println!(
        "twophase rms=7 {label}: {} states, {} transitions, {:.1} MiB cache ({:.1} bytes/state) {}",
        r.states,
        r.transitions,
        r.cache_bytes as f64 / (1 << 20) as f64,
        r.cache_bytes as f64 / r.states as f64,
        r.notes.join("; ")
    );
}

fn engine(c: &mut Criterion) {
    let config = Config::default();
    let mut g = c.benchmark_group("twophase-rms7");
    g.sample_size(10);
    let p = twophase(7);
    let dfs = search::dfs(&p, &config).unwrap();
    g.throughput(Throughput::Elements(dfs.states));
    describe_dfs("dfs", &dfs);
    g.bench_function("dfs", |b| b.iter(|| search::dfs(&p, &config).unwrap()));
    bench_floor(&mut g, 7, &dfs);
    for e in ["rr", "rtc", "prr"] {
        let r = search::ses(&p, builtin(e).unwrap(), &config).unwrap();
        println!(
            "twophase rms=7 ses-{e}: {} states, {} transitions, {} deferrals, peak frontier {}, {} strata, peak search memory {:.1} MiB",
            r.states,
            r.transitions,
            r.deferrals,
            r.peak_frontier,
            r.strata.len(),
            r.peak_search_bytes as f64 / (1 << 20) as f64
        );
        g.bench_function(format!("ses-{e}"), |b| {
            b.iter(|| search::ses(&p, builtin(e).unwrap(), &config).unwrap())
        });
    }
    // Both cores: parallel DFS and SES on the shared cache.
    let two = Config {
        threads: 2,
        ..Config::default()
    };
    describe_dfs("dfs -j 2", &search::dfs(&p, &two).unwrap());
    g.bench_function("dfs-j2", |b| b.iter(|| search::dfs(&p, &two).unwrap()));
    for e in ["rr", "rtc"] {
        g.bench_function(format!("ses-{e}-j2"), |b| {
            b.iter(|| search::ses(&p, builtin(e).unwrap(), &two).unwrap())
        });
    }
    g.finish();
    // Where the tables leave the CPU caches: the engine's DFS and the floor.
    let mut g = c.benchmark_group("twophase-rms9");
    g.sample_size(10);
    let p = twophase(9);
    let dfs = search::dfs(&p, &config).unwrap();
    g.throughput(Throughput::Elements(dfs.states));
    g.bench_function("dfs", |b| b.iter(|| search::dfs(&p, &config).unwrap()));
    bench_floor(&mut g, 9, &dfs);
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

criterion_group!(benches, engine);
criterion_main!(benches);
