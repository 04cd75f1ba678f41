//! The portfolio: the same report on 1 and 2 threads; its counterexample
//! is exactly the one the member that found it finds when run alone with
//! the same seed (the members' samples are the techniques' own), and
//! replays; on random transition systems it finds a planted violation
//! exactly when the independent oracle says it is reachable, and
//! otherwise verifies with the oracle's count of states; the steps are
//! shared as the weights say.

use crate::default_program;
use mcheck_checker::search::{self, DEFAULT_PCT_DEPTH, PORTFOLIO_SES_WEIGHT, SsParams, Strategy};
use mcheck_checker::testing::RandomProgram;
use mcheck_checker::{Config, Model, Outcome, Pace, Program, Report, builtin, replay};
use mcheck_models::chain::Chain;
use mcheck_models::lostupdate::LostUpdate;
use mcheck_models::twopc::TwoPc;
use mcheck_models::twophase::TwoPhase;
use std::sync::Arc;
use std::time::Duration;

fn lostupdate(bug: Option<u32>) -> <LostUpdate as Model>::Program {
    default_program(&LostUpdate, bug)
}

fn chain(bug: Option<u32>) -> <Chain as Model>::Program {
    default_program(&Chain, bug)
}

fn twopc(bug: Option<u32>) -> <TwoPc as Model>::Program {
    default_program(&TwoPc, bug)
}

fn config(seed: u64, threads: usize) -> Config {
    Config::default()
        .seed(seed)
        .threads(threads)
        .time_limit(Duration::from_secs(120))
}

fn portfolio<P: Program>(p: &P, c: &Config) -> Report {
    search::portfolio(p, builtin("rtc").unwrap(), c).unwrap()
}

/// What must not depend on the number of threads.
type Summary = (
    Outcome,
    Option<String>,
    u64,
    u64,
    u64,
    u64,
    Option<Vec<u64>>,
    Vec<String>,
);

fn summary(r: &Report) -> Summary {
    let path = r.schedule.as_ref().map(|s| s.path.clone());
    (
        r.outcome,
        r.found_by.clone(),
        r.schedules,
        r.steps,
        r.states,
        r.transitions,
        path,
        r.notes.clone(),
    )
}

/// The technique a member runs, alone, with the same seed.
fn alone<P: Program>(p: &P, member: &str, c: &Config) -> Report {
    let explorer = |name: &str| builtin(name).unwrap();
    match member {
        "ses-rtc" => search::ses(p, explorer("rtc"), c),
        "ss-rr" | "ss-rtc" | "ss-prr" => search::ss(p, explorer(&member[3..]), c, &SsParams::default()),
        "rs" => search::rs(p, c),
        "pct" => search::pct(p, c, DEFAULT_PCT_DEPTH, None),
        "pos" => search::pos(p, c),
        "pctcp" => search::pctcp(p, c, DEFAULT_PCT_DEPTH, None),
        "surw" => search::surw(p, c),
        other => panic!("no member {other}"),
    }
    .unwrap()
}

/// The report's counterexample replays (with the explorer it names, if
/// any) to the report's violation.
fn assert_replays<P: Program>(p: &P, r: &Report) {
    let schedule = r.schedule.as_ref().expect("a violation has a schedule");
    let explorer = schedule.explorer.as_deref().and_then(builtin);
    let ex = replay(p, explorer, schedule, false).unwrap();
    assert_eq!(ex.violation.as_ref(), r.violation.as_ref(), "{:?}", r.found_by);
}

/// Same seed, same report on 1 and 2 threads: the member that found the
/// bug, its counterexample, every count and every member's note.
#[test]
fn same_report_on_one_and_two_threads() {
    for seed in [0, 5] {
        let p = twopc(Some(1));
        let one = portfolio(&p, &config(seed, 1));
        assert_eq!(one.outcome, Outcome::Violation, "seed {seed}");
        assert_eq!(summary(&one), summary(&portfolio(&p, &config(seed, 2))), "seed {seed}");
        let p = lostupdate(Some(1));
        let one = portfolio(&p, &config(seed, 1));
        assert_eq!(summary(&one), summary(&portfolio(&p, &config(seed, 2))), "seed {seed}");
    }
}

