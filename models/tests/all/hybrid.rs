//! The hybrid strategy on a shipped model: chain's bug 7, which SES with
//! RTC finds after 16,941 states at 4 delays, found by hybrid with an SES
//! phase of 2,000 states (pinned counts, the same on 1 and 2 threads) and
//! replayed from its schedule.

// Only `program` of the shared helpers is used here.
#[allow(dead_code)]
use crate::common;

use mcheck_checker::explorers::builtin;
use mcheck_checker::search::{self, HybridParams, SsParams};
use mcheck_checker::{Config, Outcome, PathKind, Schedule};
use mcheck_models::chain::Chain;

#[test]
fn chain_bug_7_is_found_from_the_frontier_and_replays() {
    let p = common::program(&Chain, &[], Some(7));
    // The paper's uniform placement: these pins predate the near twins
    // (with the default, mixed, it takes 193 samples at 4 delays; the CLI
    // test `hybrid_finds_chain_bug_7_and_its_counterexample_replays` pins
    // that).
    let params = HybridParams::default().ses_states(2_000).ss(SsParams::paper());
    let run = |threads| {
        let config = Config::default().threads(threads).max_memory(1 << 30);
        search::hybrid(&p, builtin("rtc").unwrap(), &config, &params).unwrap()
    };
    let r = run(1);
    assert_eq!(r.outcome, Outcome::Violation);
    // The SES phase's states, then the samples until the violating one.
    assert_eq!((r.states, r.schedules, r.bound_reached), (2_000, 850, 6));
    let two = run(2);
    assert_eq!((two.states, two.schedules, two.steps), (r.states, r.schedules, r.steps));
    assert_eq!(two.schedule, r.schedule);
    let mut schedule = r.schedule.clone().unwrap();
    assert_eq!(schedule.kind, PathKind::Delays);
    assert_eq!(schedule.path, vec![1, 4, 0, 7, 1, 6]);
    schedule.model = "chain".into();
    let again = Schedule::from_text(&schedule.to_text()).unwrap();
    let ex = mcheck_checker::replay(&p, Some(builtin("rtc").unwrap()), &again, false).unwrap();
    let found = r.violation.unwrap();
    let v = ex.violation.unwrap();
    assert!(v.violation.same_bug(&found.violation), "{:?}", v.violation);
    assert_eq!(v.step, found.step);
    assert_eq!(found.step, 27);
}
