//! The hybrid strategy (ARCHITECTURE.md, "Hybrid"): stratified
//! exhaustive search until a state budget, then stratified sampling of
//! delay paths that start where the exhaustive search stopped.
//!
//! # Phases
//!
//! 1. SES on one thread with `params.ses_states` as its state budget. If
//!    it ends inside the budget (verified, a violation, any other budget)
//!    its report is the hybrid's, unchanged but for the strategy's name.
//! 2. Otherwise everything it left unexplored becomes a *root*: the live
//!    frames of its stack, the entries of its stratum not resumed yet and
//!    the next stratum's frontier, each a state with the explorer at its
//!    next choice and the delay path from the initial state. Stratified
//!    sampling then runs from the roots: sample `i` of bound `db` draws a
//!    root, then places `db` delays among the branching steps of the
//!    execution from it (the SS sample, [`super::sample`]).
//!
//! A root is drawn with probability proportional to its *weight*, the
//! number of choices it has left (choices of its state not taken yet):
//! each is a subtree the exhaustive phase did not enter, so a root with
//! more of them leaves more unexplored.
//!
//! # Determinism
//!
//! The switch is at a state count (checked every 1,024 transitions, on
//! one thread): never at a time. The sampling phase is the batch runner's,
//! with the root drawn from a third stream of the sample's seeds. So the
//! same seed gives the same report (but times) on any number of threads.
//! The time limit (default 60 s, as for SS) covers both phases.
//!
//! # Counterexample
//!
//! The root's delay path followed by the sample's delays (shifted by the
//! root's step): a plain delay path from the initial state, with the
//! search's seed as the explorer's. The sample continues with the
//! explorer as the root has it (not seeded anew), so that the
//! concatenated path replays.

use super::batch::{Batches, Sample, stream_seed};
use super::error::SearchError;
use super::order::Composed;
use super::sample::{Limits, Start, run_sample_from};
use super::ss::{SsParams, batch_sample, rounds};
use super::stratified::{Root, run_to_roots};
use crate::config::Config;
use crate::explorer::Explorer;
use crate::program::Program;
use crate::report::Report;
use crate::schedule::PathKind;
use crate::watch::Watched;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The SES phase's state budget when neither [`HybridParams::ses_states`]
/// nor `--max-states` gives one: a few seconds of SES on the shipped
/// models (measured in ARCHITECTURE.md, "Hybrid").
pub const DEFAULT_HYBRID_STATES: u64 = 100_000;

/// The settings of the hybrid strategy, built from the default with the
/// setters, one per field and named after it.
///
/// ```
/// use mcheck_checker::search::{HybridParams, SsParams};
///
/// let params = HybridParams::default().ses_states(2_000).ss(SsParams::paper());
/// assert_eq!((params.ses_states, params.ss), (Some(2_000), SsParams::paper()));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct HybridParams {
    /// The SES phase's state budget (`None`: `config.max_states`, else
    /// [`DEFAULT_HYBRID_STATES`]).
    pub ses_states: Option<u64>,
    /// The sampling phase's sample counts.
    pub ss: SsParams,
}

impl HybridParams {
    /// With the SES phase's state budget set to `states`
    /// ([`HybridParams::ses_states`]).
    pub fn ses_states(mut self, states: u64) -> HybridParams {
        self.ses_states = Some(states);
        self
    }

    /// With the sampling phase's sample counts set to `ss`
    /// ([`HybridParams::ss`]).
    pub fn ss(mut self, ss: SsParams) -> HybridParams {
        self.ss = ss;
        self
    }
}

/// The hybrid strategy with `explorer` (see the module docs). The outcome
/// is SES's when it ends inside its state budget; else `violation` or
/// `bounded`. The report counts the SES phase's states and strata first,
/// then the sampling rounds (a stratum each, its bound the delays added
/// to a root's).
pub fn hybrid<P: Program, E: Explorer>(
    program: &P,
    explorer: E,
    config: &Config,
    params: &HybridParams,
) -> Result<Report, SearchError> {
    hybrid_on(Watched::bare(program), explorer, config, params)
}

