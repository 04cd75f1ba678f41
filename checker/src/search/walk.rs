//! One execution driven by a randomized scheduler, recorded as a choice
//! path: the engine of the baselines RS, IRS and PCT.

use super::batch::{Batches, RoundEnd, Sample, stream_seed};
use super::error::SearchError;
use super::exec::{self, Driver, End};
use crate::config::Config;
use crate::program::{ActorId, Enabled, Event, Program};
use crate::report::Report;
use crate::schedule::PathKind;
use crate::watch::Watched;

/// Records the flat choice index of every step a driver takes.
struct Recording<'d, D> {
    inner: &'d mut D,
    path: Vec<u64>,
}

impl<D: Driver> Driver for Recording<'_, D> {
    fn choose(&mut self, step: usize, en: &[Enabled], ids: &[ActorId]) -> Result<Option<(ActorId, u32)>, String> {
        let c = self.inner.choose(step, en, ids)?;
        if let Some((actor, alt)) = c {
            self.path.push(exec::index_of(en, actor, alt));
        }
        Ok(c)
    }
    fn observe(&mut self, actor: ActorId, events: &[Event]) {
        self.inner.observe(actor, events)
    }
}

/// Run `program` once under `driver` for at most `max_steps` steps.
pub(super) fn run_one<P: Program, D: Driver>(
    program: Watched<'_, P>,
    driver: &mut D,
    max_steps: usize,
    deadlock: bool,
) -> Sample {
    let mut rec = Recording {
        inner: driver,
        path: Vec::new(),
    };
    let ex = exec::execute_watched(program, &mut rec, max_steps, deadlock, false);
    let steps = ex.steps as u64;
    Sample {
        steps,
        longest: steps,
        truncated: ex.end == End::MaxSteps,
        violation: ex.violation.map(|f| (f, rec.path)),
        explorer_seed: 0,
        aborted: false,
        complete: true,
    }
}

/// A random-walk technique (RS, POS, PCT, PCTCP) run until a violation or
/// a budget: one round of unbounded walks on the batch runner into
/// `report` (`label` in progress lines), walk `i` driven by
/// `driver(seed)`. The counterexample is a choice path.
pub(super) fn walk_until_found<P: Program, D: Driver>(
    program: Watched<'_, P>,
    config: &Config,
    report: Report,
    label: &str,
    driver: impl Fn(u64) -> D + Sync + Send,
) -> Result<Report, SearchError> {
    let mut batches = Batches::new(config, report)?;
    let end = walks(&mut batches, program, (0, u64::MAX, label), config.max_steps, driver)?;
    Ok(batches.finish(end, PathKind::Choices, None, config.max_steps))
}

/// Round `round` of `count` random walks on `batches` (`label` in progress
/// lines), each cut at `max_steps`: walk `i` is driven by
/// `driver(seed)`, with the seed of stream 0 of sample `i`.
pub(super) fn walks<P: Program, D: Driver>(
    batches: &mut Batches<'_>,
    program: Watched<'_, P>,
    (round, count, label): (u32, u64, &str),
    max_steps: usize,
    driver: impl Fn(u64) -> D + Sync + Send,
) -> Result<RoundEnd, SearchError> {
    let (seed, deadlock) = (batches.seed(), batches.deadlock());
    batches.round(
        round,
        count,
        label,
        || (),
        |i, _| {
            let mut d = driver(stream_seed(seed, u64::from(round), i, 0));
            Ok(run_one(program, &mut d, max_steps, deadlock))
        },
    )
}
