//! The portfolio strategy: the exhaustive search and every sampling
//! technique at once, each with its share of the steps, so that a user
//! who does not know which technique finds their bug first gets the bug
//! about as early as the best one would have, and the proof `verified`
//! when there is none and the state space is finite.
//!
//! # Members and shares
//!
//! * SES with the run's explorer and its state cache, on a thread of its
//!   own: [`SES_WEIGHT`] (16) of the 32 weights, half of the steps;
//! * stratified sampling with each built-in explorer (rr, rtc, prr):
//!   weight 2 each;
//! * RS, PCT, POS, PCTCP and SURW with their defaults: weight 1 each;
//! * the same five with their walks cut short (`rs-cut`, ...; see the
//!   `members` module): weight 1 each. A race early in a long execution
//!   costs them a fraction of a whole walk; the uncut members find the
//!   races late in it.
//!
//! A member's cost is the program steps it executes (SES's transitions,
//! a sample's steps). With weight `w` of the total `W`, a member that has
//! spent `c` steps is at *virtual time* `c · W / w`: the time at which a
//! machine that shared its steps in these proportions would have got it
//! there.
//!
//! # Epochs
//!
//! The portfolio runs in epochs of growing virtual length (256 steps,
//! then half as much again each time). Epoch `e` ends at virtual time
//! `V(e)`; in it,
//!
//! * SES may run up to `V(e) · 16 / 32` transitions: it waits at its next
//!   budget check past them (its [`Pace`](crate::Pace) hook, the `clock`
//!   module; a paced search checks every 64 transitions at first) until
//!   the next epoch allows more. In the first epoch the sampling members
//!   start when SES has used its share (128 transitions), so that a bug
//!   or a verdict SES reaches there ends the portfolio before any sample
//!   runs;
//! * each sampling member is due `V(e) · w / 32` steps in all; one that
//!   has run fewer takes as many samples as the rest buys at its mean
//!   cost per sample so far, its `k`-th sample being the `k`-th sample
//!   the technique alone takes with the same seed. A member without a
//!   complete sample yet runs one *probe* instead: stratified sampling
//!   its first sample cut at four times its due, once the member's due
//!   has caught up with its steps; a random walk its first walk cut at
//!   64, 256, 1,024, ... steps, one in every epoch (a probe that is cut
//!   runs again, with the larger cap). The epoch's
//!   samples are interleaved by where each falls in its member's part of
//!   the epoch, probes last, and run as one round of the batch runner.
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
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// SES's weight, that of the sampling members together.
pub const SES_WEIGHT: u64 = 16;

/// The virtual length of the first epoch, in steps: SES's share of it is
/// 128 transitions, two periods of a paced search's first budget checks.
const FIRST_EPOCH: f64 = 256.0;
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
    let sampling_weight = weights(members);
    let total = SES_WEIGHT + sampling_weight;
    let share = |v: f64, w: u64| (v * w as f64 / total as f64) as u64;
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
        let plan = plan_epoch(members, target, inputs);
        // The samples counted: up to the first violating one, as the batch
        // runner counts them, with the steps of each and whether its cap
        // cut it.
        let (end, ran) = match ses_violation {
            Some(_) => catch_up(members, &plan, budget, inputs, batches)?,
            None => {
                let ran: Vec<(AtomicU64, AtomicBool)> = plan.iter().map(|_| Default::default()).collect();
                let first = AtomicU64::new(u64::MAX);
                let label = format!("portfolio epoch {epoch}");
                let end = batches.round(epoch, plan.len() as u64, &label, Scratch::default, |i, scratch| {
                    let p = &plan[i as usize];
                    let (s, cut) = members[p.m].sample(inputs, p.coord, p.cap, scratch)?;
                    ran[i as usize].0.store(s.steps, Ordering::Relaxed);
                    ran[i as usize].1.store(cut, Ordering::Relaxed);
                    if s.violation.is_some() {
                        first.fetch_min(i, Ordering::Relaxed);
                    }
                    Ok(s)
                })?;
                let counted = match &end {
                    RoundEnd::Violation(_) => first.into_inner() as usize + 1,
                    _ => plan.len(),
                };
                let ran = ran.into_iter().take(counted);
                (end, ran.map(|(s, c)| (s.into_inner(), c.into_inner())).collect())
            }
        };
        let counted = ran.len();
        for (p, &(steps, cut)) in plan.iter().zip(&ran) {
            let member = &mut members[p.m];
            member.steps += steps;
            sampled_steps += steps;
            if p.probe && cut {
                member.probed += steps;
                member.probes += 1;
            } else {
                member.taken += 1;
                if p.probe {
                    // The probe ran whole: move past its sample.
                    member.plan(1, &inputs.ss, inputs.config.max_delays);
                }
            }
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
                let m = plan[counted - 1].m;
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
            return Ok(match ses_violation {
                Some(_) => End::Ses,
                None => End::Stopped(BoundedBy::MaxDelays),
            });
        }
        v_end += (v_end / 2.0).min(LONGEST_EPOCH);
        epoch = epoch.saturating_add(1);
    }
}

