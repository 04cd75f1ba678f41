//! multipaxos: exact state counts of the correct version, and every seeded
//! bug needs a delay, is found by SES and replays.

use crate::common;
use common::bfs;

use mcheck_checker::explorers::builtin;
use mcheck_checker::machine::{MachineModel, MonitorError};
use mcheck_checker::search;
use mcheck_checker::{Config, Model, Outcome, ViolationKind};
use mcheck_models::multipaxos::{Cfg, Monitor, MultiPaxos, Note};

fn program(set: &[(&str, &str)], bug: Option<u32>) -> <MultiPaxos as Model>::Program {
    common::program(&MultiPaxos, set, bug)
}

#[test]
fn exact_state_counts() {
    for (nodes, updates, states, transitions) in
        [("2", "1", 303, 519), ("3", "1", 13361, 32688), ("2", "2", 3135, 5948)]
    {
        let p = program(&[("nodes", nodes), ("updates", updates)], None);
        let r = search::dfs(&p, &Config::default()).unwrap();
        assert_eq!(r.outcome, Outcome::Verified);
        assert_eq!(bfs(&p), (states, transitions), "nodes={nodes} updates={updates}");
        assert_eq!(
            (r.states, r.transitions),
            (states, transitions),
            "nodes={nodes} updates={updates}"
        );
    }
}

#[test]
fn every_explorer_covers_a_small_state_space() {
    let p = program(&[("updates", "1")], None);
    for name in ["rr", "rtc", "prr"] {
        let r = search::ses(&p, builtin(name).unwrap(), &Config::default()).unwrap();
        assert_eq!(r.outcome, Outcome::Verified, "{name}");
        assert_eq!((r.states, r.transitions), (13361, 32688), "{name}");
        assert!(r.strata.len() > 3, "{name}: only {} strata", r.strata.len());
    }
}

#[test]
fn the_default_configuration_verifies_with_rtc() {
    let p = program(&[], None);
    let r = search::ses(&p, builtin("rtc").unwrap(), &Config::default()).unwrap();
    assert_eq!(r.outcome, Outcome::Verified);
    assert_eq!((r.states, r.transitions), (749252, 2068833));
}

/// Bug, explorer that finds it fastest, states to find, delays, kind,
/// machine.
const BUGS: [(u32, &str, u64, u32, ViolationKind, &str); 3] = [
    (1, "rr", 79, 1, ViolationKind::UnhandledEvent, "node0"),
    (2, "prr", 964, 2, ViolationKind::Monitor, "agreement"),
    (3, "rr", 43, 1, ViolationKind::Monitor, "agreement"),
];

#[test]
fn no_bug_is_found_without_a_delay() {
    common::assert_each_bug_needs_a_delay(&MultiPaxos, BUGS.map(|b| b.0));
}

#[test]
fn every_bug_is_found_and_replays() {
    for (bug, name, states, delays, kind, machine) in BUGS {
        let p = program(&[], Some(bug));
        let r = search::ses(&p, builtin(name).unwrap(), &Config::default()).unwrap();
        assert_eq!(r.outcome, Outcome::Violation, "bug {bug}");
        let found = r.violation.clone().unwrap();
        assert_eq!(found.violation.kind, kind, "bug {bug}");
        assert_eq!(found.violation.machine.as_deref(), Some(machine), "bug {bug}");
        assert_eq!((r.states, r.bound_reached), (states, delays), "bug {bug}");
        common::assert_replays(&p, "multipaxos", name, &r, delays);
    }
}

/// Every bug is also found by SES with each of rr, rtc and prr.
#[test]
fn every_explorer_finds_every_bug() {
    for (bug, ..) in BUGS {
        let p = program(&[], Some(bug));
        for name in ["rr", "rtc", "prr"] {
            let r = search::ses(&p, builtin(name).unwrap(), &Config::default()).unwrap();
            assert_eq!(r.outcome, Outcome::Violation, "bug {bug} {name}");
            assert!(r.states < 10_000, "bug {bug} {name}: {} states", r.states);
        }
    }
}

#[test]
fn the_monitors_check_validity_and_agreement() {
    let cfg = Cfg::default();
    let mut mon = Monitor::default();
    let chosen = |slot, value, by| Note::Chosen { slot, value, by };
    let err = cfg.observe(&mut mon, &chosen(0, 1, 0)).unwrap_err();
    assert_eq!(
        err,
        MonitorError::new("validity", "node0 learned value 1 in slot 0, which no client proposed")
    );
    let mut mon = Monitor::default();
    assert!(cfg.observe(&mut mon, &Note::Proposed(1)).is_ok());
    assert!(cfg.observe(&mut mon, &Note::Proposed(2)).is_ok());
    assert!(cfg.observe(&mut mon, &chosen(0, 1, 0)).is_ok());
    assert!(cfg.observe(&mut mon, &chosen(0, 1, 1)).is_ok());
    assert!(cfg.observe(&mut mon, &chosen(1, 2, 1)).is_ok());
    let err = cfg.observe(&mut mon, &chosen(0, 2, 1)).unwrap_err();
    assert_eq!(
        err,
        MonitorError::new("agreement", "node1 learned value 2 in slot 0, where value 1 was chosen")
    );
}

/// The client's history is checked against a log: two appends that both
/// return position 0 have no linearization.
#[test]
fn the_client_history_is_checked_against_a_log() {
    use mcheck_checker::ViolationKind;
    use mcheck_checker::lin::{Entry, LogOp, LogRet};
    let cfg = Cfg::default();
    let mut mon = Monitor::default();
    let invoke = |v: u32| {
        Note::Client(Entry::Invoke {
            process: v,
            op: LogOp::Append(u64::from(v)),
        })
    };
    let ret = |v: u32, slot: u64| {
        Note::Client(Entry::Return {
            process: v,
            ret: LogRet::Index(slot),
        })
    };
    assert!(cfg.observe(&mut mon, &invoke(1)).is_ok());
    assert!(cfg.observe(&mut mon, &invoke(2)).is_ok());
    assert!(cfg.observe(&mut mon, &ret(2, 0)).is_ok());
    let err = cfg.observe(&mut mon, &ret(1, 0)).unwrap_err();
    assert_eq!(err.kind, ViolationKind::Linearizability);
    assert!(err.message.contains("p1 Append(1) returns Index(0)"), "{}", err.message);
}

/// With liveness on, the correct model (one update) stays verified: every
/// value the current leader holds is answered.
#[test]
fn the_correct_model_stays_verified_with_liveness_on() {
    let mut params = mcheck_checker::Params::defaults(&mcheck_models::multipaxos::PARAMS);
    params.set("updates", 1);
    let config = Config::default().liveness(true);
    let r = mcheck_checker::check_model(
        &MultiPaxos,
        &params,
        None,
        &mcheck_checker::Strategy::Dfs,
        builtin("rr").unwrap(),
        &config,
    )
    .unwrap();
    assert_eq!(r.outcome, Outcome::Verified, "{:?}", r.notes);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("liveness: 13361 states") && n.contains("no fair hot cycle, no terminal hot state")),
        "{:?}",
        r.notes
    );
}
