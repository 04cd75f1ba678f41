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
use mcheck_checker::{Explorer, Outcome, Report, Shortcuts};
use mcheck_distributed::{Layout, ses};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::sync::Arc;

/// The distributed SES of random system `seed` (with a planted violation
/// if `plant`) on `layout`, with the table of keys sent lately if `sent`,
/// against the oracle.
fn check<E: Explorer + Serialize + DeserializeOwned + 'static>(
    seed: u64,
    plant: bool,
    explorer: E,
    layout: &Layout,
    sent: bool,
) -> Option<Report> {
    let p = Arc::new(RandomProgram::generate(seed, false, plant).recording());
    let config = Config::default().seed(seed).shortcuts(Shortcuts::ALL.sent(sent));
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
    let (_, unsent) = transfers(&report);
    if !sent || layout.workers() == 1 {
        assert_eq!(
            unsent, 0,
            "system {seed} on {layout:?}: nothing held back without the table"
        );
    }
    Some(report)
}

/// The states a run sent to their owners and the successors it did not
/// send again, from its report's note.
fn transfers(r: &Report) -> (u64, u64) {
    let note = r
        .notes
        .iter()
        .find_map(|n| n.strip_prefix("transfers: "))
        .expect("a distributed run notes its transfers");
    let words: Vec<&str> = note.split_whitespace().collect();
    (
        words[0].parse().expect("states sent"),
        words[6].parse().expect("successors not sent again"),
    )
}

#[test]
fn one_two_and_three_workers_visit_the_oracles_reachable_set() {
    let (mut violations, mut verified) = (0, 0);
    // Transfers with the table of keys sent lately, and without it.
    let (mut with, mut without) = ((0, 0), (0, 0));
    for seed in 0..60u64 {
        let plant = seed % 2 == 1;
        let sent = seed % 4 < 2;
        for threads in 1..=3 {
            let layout = Layout::threads(threads);
            let r = match seed % 3 {
                0 => check(seed, plant, RoundRobin::new(), &layout, sent),
                1 => check(seed, plant, RunToCompletion::new(), &layout, sent),
                _ => check(seed, plant, ProbabilisticRoundRobin::default(), &layout, sent),
            }
            .expect("one process reports");
            violations += u32::from(r.outcome == Outcome::Violation);
            verified += u32::from(r.outcome == Outcome::Verified);
            let t = transfers(&r);
            let sum = if sent { &mut with } else { &mut without };
            *sum = (sum.0 + t.0, sum.1 + t.1);
        }
    }
    // Both kinds of systems are exercised.
    assert!(
        violations >= 15 && verified >= 90,
        "{violations} violations, {verified} verified"
    );
    // The table holds back repeated transfers (the counts above are the
    // oracle's either way).
    assert!(with.1 > 0, "with the table: {with:?}");
    assert_eq!(without.1, 0, "without the table: {without:?}");
}

#[test]
fn two_local_processes_visit_the_oracles_reachable_set() {
    cluster::run_as_two_processes(
        "two_local_processes_visit_the_oracles_reachable_set",
        12,
        |i, layout| {
            let seed = 100 + i as u64;
            let r = check(seed, seed % 2 == 1, RunToCompletion::new(), layout, i % 2 == 0);
            assert_eq!(r.is_some(), layout.process == 0, "process 0 alone reports");
        },
    );
}