/// The samples of a catch-up epoch, when SES has found a violation and
/// the sampling members run only until they reach it in virtual time
/// (`budget` sampling steps): one at a time on this thread, in the
/// epoch's order, each cut at what is left of the budget (or its own cap,
/// if smaller), until it is spent, a budget of the run's ends it, or one
/// finds a violation (then one the technique alone finds at that point of
/// its sample, see `Member::sample`). How it ended, and the steps of each
/// sample counted and whether its cap cut it.
fn catch_up<Q: Program>(
    members: &[Member],
    plan: &[Planned],
    budget: u64,
    inputs: &Inputs<'_, Q>,
    batches: &Batches<'_>,
) -> Result<(RoundEnd, Vec<(u64, bool)>), SearchError> {
    let mut scratch = Scratch::default();
    let mut ran = Vec::new();
    let mut left = budget;
    for p in plan {
        if left == 0 {
            break;
        }
        if let Some(b) = batches.budget_hit() {
            return Ok((RoundEnd::Stopped(b), ran));
        }
        let cap = Some(p.cap.map_or(left as usize, |c| c.min(left as usize)));
        let (s, cut) = members[p.m].sample(inputs, p.coord, cap, &mut scratch)?;
        if s.aborted {
            let b = batches.budget_hit().unwrap_or(BoundedBy::Interrupted);
            return Ok((RoundEnd::Stopped(b), ran));
        }
        ran.push((s.steps, cut));
        left = left.saturating_sub(s.steps);
        if s.violation.is_some() {
            return Ok((RoundEnd::Violation(s), ran));
        }
    }
    Ok((RoundEnd::Done, ran))
}

/// One sample of an epoch's plan.
#[derive(Clone, Copy, Debug)]
struct Planned {
    /// The member.
    m: usize,
    /// The sample, as the technique numbers it.
    coord: Coord,
    /// The steps at which each of its executions is cut, if any.
    cap: Option<usize>,
    /// A probe of the member's first sample (see `Member::probe_cap`):
    /// when the cap cuts it, it does not count and runs again.
    probe: bool,
}

/// The members' weights, together.
fn weights(members: &[Member]) -> u64 {
    members.iter().map(|m| m.weight).sum()
}

/// The samples of the epoch that ends when the sampling members together
/// are due `target` steps: each member is due its weight's part of it,
/// and takes as many samples as the rest of its due buys at its mean cost
/// so far (none while it has run past its due), or one probe while it
/// has no complete sample; interleaved by where each sample falls in its
/// member's part of the epoch, probes last (ties in member order).
fn plan_epoch<Q: Program>(members: &mut [Member], target: u64, inputs: &Inputs<'_, Q>) -> Vec<Planned> {
    // The members that can still sample share what the others did not
    // run, split by weight so that their dues add up to it exactly: while
    // the members together have run fewer steps than `target`, one of
    // them has a due left.
    let exhausted = || members.iter().filter(|m| m.exhausted);
    let spent: u64 = exhausted().map(|m| m.steps).sum();
    let active = weights(members) - exhausted().map(|m| m.weight).sum::<u64>();
    let target = u128::from(target.saturating_sub(spent));
    let mut before = 0u128;
    let mut entries = Vec::new();
    for (m, member) in members.iter_mut().enumerate().filter(|(_, m)| !m.exhausted) {
        let after = before + u128::from(member.weight);
        let due = (target * after / u128::from(active) - target * before / u128::from(active)) as u64;
        before = after;
        let credit = due.saturating_sub(member.steps);
        let probe = member.probe_cap(due);
        if credit == 0 && !probe.is_some_and(|p| p.every_epoch) {
            continue;
        }
        if let Some(probe) = probe {
            let cap = Some(probe.cap);
            entries.push((
                1.0,
                Planned {
                    m,
                    coord: member.peek(),
                    cap,
                    probe: true,
                },
            ));
            continue;
        }
        let cap = member.depth(due, inputs.config.max_steps);
        let mean = member.mean().or(cap.map(|c| c as u64)).unwrap_or(1);
        let coords = member.plan(credit.div_ceil(mean), &inputs.ss, inputs.config.max_delays);
        let len = coords.len() as u64;
        for (j, coord) in coords.into_iter().enumerate() {
            // Sample j of n sits at (2j + 1) / 2n of the epoch.
            let at = (2 * j as u64 + 1) as f64 / (2 * len) as f64;
            entries.push((
                at,
                Planned {
                    m,
                    coord,
                    cap,
                    probe: false,
                },
            ));
        }
    }
    entries.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.m.cmp(&b.1.m)));
    entries.into_iter().map(|(_, p)| p).collect()
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
    let total = SES_WEIGHT + weights(members);
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
            "portfolio: {} (share {}/{total}) ran {}, {}",
            m.name,
            m.weight,
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
