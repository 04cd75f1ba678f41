//! The Paxos model: exact state counts, every seeded bug needs a delay and
//! replays through the text form.

mod common;
use common::bfs;

use mcheck_checker::search;
use mcheck_checker::{Config, Model, Outcome, ViolationKind};
use mcheck_explorers::builtin;
use mcheck_models::paxos::{Ballot, Cfg, Paxos};
use std::time::Instant;

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

/// Figures for the report (run with `--release -- --ignored --nocapture`).
#[test]
#[ignore]
fn figures() {
    let p = program(&[], None);
    let t = Instant::now();
    let r = search::ses(&p, builtin("rtc").unwrap(), &Config::default()).unwrap();
    println!(
        "correct: {:?} states={} transitions={} {:.2}s",
        r.outcome,
        r.states,
        r.transitions,
        t.elapsed().as_secs_f64()
    );
    for bug in 1..=3 {
        for name in ["rr", "rtc", "prr"] {
            let p = program(&[], Some(bug));
            let t = Instant::now();
            let r = search::ses(&p, builtin(name).unwrap(), &Config::default()).unwrap();
            let v = r
                .violation
                .as_ref()
                .map(|f| format!("{:?} {:?}", f.violation.kind, f.violation.machine));
            println!(
                "bug {bug} {name}: {:?} states={} delays={} {:.2}s {:?}",
                r.outcome,
                r.states,
                r.bound_reached,
                t.elapsed().as_secs_f64(),
                v
            );
            let zero = Config {
                max_delays: Some(0),
                ..Config::default()
            };
            let z = search::ses(&p, builtin(name).unwrap(), &zero).unwrap();
            println!("   zero-delay {name}: {:?} states={}", z.outcome, z.states);
        }
    }
}

/// Prints the counterexample of every bug (run with `-- --ignored --nocapture`).
#[test]
#[ignore]
fn traces() {
    for (bug, explorer) in [(1, "prr"), (2, "rr"), (3, "rr")] {
        let p = program(&[], Some(bug));
        let r = search::ses(&p, builtin(explorer).unwrap(), &Config::default()).unwrap();
        let schedule = r.schedule.unwrap();
        let ex = mcheck_checker::replay(&p, Some(builtin(explorer).unwrap()), &schedule, true).unwrap();
        println!(
            "== bug {bug} ({explorer}): {:?}",
            ex.violation.map(|f| f.violation.message)
        );
        for t in &ex.trace {
            println!(
                "{:>3} {:<10} {:<45} {:?} sent={:?} {:?}",
                t.step,
                t.actor_name,
                t.handled.clone().unwrap_or_default(),
                t.choices,
                t.sent,
                t.announced
            );
        }
    }
}
