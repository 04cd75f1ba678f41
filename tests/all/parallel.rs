//! Parallel SES (`-j 2`) against the independent BFS oracle on random
//! transition systems with cycles, with the real RR, RTC and PRR explorers;
//! on the models: exact state counts, a replayable counterexample, budgets.
//!
//! The workers race for the shared cache, so which one expands a state (and
//! with it the deferral counts and the counterexample) varies from run to
//! run; what these tests pin may not: the states and transitions of a run
//! to exhaustion (each state is inserted and expanded exactly once, each of
//! its choices taken exactly once), the outcome, and that a counterexample
//! replays. Several runs of the same model repeat the check under
//! different interleavings.

use mcheck_checker::explorers::{AnyExplorer, builtin};
use mcheck_checker::search;
use mcheck_checker::testing::RandomProgram;
use mcheck_checker::{BoundedBy, Config, Model, Outcome, Params, PathKind, Schedule, StopFlag};
use mcheck_models::lostupdate::LostUpdate;
use mcheck_models::paxos::Paxos;
use mcheck_models::twopc::TwoPc;
use mcheck_models::twophase_packed::TwoPhasePacked;

const EXPLORERS: [&str; 3] = ["rr", "rtc", "prr"];

fn two_threads() -> Config {
    Config::default().max_memory(1 << 30).threads(2)
}

fn explorer(name: &str) -> AnyExplorer {
    builtin(name).unwrap()
}

#[test]
fn parallel_ses_visits_exactly_the_reachable_set() {
    let mut several_strata = 0;
    for seed in 0..500u64 {
        let oracle = RandomProgram::generate(seed, false, false).oracle();
        for name in EXPLORERS {
            let p = RandomProgram::generate(seed, false, false).recording();
            let config = two_threads().seed(seed);
            let r = search::ses(&p, explorer(name), &config).unwrap();
            assert_eq!(r.outcome, Outcome::Verified, "seed {seed} {name}");
            assert_eq!(r.threads, 2);
            assert_eq!(r.states, oracle.reachable.len() as u64, "seed {seed} {name}");
            assert_eq!(p.seen_states(), oracle.reachable, "seed {seed} {name}");
            assert_eq!(r.transitions, oracle.transitions, "seed {seed} {name}");
            let per_stratum: u64 = r.strata.iter().map(|s| s.new_states).sum();
            assert_eq!(per_stratum, r.states, "seed {seed} {name}");
            assert!(!r.cache_full);
            if r.strata.len() >= 3 {
                several_strata += 1;
            }
        }
    }
    // Most runs have parallel strata (every stratum after the first).
    assert_eq!(several_strata, 1293, "runs of 1,500 with 3+ strata");
}

#[test]
fn parallel_ses_finds_planted_violations_exactly_when_reachable_and_they_replay() {
    let (mut found, mut unreachable) = (0, 0);
    for seed in 0..500u64 {
        let p = RandomProgram::generate(seed, false, true);
        let oracle = p.oracle();
        for name in EXPLORERS {
            let config = two_threads().seed(seed);
            let r = search::ses(&p, explorer(name), &config).unwrap();
            assert_eq!(r.is_violation(), oracle.violation_reachable, "seed {seed} {name}");
            if let Some(mut schedule) = r.schedule {
                schedule.model = "random".into();
                assert_eq!(schedule.kind, PathKind::Delays);
                let schedule = Schedule::from_text(&schedule.to_text()).unwrap();
                let ex = mcheck_checker::replay(&p, Some(explorer(name)), &schedule, true).unwrap();
                let want = r.violation.unwrap();
                let got = ex.violation.expect("replay reproduces a violation");
                assert_eq!(got, want, "seed {seed} {name}");
                assert_eq!(ex.trace.len(), want.step + 1, "seed {seed} {name}");
            }
        }
        if oracle.violation_reachable {
            found += 1;
        } else {
            unreachable += 1;
        }
    }
    assert_eq!(
        (found, unreachable),
        (299, 201),
        "seeds with a reachable violation, and without"
    );
}

#[test]
fn parallel_pb_visits_exactly_the_reachable_set() {
    for seed in 0..300u64 {
        let oracle = RandomProgram::generate(seed, false, false).oracle();
        let p = RandomProgram::generate(seed, false, false).recording();
        let r = search::pb(&p, &two_threads()).unwrap();
        assert_eq!(r.outcome, Outcome::Verified, "seed {seed}");
        assert_eq!(r.threads, 2);
        assert_eq!(p.seen_states(), oracle.reachable, "seed {seed}");
        assert_eq!(r.transitions, oracle.transitions, "seed {seed}");
    }
}

#[test]
fn with_a_full_cache_parallel_ses_stays_sound_on_acyclic_systems() {
    for seed in 0..300u64 {
        let oracle = RandomProgram::generate(seed, true, false).oracle();
        for name in EXPLORERS {
            let p = RandomProgram::generate(seed, true, false).recording();
            let config = two_threads().cache_bytes(64);
            let r = search::ses(&p, explorer(name), &config).unwrap();
            assert_eq!(r.outcome, Outcome::Verified, "seed {seed} {name}: {:?}", r.notes);
            // A budget of 64 bytes is less than a slot per shard: every
            // insert after the initial state's answers Full.
            assert_eq!(r.cache_full, r.transitions > 0, "seed {seed} {name}");
            assert_eq!(p.seen_states(), oracle.reachable, "seed {seed} {name}");
        }
    }
}

