//! Every shipped model's default configuration, optimised and plain
//! (`Config::plain`, `checker/src/search/plain.rs`): SES with RTC gives
//! the same counts in every stratum both ways, the same outcome and the
//! same totals (ARCHITECTURE.md, "The plain search"). The random
//! systems are compared in `checker/tests/all/plain.rs`. The searches run
//! through the registry, as the CLI's do.

use crate::common;
use mcheck_checker::search::Strategy;
use mcheck_checker::{Config, Model, Outcome, Report};
use mcheck_models::{lostupdate, paxos, twopc, twophase, twophase_packed};
use mcheck_registry::Registry;

/// (bound, new states, transitions, deferrals, frontier) per stratum.
fn strata(r: &Report) -> Vec<(u32, u64, u64, u64, u64)> {
    let s = r.strata.iter();
    s.map(|s| (s.bound, s.new_states, s.transitions, s.deferrals, s.frontier))
        .collect()
}

/// The delay bound of each model's comparison: run to exhaustion where
/// that takes well under a second, else bounded (MultiPaxos and Raft,
/// 1.4M and 0.75M states and most of a minute both ways, stop at 8).
fn max_delays(model: &str) -> Option<u32> {
    match model {
        "multipaxos" | "raft" => Some(8),
        _ => None,
    }
}

/// `strategy` with `explorer` on `model` at its defaults, optimised and
/// plain under `config`; asserts that they agree, returns the plain
/// report.
fn compare(model: &str, strategy: &Strategy, explorer: &str, config: &Config) -> Report {
    let registry = Registry::builtin();
    let dynamic = registry.model(model).unwrap();
    let instance = dynamic.resolve(&[], None).unwrap();
    let run = |plain| {
        let config = config.clone().plain(plain);
        dynamic
            .check(&instance, strategy, explorer, &config, false)
            .unwrap()
            .report
    };
    let (fast, plain) = (run(false), run(true));
    let what = format!("{model}, {} with {explorer}", strategy.name());
    assert_eq!(
        (&fast.outcome, fast.bounded_by, fast.violation.is_some()),
        (&plain.outcome, plain.bounded_by, plain.violation.is_some()),
        "{what}"
    );
    assert_eq!(strata(&fast), strata(&plain), "{what}");
    let totals = |r: &Report| (r.states, r.transitions, r.deferrals, r.peak_frontier, r.bound_reached);
    assert_eq!(totals(&fast), totals(&plain), "{what}");
    plain
}

/// SES with RTC on every shipped model, run to exhaustion or to its delay
/// bound; where it ran to exhaustion, the states are the reachable states
/// of a BFS over full states that shares no code with either search.
#[test]
fn every_model_counts_the_same_plain_and_optimised() {
    let registry = Registry::builtin();
    let mut names: Vec<&str> = registry.models().map(|m| m.info().name).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "2pc",
            "chain",
            "lostupdate",
            "multipaxos",
            "paxos",
            "raft",
            "twophase",
            "twophase-packed"
        ]
    );
    for name in names {
        let mut config = Config::default();
        config.max_delays = max_delays(name);
        let r = compare(name, &Strategy::Ses, "rtc", &config);
        let want = if config.max_delays.is_some() {
            Outcome::Bounded
        } else {
            Outcome::Verified
        };
        assert_eq!(r.outcome, want, "{name}");
    }
    for (name, (states, transitions)) in [
        ("twophase", bfs(&twophase::TwoPhase)),
        ("twophase-packed", bfs(&twophase_packed::TwoPhasePacked)),
        ("lostupdate", bfs(&lostupdate::LostUpdate)),
        ("paxos", bfs(&paxos::Paxos)),
        ("2pc", bfs(&twopc::TwoPc)),
    ] {
        let r = compare(name, &Strategy::Dfs, "rtc", &Config::default());
        assert_eq!((r.states, r.transitions), (states, transitions), "{name}");
    }
}

/// The reachable states and transitions of `model` at its defaults.
fn bfs<M: Model>(model: &M) -> (u64, u64) {
    common::bfs(&common::program(model, &[], None))
}

/// The other strategies and settings on twophase-packed at its defaults: PB, SES
/// with the other explorers, with symmetry, with the cache keyed by both
/// states, with deadlocks checked.
#[test]
fn twophase_packed_counts_the_same_plain_and_optimised_with_every_setting() {
    let default = Config::default();
    compare("twophase-packed", &Strategy::Pb, "rtc", &default);
    for explorer in ["rr", "prr"] {
        compare("twophase-packed", &Strategy::Ses, explorer, &default);
    }
    let symmetry = Config::default().symmetry(true);
    let r = compare("twophase-packed", &Strategy::Ses, "rtc", &symmetry);
    assert!(r.symmetry && r.states < 288, "{} orbits", r.states);
    let exact = Config::default().exact_bound(true).deadlock(true);
    compare("twophase-packed", &Strategy::Ses, "rtc", &exact);
}
