//! Stratified sampling throughput: schedules/s and steps/s on a random
//! cyclic transition system, with one thread and with every core.
//! Short on purpose: `cargo bench -p mcheck-bench --bench sampling -- --quick`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcheck_checker::Config;
use mcheck_checker::search::{SsParams, ss};
use mcheck_checker::testing::{Causal, RandomProgram};
use std::time::Duration;

fn config(threads: usize) -> Config {
    Config::default()
        .max_steps(200)
        .max_schedules(4000)
        .max_delays(20)
        .time_limit(Duration::from_secs(60))
        .max_memory(1 << 30)
        .seed(1)
        .threads(threads)
}

fn sampling(c: &mut Criterion) {
    let p = RandomProgram::generate(3, false, false);
    let params = SsParams::paper();
    let all = config(0).worker_threads();
    for threads in [1, all] {
        // Deterministic: every run executes the same samples and steps.
        let r = ss(&p, Causal::default(), &config(threads), &params).expect("ss runs");
        for (unit, count) in [("schedules", r.schedules), ("steps", r.steps)] {
            let mut g = c.benchmark_group(format!("ss_{unit}"));
            g.sample_size(10).measurement_time(Duration::from_secs(2));
            g.throughput(Throughput::Elements(count));
            g.bench_function(format!("threads_{threads}"), |b| {
                b.iter(|| ss(&p, Causal::default(), &config(threads), &params).expect("ss runs"))
            });
            g.finish();
        }
    }
}

criterion_group!(benches, sampling);
criterion_main!(benches);