/// [`hybrid`] on a watched program.
pub(crate) fn hybrid_on<P: Program, E: Explorer>(
    program: Watched<'_, P>,
    explorer: E,
    config: &Config,
    params: &HybridParams,
) -> Result<Report, SearchError> {
    params.ss.check()?;
    if config.max_steps == 0 {
        return Err(SearchError::Input("max-steps must be at least 1".into()));
    }
    let states = params.ses_states.or(config.max_states).unwrap_or(DEFAULT_HYBRID_STATES);
    if states == 0 {
        return Err(SearchError::Input(
            "hybrid: the SES phase's state budget must be at least 1".into(),
        ));
    }
    let total_time = config.sampling_time_limit();
    let explorer = crate::explorer::prepare(program.program(), explorer, config.seed);
    let name = explorer.name().to_string();
    let mut ses_config = config.clone();
    ses_config.threads = 1;
    ses_config.max_states = Some(states);
    ses_config.time_limit = Some(total_time);
    let report = Report::new("hybrid", Some(&name), config.seed, 1);
    let (result, roots) = run_to_roots(program, Composed::new(explorer), &ses_config, report)?;
    let roots = match roots {
        Some(roots) if !roots.is_empty() => roots,
        _ => return Ok(super::with_delay_schedule(result, &name, config)),
    };
    let mut report = result.report;
    let (ses_bound, ses_elapsed) = (report.bound_reached, report.elapsed_s);
    report.outcome = crate::report::Outcome::Bounded;
    report.bounded_by = None;
    report.notes.push(format!(
        "hybrid: SES reached its budget of {states} states at delay bound {ses_bound}; sampling from the {} states it left with choices untaken",
        roots.len()
    ));
    let mut sampling = config.clone();
    sampling.time_limit = Some(total_time.saturating_sub(std::time::Duration::from_secs_f64(ses_elapsed)));
    let mut batches = Batches::new(&sampling, report)?;
    let limits = Limits {
        max_steps: config.max_steps,
        deadlock: config.deadlock,
        deadline: batches.deadline(),
        stop: Some(&config.stop),
    };
    let cumulative: Vec<u64> = roots
        .iter()
        .scan(0u64, |sum, r| {
            *sum += u64::from(r.left);
            Some(*sum)
        })
        .collect();
    let end = rounds(&mut batches, &params.ss, config.max_delays, true, |db, i, scratch| {
        let root = &roots[draw_root(&cumulative, stream_seed(config.seed, u64::from(db), i, 2))];
        let limits = Limits {
            max_steps: config.max_steps.saturating_sub(root.depth as usize),
            ..limits
        };
        let start = Start {
            state: &root.state,
            order: &root.order,
            taken: u64::from(root.taken),
        };
        let r = run_sample_from(
            program,
            &start,
            params.ss.seeds(config.seed, db, i),
            db,
            &limits,
            scratch,
        );
        Ok(from_root(batch_sample(r, db, &name)?, root, config.seed))
    })?;
    let mut report = batches.finish(end, PathKind::Delays, Some(&name), config.max_steps);
    report.transitions = report.steps;
    report.elapsed_s += ses_elapsed;
    report.bound_reached = match &report.schedule {
        Some(schedule) => schedule.path.len() as u32,
        None => ses_bound,
    };
    Ok(report)
}

/// The index of the root drawn with `seed`: root `k` with probability
/// proportional to its weight (`cumulative`: the running sums of the
/// weights, the last positive).
fn draw_root(cumulative: &[u64], seed: u64) -> usize {
    let total = cumulative.last().copied().unwrap_or(0);
    if total == 0 {
        return 0;
    }
    let x = Xoshiro256PlusPlus::seed_from_u64(seed).random_range(0..total);
    cumulative.partition_point(|&c| c <= x)
}

/// A sample from `root` as one from the initial state: its violation's
/// path and step from the initial state, its longest execution with the
/// root's prefix, and the search's `seed` as its explorer's.
fn from_root<S, O>(mut sample: Sample, root: &Root<S, O>, seed: u64) -> Sample {
    sample.explorer_seed = seed;
    sample.longest += u64::from(root.depth);
    if let Some((found, path)) = sample.violation.as_mut() {
        found.step += root.depth as usize;
        *path = concat(&root.advances, root.depth, path);
    }
    sample
}

/// The delay path of `advances` (from the initial state) followed by
/// `path`, a delay path from step `depth`.
fn concat(advances: &[(u32, u32)], depth: u32, path: &[u64]) -> Vec<u64> {
    let mut out = super::exec::delay_path(advances);
    let mut prev = advances.iter().rev().find(|a| a.1 > 0).map_or(0, |a| u64::from(a.0));
    let mut at = u64::from(depth);
    for &p in path {
        at += p;
        out.push(at - prev);
        prev = at;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concat_shifts_the_sample_by_the_root_step() {
        // Delays at steps 2, 5, 5 (the root at step 7 took none), then the
        // sample's at 7 + 0, 7 + 3, 7 + 3.
        assert_eq!(concat(&[(2, 1), (5, 2)], 7, &[0, 3, 0]), vec![2, 3, 0, 2, 3, 0]);
        // A root that took 2 choices at its step 4; the sample delays at 4 + 1.
        assert_eq!(concat(&[(4, 2)], 4, &[1]), vec![4, 0, 1]);
        assert_eq!(concat(&[], 3, &[]), Vec::<u64>::new());
        assert_eq!(concat(&[], 3, &[2]), vec![5]);
    }

    #[test]
    fn roots_are_drawn_by_weight() {
        let cumulative = [1u64, 1, 4]; // weights 1, 0, 3
        let mut hits = [0u32; 3];
        for seed in 0..4000 {
            hits[draw_root(&cumulative, seed)] += 1;
        }
        assert_eq!(hits[1], 0);
        assert!((900..1100).contains(&hits[0]), "{hits:?}");
        assert_eq!(hits[0] + hits[2], 4000);
    }
}