/// The portfolio's violation on `p` (checked to replay) and the schedule
/// of the member that found it, run alone with the same seed on one
/// thread; the portfolio's own schedule for a member that cuts its walks
/// (its walks are the technique's walks of another round; the checker's
/// unit tests show that a cut walk finds what the whole walk finds).
fn found_and_alone<P: Program>(p: &P, c: &Config) -> (Report, Option<mcheck_checker::Schedule>) {
    let r = portfolio(p, c);
    assert_eq!(r.outcome, Outcome::Violation, "seed {}", c.seed);
    assert_replays(p, &r);
    let member = r.found_by.clone().expect("a violation names its member");
    if member.ends_with("-cut") {
        return (r.clone(), r.schedule);
    }
    let alone = alone(p, &member, &c.clone().threads(1));
    (r, alone.schedule)
}

/// The counterexample is the member's own: the technique alone, with the
/// same seed, finds the same schedule; and it replays to the same
/// violation. Pins which member found each bug for seeds 0..3 (SES, SS
/// and the random walks among them).
#[test]
fn the_counterexample_is_the_members_own_and_replays() {
    let mut winners = Vec::new();
    for seed in 0..3 {
        let c = config(seed, 2);
        for (model, bug) in [("2pc", 1), ("2pc", 2), ("2pc", 4), ("2pc", 5), ("chain", 5)] {
            let (r, schedule_alone) = match model {
                "2pc" => found_and_alone(&twopc(Some(bug)), &c),
                _ => found_and_alone(&chain(Some(bug)), &c),
            };
            assert_eq!(r.outcome, Outcome::Violation);
            assert_eq!(r.schedule, schedule_alone, "{model} bug {bug} seed {seed}");
            winners.push(r.found_by.unwrap());
        }
    }
    assert_eq!(winners, WINNERS);
}

/// The members that found 2pc bugs 1, 2, 4, 5 and chain bug 5, for
/// seeds 0, 1, 2.
const WINNERS: [&str; 15] = [
    "pct-cut", "rs", "rs", "surw", "ses-rtc", // seed 0
    "pct", "surw-cut", "pos", "ses-rtc", "ses-rtc", // seed 1
    "pct-cut", "surw", "pct-cut", "surw", "ses-rtc", // seed 2
];

/// When SES finds the bug within its first share, the sampling members
/// only catch up with it, one sample at a time, each cut at what is left
/// of the way: on TwoPhase bug 1 with seed 1 (SES at 61 transitions,
/// while a whole sample runs to the 10,000-step limit) they run 61 steps
/// in all, in 4 samples. With seed 0 a cut walk of PCTCP finds the bug
/// after 54 sampling steps, earlier than SES: it wins, and its schedule
/// replays.
#[test]
fn the_sampling_members_catch_up_with_an_early_ses_violation() {
    let p = default_program(&TwoPhase, Some(1));
    let r = portfolio(&p, &config(1, 2));
    assert_eq!(r.found_by.as_deref(), Some("ses-rtc"));
    assert_replays(&p, &r);
    assert_eq!((r.transitions, r.schedules, r.steps), (61, 4, 61));
    let r = portfolio(&p, &config(0, 2));
    assert_eq!(r.found_by.as_deref(), Some("pctcp-cut"));
    assert_replays(&p, &r);
    assert_eq!((r.transitions, r.schedules, r.steps), (0, 4, 54));
    assert_eq!(alone(&p, "ses-rtc", &config(0, 1)).transitions, 61);
}

/// 2pc's bug 6 is a liveness bug: safety holds, so SES verifies the
/// program alone; `run` with liveness finds it (a sampling member by
/// temperature, or the exhaustive liveness check after SES verified), and
/// the counterexample replays to it.
#[test]
fn a_liveness_bug_is_found_through_run() {
    let p = twopc(Some(6));
    assert_eq!(portfolio(&p, &config(0, 2)).outcome, Outcome::Verified);
    let c = config(0, 2).liveness(true);
    let r = mcheck_checker::run(&p, builtin("rtc").unwrap(), &Strategy::Portfolio, &c).unwrap();
    assert_eq!(r.outcome, Outcome::Violation, "{:?}", r.notes);
    assert_replays(&p, &r);
    assert_eq!(r.found_by.as_deref(), Some(LIVENESS_FOUND_BY));
}

