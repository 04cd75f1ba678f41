//! SES, DFS and PB against the independent BFS oracle on random transition
//! systems, with a local explorer (the real RR/RTC/PRR are tested the same
//! way in the workspace's tests/).

use mcheck_checker::search;
use mcheck_checker::testing::{Causal, RandomProgram};
use mcheck_checker::{ActorId, ActorInfo, Config, Event, Explorer, Outcome, PathKind, Schedule, SearchError};

/// Breaks the contract: delay does nothing, so other actors are never offered.
#[derive(Clone, Debug, Default)]
struct Stubborn;

impl Explorer for Stubborn {
    fn name(&self) -> &str {
        "stubborn"
    }
    fn init(&mut self, _actors: &[ActorInfo]) {}
    fn next(&self, enabled: &[ActorId]) -> ActorId {
        enabled[0]
    }
    fn step(&mut self, _events: &[Event]) {}
    fn delay(&mut self, _enabled: &[ActorId]) {}
}

fn quiet() -> Config {
    Config::default().max_memory(1 << 30)
}

#[test]
fn causal_explorer_keeps_the_contract() {
    mcheck_checker::explorer::check_contract(|_| Causal::default(), 1, 500).unwrap();
    assert!(mcheck_checker::explorer::check_contract(|_| Stubborn, 1, 50).is_err());
}

/// Every strategy, run to exhaustion with the cache on cyclic systems,
/// generates exactly the reachable set and takes every transition of every
/// reachable state exactly once.
#[test]
fn exhaustive_strategies_visit_exactly_the_reachable_set() {
    let mut several_strata = 0;
    for seed in 0..1000u64 {
        let oracle = RandomProgram::generate(seed, false, false).oracle();
        for strategy in ["ses", "dfs", "pb"] {
            let p = RandomProgram::generate(seed, false, false).recording();
            let r = match strategy {
                "ses" => search::ses(&p, Causal::default(), &quiet()),
                "dfs" => search::dfs(&p, &quiet()),
                _ => search::pb(&p, &quiet()),
            }
            .unwrap();
            assert_eq!(r.outcome, Outcome::Verified, "seed {seed} {strategy}");
            assert_eq!(r.states, oracle.reachable.len() as u64, "seed {seed} {strategy}");
            assert_eq!(p.seen_states(), oracle.reachable, "seed {seed} {strategy}");
            assert_eq!(r.transitions, oracle.transitions, "seed {seed} {strategy}");
            if strategy == "ses" && r.strata.len() >= 3 {
                several_strata += 1;
            }
            if strategy == "dfs" {
                assert_eq!(r.strata.len(), 1);
            }
        }
    }
    // The systems are not trivial: most need several delay bounds.
    assert!(several_strata > 600, "only {several_strata} of 1000 needed 3+ strata");
}

#[test]
fn planted_violations_are_found_exactly_when_reachable_and_replay() {
    let (mut found, mut missed) = (0, 0);
    for seed in 0..1000u64 {
        let p = RandomProgram::generate(seed, false, true);
        let oracle = p.oracle();
        for strategy in ["ses", "dfs", "pb"] {
            let r = match strategy {
                "ses" => search::ses(&p, Causal::default(), &quiet()),
                "dfs" => search::dfs(&p, &quiet()),
                _ => search::pb(&p, &quiet()),
            }
            .unwrap();
            assert_eq!(r.is_violation(), oracle.violation_reachable, "seed {seed} {strategy}");
            if let Some(mut schedule) = r.schedule {
                schedule.model = "random".into();
                // Through the text form.
                let schedule = Schedule::from_text(&schedule.to_text()).unwrap();
                let ex = mcheck_checker::replay(&p, Some(Causal::default()), &schedule, true).unwrap();
                let want = r.violation.unwrap();
                let got = ex.violation.expect("replay reproduces a violation");
                assert_eq!(got, want, "seed {seed} {strategy}");
                assert_eq!(ex.trace.len(), want.step + 1);
                if strategy == "ses" {
                    assert_eq!(schedule.kind, PathKind::Delays);
                } else {
                    assert_eq!(schedule.kind, PathKind::Choices);
                    assert_eq!(schedule.path.len(), want.step + 1);
                }
            }
        }
        if oracle.violation_reachable {
            found += 1;
        } else {
            missed += 1;
        }
    }
    assert!(found > 300 && missed > 100, "found {found}, unreachable {missed}");
}

