//! The hybrid strategy: SES's outcome when its state budget suffices,
//! planted violations found (never an unreachable one) with replaying
//! counterexamples, and the same report on 1 and 2 threads.

use mcheck_checker::search::{self, HybridParams, SsParams};
use mcheck_checker::testing::{Causal, RandomProgram};
use mcheck_checker::{Config, Outcome, PathKind, Report, Schedule};
use std::time::Duration;

fn quiet() -> Config {
    Config::default()
        .max_memory(1 << 30)
        .max_steps(200)
        .time_limit(Duration::from_secs(600))
}

fn params(ses_states: u64) -> HybridParams {
    HybridParams::default()
        .ses_states(ses_states)
        .ss(SsParams::paper().c1(20.0))
}

fn hybrid(p: &RandomProgram, ses_states: u64, config: &Config) -> Report {
    search::hybrid(p, Causal::default(), config, &params(ses_states)).unwrap()
}

/// The report without its times and memory figures.
fn shape(r: &Report) -> String {
    let mut r = r.clone();
    r.elapsed_s = 0.0;
    r.peak_memory_mb = 0.0;
    r.peak_search_bytes = 0;
    r.threads = 0;
    for s in &mut r.strata {
        s.elapsed_s = 0.0;
    }
    format!("{r:?}")
}

/// Replays the report's schedule (through its text form) and checks that
/// it reproduces the reported violation at the same step.
fn assert_replays(p: &RandomProgram, r: &Report, what: &str) {
    let mut schedule = r.schedule.clone().expect("a schedule");
    assert_eq!(schedule.kind, PathKind::Delays, "{what}");
    schedule.model = "random".into();
    let schedule = Schedule::from_text(&schedule.to_text()).unwrap();
    let ex = mcheck_checker::replay(p, Some(Causal::default()), &schedule, true).unwrap();
    let want = r.violation.clone().unwrap();
    assert_eq!(ex.violation, Some(want.clone()), "{what}: {}", schedule.to_text());
    assert_eq!(ex.trace.len(), want.step + 1, "{what}");
}

/// With a state budget above the reachable states, hybrid is SES: the
/// same report (but for its name and times) on every system.
#[test]
fn inside_its_budget_hybrid_is_ses() {
    for seed in 0..300u64 {
        let p = RandomProgram::generate(seed, false, seed % 2 == 0);
        let config = quiet();
        let ses = search::ses(&p, Causal::default(), &config).unwrap();
        let states = p.oracle().reachable.len() as u64;
        let mut h = hybrid(&p, states + 1, &config);
        assert_eq!(h.strategy, "hybrid");
        h.strategy = "ses".into();
        assert_eq!(shape(&h), shape(&ses), "seed {seed}");
        if ses.outcome != Outcome::Violation {
            assert_eq!(ses.states, states, "seed {seed}");
        }
    }
}

/// With a budget of a fifth of the reachable states, hybrid switches to
/// sampling on most systems; it reports a violation only when one is
/// reachable (the BFS oracle), finds most of them, and every
/// counterexample replays from the initial state.
#[test]
fn planted_violations_are_found_from_the_frontier_and_replay() {
    let (mut switched, mut found, mut reachable) = (0, 0, 0);
    for seed in 0..200u64 {
        let p = RandomProgram::generate(seed, false, true);
        let oracle = p.oracle();
        let budget = (oracle.reachable.len() as u64 / 5).max(2);
        let config = quiet().max_schedules(2_000);
        let r = hybrid(&p, budget, &config);
        let sampled = r.notes.iter().any(|n| n.starts_with("hybrid: SES reached"));
        switched += u32::from(sampled);
        reachable += u32::from(oracle.violation_reachable);
        if r.is_violation() {
            assert!(oracle.violation_reachable, "seed {seed}: an unreachable violation");
            found += 1;
            assert_replays(&p, &r, &format!("seed {seed}"));
        } else if sampled {
            assert_eq!(r.outcome, Outcome::Bounded, "seed {seed}");
        } else {
            // SES ended inside its budget without a violation: verified,
            // or cut at the step bound.
            assert_ne!(r.outcome, Outcome::Violation, "seed {seed}");
        }
    }
    assert_eq!((switched, reachable, found), (163, 117, 99));
}

/// The same seed gives the same report on 1 and 2 threads (sampling phase
/// included), and another seed another one.
#[test]
fn the_report_is_the_same_on_one_and_two_threads() {
    let mut differ = 0;
    for seed in 0..30u64 {
        let p = RandomProgram::generate(seed, false, true);
        let budget = (p.oracle().reachable.len() as u64 / 4).max(2);
        let base = quiet().max_schedules(3_000).seed(5);
        let one = hybrid(&p, budget, &base.clone().threads(1));
        let two = hybrid(&p, budget, &base.clone().threads(2));
        assert_eq!(shape(&one), shape(&two), "seed {seed}");
        let other = hybrid(&p, budget, &base.threads(2).seed(6));
        differ += u32::from(shape(&other) != shape(&one));
    }
    assert_eq!(differ, 30, "systems that gave another report with another seed");
}
