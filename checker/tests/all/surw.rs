//! SURW: the hit rate on a plain program without blocking equals the
//! probability of a uniform choice among its interleavings, computed here
//! by an independent enumeration of URW's weighted choices (sharing no
//! code with the driver); the same seed gives the same report and schedule
//! on 1 and 2 threads and different seeds differ; seeded bugs are found and
//! their counterexamples replay; planted violations of random programs are
//! found only when reachable.

use crate::{assert_binomial, default_program};
use mcheck_checker::search::{self, Strategy};
use mcheck_checker::testing::RandomProgram;
use mcheck_checker::{
    ActorId, ActorInfo, Config, Enabled, Event, Model, Outcome, PathKind, Program, Report, Violation, replay,
};
use mcheck_models::lostupdate::LostUpdate;
use mcheck_models::twopc::TwoPc;
use std::time::Duration;

/// Choice-path replay needs no explorer; this type only names `None`.
type NoExplorer = mcheck_checker::AnyExplorer;

// ---------------------------------------------------------------------------
// The plain program: three actors that never block, with 1, 3 and 2 steps
// (`LANES`). The bug: actor 0's only step runs after every step of the
// others. Of the 6! / (1! 3! 2!) = 60 interleavings, 5! / (3! 2!) = 10 put
// actor 0 last: 1/6 under a uniform choice among interleavings.

const LANES: [u32; 3] = [1, 3, 2];

struct Lanes;

impl Program for Lanes {
    /// Steps left per actor.
    type State = [u32; 3];
    fn initial(&self) -> [u32; 3] {
        LANES
    }
    fn actors(&self, _: &[u32; 3]) -> Vec<ActorInfo> {
        (0..3)
            .map(|i| ActorInfo {
                id: ActorId(i),
                kind: "lane",
                name: format!("lane{i}"),
            })
            .collect()
    }
    fn enabled(&self, s: &[u32; 3], out: &mut Vec<Enabled>) {
        for (i, &left) in s.iter().enumerate() {
            if left > 0 {
                out.push(Enabled {
                    actor: ActorId(i as u32),
                    alternatives: 1,
                });
            }
        }
    }
    fn execute(&self, s: &mut [u32; 3], actor: ActorId, _alt: u32, _: &mut Vec<Event>) -> Result<(), Violation> {
        let i = actor.0 as usize;
        if i == 0 && s[1] == 0 && s[2] == 0 {
            return Err(Violation::invariant("lane0 ran last"));
        }
        s[i] -= 1;
        Ok(())
    }
}

/// The oracle: the probability that the bug is hit when each step picks an
/// actor with probability `weight(left, i)` / (their sum over the enabled
/// actors), from `left` steps left per actor; by recursion over every
/// choice.
fn exact(left: [u32; 3], weight: &dyn Fn(&[u32; 3], usize) -> f64) -> f64 {
    let enabled: Vec<usize> = (0..3).filter(|&i| left[i] > 0).collect();
    let total: f64 = enabled.iter().map(|&i| weight(&left, i)).sum();
    enabled
        .iter()
        .map(|&i| {
            let p = weight(&left, i) / total;
            if i == 0 {
                // Actor 0's one step: the bug when the others are done.
                p * f64::from(u8::from(left[1] == 0 && left[2] == 0))
            } else {
                let mut next = left;
                next[i] -= 1;
                p * exact(next, weight)
            }
        })
        .sum()
}

/// URW with exact counts: weight = steps left.
fn urw(left: &[u32; 3], i: usize) -> f64 {
    f64::from(left[i])
}

/// A uniform choice among the enabled actors, for contrast.
fn uniform(_: &[u32; 3], _: usize) -> f64 {
    1.0
}

fn one_execution(seed: u64, threads: usize) -> Config {
    Config::default()
        .seed(seed)
        .threads(threads)
        .max_schedules(1)
        .time_limit(Duration::from_secs(60))
}

const RUNS: u64 = 2000;

/// The enumeration agrees with the count by hand (10 of 60 interleavings),
/// and a uniform choice among actors is far below it (17/216: actor 0,
/// enabled until it runs, must lose every draw until the others are done).
#[test]
fn urw_probability_by_hand() {
    let p = exact(LANES, &urw);
    assert!((p - 1.0 / 6.0).abs() < 1e-12, "{p}");
    let u = exact(LANES, &uniform);
    assert!((u - URW_UNIFORM_CONTRAST).abs() < 1e-12, "{u}");
}

/// The exact probability under a uniform choice among actors.
const URW_UNIFORM_CONTRAST: f64 = 17.0 / 216.0;

/// One execution per seed 0..RUNS: SURW on a plain program is URW over
/// actors, whose profile counts every actor's steps exactly here; its hit
/// rate is the uniform 1/6, within the binomial tolerance, and pinned.
#[test]
fn surw_hit_rate_on_a_plain_program_is_uniform() {
    let p = exact(LANES, &urw);
    let hits: u64 = (0..RUNS)
        .map(|seed| {
            let r = search::surw(&Lanes, &one_execution(seed, 1)).unwrap();
            assert_eq!(r.schedules, 1);
            u64::from(r.outcome == Outcome::Violation)
        })
        .sum();
    assert_binomial(hits, RUNS, p, "surw");
    let u = exact(LANES, &uniform);
    assert!(
        (hits as f64 / RUNS as f64 - u).abs() > 0.05,
        "{hits}: not told apart from a uniform choice among actors ({u})"
    );
    assert_eq!(hits, SURW_HITS);
}

/// SURW's hits on `Lanes` for seeds 0..RUNS (expected 333.3, sd 16.7).
const SURW_HITS: u64 = 366;