#[test]
fn without_cache_or_with_a_full_one_acyclic_systems_are_covered() {
    for seed in 0..1000u64 {
        let oracle = RandomProgram::generate(seed, true, false).oracle();
        for budget in [None, Some(64usize)] {
            let p = RandomProgram::generate(seed, true, false).recording();
            let mut config = quiet().use_cache(budget.is_some());
            config.cache_bytes = budget;
            let r = search::ses(&p, Causal::default(), &config).unwrap();
            assert_eq!(
                r.outcome,
                Outcome::Verified,
                "seed {seed} {budget:?} {:?} {:?}",
                r.bounded_by,
                r.notes
            );
            assert_eq!(p.seen_states(), oracle.reachable, "seed {seed} {budget:?}");
        }
    }
}

#[test]
fn a_depth_cut_is_never_verified() {
    let mut cut = 0;
    for seed in 0..200u64 {
        let p = RandomProgram::generate(seed, false, false);
        let config = quiet().max_steps(3);
        let r = search::ses(&p, Causal::default(), &config).unwrap();
        if r.outcome != Outcome::Verified {
            assert_eq!(r.outcome, Outcome::Bounded);
            cut += 1;
        } else {
            // Verified only if every reachable state really was seen.
            assert_eq!(r.states, p.oracle().reachable.len() as u64, "seed {seed}");
        }
    }
    assert!(cut > 150, "{cut}");
}

#[test]
fn an_unsound_explorer_is_an_error_naming_it() {
    let p = RandomProgram::generate(3, false, false);
    let e = search::ses(&p, Stubborn, &quiet()).unwrap_err();
    match &e {
        SearchError::UnsoundExplorer { explorer, .. } => assert_eq!(explorer, "stubborn"),
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("explorer stubborn is unsound"), "{e}");
}

#[test]
fn delay_bound_stops_with_bounded() {
    let p = RandomProgram::generate(5, false, false);
    let config = quiet().max_delays(1);
    let r = search::ses(&p, Causal::default(), &config).unwrap();
    assert_eq!(r.outcome, Outcome::Bounded);
    assert_eq!(r.bound_reached, 1);
}

/// With a cache too small for the system, the states reported are the
/// distinct states the cache holds, never the visits, and the next frontier
/// keeps one entry per state: neither grows past the reachable set.
#[test]
fn a_full_cache_counts_distinct_states_and_keeps_one_entry_per_state() {
    let mut full = 0;
    for seed in 0..300u64 {
        let oracle = RandomProgram::generate(seed, true, false).oracle();
        let p = RandomProgram::generate(seed, true, false).recording();
        let config = quiet().cache_bytes(64);
        let r = search::ses(&p, Causal::default(), &config).unwrap();
        assert_eq!(r.outcome, Outcome::Verified, "seed {seed}");
        assert_eq!(p.seen_states(), oracle.reachable, "seed {seed}");
        let reachable = oracle.reachable.len() as u64;
        // 64 bytes: 8 slots, 7 fingerprints at most.
        assert!(r.states <= reachable.min(7), "seed {seed}: {} states", r.states);
        assert!(
            r.peak_frontier <= reachable,
            "seed {seed}: frontier {}",
            r.peak_frontier
        );
        if r.cache_full {
            full += 1;
            assert!(
                r.notes.iter().any(|n| n.contains("explored") && n.contains("again")),
                "seed {seed}: {:?}",
                r.notes
            );
        }
    }
    assert!(full > 150, "{full} systems filled the cache");
}
