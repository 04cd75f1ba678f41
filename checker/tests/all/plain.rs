//! The plain stratified search (`Config::plain`, `search/plain.rs`) is the
//! optimised one's reference: on the random systems of the oracle tests,
//! SES (with RR, RTC, PRR and a local explorer), DFS and PB give the same
//! counts in every stratum both ways, the same outcome and the same
//! counterexample, with the cache keyed by the program state or by both
//! states, with a delay bound, with executions cut at the step limit, with
//! a full cache and without one. The shipped models are compared in
//! `models/tests/all/plain.rs`.

use mcheck_checker::explorers::{ProbabilisticRoundRobin, RoundRobin, RunToCompletion};
use mcheck_checker::search;
use mcheck_checker::testing::{Causal, RandomProgram};
use mcheck_checker::{BoundedBy, Config, Explorer, Outcome, Report, SearchError, Shortcuts};

/// (bound, new states, transitions, deferrals, frontier) per stratum.
type Strata = Vec<(u32, u64, u64, u64, u64)>;

fn strata(r: &Report) -> Strata {
    let s = r.strata.iter();
    s.map(|s| (s.bound, s.new_states, s.transitions, s.deferrals, s.frontier))
        .collect()
}

/// Asserts that the optimised search's result `fast` is the plain one's,
/// `plain`: the same error, or the same outcome, states, counterexample
/// and strata. A stratum that a violation stopped counts only the work
/// done, which the optimised search may have done less of (an entry
/// retired or passed through owes its counts to complete strata only):
/// its new states are the same, its transitions and deferrals at most
/// the plain search's.
fn assert_same(fast: &Result<Report, SearchError>, plain: &Result<Report, SearchError>, what: &str) {
    let (fast, plain) = match (fast, plain) {
        (Ok(f), Ok(p)) => (f, p),
        (f, p) => {
            let error = |r: &Result<Report, SearchError>| r.as_ref().err().map(|e| e.to_string());
            assert_eq!(error(f), error(p), "{what}");
            return;
        }
    };
    assert_eq!(
        (&fast.outcome, fast.bounded_by, fast.states, fast.cache_full),
        (&plain.outcome, plain.bounded_by, plain.states, plain.cache_full),
        "{what}"
    );
    assert_eq!(
        (&fast.violation, &fast.schedule),
        (&plain.violation, &plain.schedule),
        "{what}"
    );
    let (f, p) = (strata(fast), strata(plain));
    assert_eq!(f.len(), p.len(), "{what}: {f:?} {p:?}");
    if fast.outcome != Outcome::Violation {
        assert_eq!(f, p, "{what}");
        let totals = |r: &Report| (r.transitions, r.deferrals, r.peak_frontier, r.bound_reached);
        assert_eq!(totals(fast), totals(plain), "{what}");
        return;
    }
    let last = f.len() - 1;
    assert_eq!(f[..last], p[..last], "{what}");
    let ((_, nf, tf, df, _), (_, np, tp, dp, _)) = (f[last], p[last]);
    assert!(nf == np && tf <= tp && df <= dp, "{what}: {:?} {:?}", f[last], p[last]);
}

/// SES with `explorer`, DFS and PB on `p`, each optimised and plain under
/// `config`; the number of runs that ended in a violation.
fn compare_all<E: Explorer>(p: &RandomProgram, explorer: &E, config: &Config, what: &str) -> u64 {
    let plain = config.clone().plain(true);
    let mut violations = 0;
    for strategy in ["ses", "dfs", "pb"] {
        let run = |c: &Config| match strategy {
            "ses" => search::ses(p, explorer.clone(), c),
            "dfs" => search::dfs(p, c),
            _ => search::pb(p, c),
        };
        let (f, q) = (run(config), run(&plain));
        assert_same(&f, &q, &format!("{what}, {strategy} with {}", explorer.name()));
        violations += u64::from(q.is_ok_and(|r| r.is_violation()));
    }
    violations
}

/// [`compare_all`] with every explorer: the local one (its order walked
/// by the optimised search's retirement checks) and the built-in RR, RTC
/// and PRR, each as its own type (trusted: the checks are prepared ahead
/// and entries pass strata through, which an `AnyExplorer` never does);
/// the number of runs that ended in a violation.
fn compare_explorers(p: &RandomProgram, config: &Config, what: &str) -> u64 {
    compare_all(p, &Causal::default(), config, what)
        + compare_all(p, &RoundRobin::default(), config, what)
        + compare_all(p, &RunToCompletion::default(), config, what)
        + compare_all(p, &ProbabilisticRoundRobin::default(), config, what)
}

fn quiet() -> Config {
    Config::default().max_memory(1 << 30)
}

