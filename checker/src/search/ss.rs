//! Stratified sampling (SS, paper §4; ARCHITECTURE.md, "Stratified sampling (SS)").
//!
//! For delay bound db = 0, 1, 2, ... SS runs `num_samples(db) = ⌈c1 · c2^db⌉`
//! independent samples, each a random execution with `db` delays placed
//! uniformly among the branching steps (see [`super::sample`] for one
//! sample and the probability guarantee `≥ 1/L'^db`). One exception: at
//! bound 0 a deterministic explorer ([`Explorer::is_randomized`] false)
//! gives the same execution in every sample, so SS runs it once.
//!
//! By default ([`SsPlacement::Mixed`]) every uniform sample of a bound
//! `db ≥ 1` is followed by a *near twin* that draws its delays
//! log-uniformly, near the start and near each other (see
//! [`super::sample`], "Near placement"): on long repeated workloads the
//! races sit in a short window of a long execution and need two to four
//! delays there, which uniform positions almost never give
//! (ARCHITECTURE.md, "Where the delays go"). The uniform samples are
//! those of the paper's placement ([`SsParams::paper`]), unchanged, so
//! the guarantee per uniform sample stands.
//!
//! # Determinism
//!
//! SS runs on the batch runner of the sampling strategies, with the delay
//! bound as the round: sample `i` of bound `db` draws everything from two
//! streams derived from `(seed, db, i)` (see `sample_seeds`): its delay
//! positions and its explorer's seed (under the mixed placement, uniform
//! sample `j` is sample `2j` with the streams of `(seed, db, j)`, and its
//! twin `2j + 1` uses two further streams of `(seed, db, j)`). Budgets count samples by index,
//! never by completion order, and the reported counterexample is the
//! violating sample with the lowest `(db, i)`. Statistics count the
//! samples up to and including that one. So the same seed gives the same
//! report (except times) on any number of threads; only the time limit and
//! the stop flag, checked between chunks and between the runs of a sample,
//! depend on the machine.
//!
//! # Sharding
//!
//! With `config.shard = Some((k, n))` only the samples with `i mod n = k`
//! run; `n` shards together run exactly the samples of one unsharded run
//! (`max_schedules` counts the indices of all shards, as for the other
//! sampling strategies).

use super::batch::{Batches, RoundEnd, Sample};
use super::error::SearchError;
use super::sample::{Limits, SampleEnd, SampleResult, SampleSeeds, Scratch, near_seeds, run_sample, sample_seeds};
use crate::config::Config;
use crate::explorer::Explorer;
use crate::program::{ActorInfo, Program};
use crate::report::{BoundedBy, Report};
use crate::schedule::PathKind;
use crate::watch::Watched;

/// Where the samples of a delay bound put their delays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SsPlacement {
    /// The paper's: each delay uniform among the branching steps at or
    /// after the previous one. `num_samples(db)` samples a bound.
    Uniform,
    /// Every uniform sample is followed by a *near* twin that draws its
    /// delays log-uniformly, close to the start and to each other (see
    /// the `sample` module, "Near placement"): `2 · num_samples(db)` samples
    /// a bound (one at bound 0 with a deterministic explorer, as for
    /// `Uniform`), the uniform ones exactly those of `Uniform`, so the
    /// `1/L'^db` guarantee per uniform sample holds unchanged.
    #[default]
    Mixed,
}

impl SsPlacement {
    /// The names the CLI accepts, in order.
    pub const NAMES: [&'static str; 2] = ["uniform", "mixed"];

    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            SsPlacement::Uniform => "uniform",
            SsPlacement::Mixed => "mixed",
        }
    }

    /// The placement called `name`; the error names the valid ones.
    pub fn parse(name: &str) -> Result<Self, String> {
        match name {
            "uniform" => Ok(SsPlacement::Uniform),
            "mixed" => Ok(SsPlacement::Mixed),
            _ => Err(format!(
                "unknown placement {name:?}; valid placements: {}",
                Self::NAMES.join(", ")
            )),
        }
    }
}

/// The settings of stratified sampling: `num_samples(db) = ⌈c1 · c2^db⌉`
/// uniform samples a bound, each with a near twin under
/// [`SsPlacement::Mixed`].
///
/// Build one from [`SsParams::default`] or [`SsParams::paper`] with the
/// setters, one per field and named after it.
///
/// ```
/// use mcheck_checker::search::{SsParams, SsPlacement};
///
/// let few = SsParams::paper().c1(20.0);
/// assert_eq!((few.num_samples(2), few.placement), (80, SsPlacement::Uniform));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct SsParams {
    /// Samples at delay bound 0 (scale of every bound). Positive.
    pub c1: f64,
    /// Growth of the sample count per extra delay. At least 1.
    pub c2: f64,
    /// Where the delays go (default [`SsPlacement::Mixed`]).
    pub placement: SsPlacement,
}

