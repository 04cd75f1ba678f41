//! Stratified sampling (SS, paper §4; DESIGN §4).
//!
//! For delay bound db = 0, 1, 2, ... SS runs `num_samples(db) = ⌈c1 · c2^db⌉`
//! independent samples, each a random execution with `db` delays placed
//! uniformly among the branching steps (see [`super::sample`] for one
//! sample and the probability guarantee `≥ 1/L'^db`). One exception: at
//! bound 0 a deterministic explorer ([`Explorer::is_randomized`] false)
//! gives the same execution in every sample, so SS runs it once.
//!
//! # Determinism
//!
//! Sample `i` of bound `db` draws everything from two streams derived with
//! SplitMix64 from `(seed, db, i)` ([`sample_seeds`]): its delay positions
//! and its explorer's seed. Samples run in batches of [`BATCH`] indices, in
//! parallel within a batch; budgets count samples by index, never by
//! completion order, and the reported counterexample is the violating
//! sample with the lowest `(db, i)`. Statistics count the samples up to and
//! including that one. So the same seed gives the same report (except
//! times) on any number of threads; only the time limit and the stop flag,
//! checked between batches and between the runs of a sample, depend on
//! the machine.
//!
//! # Sharding
//!
//! With `config.shard = Some((k, n))` only the samples with `i mod n = k`
//! run; `n` shards together run exactly the samples of one unsharded run
//! (each with the same budgets by index within its shard).

use super::progress::{human, rate, Meter};
use super::sample::{run_sample, sample_seeds, Limits, SampleEnd, SampleResult, Scratch};
use super::SearchError;
use crate::config::{peak_rss, Config};
use crate::explorer::Explorer;
use crate::program::{ActorInfo, Program};
use crate::report::{BoundedBy, Outcome, Report, Stratum};
use crate::schedule::{PathKind, Schedule};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Sample indices per batch. Fixed, so that budgets and the reported
/// counterexample never depend on scheduling; large enough to keep every
/// thread busy, small enough to stop soon after a violation.
pub const BATCH: u64 = 256;

/// The settings of stratified sampling: `num_samples(db) = ⌈c1 · c2^db⌉`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SsParams {
    /// Samples at delay bound 0 (scale of every bound). Positive.
    pub c1: f64,
    /// Growth of the sample count per extra delay. At least 1.
    pub c2: f64,
}

impl Default for SsParams {
    /// `c1 = 100`, `c2 = 2`.
    ///
    /// Why doubling: the guarantee per sample at bound `db` is `1/L'^db`,
    /// so no growth keeps the hit probability of a fixed `db`-delay
    /// execution constant; what matters is how the time budget is shared.
    /// Doubling gives every bound as much as all lower bounds together, so
    /// the low bounds (where most bugs of a good explorer lie, paper §5)
    /// come first, and a search stopped by its time limit has spent about
    /// half of it at the highest bound it reached.
    ///
    /// Measured (seed 3, max-steps 300, at most 200,000 samples each) on
    /// the 182 planted random programs among `RandomProgram` seeds 0..300
    /// whose violation is reachable, with a run-to-completion-like
    /// explorer: `(c1, c2)` = (1000, 2) found 171 in 4.29M samples in
    /// total (hits and misses), (100, 2) found 176 in 0.98M, (100, 3) 171
    /// in 2.98M, (1000, 3) 154 in 8.02M, (10, 2) 175 in 0.29M. Large `c1`
    /// wastes samples at low bounds (with a deterministic explorer every
    /// sample of bound 0 is the same execution); `c1 = 100` keeps enough
    /// samples at bounds 0 and 1 for randomized explorers (PRR is seeded
    /// anew in every sample) and for long executions, where one delay has
    /// hundreds of positions to choose from.
    fn default() -> Self {
        SsParams { c1: 100.0, c2: 2.0 }
    }
}

impl SsParams {
    /// The number of samples of delay bound `db` (saturating).
    pub fn num_samples(&self, db: u32) -> u64 {
        let n = (self.c1 * self.c2.powi(db.min(i32::MAX as u32) as i32)).ceil();
        if n >= u64::MAX as f64 {
            u64::MAX
        } else {
            n.max(1.0) as u64
        }
    }

    fn check(&self) -> Result<(), SearchError> {
        if !(self.c1.is_finite() && self.c1 > 0.0) {
            return Err(SearchError::Input(format!("ss: c1 must be positive, not {}", self.c1)));
        }
        if !(self.c2.is_finite() && self.c2 >= 1.0) {
            return Err(SearchError::Input(format!(
                "ss: c2 must be at least 1, not {}",
                self.c2
            )));
        }
        Ok(())
    }
}