/// Cyclic systems, half with planted violations: run to exhaustion or to
/// the first violation, with either cache key.
#[test]
fn plain_and_optimised_agree_on_random_systems() {
    let mut violations = 0;
    for seed in 0..150u64 {
        let p = RandomProgram::generate(seed, false, seed % 2 == 0);
        for exact_bound in [false, true] {
            let config = quiet().exact_bound(exact_bound);
            violations += compare_explorers(&p, &config, &format!("seed {seed}, exact bound {exact_bound}"));
        }
    }
    // Not vacuous: violations stop strata midway.
    assert!(violations > 300, "{violations} violations");
}

/// A delay bound, a step limit that cuts executions, and a state budget.
/// The state budget is checked every 1,024 transitions, and within a
/// stratum the optimised search counts the transitions of the entries it
/// passed through only at the stratum's end: it may stop a check later,
/// in a later stratum, so only the strata both completed are compared.
#[test]
fn plain_and_optimised_agree_under_bounds() {
    for seed in 0..100u64 {
        let p = RandomProgram::generate(seed, false, false);
        for (max_delays, max_steps) in [(Some(1), 10_000), (Some(2), 6), (None, 4)] {
            let mut config = quiet().max_steps(max_steps);
            config.max_delays = max_delays;
            compare_explorers(
                &p,
                &config,
                &format!("seed {seed}, {max_delays:?} delays, {max_steps} steps"),
            );
        }
        let budget = |plain| quiet().max_states(30).plain(plain);
        let fast = search::ses(&p, Causal::default(), &budget(false)).unwrap();
        let plain = search::ses(&p, Causal::default(), &budget(true)).unwrap();
        for r in [&fast, &plain] {
            assert!(
                r.is_verified() || r.bounded_by == Some(BoundedBy::States),
                "seed {seed}"
            );
        }
        let (f, p) = (strata(&fast), strata(&plain));
        let complete = f.len().min(p.len()) - 1;
        assert_eq!(f[..complete], p[..complete], "seed {seed}");
    }
}

/// Acyclic systems with a cache too small for them (successors explored
/// again, one frontier entry per state) and with no cache at all.
#[test]
fn plain_and_optimised_agree_with_a_full_cache_or_none() {
    let mut full = 0;
    for seed in 0..50u64 {
        let p = RandomProgram::generate(seed, true, seed % 2 == 0);
        for budget in [Some(64), None] {
            let mut config = quiet().use_cache(budget.is_some());
            config.cache_bytes = budget;
            compare_explorers(&p, &config, &format!("seed {seed}, cache {budget:?}"));
            let r = search::dfs(&p, &config.plain(true)).unwrap();
            full += u64::from(r.cache_full);
        }
    }
    assert_eq!(full, 27, "searches that filled the cache");
}

/// The plain search against the independent BFS oracle: every reachable
/// state once, every transition of a reachable state once (the counts of
/// a system worked by hand are pinned in `search/plain.rs`'s unit tests).
#[test]
fn the_plain_search_visits_exactly_the_reachable_set() {
    for seed in 0..200u64 {
        let oracle = RandomProgram::generate(seed, false, false).oracle();
        let p = RandomProgram::generate(seed, false, false).recording();
        let config = quiet().plain(true);
        for r in [
            search::ses(&p, Causal::default(), &config),
            search::dfs(&p, &config),
            search::pb(&p, &config),
        ] {
            let r = r.unwrap();
            assert_eq!(r.outcome, Outcome::Verified, "seed {seed}");
            assert_eq!(
                (r.states, r.transitions),
                (oracle.reachable.len() as u64, oracle.transitions)
            );
        }
        assert_eq!(p.seen_states(), oracle.reachable, "seed {seed}");
    }
}

/// The plain search runs on one thread: asked for more, it is an input
/// error, not a quiet single-threaded run.
#[test]
fn the_plain_search_refuses_several_threads() {
    let p = RandomProgram::generate(1, false, false);
    let config = quiet().plain(true).threads(2);
    for r in [search::ses(&p, Causal::default(), &config), search::dfs(&p, &config)] {
        assert!(matches!(r, Err(SearchError::Input(m)) if m.contains("one thread")));
    }
}

/// Each shortcut of the optimised layer off on its own, and the throttles
/// off (retirement and pass-through then tried at every chance): still the
/// plain search's counts, outcome and counterexample.
#[test]
fn each_shortcut_off_agrees_with_plain() {
    // `sent` is the distributed SES's (distributed/tests/random.rs).
    for name in Shortcuts::NAMES.into_iter().filter(|n| *n != "sent") {
        let shortcuts = Shortcuts::ALL.without(name).expect("a shortcut's name");
        for seed in 0..40u64 {
            let p = RandomProgram::generate(seed, false, seed % 2 == 0);
            let config = quiet().shortcuts(shortcuts);
            compare_explorers(&p, &config, &format!("seed {seed}, without {name}"));
        }
    }
}
