//! The noise benchmark (`mcheck_models::noise`): the background actors are
//! independent of the protocol (the states multiply by a count computed by
//! hand), `noise=0` is every model's default, every row's bug is still
//! found by SES among background actors, and the bug-free rows stay
//! bug-free with them.

use crate::common::{self, bfs};
use mcheck_checker::search::{self, Strategy};
use mcheck_checker::{Config, Model, ModelInfo, Outcome, Params, Report};
use mcheck_models::noise::{self, NOISE_PARAM, NoiseRow, PUTS, ROWS, SIZES, noise_row, pair_states};
use mcheck_models::{multipaxos, paxos, raft, twopc};
use mcheck_registry::Registry;

/// The infos of the models that take the noise parameter.
fn noisy_models() -> Vec<ModelInfo> {
    vec![
        raft::Raft.info(),
        paxos::Paxos.info(),
        multipaxos::MultiPaxos.info(),
        twopc::TwoPc.info(),
    ]
}

/// `set` (`--set` syntax) and `extra` resolved against `info`'s parameters.
fn resolve(info: &ModelInfo, set: &str, extra: &[(&str, u64)]) -> Params {
    let mut overrides: Vec<(String, String)> = set
        .split(',')
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("key=value");
            (k.to_string(), v.to_string())
        })
        .collect();
    overrides.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    Params::resolve(info.name, &info.params, &overrides).unwrap()
}

/// The states and transitions of `n` client/store pairs alone, by hand:
/// a pair is a chain of `1 + 2 * PUTS` steps ([`pair_states`] states), and
/// independent pairs multiply their states; a transition moves one pair
/// while the others stay, so `n` pairs have `n * steps * states^(n-1)`.
fn pairs_alone(n: u32) -> (u64, u64) {
    let (s, t) = (pair_states(), 1 + 2 * u64::from(PUTS));
    (s.pow(n), u64::from(n) * t * s.pow(n.saturating_sub(1)))
}

/// The product of two independent systems: states multiply, and a
/// transition of one leaves the other's state as it is.
fn product((s1, t1): (u64, u64), (s2, t2): (u64, u64)) -> (u64, u64) {
    (s1 * s2, t1 * s2 + s1 * t2)
}

/// Background actors never touch the protocol: with `n` pairs the
/// reachable states (BFS over full states, and DFS) are the protocol's,
/// pinned in its own tests, times the pairs' alone, counted by hand. So
/// are the transitions where the protocol makes no choice (paxos without
/// retries); where it does, a machine suspended at its choice holds the
/// others until the choice is made (`World::pending`), so only the states
/// multiply.
#[test]
fn background_actors_multiply_the_states() {
    assert_eq!(pairs_alone(1), (6, 5));
    assert_eq!(pairs_alone(2), (36, 60));
    // paxos with two proposers and no retries: 660 states, 1506
    // transitions in tests/all/paxos.rs.
    let paxos = [("acceptors", "3"), ("proposers", "2"), ("retries", "0")];
    for n in 0..=2u32 {
        let noise = n.to_string();
        let mut set = paxos.to_vec();
        set.push((NOISE_PARAM, noise.as_str()));
        let p = common::program(&paxos::Paxos, &set, None);
        let want = product((660, 1506), pairs_alone(n));
        assert_eq!(bfs(&p), want, "paxos noise={n}");
        let r = search::dfs(&p, &Config::default()).unwrap();
        assert_eq!(
            (r.outcome, r.states, r.transitions),
            (Outcome::Verified, want.0, want.1)
        );
    }
    assert_eq!(product((660, 1506), pairs_alone(2)), (23760, 93816));
    // With choices: paxos with one proposer that may give up (158 states
    // in tests/all/paxos.rs) and 2pc with one participant that votes
    // either way (1930 in tests/all/twopc.rs).
    let p = common::program(
        &paxos::Paxos,
        &[
            ("acceptors", "3"),
            ("proposers", "1"),
            ("retries", "1"),
            (NOISE_PARAM, "1"),
        ],
        None,
    );
    assert_eq!(bfs(&p).0, 158 * pair_states());
    let p = common::program(&twopc::TwoPc, &[("participants", "1"), (NOISE_PARAM, "1")], None);
    assert_eq!(bfs(&p).0, 1930 * pair_states());
}

