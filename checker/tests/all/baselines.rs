//! The randomized baselines (RS, IRS, PCT): they find reachable planted
//! violations, never report unreachable ones, replay as choice paths, and
//! give the same result on any number of threads.

use mcheck_checker::search::{self, Strategy};
use mcheck_checker::testing::RandomProgram;
use mcheck_checker::{BoundedBy, Config, Outcome, PathKind, Report};
use std::time::Duration;

/// Choice-path replay needs no explorer; this type only names `None`.
type NoExplorer = mcheck_checker::AnyExplorer;

fn strategies() -> [Strategy; 3] {
    [
        Strategy::Rs,
        Strategy::Irs { step: 4 },
        Strategy::Pct { depth: 3, steps: None },
    ]
}

fn config(threads: usize, schedules: u64) -> Config {
    Config::default()
        .threads(threads)
        .max_schedules(schedules)
        .max_steps(200)
        .time_limit(Duration::from_secs(30))
}

fn run(p: &RandomProgram, s: &Strategy, c: &Config) -> Report {
    match s {
        Strategy::Rs => search::rs(p, c),
        Strategy::Irs { step } => search::irs(p, c, *step),
        Strategy::Pct { depth, steps } => search::pct(p, c, *depth, *steps),
        other => panic!("not a baseline: {}", other.name()),
    }
    .unwrap()
}

#[test]
fn found_only_when_reachable_and_replays() {
    let mut found = [0u32; 3];
    let mut reachable = 0;
    for seed in 0..150 {
        let p = RandomProgram::generate(seed, false, true);
        let oracle = p.oracle();
        reachable += u32::from(oracle.violation_reachable);
        for (k, s) in strategies().iter().enumerate() {
            let r = run(&p, s, &config(1, 3000));
            if !oracle.violation_reachable {
                assert_eq!(
                    r.outcome,
                    Outcome::Bounded,
                    "seed {seed} {}: unreachable violation",
                    s.name()
                );
                continue;
            }
            if r.outcome != Outcome::Violation {
                continue;
            }
            found[k] += 1;
            let schedule = r.schedule.unwrap();
            assert_eq!(schedule.kind, PathKind::Choices);
            let ex = mcheck_checker::replay(&p, None::<NoExplorer>, &schedule, false).unwrap();
            assert_eq!(ex.violation.unwrap().step, r.violation.unwrap().step, "seed {seed}");
        }
    }
    // Random walks of 3000 executions find nearly every reachable planted
    // violation of these small systems (at most 200 states).
    assert!(reachable > 60, "only {reachable} systems with a reachable violation");
    for (k, s) in strategies().iter().enumerate() {
        assert!(
            found[k] * 10 >= reachable * 9,
            "{} found {} of {reachable}",
            s.name(),
            found[k]
        );
    }
}

#[test]
fn same_result_on_one_and_two_threads() {
    for seed in 0..40 {
        let p = RandomProgram::generate(seed, false, true);
        for s in strategies() {
            let a = run(&p, &s, &config(1, 500));
            let b = run(&p, &s, &config(2, 500));
            assert_eq!(a.outcome, b.outcome, "seed {seed} {}", s.name());
            assert_eq!(
                (a.schedules, a.steps, a.truncated),
                (b.schedules, b.steps, b.truncated),
                "seed {seed} {}",
                s.name()
            );
            assert_eq!(
                a.schedule.map(|x| x.to_text()),
                b.schedule.map(|x| x.to_text()),
                "seed {seed} {}",
                s.name()
            );
        }
    }
}

#[test]
fn schedule_budget_is_exact() {
    let p = RandomProgram::generate(1, false, false);
    for s in [
        Strategy::Rs,
        Strategy::Pct {
            depth: 2,
            steps: Some(5),
        },
    ] {
        for threads in [1, 2] {
            let r = run(&p, &s, &config(threads, 777));
            assert_eq!(
                (r.outcome, r.bounded_by),
                (Outcome::Bounded, Some(BoundedBy::Schedules))
            );
            assert_eq!(r.schedules, 777, "{}", s.name());
        }
    }
    // IRS: iterations of 3, 9, 27, ... walks; the budget cuts the last.
    let r = run(&p, &Strategy::Irs { step: 4 }, &config(2, 50));
    assert_eq!(r.schedules, 50);
    let per: Vec<u64> = r.strata.iter().map(|s| s.schedules).collect();
    assert_eq!(per, [3, 9, 27, 11]);
}

#[test]
fn shards_partition_the_samples() {
    let p = RandomProgram::generate(2, false, false);
    let whole = run(&p, &Strategy::Rs, &config(1, 900));
    let mut sum = 0;
    for k in 0..3 {
        let c = config(1, 900).shard(k, 3);
        let r = run(&p, &Strategy::Rs, &c);
        assert_eq!(r.shard.as_deref(), Some(format!("{k}/3").as_str()));
        assert_eq!(r.schedules, 300);
        sum += r.steps;
    }
    assert_eq!(sum, whole.steps);
}
