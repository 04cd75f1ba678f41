//! Throughput of the exhaustive searches on TwoPhase (the comparison
//! model): distinct states per second of DFS and of SES with each
//! explorer, one thread. Run with `cargo bench --bench engine`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mcheck_checker::search;
use mcheck_checker::{Config, Model, Params};
use mcheck_explorers::builtin;
use mcheck_models::twophase::TwoPhase;

fn twophase(rms: u64) -> <TwoPhase as Model>::Program {
    let info = TwoPhase.info();
    let params = Params::resolve("twophase", &info.params, &[("rms".into(), rms.to_string())]).unwrap();
    TwoPhase.build(&params, None)
}

fn engine(c: &mut Criterion) {
    let config = Config::default();
    let mut g = c.benchmark_group("twophase-rms7");
    g.sample_size(10);
    let p = twophase(7);
    let states = search::dfs(&p, &config).unwrap().states;
    g.throughput(Throughput::Elements(states));
    g.bench_function("dfs", |b| b.iter(|| search::dfs(&p, &config).unwrap()));
    for e in ["rr", "rtc", "prr"] {
        g.bench_function(format!("ses-{e}"), |b| {
            b.iter(|| search::ses(&p, builtin(e).unwrap(), &config).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, engine);
criterion_main!(benches);