// ---------------------------------------------------------------------------

fn lostupdate(bug: Option<u32>) -> <LostUpdate as Model>::Program {
    default_program(&LostUpdate, bug)
}

fn twopc(bug: Option<u32>) -> <TwoPc as Model>::Program {
    default_program(&TwoPc, bug)
}

/// What must not depend on the number of threads or shards.
fn summary(r: &Report) -> (Outcome, u64, u64, u64, Option<Vec<u64>>, Vec<String>) {
    let path = r.schedule.as_ref().map(|s| s.path.clone());
    (r.outcome, r.schedules, r.steps, r.truncated, path, r.notes.clone())
}

fn config(seed: u64, threads: usize) -> Config {
    Config::default()
        .seed(seed)
        .threads(threads)
        .time_limit(Duration::from_secs(60))
}

/// Same seed, same report on 1 and 2 threads (the counterexample, every
/// count before it and the profile's note), and on a bug-free program
/// under a budget; different seeds give different walks.
#[test]
fn same_report_on_one_and_two_threads_and_seeds_differ() {
    let buggy = twopc(Some(1));
    let correct = lostupdate(None);
    let mut found = Vec::new();
    for seed in [0, 7] {
        let one = search::surw(&buggy, &config(seed, 1)).unwrap();
        assert_eq!(one.outcome, Outcome::Violation, "seed {seed}");
        assert_eq!(summary(&one), summary(&search::surw(&buggy, &config(seed, 2)).unwrap()));
        found.push(summary(&one));
        let budget = |threads| config(seed, threads).max_schedules(300);
        let one = search::surw(&correct, &budget(1)).unwrap();
        assert_eq!((one.outcome, one.schedules), (Outcome::Bounded, 300));
        assert_eq!(summary(&one), summary(&search::surw(&correct, &budget(2)).unwrap()));
    }
    assert_ne!(found[0].4, found[1].4, "seeds 0 and 7 found the same schedule");
    let steps = |seed| {
        let c = config(seed, 2).max_schedules(50);
        search::surw(&correct, &c).unwrap().steps
    };
    assert_ne!(steps(0), steps(1));
}

/// Two shards run exactly the executions of one unsharded run.
#[test]
fn shards_partition_the_executions() {
    let p = lostupdate(None);
    let c = config(3, 2).seed(3).threads(2).max_schedules(200);
    let whole = search::surw(&p, &c).unwrap();
    let parts: Vec<Report> = (0..2)
        .map(|k| search::surw(&p, &c.clone().shard(k, 2)).unwrap())
        .collect();
    assert_eq!(parts.iter().map(|r| r.schedules).sum::<u64>(), whole.schedules);
    assert_eq!(parts.iter().map(|r| r.steps).sum::<u64>(), whole.steps);
}

/// The seeded bugs of lostupdate and 2pc (bug 1) at the default
/// configuration: the schedules to find each for seeds 0..5 (pinned), and
/// every counterexample replays to the same violation.
#[test]
fn seeded_bugs_found_and_replayed() {
    let mut counts = Vec::new();
    for seed in 0..5 {
        let runs = [
            (search::surw(&lostupdate(Some(1)), &config(seed, 2)).unwrap(), 0),
            (search::surw(&twopc(Some(1)), &config(seed, 2)).unwrap(), 1),
        ];
        for (r, model) in runs {
            assert_eq!(r.outcome, Outcome::Violation, "model {model} seed {seed}");
            let schedule = r.schedule.as_ref().unwrap();
            assert_eq!(schedule.kind, PathKind::Choices);
            let ex = if model == 0 {
                replay(&lostupdate(Some(1)), None::<NoExplorer>, schedule, false)
            } else {
                replay(&twopc(Some(1)), None::<NoExplorer>, schedule, false)
            }
            .unwrap();
            assert_eq!(ex.violation.as_ref(), r.violation.as_ref(), "model {model} seed {seed}");
            counts.push(r.schedules);
        }
    }
    assert_eq!(counts, SEEDED_SCHEDULES);
}

/// (lostupdate, 2pc) schedules to the bug for seeds 0..5, interleaved.
const SEEDED_SCHEDULES: [u64; 10] = [1, 23, 1, 15, 1, 11, 1, 4, 1, 32];

/// On random transition systems (plain programs: URW over actors) a
/// planted violation is found only when it is reachable, and its
/// counterexample replays; `run` dispatches `-s surw` to the same search.
#[test]
fn random_programs_found_only_when_reachable_and_replayed() {
    let mut found = 0;
    let mut reachable = 0;
    for seed in 0..100 {
        let p = RandomProgram::generate(seed, false, true);
        let oracle = p.oracle();
        reachable += u32::from(oracle.violation_reachable);
        let c = Config::default()
            .max_schedules(3000)
            .max_steps(200)
            .time_limit(Duration::from_secs(30));
        let r = search::surw(&p, &c).unwrap();
        if r.outcome != Outcome::Violation {
            assert_eq!(r.outcome, Outcome::Bounded, "seed {seed}");
            continue;
        }
        assert!(oracle.violation_reachable, "seed {seed}: unreachable violation");
        found += 1;
        let ex = replay(&p, None::<NoExplorer>, r.schedule.as_ref().unwrap(), false).unwrap();
        assert_eq!(ex.violation.as_ref(), r.violation.as_ref(), "seed {seed}");
    }
    assert_eq!((reachable, found), RANDOM_FOUND);
    assert_eq!(Strategy::Surw.name(), "surw");
}

const RANDOM_FOUND: (u32, u32) = (65, 64);
