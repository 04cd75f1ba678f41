//! The portfolio strategy: the exhaustive search and every sampling
//! technique at once, each with its share of the steps, so that a user
//! who does not know which technique finds their bug first gets the bug
//! about as early as the best one would have, and the proof `verified`
//! when there is none and the state space is finite.
//!
//! # Members and shares
//!
//! * SES with the run's explorer and its state cache, on a thread of its
//!   own: [`SES_WEIGHT`] of the weights;
//! * stratified sampling with each built-in explorer (rr, rtc, prr), RS,
//!   PCT, POS, PCTCP and SURW, each with its defaults: weight 1 each, run
//!   together on the batch runner on every worker thread.
//!
//! A member's cost is the program steps it executes (SES's transitions,
//! a sample's steps). With weight `w` of the total `W`, a member that has
//! spent `c` steps is at *virtual time* `c · W / w`: the time at which a
//! machine that shared its steps in these proportions would have got it
//! there.
//!
//! # Epochs
//!
//! The portfolio runs in epochs of growing virtual length (2,048 steps,
//! then half as much again each time). Epoch `e` ends at virtual time
//! `V(e)`; in it,
//!
//! * SES may run up to `V(e) · 8 / W` transitions: it waits at its next
//!   budget check past them (its [`Pace`](crate::Pace) hook, the `clock`
//!   module) until the next epoch allows more. In the first epoch the
//!   sampling members start when SES has used its share (1,024
//!   transitions, milliseconds), so that a bug or a verdict SES reaches
//!   there ends the portfolio before a sample far longer than its share
//!   has run;
//! * each sampling member takes as many samples as its share of the
//!   epoch's sampling steps buys at its mean cost per sample so far (one
//!   when it has none), its `k`-th sample being the `k`-th sample the
//!   technique alone takes with the same seed; the epoch's samples are
//!   interleaved by where each falls in its member's part of the epoch,
//!   and run as one round of the batch runner.
//!
//! A violation ends the portfolio at the member that found it earliest in
//! virtual time: a sample's virtual time counts the sampling steps of the
//! samples before it in the interleaving and its own; SES's, its
//! transitions when it found it. A tie goes to SES. When SES finds one,
//! the sampling members go on only until they have caught up with it
//! (their epochs then end there): the catch-up runs its samples one at a
//! time, each cut at what is left of the way (a violation it finds before
//! the cut is the one the technique alone finds, see `Member::sample`);
//! when a sampling member finds one, SES is
//! allowed up to the same virtual time and the portfolio waits for it.
//! When SES ends without a violation, the portfolio ends `verified` if
//! SES verified the program. If a budget of SES's own stopped it
//! (`max_delays`, the state or memory budget), the portfolio ends with
//! SES's report when it has no time limit, and goes on with the sampling
//! members until the time limit otherwise.
//!
//! # Determinism
//!
//! Every decision is taken on counts: which samples an epoch holds (the
//! counts of earlier epochs), which sample of the epoch violates first
//! (the batch runner's lowest index), and where SES stands (its
//! transitions at its budget checks, which fall at the same counts in
//! every run). Never on which thread got where first. So the same seed
//! gives the same report (but times) on any number of threads. The time
//! limit (none by default: the portfolio then runs as long as its SES
//! member, as SES alone does) and the stop flag end both sides.
//!
//! # Counterexample
//!
//! The winning member's own: SES's delay path, a stratified sample's
//! delay path with its explorer and explorer seed, a random walk's choice
//! path. [`Report::found_by`] names the member.

mod clock;
mod members;

use super::batch::{Batches, RoundEnd, Sample};
use super::error::SearchError;
use super::sample::{Limits, Scratch};
use super::ses_on;
use super::ss::SsParams;
use crate::config::Config;
use crate::explorer::Explorer;
use crate::program::Program;
use crate::report::{BoundedBy, Outcome, Report, count_of};
use crate::watch::Watched;
use clock::Clock;
use members::{Coord, Inputs, Member, members};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// SES's weight; every sampling member has weight 1.
pub const SES_WEIGHT: u64 = 8;

