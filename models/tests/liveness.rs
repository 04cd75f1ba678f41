//! Liveness in the shipped models: the seeded liveness bugs are found by
//! exhaustive search as lassos that replay, and the correct models stay
//! verified with liveness checking on.

use mcheck_checker::{check_model, replay_model, Config, Params, Strategy, ViolationKind};
use mcheck_explorers::builtin;
use mcheck_models::chain::Chain;
use mcheck_models::paxos::Paxos;

fn config() -> Config {
    Config {
        liveness: true,
        ..Config::default()
    }
}

#[test]
fn paxos_silent_refusal_is_a_liveness_violation_with_a_replaying_lasso() {
    let params = Params::default();
    let report = check_model(
        &Paxos,
        &params,
        Some(4),
        &Strategy::Dfs,
        builtin("rr").unwrap(),
        &config(),
    )
    .unwrap();
    let found = report.violation.clone().expect("a liveness violation");
    assert_eq!(found.violation.kind, ViolationKind::Liveness);
    assert_eq!(found.violation.machine.as_deref(), Some("progress"));
    assert_eq!(found.step, 21);
    assert_eq!(report.states, 40395);
    let schedule = report.schedule.unwrap();
    assert!(schedule.cycle.is_empty(), "the execution ends hot");
    let ex = replay_model(&Paxos, None::<mcheck_explorers::AnyExplorer>, &schedule, false).unwrap();
    assert_eq!(ex.violation.unwrap(), found);
    // Without liveness checking the same search verifies the bug away.
    let safe = check_model(
        &Paxos,
        &params,
        Some(4),
        &Strategy::Dfs,
        builtin("rr").unwrap(),
        &Config::default(),
    )
    .unwrap();
    assert!(safe.is_verified());
}

#[test]
fn correct_paxos_stays_verified_with_liveness_on() {
    let report = check_model(
        &Paxos,
        &Params::default(),
        None,
        &Strategy::Dfs,
        builtin("rr").unwrap(),
        &config(),
    )
    .unwrap();
    assert!(report.is_verified(), "{:?}", report.notes);
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.starts_with("liveness: 53368 states (53324 hot), 149808 transitions")),
        "{:?}",
        report.notes
    );
}

/// chain bug 10 (silent-empty-successor): the new successor never sends
/// its LastSeq, the head never settles the link; the execution ends with
/// the `repaired` monitor hot, and replays.
#[test]
fn chain_silent_empty_successor_is_a_liveness_violation_that_replays() {
    let params = Params::default();
    let report = check_model(
        &Chain,
        &params,
        Some(10),
        &Strategy::Dfs,
        builtin("rr").unwrap(),
        &config(),
    )
    .unwrap();
    let found = report.violation.clone().expect("a liveness violation");
    assert_eq!(found.violation.kind, ViolationKind::Liveness);
    assert_eq!(found.violation.machine.as_deref(), Some("repaired"));
    assert_eq!(found.step, 19);
    assert_eq!(report.states, 152817);
    let schedule = report.schedule.unwrap();
    assert!(schedule.cycle.is_empty(), "the execution ends hot");
    let ex = replay_model(&Chain, None::<mcheck_explorers::AnyExplorer>, &schedule, false).unwrap();
    assert_eq!(ex.violation.unwrap(), found);
    let safe = check_model(
        &Chain,
        &params,
        Some(10),
        &Strategy::Dfs,
        builtin("rr").unwrap(),
        &Config::default(),
    )
    .unwrap();
    assert!(safe.is_verified());
}

/// The correct chain (one key) stays verified with liveness on: every
/// client is answered and every crash repaired.
#[test]
fn correct_chain_stays_verified_with_liveness_on() {
    let mut params = Params::defaults(&mcheck_models::chain::PARAMS);
    params.set("keys", 1);
    let report = check_model(&Chain, &params, None, &Strategy::Dfs, builtin("rr").unwrap(), &config()).unwrap();
    assert!(report.is_verified(), "{:?}", report.notes);
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.starts_with("liveness: 58436 states") && n.contains("no fair hot cycle, no terminal hot state")),
        "{:?}",
        report.notes
    );
}
