//! The random baselines: random walk (RS) and iterative random walk with
//! a growing depth bound (IRS).

use super::batch::{stream_seed, Batches, RoundEnd};
use super::exec::{choice_at, Driver};
use super::walk::run_one;
use super::SearchError;
use crate::config::Config;
use crate::program::{ActorId, Enabled, Event, Program};
use crate::report::{BoundedBy, Report};
use crate::schedule::{PathKind, Schedule};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Picks uniformly among all choices of the state (every alternative of
/// every enabled actor).
#[derive(Debug)]
pub struct UniformDriver {
    rng: Xoshiro256PlusPlus,
}

impl UniformDriver {
    /// A driver seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        UniformDriver {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }
}

impl Driver for UniformDriver {
    fn choose(&mut self, _step: usize, en: &[Enabled], _ids: &[ActorId]) -> Result<Option<(ActorId, u32)>, String> {
        let total: u64 = en.iter().map(|e| e.alternatives as u64).sum();
        Ok(choice_at(en, self.rng.random_range(0..total)))
    }
    fn observe(&mut self, _actor: ActorId, _events: &[Event]) {}
}

/// Finish a sampling report: the schedule of the violating sample.
pub(crate) fn finish(
    mut batches: Batches<'_>,
    end: RoundEnd,
    explorer: Option<&str>,
    max_steps: usize,
    kind: PathKind,
) -> Report {
    let schedule = match &end {
        RoundEnd::Violation(_, s) => s
            .violation
            .as_ref()
            .map(|(_, path)| Schedule::new(kind, explorer, s.explorer_seed, max_steps, path.clone())),
        _ => None,
    };
    batches.report.schedule = schedule;
    batches.finish(&end)
}

/// Random walk (RS): every sample is one execution that picks uniformly
/// among the choices of each state, up to `max_steps`. Runs until a
/// violation or a budget (the time limit, 60 s by default). The
/// counterexample is a choice path.
pub fn rs<P: Program>(program: &P, config: &Config) -> Result<Report, SearchError> {
    let mut batches = Batches::new(config, Report::new("rs", None, config.seed, 1))?;
    let seed = config.seed;
    let end = batches.round(0, u64::MAX, "rs", |i| {
        let mut d = UniformDriver::new(stream_seed(seed, 0, i, 0));
        run_one(program, &mut d, config.max_steps, config.deadlock)
    });
    Ok(finish(batches, end, None, config.max_steps, PathKind::Choices))
}

/// Iterative random walk (IRS): iteration i = 1, 2, ... runs 3^i random
/// walks cut at depth `i * step` (and at `max_steps`), so that short
/// counterexamples are tried first. `max_delays` bounds the iterations.
pub fn irs<P: Program>(program: &P, config: &Config, step: usize) -> Result<Report, SearchError> {
    if step == 0 {
        return Err(SearchError::Input("--irs-step must be at least 1".into()));
    }
    let mut batches = Batches::new(config, Report::new("irs", None, config.seed, 1))?;
    let seed = config.seed;
    let mut iteration = 1u32;
    let mut depth;
    let end = loop {
        depth = (iteration as usize).saturating_mul(step).min(config.max_steps);
        let count = 3u64.saturating_pow(iteration);
        let label = format!("irs iteration {iteration} (depth {depth})");
        let end = batches.round(iteration, count, &label, |i| {
            let mut d = UniformDriver::new(stream_seed(seed, iteration as u64, i, 0));
            run_one(program, &mut d, depth, config.deadlock)
        });
        match end {
            RoundEnd::Done if config.max_delays.is_some_and(|m| iteration >= m) => {
                break RoundEnd::Stopped(BoundedBy::MaxDelays)
            }
            RoundEnd::Done => iteration += 1,
            other => break other,
        }
    };
    Ok(finish(batches, end, None, depth, PathKind::Choices))
}
