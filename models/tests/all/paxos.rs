//! The Paxos model: exact state counts, every seeded bug needs a delay and
//! replays through the text form.

use crate::common;
use common::bfs;

use mcheck_checker::explorers::builtin;
use mcheck_checker::search;
use mcheck_checker::{Config, Model, Outcome, ViolationKind};
use mcheck_models::paxos::{Ballot, Cfg, Paxos};

fn program(set: &[(&str, &str)], bug: Option<u32>) -> <Paxos as Model>::Program {
    common::program(&Paxos, set, bug)
}

#[test]
fn quorums_rotate_and_overlap() {
    let cfg = Cfg::default();
    assert_eq!(cfg.majority(), 2);
    let q = |round, pid| cfg.quorum(Ballot { round, pid });
    assert_eq!([q(1, 0), q(2, 0), q(3, 0), q(4, 0)], [0b011, 0b101, 0b110, 0b011]);
    assert_eq!([q(1, 1), q(2, 1)], [0b110, 0b011]);
    let five = Cfg {
        acceptors: 5,
        ..Cfg::default()
    };
    assert_eq!(five.majority(), 3);
    assert_eq!(five.quorum(Ballot { round: 1, pid: 1 }), 0b01110);
    assert!(Ballot { round: 1, pid: 1 } < Ballot { round: 2, pid: 0 });
}

#[test]
fn exact_state_counts() {
    for (acceptors, proposers, retries, states, transitions) in [
        ("3", "1", "1", 158, 265),
        ("3", "2", "0", 660, 1506),
        ("2", "2", "1", 15844, 40769),
        ("3", "2", "1", 53368, 149808),
    ] {
        let p = program(
            &[("acceptors", acceptors), ("proposers", proposers), ("retries", retries)],
            None,
        );
        let r = search::dfs(&p, &Config::default()).unwrap();
        assert_eq!(r.outcome, Outcome::Verified);
        assert_eq!(bfs(&p), (states, transitions));
        assert_eq!(
            (r.states, r.transitions),
            (states, transitions),
            "acceptors={acceptors} proposers={proposers} retries={retries}"
        );
    }
}

#[test]
fn every_explorer_verifies_the_default_config() {
    let p = program(&[], None);
    for (name, strata) in [("rr", 23), ("rtc", 25), ("prr", 23)] {
        let r = search::ses(&p, builtin(name).unwrap(), &Config::default()).unwrap();
        assert_eq!(r.outcome, Outcome::Verified, "{name}");
        assert_eq!((r.states, r.transitions), (53368, 149808), "{name}");
        assert_eq!((r.strata.len(), r.bound_reached), (strata, strata as u32 - 1), "{name}");
    }
}

/// Finds `bug` with SES and `explorer` in the default config, pins the
/// states, delays and monitor, checks that zero-delay RR and RTC miss it, and
/// replays the counterexample through its text form.
fn check_bug(bug: u32, explorer: &str, states: u64, delays: u32, monitor: &str) {
    common::assert_each_bug_needs_a_delay(&Paxos, [bug]);
    let p = program(&[], Some(bug));
    let r = search::ses(&p, builtin(explorer).unwrap(), &Config::default()).unwrap();
    assert_eq!(r.outcome, Outcome::Violation, "bug {bug}");
    let found = r.violation.clone().unwrap();
    assert_eq!(found.violation.kind, ViolationKind::Monitor, "bug {bug}");
    assert_eq!(found.violation.machine.as_deref(), Some(monitor), "bug {bug}");
    assert_eq!((r.states, r.bound_reached), (states, delays), "bug {bug}");
    common::assert_replays(&p, "paxos", explorer, &r, delays);
}

#[test]
fn bug1_stale_promise() {
    check_bug(1, "prr", 615, 2, "p2b");
}

#[test]
fn bug2_accept_below_promise() {
    check_bug(2, "rr", 94, 1, "p2b");
}

#[test]
fn bug3_first_value() {
    check_bug(3, "rr", 104, 1, "agreement");
}

/// A bug, the explorer, the counterexample's steps, the violation's
/// message, and the steps (actor, message handled) that make the race, in
/// order.
type Race = (
    u32,
    &'static str,
    usize,
    &'static str,
    &'static [(&'static str, &'static str)],
);

/// The counterexample of each bug, replayed with its trace, shows the race
/// its description tells.
#[test]
fn each_counterexample_shows_the_race_its_bug_describes() {
    let cases: [Race; 3] = [
        (
            1,
            "prr",
            20,
            "v1 was chosen in b1.1 but the higher ballot b2.0 proposes v0",
            // Proposer 0 gives up on round 1, then two stale promises of
            // b1.0 complete its b2.0 majority.
            &[
                ("proposer4", "Accepted { b: b1.1, acc: 2 }"),
                ("proposer3", "Timeout(1)"),
                ("proposer3", "Promise { b: b1.0, acc: 1, last: None }"),
                ("proposer3", "Promise { b: b1.0, acc: 0, last: None }"),
            ],
        ),
        (
            2,
            "rr",
            19,
            "v0 was chosen in b1.0 but the higher ballot b1.1 proposes v1",
            // The shared acceptor promises b1.1 and then still accepts b1.0.
            &[
                ("acceptor1", "Prepare(b1.1)"),
                ("proposer4", "Promise { b: b1.1, acc: 1, last: None }"),
                ("acceptor1", "Accept(b1.0, v0)"),
            ],
        ),
        (
            3,
            "rr",
            29,
            "v0 was chosen in b2.0 and v1 in b1.1",
            // Refused, proposer 0 retries and adopts the first reported
            // value, not the highest-numbered one.
            &[
                ("acceptor1", "Accept(b1.0, v0)"),
                ("proposer3", "Nack(b1.0)"),
                ("proposer3", "Promise { b: b2.0, acc: 0, last: Some((b1.0, v0)) }"),
                ("proposer3", "Promise { b: b2.0, acc: 2, last: Some((b1.1, v1)) }"),
                ("acceptor1", "Accept(b1.1, v1)"),
            ],
        ),
    ];
    for (bug, explorer, steps, message, race) in cases {
        let p = program(&[], Some(bug));
        let r = search::ses(&p, builtin(explorer).unwrap(), &Config::default()).unwrap();
        let schedule = r.schedule.unwrap();
        let ex = mcheck_checker::replay(&p, Some(builtin(explorer).unwrap()), &schedule, true).unwrap();
        assert_eq!(ex.violation.unwrap().violation.message, message, "bug {bug}");
        assert_eq!(ex.trace.len(), steps, "bug {bug}");
        let handled: Vec<(&str, &str)> = ex
            .trace
            .iter()
            .map(|t| (t.actor_name.as_str(), t.handled.as_deref().unwrap_or("")))
            .collect();
        // The race's steps occur in this order (a subsequence of the trace).
        let mut rest = handled.iter();
        for step in race {
            assert!(
                rest.any(|h| h == step),
                "bug {bug}: {step:?} missing or out of order in {handled:?}"
            );
        }
    }
}