/// `noise` is a parameter of every row's model, 0 by default (so every
/// default and pinned count is as before), and goes up to every size the
/// table runs.
#[test]
fn noise_is_a_parameter_with_default_zero() {
    assert_eq!(noise::PARAM.default, 0);
    for info in noisy_models() {
        let spec = info.params.iter().find(|p| p.name == NOISE_PARAM).expect(info.name);
        assert_eq!(spec.default, 0, "{}", info.name);
        assert!(SIZES.iter().all(|s| *s <= spec.max), "{}", info.name);
    }
    for row in ROWS {
        assert_eq!(row.param, NOISE_PARAM);
        assert_eq!(noise_row(row.model, row.bug), Some(row));
        let info = noisy_models()
            .into_iter()
            .find(|i| i.name == row.model)
            .expect(row.model);
        assert!(
            info.bugs.iter().any(|b| b.id == row.bug),
            "{} bug {}",
            row.model,
            row.bug
        );
        let params = resolve(&info, row.params, &[]);
        assert_eq!(params.get(NOISE_PARAM), 0);
        assert!(!row.mirrors.is_empty());
    }
    assert_eq!(noise_row("paxos", 99), None);
    let models: std::collections::BTreeSet<&str> = ROWS.iter().map(|r| r.model).collect();
    assert!(ROWS.len() >= 5 && models.len() >= 3, "{models:?}");
}

/// `strategy` with `explorer` on `row`'s model at its base parameters
/// with `noise` background pairs, through the registry (as the CLI runs
/// it).
fn run(row: &NoiseRow, noise: u64, bug: Option<u32>, strategy: &Strategy, explorer: &str, config: &Config) -> Report {
    let registry = Registry::builtin();
    let model = registry.model(row.model).unwrap();
    let info = model.info();
    let params = resolve(&info, row.params, &[(NOISE_PARAM, noise)]);
    let instance = model.resolve(&params.as_overrides(), bug).unwrap();
    model
        .check(&instance, strategy, explorer, config, false)
        .unwrap()
        .report
}

/// Per row: the explorer with which SES finds the bug among two
/// background pairs, the distinct states to it and the delays; then the
/// same without background actors.
const FOUND_WITH_NOISE: [(&str, u32, &str, u64, u32, u64); 5] = [
    ("raft", 2, "rr", 637, 2, 276),
    ("paxos", 2, "rr", 134, 1, 94),
    ("multipaxos", 3, "rr", 63, 1, 43),
    ("2pc", 1, "prr", 5628, 3, 940),
    ("2pc", 2, "rtc", 9779, 4, 1149),
];

/// Every row's bug is still found by SES among background actors, with
/// as many delays as without them.
#[test]
fn every_row_is_found_by_ses_with_noise() {
    let config = Config::default().threads(1);
    for (model, bug, explorer, states, delays, alone) in FOUND_WITH_NOISE {
        let row = noise_row(model, bug).unwrap();
        let what = format!("{model} bug {bug} with {explorer}");
        let r = run(row, 2, Some(bug), &Strategy::Ses, explorer, &config);
        let r0 = run(row, 0, Some(bug), &Strategy::Ses, explorer, &config);
        assert_eq!(
            (r.outcome, r0.outcome),
            (Outcome::Violation, Outcome::Violation),
            "{what}"
        );
        assert_eq!(r.bound_reached, r0.bound_reached, "{what}");
        assert_eq!(
            (r.states, r.bound_reached, r0.states),
            (states, delays, alone),
            "{what}"
        );
    }
}

/// The bug-free program of every row stays bug-free among background
/// pairs: 200 random walks (seed 0) among 16 pairs, and SES with RTC up to
/// one delay among 4, find nothing (their steps and states pinned). Every
/// walk runs every pair to its end: it takes at least its 1 + 2 * PUTS
/// steps per pair on top of the protocol's.
#[test]
fn bug_free_rows_stay_bug_free_with_noise() {
    let walks = Config::default().max_schedules(200).threads(1);
    let bounded = Config::default().max_delays(1).threads(1);
    for (row, (steps, states)) in ROWS.iter().zip(BUG_FREE) {
        let what = format!("{} bug {}", row.model, row.bug);
        let r = run(row, 16, None, &Strategy::Rs, "rtc", &walks);
        assert_eq!(
            (r.outcome, r.schedules),
            (Outcome::Bounded, 200),
            "{what}: {:?}",
            r.violation
        );
        let base = run(row, 0, None, &Strategy::Rs, "rtc", &walks);
        assert!(
            r.steps >= 200 * 16 * (1 + 2 * u64::from(PUTS)) + base.steps / 2,
            "{what}"
        );
        let ses = run(row, 4, None, &Strategy::Ses, "rtc", &bounded);
        assert!(ses.violation.is_none(), "{what}: {:?}", ses.violation);
        assert_eq!((r.steps, ses.states), (steps, states), "{what}");
    }
}

/// Per row of [`ROWS`]: the steps of the 200 walks among 16 pairs, and
/// the states of SES with RTC up to one delay among 4.
const BUG_FREE: [(u64, u64); 5] = [(19322, 541), (21841, 669), (22406, 619), (19728, 501), (19728, 501)];