/// The virtual length of the first epoch, in steps: SES's share of it is
/// one period of its budget checks (1,024 transitions).
const FIRST_EPOCH: f64 = 2_048.0;
/// The longest epoch, in virtual steps: epochs grow by half until then,
/// so that a member's mean cost per sample is re-measured often.
const LONGEST_EPOCH: f64 = 67_108_864.0;

/// The portfolio strategy (see the module docs) on `program`: SES with
/// `explorer` and every sampling technique, each with its share of the
/// steps, on `config.worker_threads()` threads for the sampling members
/// and one for SES, until a violation, SES's verdict or a budget (the
/// time limit, none by default; without one, SES's own budgets end the
/// portfolio too). The same seed gives the
/// same report, but times, on any number of threads.
pub fn portfolio<P: Program, E: Explorer>(program: &P, explorer: E, config: &Config) -> Result<Report, SearchError> {
    let watched = Watched::bare(program);
    portfolio_on((watched, config), (watched, config), explorer)
}

/// The portfolio (see the module docs): SES with `explorer` on `ses`'s
/// program and configuration, the sampling members on `sampled`'s (the
/// same, or the liveness temperature's program with its configuration).
/// Outcome `verified` (SES verified), `violation` (the member in
/// [`Report::found_by`] found it) or `bounded`. The report's states,
/// transitions and strata are SES's; its schedules and steps the sampling
/// members'; a note per member gives its samples and steps.
pub(crate) fn portfolio_on<P: Program, Q: Program, E: Explorer>(
    (program, config): (Watched<'_, P>, &Config),
    (sampled, sconfig): (Watched<'_, Q>, &Config),
    explorer: E,
) -> Result<Report, SearchError> {
    if config.shard.is_some() {
        return Err(SearchError::Input(
            "the portfolio runs whole, not in shards (--shard): its SES member cannot be split by sample".into(),
        ));
    }
    if config.max_steps == 0 {
        return Err(SearchError::Input("max-steps must be at least 1".into()));
    }
    let clock = Arc::new(Clock::default());
    let ses_config = config.clone().threads(1).pace(clock.pace());
    let ses_name = format!("ses-{}", explorer.name());
    let mut members = members(sampled, sconfig)?;
    let s0 = sampled.initial();
    let actors0 = sampled.actors(&s0);
    let mut batches = Batches::new(sconfig, Report::new("portfolio", Some(explorer.name()), config.seed, 1))?
        .without_default_time_limit();
    let inputs = Inputs {
        program: sampled,
        s0,
        actors0,
        config: sconfig,
        limits: Limits {
            max_steps: sconfig.max_steps,
            deadlock: sconfig.deadlock,
            deadline: batches.deadline(),
            stop: Some(&sconfig.stop),
        },
        ss: SsParams::default(),
    };
    let ses_result: Mutex<Option<Result<Report, SearchError>>> = Mutex::new(None);
    let end = std::thread::scope(|scope| {
        let ses = scope.spawn(|| {
            let _done = Finished(&clock);
            let r = ses_on(program, explorer, &ses_config);
            *ses_result.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        });
        let end = epochs(&clock, &ses_result, &mut batches, &mut members, &inputs);
        clock.stop();
        let joined = ses.join();
        (end, joined.is_ok())
    });
    let ses = ses_result.into_inner().unwrap_or_else(|e| e.into_inner());
    let (end, ses_returned) = end;
    let ses = match ses {
        Some(r) => r?,
        None if !ses_returned => return Err(SearchError::Internal("the portfolio's SES member panicked".into())),
        None => {
            return Err(SearchError::Internal(
                "the portfolio's SES member left no report".into(),
            ));
        }
    };
    Ok(assemble(end?, (ses, &clock), batches, &members, &ses_name, config))
}

/// Tells the clock that SES returned, even when it panics.
struct Finished<'c>(&'c Clock);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// Where the SES member is.
enum SesState {
    Running,
    /// It found a violation after this many transitions.
    Violation(u64),
    Verified,
    /// A budget of its own stopped it.
    Stopped,
}

/// How the epochs ended.
enum End {
    /// SES's report decides (verified, or its violation came first).
    Ses,
    /// The sampling member with this index found the violation first,
    /// when SES had run this many transitions in virtual time.
    Sampled(usize, Box<Sample>, u64),
    /// A budget (time, schedules, the stop flag) ended the portfolio.
    Stopped(BoundedBy),
}

/// The epochs (see the module docs), until a violation, SES's verdict or
/// a budget.
fn epochs<Q: Program>(
    clock: &Clock,
    ses_result: &Mutex<Option<Result<Report, SearchError>>>,
    batches: &mut Batches<'_>,
    members: &mut [Member],
    inputs: &Inputs<'_, Q>,
) -> Result<End, SearchError> {
    let total = SES_WEIGHT + members.len() as u64;
    let share = |v: f64, w: u64| (v * w as f64 / total as f64) as u64;
    let sampling_weight = members.len() as u64;
    let ses_state = || -> Result<SesState, SearchError> {
        let guard = ses_result.lock().unwrap_or_else(|e| e.into_inner());
        Ok(match guard.as_ref() {
            None => SesState::Running,
            Some(Err(e)) => return Err(e.clone()),
            Some(Ok(r)) if r.outcome == Outcome::Violation => SesState::Violation(r.transitions),
            Some(Ok(r)) if r.is_verified() => SesState::Verified,
            Some(Ok(_)) => SesState::Stopped,
        })
    };
    let mut ses_over = false;
    let mut ses_violation: Option<u64> = None;
    let mut sampled_steps: u64 = 0;
    let mut v_end = FIRST_EPOCH;
    let mut epoch = 0u32;
    // What SES's state says after the sampling members reached `sampled_at`
    // (in SES transitions): the end, or whether SES is over.
    let judge =
        |sampled_at: u64, ses_over: &mut bool, ses_violation: &mut Option<u64>| -> Result<Option<End>, SearchError> {
            match ses_state()? {
                SesState::Running => {}
                // SES's violation wins once the sampling members have caught
                // up with it without one of their own.
                SesState::Violation(t) if t <= sampled_at => return Ok(Some(End::Ses)),
                SesState::Verified => return Ok(Some(End::Ses)),
                SesState::Violation(t) => {
                    *ses_over = true;
                    *ses_violation = Some(t);
                }
                // Without a time limit the portfolio runs as long as SES.
                SesState::Stopped if inputs.config.time_limit.is_none() => return Ok(Some(End::Ses)),
                SesState::Stopped => *ses_over = true,
            }
            Ok(None)
        };
    loop {
        let ses_allowed = share(v_end, SES_WEIGHT);
        if !ses_over {
            clock.allow(ses_allowed);
        }
        if epoch == 0 {
            // SES's first share (a few milliseconds) before any sample: a
            // bug or a verdict it reaches there is known before the
            // sampling members run samples far longer than their share.
            clock.reached(ses_allowed);
            if let Some(end) = judge(0, &mut ses_over, &mut ses_violation)? {
                return Ok(end);
            }
        }
        // Once SES has found a violation, the sampling members only catch
        // up with it.
        let target = match ses_violation {
            Some(t) => share(v_end, sampling_weight).min((t * sampling_weight).div_ceil(SES_WEIGHT)),
            None => share(v_end, sampling_weight),
        };
        let budget = target.saturating_sub(sampled_steps);
        let plan = plan_epoch(members, budget, inputs);
        // The samples counted: up to the first violating one, as the batch
        // runner counts them, with the steps of each.
        let (end, steps) = match ses_violation {
            Some(_) => catch_up(members, &plan, budget, inputs, batches)?,
            None => {
                let steps: Vec<AtomicU64> = plan.iter().map(|_| AtomicU64::new(0)).collect();
                let first = AtomicU64::new(u64::MAX);
                let label = format!("portfolio epoch {epoch}");
                let end = batches.round(epoch, plan.len() as u64, &label, Scratch::default, |i, scratch| {
                    let (m, coord) = plan[i as usize];
                    let s = members[m].sample(inputs, coord, None, scratch)?;
                    steps[i as usize].store(s.steps, Ordering::Relaxed);
                    if s.violation.is_some() {
                        first.fetch_min(i, Ordering::Relaxed);
                    }
                    Ok(s)
                })?;
                let counted = match &end {
                    RoundEnd::Violation(_) => first.into_inner() as usize + 1,
                    _ => plan.len(),
                };
                (
                    end,
                    steps.into_iter().take(counted).map(AtomicU64::into_inner).collect(),
                )
            }
        };
        let counted = steps.len();
        for (i, &(m, _)) in plan.iter().enumerate().take(counted) {
            let s = steps[i];
            members[m].taken += 1;
            members[m].steps += s;
            sampled_steps += s;
        }
        // Where the sampling members stand, in SES transitions (the same
        // virtual time).
        let sampled_at = (sampled_steps as f64 * SES_WEIGHT as f64 / sampling_weight as f64).ceil() as u64;
        match end {
            RoundEnd::Violation(sample) => {
                if !ses_over {
                    // SES may not have been allowed that far yet.
                    clock.allow(sampled_at);
                    clock.reached(sampled_at);
                }
                if matches!(ses_state()?, SesState::Violation(t) if t <= sampled_at) {
                    return Ok(End::Ses);
                }
                let m = plan[counted - 1].0;
                return Ok(End::Sampled(m, Box::new(sample), sampled_at));
            }
            RoundEnd::Stopped(b) => return Ok(End::Stopped(b)),
            RoundEnd::Done => {}
        }
        if !ses_over {
            clock.reached(ses_allowed);
        }
        if let Some(end) = judge(sampled_at, &mut ses_over, &mut ses_violation)? {
            return Ok(end);
        }
        if members.iter().all(|m| m.exhausted) && ses_over {
            return Ok(End::Stopped(BoundedBy::MaxDelays));
        }
        v_end += (v_end / 2.0).min(LONGEST_EPOCH);
        epoch = epoch.saturating_add(1);
    }
}

/// The samples of a catch-up epoch, when SES has found a violation and
/// the sampling members run only until they reach it in virtual time
/// (`budget` sampling steps): one at a time on this thread, in the
/// epoch's order, each cut at what is left of the budget, until it is
/// spent, a budget of the run's ends it, or one finds a violation (then
/// one the technique alone finds at that point of its sample, see
/// `Member::sample`). How it ended, and the steps of each sample counted.
fn catch_up<Q: Program>(
    members: &[Member],
    plan: &[(usize, Coord)],
    budget: u64,
    inputs: &Inputs<'_, Q>,
    batches: &Batches<'_>,
) -> Result<(RoundEnd, Vec<u64>), SearchError> {
    let mut scratch = Scratch::default();
    let mut steps = Vec::new();
    let mut left = budget;
    for &(m, coord) in plan {
        if left == 0 {
            break;
        }
        if let Some(b) = batches.budget_hit() {
            return Ok((RoundEnd::Stopped(b), steps));
        }
        let s = members[m].sample(inputs, coord, Some(left as usize), &mut scratch)?;
        if s.aborted {
            let b = batches.budget_hit().unwrap_or(BoundedBy::Interrupted);
            return Ok((RoundEnd::Stopped(b), steps));
        }
        steps.push(s.steps);
        left = left.saturating_sub(s.steps);
        if s.violation.is_some() {
            return Ok((RoundEnd::Violation(s), steps));
        }
    }
    Ok((RoundEnd::Done, steps))
}

/// The samples of one epoch with `budget` sampling steps: each member's
/// share at its mean cost so far, interleaved by where each sample falls
/// in its member's part of the epoch (ties in member order).
fn plan_epoch<Q: Program>(members: &mut [Member], budget: u64, inputs: &Inputs<'_, Q>) -> Vec<(usize, Coord)> {
    let active = members.iter().filter(|m| !m.exhausted).count().max(1) as u64;
    let each = budget / active;
    let mut entries = Vec::new();
    for (m, member) in members.iter_mut().enumerate().filter(|(_, m)| !m.exhausted) {
        let n = match member.taken {
            0 => 1,
            taken => (each * taken).div_ceil(member.steps.max(1)).max(1),
        };
        let coords = member.plan(n, &inputs.ss, inputs.config.max_delays);
        let len = coords.len() as u64;
        for (j, c) in coords.into_iter().enumerate() {
            // Sample j of n sits at (2j + 1) / 2n of the epoch.
            entries.push(((2 * j as u64 + 1) as f64 / (2 * len) as f64, m, c));
        }
    }
    entries.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    entries.into_iter().map(|(_, m, c)| (m, c)).collect()
}

/// The portfolio's report from how the epochs ended, SES's report (and
/// its counts on the clock) and the sampling members' counts. When a
/// sampling member won, SES's counts are those of its last budget check
/// at the winner's virtual time (it may have run further before it was
/// stopped, by how the threads were scheduled), unless it had ended
/// before.
fn assemble(
    end: End,
    (ses, clock): (Report, &Clock),
    batches: Batches<'_>,
    members: &[Member],
    ses_name: &str,
    config: &Config,
) -> Report {
    let total = SES_WEIGHT + members.len() as u64;
    let ended_by_itself = |at: u64| ses.bounded_by != Some(BoundedBy::Interrupted) && ses.transitions <= at;
    let (mut report, ses_note) = match end {
        End::Sampled(m, sample, at) => {
            let (kind, explorer) = members[m].path_kind();
            let mut r = batches.finish(RoundEnd::Violation(*sample), kind, explorer, config.max_steps);
            r.explorer = explorer.map(str::to_string);
            r.found_by = Some(members[m].name.clone());
            if ended_by_itself(at) {
                with_ses_counts(&mut r, &ses);
                (r, ses_ending(&ses))
            } else {
                // SES was still running: its counts when the member found it.
                let (transitions, states) = clock.counts_at(at);
                r.states = states;
                r.transitions = transitions;
                let note = format!(
                    "had run {} and {} when {} found the violation",
                    count_of(transitions, "transition"),
                    count_of(states, "state"),
                    members[m].name
                );
                (r, note)
            }
        }
        End::Ses => {
            let mut r = ses.clone();
            r.strategy = "portfolio".into();
            if r.outcome == Outcome::Violation {
                r.found_by = Some(ses_name.to_string());
            }
            (r, ses_ending(&ses))
        }
        End::Stopped(b) => {
            let mut r = batches.finish(RoundEnd::Stopped(b), members[0].path_kind().0, None, config.max_steps);
            with_ses_counts(&mut r, &ses);
            (r, ses_ending(&ses))
        }
    };
    if report.found_by.as_deref() != Some(ses_name) {
        report.bound_reached = report.schedule.as_ref().map_or(0, |s| s.path.len() as u32);
    }
    report
        .notes
        .push(format!("portfolio: {ses_name} (share {SES_WEIGHT}/{total}) {ses_note}"));
    report.schedules = 0;
    report.steps = 0;
    for m in members {
        report.schedules += m.taken;
        report.steps += m.steps;
        report.notes.push(format!(
            "portfolio: {} (share 1/{total}) ran {}, {}",
            m.name,
            count_of(m.taken, "schedule"),
            count_of(m.steps, "step")
        ));
    }
    report
}

/// SES's counts and strata into the sampling members' `report`.
fn with_ses_counts(report: &mut Report, ses: &Report) {
    report.states = ses.states;
    report.transitions = ses.transitions;
    report.deferrals = ses.deferrals;
    report.peak_frontier = ses.peak_frontier;
    report.strata = ses.strata.clone();
}

/// How SES ended, for the report's note.
fn ses_ending(ses: &Report) -> String {
    let how = ses
        .bounded_by
        .map_or(ses.outcome.to_string(), |b| b.as_str().to_string());
    format!(
        "ran {} and {}, to delay bound {}, and ended {how}",
        count_of(ses.transitions, "transition"),
        count_of(ses.states, "state"),
        ses.bound_reached
    )
}