impl Default for SsParams {
    /// `c1 = 100`, `c2 = 2`, the mixed placement ([`SsParams::paper`]: the
    /// same counts, uniform placement only).
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
        SsParams {
            c1: 100.0,
            c2: 2.0,
            placement: SsPlacement::Mixed,
        }
    }
}

impl SsParams {
    /// With [`SsParams::c1`] (samples at bound 0) set to `c1`.
    pub fn c1(mut self, c1: f64) -> SsParams {
        self.c1 = c1;
        self
    }

    /// With [`SsParams::c2`] (growth per delay) set to `c2`.
    pub fn c2(mut self, c2: f64) -> SsParams {
        self.c2 = c2;
        self
    }

    /// With the delays placed as `placement` says ([`SsParams::placement`]).
    pub fn placement(mut self, placement: SsPlacement) -> SsParams {
        self.placement = placement;
        self
    }

    /// The number of samples of delay bound `db` (saturating).
    pub fn num_samples(&self, db: u32) -> u64 {
        let n = (self.c1 * self.c2.powi(db.min(i32::MAX as u32) as i32)).ceil();
        if n >= u64::MAX as f64 {
            u64::MAX
        } else {
            n.max(1.0) as u64
        }
    }

    /// The paper's settings: `c1 = 100`, `c2 = 2`, uniform placement
    /// only.
    pub fn paper() -> Self {
        SsParams::default().placement(SsPlacement::Uniform)
    }

    /// The samples of delay bound `db` (see [`SsPlacement`]): one at bound 0
    /// unless `randomized` (a deterministic explorer's zero-delay samples
    /// are one execution); else `num_samples(db)`, doubled under
    /// [`SsPlacement::Mixed`] from bound 1 on (saturating).
    pub fn round_size(&self, db: u32, randomized: bool) -> u64 {
        match (db, self.placement) {
            (0, _) if !randomized => 1,
            (0, _) | (_, SsPlacement::Uniform) => self.num_samples(db),
            (_, SsPlacement::Mixed) => self.num_samples(db).saturating_mul(2),
        }
    }

    /// The seeds of sample `index` of delay bound `db` under the search
    /// seed `seed`: under [`SsPlacement::Mixed`] from bound 1 on, sample
    /// `2j` is uniform sample `j` (the seeds `Uniform` gives it) and sample
    /// `2j + 1` is its near twin.
    pub(super) fn seeds(&self, seed: u64, db: u32, index: u64) -> SampleSeeds {
        match self.placement {
            SsPlacement::Mixed if db > 0 && index % 2 == 1 => near_seeds(seed, db, index / 2),
            SsPlacement::Mixed if db > 0 => sample_seeds(seed, db, index / 2),
            _ => sample_seeds(seed, db, index),
        }
    }

