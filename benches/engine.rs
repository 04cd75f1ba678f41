//! Throughput of the exhaustive searches on the models: distinct states per second of DFS and of SES with each
//! explorer, one thread. Run with `cargo bench --bench engine`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mcheck_checker::search;
use mcheck_checker::{Config, Model, Params};
use mcheck_explorers::builtin;
use mcheck_models::lostupdate::LostUpdate;

fn lostupdate() -> <LostUpdate as Model>::Program {
    let params = Params::resolve("lostupdate", &LostUpdate.info().params, &[]).unwrap();
    LostUpdate.build(&params, None)
}

fn engine(c: &mut Criterion) {
    let config = Config::default();
    let mut g = c.benchmark_group("lostupdate");
    g.sample_size(10);
    let p = lostupdate();
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
