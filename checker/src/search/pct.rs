//! PCT, probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi,
//! Nagarakatte, ASPLOS 2010), as a baseline.
//!
//! Every actor gets a random distinct priority, new actors too (inserted at
//! a random rank among the actors that exist); `depth - 1` priority-change
//! points are drawn uniformly in `[1, steps]`; the highest-priority enabled
//! actor runs; at the j-th change point the actor about to run drops to
//! priority j, below every initial priority. Data alternatives are drawn
//! uniformly. A bug of depth d is found with probability at least
//! 1/(n * k^(d-1)) per execution for n actors and k steps.

use super::error::SearchError;
use super::exec::Driver;
use super::walk::{run_one, walk_until_found};
use crate::config::Config;
use crate::program::{ActorId, Enabled, Event, Program};
use crate::report::Report;
use crate::watch::Watched;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The PCT scheduler of one execution.
#[derive(Debug)]
pub(super) struct PctDriver {
    rng: Xoshiro256PlusPlus,
    /// (actor, priority); higher runs first.
    prio: Vec<(ActorId, u64)>,
    /// Change points (1-based step numbers), ascending.
    changes: Vec<u64>,
    next_change: usize,
}

/// Priorities of actors that have not been demoted live above this.
const HIGH: u64 = 1 << 32;

impl PctDriver {
    /// A driver for an execution whose initial actors are `actors`, with
    /// `depth - 1` change points in `[1, steps]`, seeded with `seed`.
    pub(super) fn new(seed: u64, actors: &[ActorId], depth: u32, steps: u64) -> Self {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let prio = actors.iter().map(|&a| (a, HIGH + rng.random_range(0..HIGH))).collect();
        let changes = change_points(&mut rng, depth, steps);
        PctDriver {
            rng,
            prio,
            changes,
            next_change: 0,
        }
    }

    fn priority(&self, a: ActorId) -> u64 {
        self.prio.iter().find(|(x, _)| *x == a).map_or(HIGH, |(_, p)| *p)
    }

    fn top(&self, ids: &[ActorId]) -> ActorId {
        // Highest priority; ties (which random draws make rare) to the lowest id.
        let mut best = ids[0];
        for &a in &ids[1..] {
            if self.priority(a) > self.priority(best) {
                best = a;
            }
        }
        best
    }
}

impl Driver for PctDriver {
    fn choose(&mut self, step: usize, en: &[Enabled], ids: &[ActorId]) -> Result<Option<(ActorId, u32)>, String> {
        let mut a = self.top(ids);
        while self.next_change < self.changes.len() && self.changes[self.next_change] == step as u64 + 1 {
            self.next_change += 1;
            let low = self.next_change as u64;
            match self.prio.iter_mut().find(|(x, _)| *x == a) {
                Some(p) => p.1 = low,
                None => self.prio.push((a, low)),
            }
            a = self.top(ids);
        }
        let i = ids
            .binary_search(&a)
            .map_err(|_| format!("pct chose {a}, not enabled"))?;
        let alt = self.rng.random_range(0..en[i].alternatives);
        Ok(Some((a, alt)))
    }

    fn observe(&mut self, _actor: ActorId, events: &[Event]) {
        for e in events {
            match e {
                Event::Created(info) => {
                    let p = HIGH + self.rng.random_range(0..HIGH);
                    self.prio.push((info.id, p));
                }
                Event::Halted(id) => self.prio.retain(|(x, _)| x != id),
                _ => {}
            }
        }
    }
}

/// The default number of steps `k` over which change points are drawn: the
/// length of one execution that always runs the lowest enabled actor with
/// its first alternative (at least 1).
pub fn default_steps<P: Program>(program: &P, config: &Config) -> u64 {
    default_steps_on(Watched::bare(program), config)
}

/// [`default_steps`] on a watched program.
fn default_steps_on<P: Program>(program: Watched<'_, P>, config: &Config) -> u64 {
    struct Lowest;
    impl Driver for Lowest {
        fn choose(&mut self, _: usize, en: &[Enabled], _: &[ActorId]) -> Result<Option<(ActorId, u32)>, String> {
            Ok(Some((en[0].actor, 0)))
        }
        fn observe(&mut self, _: ActorId, _: &[Event]) {}
    }
    let s = run_one(program, &mut Lowest, config.max_steps, false);
    s.steps.max(1)
}

/// PCT with bug depth `depth` (>= 1) and `steps` (None: [`default_steps`]).
/// Runs until a violation or a budget. The counterexample is a choice path.
pub fn pct<P: Program>(program: &P, config: &Config, depth: u32, steps: Option<u64>) -> Result<Report, SearchError> {
    pct_on(Watched::bare(program), config, depth, steps)
}

/// [`pct`] on a watched program.
pub(crate) fn pct_on<P: Program>(
    program: Watched<'_, P>,
    config: &Config,
    depth: u32,
    steps: Option<u64>,
) -> Result<Report, SearchError> {
    let (k, report) = depth_report("pct", program, config, depth, steps)?;
    let actors: Vec<ActorId> = program.actors(&program.initial()).iter().map(|a| a.id).collect();
    walk_until_found(program, config, report, "pct", |seed| {
        PctDriver::new(seed, &actors, depth, k)
    })
}

/// The report of PCT or PCTCP (`name`) with bug depth `depth` and change
/// points in `[1, steps]`, and k, the range used (`steps`, else
/// [`default_steps`]); an input error for a depth or range of 0.
pub(super) fn depth_report<P: Program>(
    name: &str,
    program: Watched<'_, P>,
    config: &Config,
    depth: u32,
    steps: Option<u64>,
) -> Result<(u64, Report), SearchError> {
    if depth == 0 {
        return Err(SearchError::Input("--pct-depth must be at least 1".into()));
    }
    if steps == Some(0) {
        return Err(SearchError::Input("--pct-steps must be at least 1".into()));
    }
    let k = steps.unwrap_or_else(|| default_steps_on(program, config));
    let mut report = Report::new(name, None, config.seed, 1);
    report
        .notes
        .push(format!("{name} depth {depth}, change points in [1, {k}]"));
    Ok((k, report))
}

/// `depth - 1` change points drawn uniformly in `[1, steps]`, ascending.
pub(super) fn change_points(rng: &mut Xoshiro256PlusPlus, depth: u32, steps: u64) -> Vec<u64> {
    let mut changes: Vec<u64> = (1..depth).map(|_| rng.random_range(1..=steps.max(1))).collect();
    changes.sort_unstable();
    changes
}
