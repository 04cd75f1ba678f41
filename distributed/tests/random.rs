//! The distributed SES on random cyclic transition systems against the BFS
//! oracle of `mcheck_checker::testing` (ARCHITECTURE.md, "Testing"): with 1, 2
//! and 3 workers in one process, and with 2 local processes (this test
//! binary started again as process 1), it visits exactly the oracle's
//! reachable set and finds a planted violation exactly when it is
//! reachable; a counterexample replays on one machine.

mod cluster;

use mcheck_checker::config::Config;
use mcheck_checker::explorers::{ProbabilisticRoundRobin, RoundRobin, RunToCompletion};
use mcheck_checker::search::exec::{DelayDriver, execute};
use mcheck_checker::testing::RandomProgram;
use mcheck_checker::{Explorer, Outcome, Report};
use mcheck_distributed::{Layout, ses};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::sync::Arc;

fn check<E: Explorer + Serialize + DeserializeOwned + 'static>(
    seed: u64,
    plant: bool,
    explorer: E,
    layout: &Layout,
) -> Option<Report> {
    let p = Arc::new(RandomProgram::generate(seed, false, plant).recording());
    let config = Config::default().seed(seed);
    let report = ses(Arc::clone(&p), explorer.clone(), &config, layout).expect("runs")?;
    let oracle = p.oracle();
    if plant && oracle.violation_reachable {
        assert_eq!(report.outcome, Outcome::Violation, "system {seed} on {layout:?}");
        // The counterexample replays on one machine with the same explorer.
        let schedule = report.schedule.as_ref().expect("a violation has a schedule");
        let root = mcheck_checker::explorer::prepare(&*p, explorer, seed);
        let ex = execute(
            &*p,
            &mut DelayDriver::new(root, &schedule.path),
            config.max_steps,
            false,
            false,
        );
        assert_eq!(
            ex.violation, report.violation,
            "system {seed}: the schedule replays to its violation"
        );
    } else {
        assert_eq!(
            report.outcome,
            Outcome::Verified,
            "system {seed} on {layout:?}: {:?}",
            report.notes
        );
        assert_eq!(
            report.states,
            oracle.reachable.len() as u64,
            "system {seed} on {layout:?}"
        );
        if layout.processes == 1 {
            // Every generated state is reachable, and every reachable one generated.
            assert_eq!(p.seen_states(), oracle.reachable, "system {seed}");
        }
    }
    Some(report)
}

#[test]
fn one_two_and_three_workers_visit_the_oracles_reachable_set() {
    let (mut violations, mut verified) = (0, 0);
    for seed in 0..60u64 {
        let plant = seed % 2 == 1;
        for threads in 1..=3 {
            let layout = Layout::threads(threads);
            let r = match seed % 3 {
                0 => check(seed, plant, RoundRobin::new(), &layout),
                1 => check(seed, plant, RunToCompletion::new(), &layout),
                _ => check(seed, plant, ProbabilisticRoundRobin::default(), &layout),
            }
            .expect("one process reports");
            violations += u32::from(r.outcome == Outcome::Violation);
            verified += u32::from(r.outcome == Outcome::Verified);
        }
    }
    // Both kinds of systems are exercised.
    assert!(
        violations >= 15 && verified >= 90,
        "{violations} violations, {verified} verified"
    );
}

#[test]
fn two_local_processes_visit_the_oracles_reachable_set() {
    cluster::run_as_two_processes(
        "two_local_processes_visit_the_oracles_reachable_set",
        12,
        |i, layout| {
            let seed = 100 + i as u64;
            let r = check(seed, seed % 2 == 1, RunToCompletion::new(), layout);
            assert_eq!(r.is_some(), layout.process == 0, "process 0 alone reports");
        },
    );
}