    pub(super) fn check(&self) -> Result<(), SearchError> {
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
/// `config` (seed, max steps, deadlock) and `params`, without any budget.
/// For tests and for inspecting what a search sampled.
pub fn draw_sample<P: Program, E: Explorer>(
    program: &P,
    explorer: &E,
    config: &Config,
    params: &SsParams,
    bound: u32,
    index: u64,
) -> SampleResult {
    let s0 = program.initial();
    let seeds = params.seeds(config.seed, bound, index);
    let prepared = prepare(explorer, &program.actors(&s0), seeds.explorer);
    let limits = Limits {
        max_steps: config.max_steps,
        deadlock: config.deadlock,
        deadline: None,
        stop: None,
    };
    run_sample(
        Watched::bare(program),
        &s0,
        &prepared,
        seeds,
        bound,
        &limits,
        &mut Scratch::default(),
    )
}

/// [`crate::explorer::prepare`] with the initial actors computed once.
pub(super) fn prepare<E: Explorer>(explorer: &E, actors0: &[ActorInfo], seed: u64) -> E {
    let mut e = explorer.clone();
    e.seed(seed);
    e.init(actors0);
    e
}

/// Stratified sampling with `explorer` (see the module docs): delay bound
/// 0, 1, 2, ... up to `config.max_delays`, `params.num_samples(db)` samples
/// each, on `config.worker_threads()` threads, until a violation, the time
/// limit ([`Config::sampling_time_limit`]), `max_schedules` (samples), the
/// stop flag or the last bound. The outcome is `violation` or `bounded`,
/// never `verified`. The counterexample is the delay path of the violating
/// run, with the explorer seed of its sample, so that [`crate::replay::replay`]
/// with an explorer prepared with that seed reproduces it.
pub fn ss<P: Program, E: Explorer>(
    program: &P,
    explorer: E,
    config: &Config,
    params: &SsParams,
) -> Result<Report, SearchError> {
    ss_on(Watched::bare(program), explorer, config, params)
}

/// [`ss`] on a watched program.
pub(crate) fn ss_on<P: Program, E: Explorer>(
    program: Watched<'_, P>,
    explorer: E,
    config: &Config,
    params: &SsParams,
) -> Result<Report, SearchError> {
    params.check()?;
    if config.max_steps == 0 {
        return Err(SearchError::Input("max-steps must be at least 1".into()));
    }
    let name = explorer.name().to_string();
    let mut batches = Batches::new(config, Report::new("ss", Some(&name), config.seed, 1))?;
    let limits = Limits {
        max_steps: config.max_steps,
        deadlock: config.deadlock,
        deadline: batches.deadline(),
        stop: Some(&config.stop),
    };
    let s0 = program.initial();
    let actors0 = program.actors(&s0);
    let end = rounds(
        &mut batches,
        params,
        config.max_delays,
        explorer.is_randomized(),
        |db, i, scratch| {
            let seeds = params.seeds(config.seed, db, i);
            let prepared = prepare(&explorer, &actors0, seeds.explorer);
            let r = run_sample(program, &s0, &prepared, seeds, db, &limits, scratch);
            batch_sample(r, db, &name)
        },
    )?;
    let mut report = batches.finish(end, PathKind::Delays, Some(&name), config.max_steps);
    report.transitions = report.steps;
    if let Some(schedule) = &report.schedule {
        // The bound of a violation is the delays its execution took: a
        // sample of bound db may find room for fewer.
        report.bound_reached = schedule.path.len() as u32;
    }
    Ok(report)
}

/// The rounds of stratified sampling on `batches`: delay bound 0, 1, 2,
/// ... with `params.round_size(db, randomized)` samples each, sample `i`
/// of bound `db` being `sample(db, i, scratch)`,
/// until a violation, a budget, bound `max_delays` or a bound where no sample
/// found room for its delays.
pub(super) fn rounds<S, E>(
    batches: &mut Batches<'_>,
    params: &SsParams,
    max_delays: Option<u32>,
    randomized: bool,
    sample: impl Fn(u32, u64, &mut Scratch<S, E>) -> Result<Sample, SearchError> + Sync + Send,
) -> Result<RoundEnd, SearchError> {
    let mut db = 0u32;
    loop {
        let total = params.round_size(db, randomized);
        let label = format!("ss bound {db}");
        let end = batches.round(db, total, &label, Scratch::default, |i, scratch| sample(db, i, scratch))?;
        match end {
            RoundEnd::Done if max_delays.is_some_and(|m| db >= m) || db == u32::MAX => {
                return Ok(RoundEnd::Stopped(BoundedBy::MaxDelays));
            }
            RoundEnd::Done if db > 0 && batches.last_round_incomplete() => {
                // Every sample of this bound ran out of branching steps
                // before placing all its delays: deeper bounds would almost
                // surely repeat the same executions.
                batches.report_mut().notes.push(format!(
                    "no sample of delay bound {db} found room for {db} delays (too few branching steps): stopped sampling"
                ));
                return Ok(RoundEnd::Stopped(BoundedBy::Sampling));
            }
            RoundEnd::Done => db += 1,
            other => return Ok(other),
        }
    }
}

/// One sample's result as the batch runner counts it.
pub(super) fn batch_sample(r: SampleResult, db: u32, explorer: &str) -> Result<Sample, SearchError> {
    let complete = r.placed_all(db);
    let mut sample = Sample {
        steps: r.steps,
        longest: r.longest,
        truncated: r.truncated,
        violation: None,
        explorer_seed: r.explorer_seed,
        aborted: false,
        complete,
    };
    match r.end {
        SampleEnd::Done => {}
        SampleEnd::Violation(found) => sample.violation = Some((found, r.path)),
        SampleEnd::Aborted => sample.aborted = true,
        SampleEnd::Unsound(message) => {
            return Err(SearchError::UnsoundExplorer {
                explorer: explorer.to_string(),
                message,
            });
        }
        SampleEnd::Internal(message) => return Err(SearchError::Internal(message)),
    }
    Ok(sample)
}