#[test]
fn budgets_stop_parallel_ses_with_bounded() {
    let params = Params::resolve(
        "twophase-packed",
        &TwoPhasePacked.info().params,
        &[("rms".into(), "5".into())],
    )
    .unwrap();
    let p = TwoPhasePacked.build(&params, None);
    let config = two_threads().max_states(2_000);
    let r = search::ses(&p, explorer("rtc"), &config).unwrap();
    assert_eq!((r.outcome, r.bounded_by), (Outcome::Bounded, Some(BoundedBy::States)));
    assert!(r.states >= 2_000, "{}", r.states);
    let stop = StopFlag::new();
    stop.raise();
    let config = two_threads().stop(stop);
    let r = search::ses(&p, explorer("rtc"), &config).unwrap();
    assert_eq!(
        (r.outcome, r.bounded_by),
        (Outcome::Bounded, Some(BoundedBy::Interrupted))
    );
    let config = two_threads().max_delays(3);
    let r = search::ses(&p, explorer("rtc"), &config).unwrap();
    assert_eq!(
        (r.outcome, r.bounded_by, r.bound_reached),
        (Outcome::Bounded, Some(BoundedBy::MaxDelays), 3)
    );
}

#[test]
fn twophase_rms4_is_verified_with_exactly_its_states_on_two_threads() {
    let params = Params::resolve(
        "twophase-packed",
        &TwoPhasePacked.info().params,
        &[("rms".into(), "4".into())],
    )
    .unwrap();
    let p = TwoPhasePacked.build(&params, None);
    // Five runs: five chances for the workers to interleave differently.
    for run in 0..5 {
        for name in ["rtc", "rr"] {
            let r = search::ses(&p, explorer(name), &two_threads()).unwrap();
            assert_eq!(r.outcome, Outcome::Verified, "run {run} {name}");
            assert_eq!((r.states, r.transitions), (1_568, 8_257), "run {run} {name}");
            assert_eq!(r.threads, 2);
        }
    }
}

#[test]
fn the_cli_reports_threads_and_verifies_twophase_on_two_threads() {
    let args = [
        "run", "twophase", "--set", "rms=4", "-s", "ses", "-j", "2", "-q", "--json",
    ];
    let out = crate::common::mcheck(&args);
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["outcome"], "verified");
    assert_eq!(json["threads"], 2);
    assert_eq!(json["states"], 1_568);
    assert_eq!(json["transitions"], 8_257);
}

#[test]
fn a_paxos_bug_found_on_two_threads_replays() {
    let params = Params::resolve("paxos", &Paxos.info().params, &[]).unwrap();
    for bug in [1, 2] {
        let p = Paxos.build(&params, Some(bug));
        let r = search::ses(&p, explorer("rtc"), &two_threads()).unwrap();
        assert_eq!(r.outcome, Outcome::Violation, "bug {bug}");
        assert_eq!(r.threads, 2);
        let found = r.violation.clone().unwrap();
        let mut schedule = r.schedule.unwrap();
        schedule.model = "paxos".into();
        let again = Schedule::from_text(&schedule.to_text()).unwrap();
        let ex = mcheck_checker::replay(&p, Some(explorer("rtc")), &again, false).unwrap();
        let v = ex.violation.expect("the counterexample replays");
        assert_eq!(v, found, "bug {bug}");
    }
}

/// The time limit holds at any thread count: far more threads than cores
/// (each worker checks the clock every few hundred transitions, and a
/// chunk that starts late stops at once) end within a second of the limit.
#[test]
fn the_time_limit_holds_with_many_more_threads_than_cores() {
    let params = Params::resolve(
        "twophase-packed",
        &TwoPhasePacked.info().params,
        &[("rms".into(), "8".into())],
    )
    .unwrap();
    let p = TwoPhasePacked.build(&params, None);
    for threads in [64, 1024] {
        let config = two_threads()
            .threads(threads)
            .time_limit(std::time::Duration::from_millis(500));
        let start = std::time::Instant::now();
        let r = search::ses(&p, explorer("rtc"), &config).unwrap();
        let wall = start.elapsed().as_secs_f64();
        assert_eq!(
            (r.outcome, r.bounded_by),
            (Outcome::Bounded, Some(BoundedBy::Time)),
            "-j {threads}"
        );
        assert_eq!(r.threads, threads);
        assert!(wall < 1.5, "-j {threads}: {wall:.2} s for a limit of 0.5 s");
    }
}

