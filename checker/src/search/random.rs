//! The random baselines: random walk (RS) and iterative random walk with
//! a growing depth bound (IRS).

use super::batch::{Batches, RoundEnd};
use super::error::SearchError;
use super::exec::{Driver, choice_at};
use super::walk::{walk_until_found, walks};
use crate::config::Config;
use crate::program::{ActorId, Enabled, Event, Program};
use crate::report::{BoundedBy, Report};
use crate::schedule::PathKind;
use crate::watch::Watched;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Picks uniformly among all choices of the state (every alternative of
/// every enabled actor).
#[derive(Debug)]
pub(super) struct UniformDriver {
    rng: Xoshiro256PlusPlus,
}

impl UniformDriver {
    /// A driver seeded with `seed`.
    pub(super) fn new(seed: u64) -> Self {
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

/// Random walk (RS): every sample is one execution that picks uniformly
/// among the choices of each state, up to `max_steps`. Runs until a
/// violation or a budget (the time limit, 60 s by default). The
/// counterexample is a choice path.
pub fn rs<P: Program>(program: &P, config: &Config) -> Result<Report, SearchError> {
    rs_on(Watched::bare(program), config)
}

/// [`rs`] on a watched program.
pub(crate) fn rs_on<P: Program>(program: Watched<'_, P>, config: &Config) -> Result<Report, SearchError> {
    let report = Report::new("rs", None, config.seed, 1);
    walk_until_found(program, config, report, "rs", UniformDriver::new)
}

/// Iterative random walk (IRS): iteration i = 1, 2, ... runs 3^i random
/// walks cut at depth `i * step` (and at `max_steps`), so that short
/// counterexamples are tried first. `max_delays` bounds the iterations.
pub fn irs<P: Program>(program: &P, config: &Config, step: usize) -> Result<Report, SearchError> {
    irs_on(Watched::bare(program), config, step)
}

/// [`irs`] on a watched program.
pub(crate) fn irs_on<P: Program>(program: Watched<'_, P>, config: &Config, step: usize) -> Result<Report, SearchError> {
    if step == 0 {
        return Err(SearchError::Input("--irs-step must be at least 1".into()));
    }
    let mut batches = Batches::new(config, Report::new("irs", None, config.seed, 1))?;
    let mut iteration = 1u32;
    let mut depth;
    let end = loop {
        depth = (iteration as usize).saturating_mul(step).min(config.max_steps);
        let count = 3u64.saturating_pow(iteration);
        let label = format!("irs iteration {iteration} (depth {depth})");
        let end = walks(
            &mut batches,
            program,
            (iteration, count, &label),
            depth,
            UniformDriver::new,
        )?;
        match end {
            RoundEnd::Done if config.max_delays.is_some_and(|m| iteration >= m) => {
                break RoundEnd::Stopped(BoundedBy::MaxDelays);
            }
            RoundEnd::Done => iteration += 1,
            other => break other,
        }
    };
    Ok(batches.finish(end, PathKind::Choices, None, depth))
}