/// Draw sample `index` of delay bound `bound` exactly as [`ss`] does with
/// `config` (seed, max steps, deadlock), without any budget. For tests and
/// for inspecting what a search sampled.
pub fn draw_sample<P: Program, E: Explorer>(
    program: &P,
    explorer: &E,
    config: &Config,
    bound: u32,
    index: u64,
) -> SampleResult {
    let s0 = program.initial();
    let seeds = sample_seeds(config.seed, bound, index);
    let prepared = prepare(explorer, &program.actors(&s0), seeds.explorer);
    let limits = Limits {
        max_steps: config.max_steps,
        deadlock: config.deadlock,
        deadline: None,
        stop: None,
    };
    run_sample(program, &s0, &prepared, seeds, bound, &limits, &mut Scratch::default())
}

/// [`crate::explorer::prepare`] with the initial actors computed once.
fn prepare<E: Explorer>(explorer: &E, actors0: &[ActorInfo], seed: u64) -> E {
    let mut e = explorer.clone();
    e.seed(seed);
    e.init(actors0);
    e
}

/// Why the sampling loop stopped (before becoming the report's fields).
enum Stop {
    Violation(SampleResult),
    Budget(BoundedBy),
}

/// Stratified sampling with `explorer` (see the module docs): delay bound
/// 0, 1, 2, ... up to `config.max_delays`, `params.num_samples(db)` samples
/// each, on `config.worker_threads()` threads, until a violation, the time
/// limit ([`Config::sampling_time_limit`]), `max_schedules` (samples), the
/// stop flag or the last bound. The outcome is `violation` or `bounded`,
/// never `verified`. The counterexample is the delay path of the violating
/// run, with the explorer seed of its sample, so that [`crate::replay::replay`]
/// (which seeds the explorer with it) reproduces it.
pub fn ss<P: Program, E: Explorer>(
    program: &P,
    explorer: E,
    config: &Config,
    params: &SsParams,
) -> Result<Report, SearchError> {
    params.check()?;
    let (shard_k, shard_n) = config.shard.unwrap_or((0, 1));
    if shard_n == 0 || shard_k >= shard_n {
        return Err(SearchError::Input(format!(
            "shard {shard_k}/{shard_n}: need k < n (run the samples with index mod n = k)"
        )));
    }
    if config.max_steps == 0 {
        return Err(SearchError::Input("max-steps must be at least 1".into()));
    }
    let start = Instant::now();
    let threads = config.worker_threads().max(1);
    let name = explorer.name().to_string();
    let mut report = Report::new("ss", Some(&name), config.seed, threads);
    if config.shard.is_some() {
        report.shard = Some(format!("{shard_k}/{shard_n}"));
    }
    let pool = if threads > 1 {
        Some(
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .map_err(|e| SearchError::Internal(format!("cannot start {threads} threads: {e}")))?,
        )
    } else {
        None
    };
    let deadline = start + config.sampling_time_limit();
    let limits = Limits {
        max_steps: config.max_steps,
        deadlock: config.deadlock,
        deadline: Some(deadline),
        stop: Some(&config.stop),
    };
    let s0 = program.initial();
    let actors0 = program.actors(&s0);
    let mut meter = Meter::new(config.progress.clone());
    let mut scratch: Scratch<P::State, E> = Scratch::default();
    let mut stop = None;

    let mut db = 0u32;
    loop {
        let bound_start = Instant::now();
        report.bound_reached = db;
        let mut stratum = Stratum {
            bound: db,
            ..Stratum::default()
        };
        // With a deterministic explorer every zero-delay sample is the
        // same execution: run it once.
        let total = if db == 0 && !explorer.is_randomized() {
            1
        } else {
            params.num_samples(db)
        };
        // The shard's samples of this bound: i = k + j·n for j < count.
        let count = if total > u64::from(shard_k) {
            (total - u64::from(shard_k) - 1) / u64::from(shard_n) + 1
        } else {
            0
        };
        let mut short_of_delays = true;
        let mut j0 = 0u64;
        while j0 < count {
            if config.stop.is_raised() {
                stop = Some(Stop::Budget(BoundedBy::Interrupted));
            } else if Instant::now() >= deadline {
                stop = Some(Stop::Budget(BoundedBy::Time));
            } else if config.max_schedules.is_some_and(|m| report.schedules >= m) {
                stop = Some(Stop::Budget(BoundedBy::Schedules));
            }
            if stop.is_some() {
                break;
            }
            let mut j1 = (j0 + BATCH).min(count);
            if let Some(m) = config.max_schedules {
                j1 = j1.min(j0 + (m - report.schedules));
            }
            let lowest = AtomicU64::new(u64::MAX);
            let one = |j: u64, scratch: &mut Scratch<P::State, E>| {
                let i = u64::from(shard_k) + j * u64::from(shard_n);
                let seeds = sample_seeds(config.seed, db, i);
                if j > lowest.load(Ordering::Relaxed) {
                    return SampleResult::skipped(seeds.explorer);
                }
                let prepared = prepare(&explorer, &actors0, seeds.explorer);
                let r = run_sample(program, &s0, &prepared, seeds, db, &limits, scratch);
                if matches!(r.end, SampleEnd::Violation(_)) {
                    lowest.fetch_min(j, Ordering::Relaxed);
                }
                r
            };
            let results: Vec<SampleResult> = match &pool {
                None => (j0..j1).map(|j| one(j, &mut scratch)).collect(),
                Some(pool) => pool.install(|| {
                    (j0..j1)
                        .into_par_iter()
                        .map_init(Scratch::default, |scratch, j| one(j, scratch))
                        .collect()
                }),
            };
            let mut aborted = false;
            for r in results {
                match &r.end {
                    SampleEnd::Aborted | SampleEnd::Skipped => {
                        aborted |= r.end == SampleEnd::Aborted;
                        continue;
                    }
                    SampleEnd::Unsound(msg) => {
                        return Err(SearchError::UnsoundExplorer {
                            explorer: name,
                            message: msg.clone(),
                        })
                    }
                    SampleEnd::Done | SampleEnd::Violation(_) => {}
                }
                report.schedules += 1;
                stratum.schedules += 1;
                report.steps += r.steps;
                stratum.transitions += r.steps;
                report.truncated += u64::from(r.truncated);
                report.longest = report.longest.max(r.longest);
                short_of_delays &= !r.placed_all(db);
                if matches!(r.end, SampleEnd::Violation(_)) {
                    stop = Some(Stop::Violation(r));
                    break;
                }
            }
            j0 = j1;
            meter.tick(|secs| {
                format!(
                    "ss bound {db}: {} schedules ({}), {} steps ({}), {} truncated, longest {}",
                    human(report.schedules as f64),
                    rate(report.schedules, secs),
                    human(report.steps as f64),
                    rate(report.steps, secs),
                    report.truncated,
                    report.longest
                )
            });
            if stop.is_none() && aborted {
                stop = Some(Stop::Budget(if config.stop.is_raised() {
                    BoundedBy::Interrupted
                } else {
                    BoundedBy::Time
                }));
            }
            if stop.is_some() {
                break;
            }
        }
        stratum.elapsed_s = bound_start.elapsed().as_secs_f64();
        report.strata.push(stratum);
        if stop.is_some() {
            break;
        }
        if config.max_delays.is_some_and(|m| db >= m) {
            stop = Some(Stop::Budget(BoundedBy::MaxDelays));
            break;
        }
        if db > 0 && count > 0 && short_of_delays {
            // Every sample of this bound ran out of branching steps before
            // placing all its delays: deeper bounds would almost surely
            // repeat the same executions.
            report.notes.push(format!(
                "no sample of delay bound {db} found room for {db} delays (too few branching steps): stopped sampling"
            ));
            stop = Some(Stop::Budget(BoundedBy::Sampling));
            break;
        }
        if db == u32::MAX {
            stop = Some(Stop::Budget(BoundedBy::MaxDelays));
            break;
        }
        db += 1;
    }
    meter.finish();
    match stop {
        Some(Stop::Violation(r)) => {
            let SampleEnd::Violation(found) = r.end else {
                return Err(SearchError::Internal("a violating sample without its violation".into()));
            };
            report.outcome = Outcome::Violation;
            let schedule = Schedule::new(PathKind::Delays, Some(&name), r.explorer_seed, config.max_steps, r.path);
            report.schedule = Some(schedule);
            report.violation = Some(found);
            report.expect_found(config.deadlock);
        }
        Some(Stop::Budget(by)) => {
            report.outcome = Outcome::Bounded;
            report.bounded_by = Some(by);
        }
        None => {
            return Err(SearchError::Internal("the sampling loop ended without a reason".into()));
        }
    }
    report.transitions = report.steps;
    report.elapsed_s = start.elapsed().as_secs_f64();
    report.peak_memory_mb = peak_rss().map_or(0.0, |b| b as f64 / (1 << 20) as f64);
    Ok(report)
}