/// Parallel DFS (`-s dfs -j 2` and `-j 3`) against the BFS oracle: the
/// reachable set and every transition exactly once, in one stratum at
/// bound 0, whether the work was spread far enough to run depth first
/// on all threads or the search ended while spreading it.
#[test]
fn parallel_dfs_visits_exactly_the_reachable_set() {
    for seed in 0..300u64 {
        let oracle = RandomProgram::generate(seed, false, false).oracle();
        for threads in [2, 3] {
            let p = RandomProgram::generate(seed, false, false).recording();
            let config = two_threads().threads(threads).max_delays(0);
            let r = search::dfs(&p, &config).unwrap();
            assert_eq!(r.outcome, Outcome::Verified, "seed {seed} -j {threads}");
            assert_eq!(r.threads, threads);
            assert_eq!(r.states, oracle.reachable.len() as u64, "seed {seed} -j {threads}");
            assert_eq!(p.seen_states(), oracle.reachable, "seed {seed} -j {threads}");
            assert_eq!(r.transitions, oracle.transitions, "seed {seed} -j {threads}");
            assert_eq!(r.strata.len(), 1);
            assert_eq!((r.strata[0].new_states, r.bound_reached), (r.states, 0));
            assert!(r.notes[0].starts_with(&format!("dfs on {threads} threads: ")));
        }
    }
}

/// On TwoPhase with 6 resource managers the spreading strata reach
/// 256 work items per thread and the rest runs depth first: TLC's 50,816
/// states, and the transitions of a DFS on one thread.
#[test]
fn parallel_dfs_runs_twophase_depth_first_with_exactly_its_states() {
    let params = Params::resolve(
        "twophase-packed",
        &TwoPhasePacked.info().params,
        &[("rms".into(), "6".into())],
    )
    .unwrap();
    let p = TwoPhasePacked.build(&params, None);
    let one = search::dfs(&p, &Config::default()).unwrap();
    assert_eq!((one.outcome, one.states, one.deferrals), (Outcome::Verified, 50_816, 0));
    for run in 0..3 {
        for threads in [2, 3] {
            let config = two_threads().threads(threads);
            let r = search::dfs(&p, &config).unwrap();
            assert_eq!(r.outcome, Outcome::Verified, "run {run} -j {threads}");
            assert_eq!(
                (r.states, r.transitions),
                (50_816, one.transitions),
                "run {run} -j {threads}"
            );
            assert!(r.deferrals > 0, "run {run} -j {threads}");
            let spread = &r.notes[0];
            assert!(
                spread.contains("work items, which ran depth first on all threads"),
                "run {run} -j {threads}: {spread}"
            );
        }
    }
}

/// A planted violation is found by parallel DFS exactly when it is
/// reachable, and its choice path replays to the same violation.
#[test]
fn parallel_dfs_finds_planted_violations_exactly_when_reachable_and_they_replay() {
    let mut found = 0;
    for seed in 0..500u64 {
        let p = RandomProgram::generate(seed, false, true);
        let oracle = p.oracle();
        let r = search::dfs(&p, &two_threads()).unwrap();
        assert_eq!(r.is_violation(), oracle.violation_reachable, "seed {seed}");
        if let Some(mut schedule) = r.schedule {
            found += 1;
            schedule.model = "random".into();
            assert_eq!(schedule.kind, PathKind::Choices);
            let schedule = Schedule::from_text(&schedule.to_text()).unwrap();
            let ex = mcheck_checker::replay(&p, None::<AnyExplorer>, &schedule, true).unwrap();
            let want = r.violation.unwrap();
            assert_eq!(
                ex.violation.expect("replay reproduces a violation"),
                want,
                "seed {seed}"
            );
        }
    }
    assert!(found > 150, "found {found}");
}

/// On machine models, whose spreading strata retire entries that still
/// owe transitions to the strata after them (owed, once the bound is
/// lifted, to the unbounded stratum), parallel DFS counts the states and
/// transitions of DFS on one thread (lostupdate: 39,104 and 79,608; 2pc:
/// 82,782 and 229,079 on one thread).
#[test]
fn parallel_dfs_counts_what_one_thread_counts_on_machine_models() {
    let lostupdate = LostUpdate.build(
        &Params::resolve("lostupdate", &LostUpdate.info().params, &[]).unwrap(),
        None,
    );
    let twopc = TwoPc.build(&Params::resolve("2pc", &TwoPc.info().params, &[]).unwrap(), None);
    let one = search::dfs(&lostupdate, &Config::default()).unwrap();
    assert_eq!((one.states, one.transitions), (39_104, 79_608));
    let one_2pc = search::dfs(&twopc, &Config::default()).unwrap();
    assert_eq!((one_2pc.states, one_2pc.transitions), (82_782, 229_079));
    for threads in [2, 3] {
        let config = two_threads().threads(threads);
        let r = search::dfs(&lostupdate, &config).unwrap();
        assert_eq!((r.states, r.transitions), (39_104, 79_608), "lostupdate -j {threads}");
        assert!(
            r.deferrals > 0 && r.notes[0].contains("ran depth first"),
            "{:?}",
            r.notes
        );
        let r = search::dfs(&twopc, &config).unwrap();
        assert_eq!((r.states, r.transitions), (82_782, 229_079), "2pc -j {threads}");
    }
}