/// The member that found 2pc's bug 6 with liveness, seed 0.
const LIVENESS_FOUND_BY: &str = "pos";

/// On random transition systems with cycles: a planted violation is found
/// exactly when the oracle says it is reachable; otherwise SES verifies,
/// with the oracle's number of states.
#[test]
fn random_programs_found_when_reachable_else_verified() {
    let (mut found, mut verified) = (0, 0);
    for seed in 0..60 {
        let p = RandomProgram::generate(seed, false, seed % 3 != 0);
        let oracle = p.oracle();
        let c = config(seed, 2).max_steps(200);
        let r = portfolio(&p, &c);
        if oracle.violation_reachable {
            assert_eq!(r.outcome, Outcome::Violation, "seed {seed}");
            assert_replays(&p, &r);
            found += 1;
        } else {
            assert_eq!(r.outcome, Outcome::Verified, "seed {seed}");
            assert_eq!(r.states, oracle.reachable.len() as u64, "seed {seed}");
            verified += 1;
        }
    }
    assert_eq!((found, verified), RANDOM);
    assert_eq!(Strategy::Portfolio.name(), "portfolio");
}

const RANDOM: (u32, u32) = (24, 36);

/// On 2pc without a bug, SES verifies with the states SES alone counts,
/// having run about as many transitions as the sampling members ran
/// steps (weights 16 and 16 of 32), within the granularity of an epoch.
#[test]
fn ses_verifies_and_the_members_share_the_steps_by_weight() {
    assert_eq!(PORTFOLIO_SES_WEIGHT, 16);
    let p = twopc(None);
    let r = portfolio(&p, &config(1, 2));
    assert_eq!(r.outcome, Outcome::Verified, "{:?}", r.notes);
    let ses = alone(&p, "ses-rtc", &config(1, 1));
    assert_eq!((r.states, r.transitions), (ses.states, ses.transitions));
    let ratio = r.transitions as f64 / r.steps as f64;
    assert!(
        (0.5..2.0).contains(&ratio),
        "transitions {} steps {}",
        r.transitions,
        r.steps
    );
    assert_eq!((r.schedules, r.steps), SHARED);
}

/// The sampling members' schedules and steps when SES verified 2pc.
const SHARED: (u64, u64) = (6658, 298331);

/// Without a time limit the portfolio runs as long as its SES member: SES
/// stopped by its state budget ends it, `bounded` by states, with the
/// counts SES alone has at that budget. With a time limit the sampling
/// members go on until it.
#[test]
fn without_a_time_limit_the_portfolio_ends_with_ses() {
    let p = twopc(None);
    let mut budget = config(1, 2).max_states(5_000);
    budget.time_limit = None;
    let r = portfolio(&p, &budget);
    assert_eq!(
        (r.outcome, r.bounded_by, r.found_by.as_deref()),
        (Outcome::Bounded, Some(mcheck_checker::BoundedBy::States), None),
        "{:?}",
        r.notes
    );
    // SES alone, paced by a hook that always lets it go on: its budget
    // checks fall where the portfolio's SES member has them.
    let paced = budget.clone().threads(1).pace(Pace(Arc::new(|_, _| true)));
    let ses = alone(&p, "ses-rtc", &paced);
    assert_eq!((r.states, r.transitions), (ses.states, ses.transitions));
    let timed = budget.time_limit(Duration::from_millis(300));
    let r = portfolio(&p, &timed);
    assert_eq!(
        (r.outcome, r.bounded_by),
        (Outcome::Bounded, Some(mcheck_checker::BoundedBy::Time))
    );
    assert_eq!((r.states, r.transitions), (ses.states, ses.transitions));
}
