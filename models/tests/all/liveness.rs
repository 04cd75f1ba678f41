//! Liveness in the shipped models: the seeded liveness bugs are found by
//! exhaustive search as lassos that replay, and the correct models stay
//! verified with liveness checking on. The searches run through the
//! registry (`common::check`).

use crate::common;

use common::{check, replay};
use mcheck_checker::{Config, Model, Params, Program, Strategy, ViolationKind};
use mcheck_models::chain::Chain;
use mcheck_models::lostupdate::LostUpdate;
use mcheck_models::paxos::Paxos;
use mcheck_models::twopc::TwoPc;

fn config() -> Config {
    Config::default().liveness(true)
}

/// Liveness bug `bug` of `model` (default configuration) is found by DFS
/// as an execution that ends with `monitor` hot at `step` after `states`
/// states; its schedule replays to the same violation, and without
/// liveness checking the same search verifies.
fn assert_ends_hot<M: Model>(model: &M, bug: u32, monitor: &str, step: usize, states: u64) {
    let params = Params::default();
    let run = |config: &Config| check(model, &params, Some(bug), &Strategy::Dfs, "rr", config);
    let report = run(&config());
    let found = report.violation.clone().expect("a liveness violation");
    assert_eq!(found.violation.kind, ViolationKind::Liveness);
    assert_eq!(found.violation.machine.as_deref(), Some(monitor));
    assert_eq!((found.step, report.states), (step, states));
    let schedule = report.schedule.unwrap();
    assert!(schedule.cycle.is_empty(), "the execution ends hot");
    let ex = replay(model, &schedule);
    assert_eq!(ex.violation.unwrap(), found);
    assert!(run(&Config::default()).is_verified());
}

/// The correct `model` (default configuration) is verified by DFS with
/// liveness on; the liveness note starts with `note` and says `graph`;
/// its initial state is hot (`monitor` is owed something).
fn assert_live<M: Model>(model: &M, monitor: &str, note: &str, graph: &str) {
    let params = Params::default();
    let report = check(model, &params, None, &Strategy::Dfs, "rr", &config());
    assert!(report.is_verified(), "{:?}", report.notes);
    assert!(
        report.notes.iter().any(|n| n.starts_with(note) && n.contains(graph)),
        "{:?}",
        report.notes
    );
    let info = model.info();
    let p = model.build(&Params::resolve(info.name, &info.params, &[]).unwrap(), None);
    let owed = p.liveness().and_then(|m| m.owed(&p.initial()));
    assert_eq!(owed.map(|h| h.monitor).as_deref(), Some(monitor));
}

#[test]
fn lostupdate_give_up_on_conflict_ends_hot_and_replays() {
    assert_ends_hot(&LostUpdate, 2, "increments", 23, 45_386);
}

#[test]
fn twopc_abort_only_counted_leaves_a_participant_in_doubt() {
    assert_ends_hot(&TwoPc, 6, "in-doubt", 29, 60_423);
}

#[test]
fn correct_lostupdate_stays_verified_with_liveness_on() {
    // Every reachable state but the last owes an increment: 39,104 states
    // and 79,608 transitions, as `models/tests/lostupdate.rs` pins them.
    assert_live(
        &LostUpdate,
        "increments",
        "liveness: 39104 states (39103 hot), 79608 transitions",
        "no fair hot cycle, no terminal hot state",
    );
}

#[test]
fn correct_twopc_stays_verified_with_liveness_on() {
    // The whole graph: 82,782 states and 229,079 transitions, as
    // `models/tests/twopc.rs` pins them.
    assert_live(&TwoPc, "answered", "liveness: 82782 states (", "229079 transitions");
}

#[test]
fn paxos_silent_refusal_ends_hot_and_replays() {
    assert_ends_hot(&Paxos, 4, "progress", 21, 40_395);
}

#[test]
fn correct_paxos_stays_verified_with_liveness_on() {
    assert_live(
        &Paxos,
        "progress",
        "liveness: 53368 states (53324 hot), 149808 transitions",
        "no fair hot cycle, no terminal hot state",
    );
}

/// chain bug 10 (silent-empty-successor): the new successor never sends
/// its LastSeq, the head never settles the link; the execution ends with
/// the `repaired` monitor hot, and replays.
#[test]
fn chain_silent_empty_successor_is_a_liveness_violation_that_replays() {
    let params = Params::default();
    let report = check(&Chain, &params, Some(10), &Strategy::Dfs, "rr", &config());
    let found = report.violation.clone().expect("a liveness violation");
    assert_eq!(found.violation.kind, ViolationKind::Liveness);
    assert_eq!(found.violation.machine.as_deref(), Some("repaired"));
    assert_eq!(found.step, 19);
    assert_eq!(report.states, 152366);
    let schedule = report.schedule.unwrap();
    assert!(schedule.cycle.is_empty(), "the execution ends hot");
    let ex = replay(&Chain, &schedule);
    assert_eq!(ex.violation.unwrap(), found);
    let safe = check(&Chain, &params, Some(10), &Strategy::Dfs, "rr", &Config::default());
    assert!(safe.is_verified());
}

/// The correct chain (one key) stays verified with liveness on: every
/// client is answered and every crash repaired.
#[test]
fn correct_chain_stays_verified_with_liveness_on() {
    let mut params = Params::defaults(&mcheck_models::chain::PARAMS);
    params.set("keys", 1);
    let report = check(&Chain, &params, None, &Strategy::Dfs, "rr", &config());
    assert!(report.is_verified(), "{:?}", report.notes);
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.starts_with("liveness: 58324 states") && n.contains("no fair hot cycle, no terminal hot state")),
        "{:?}",
        report.notes
    );
}

/// Liveness bug `bug` of `model` (default configuration) found by a
/// sampling strategy (seed 0, one thread): an execution that ends with
/// `monitor` hot is a certain violation (kind `liveness`, not a possible
/// one), found at `step` after `schedules` schedules, and its schedule
/// (a delay path for SS, a choice path for RS) replays to it. The step is
/// the one that ends the execution (DFS names the terminal state after it:
/// paxos bug 4 at 21, lostupdate bug 2 at 23, above).
fn assert_sampled_ends_hot<M: Model>(
    model: &M,
    strategy: Strategy,
    bug: u32,
    monitor: &str,
    step: usize,
    schedules: u64,
) {
    let config = config().threads(1).max_schedules(100_000);
    let report = check(model, &Params::default(), Some(bug), &strategy, "rtc", &config);
    let found = report.violation.clone().expect("a liveness violation");
    assert_eq!(
        found.violation.kind,
        ViolationKind::Liveness,
        "{}",
        found.violation.message
    );
    assert_eq!(found.violation.machine.as_deref(), Some(monitor));
    assert!(
        found
            .violation
            .message
            .starts_with("the execution ends with the monitor hot")
    );
    assert_eq!((found.step, report.schedules), (step, schedules));
    let schedule = report.schedule.unwrap();
    // An SS schedule names its explorer (rtc), which the replay takes.
    assert_eq!(schedule.explorer.is_some(), strategy.name() == "ss");
    let ex = replay(model, &schedule);
    assert_eq!(ex.violation.unwrap(), found);
}

#[test]
fn sampling_finds_an_execution_that_ends_hot_as_a_certain_violation() {
    assert_sampled_ends_hot(&Paxos, Strategy::Ss(Default::default()), 4, "progress", 21, 3);
    assert_sampled_ends_hot(&LostUpdate, Strategy::Rs, 2, "increments", 23, 1);
}
