//! One sample of stratified sampling: `DelayBoundedSample(db)` of ARCHITECTURE.md, "Stratified sampling (SS)",
//! with its own tight execution loop (no allocation per step).
//!
//! A sample places its delays one at a time. It runs the program from the
//! initial state with the delays placed so far (the composed delay rule of
//! [`Composed`], exactly as [`super::exec::DelayDriver`] follows a delay
//! path), records the *branching* steps at or after the last delay, and
//! picks one of them uniformly as the next delay position. After `db`
//! placements the last run is the sample's execution, so a sample with `d`
//! delays runs the program `d + 1` times.
//!
//! A step is branching when one more delay there reaches a choice that the
//! delays already placed at that step have not: the state has `T` choices
//! in total (alternatives summed over the enabled actors) and fewer than
//! `T - 1` delays are already placed at that step. Delays anywhere else
//! would only repeat an execution (a delay at a step with a single choice
//! changes nothing; the `T`-th delay at a step wraps around to its first
//! choice, by the explorer's soundness contract).
//!
//! # Guarantee
//!
//! Let `L'` be the largest number of branching steps of any execution (at
//! most the longest execution `L`). Any execution that a delay path with
//! `d` useful delays reaches is drawn by one sample with probability at
//! least `1 / L'^d`: each of its `d` positions is drawn uniformly among at
//! most `L'` candidates, and positions are non-decreasing, as delay paths
//! are. This improves the paper's `1 / L^d` (Thm 3), since delays are never
//! wasted on steps without a choice.
//!
//! # Near placement
//!
//! A sample with [`SampleSeeds::near`] draws each delay position
//! log-uniformly instead: the `j`-th candidate (from 0, in step order) with
//! probability `ln((j + 2) / (j + 1)) / ln(n + 1)` among `n`, so a delay
//! lands within the first `m` candidates with probability
//! `ln(m + 1) / ln(n + 1)`, whatever the length. Its delays cluster near the
//! start and near each other, where the races of a long repeated workload
//! sit (ARCHITECTURE.md, "Where the delays go"). Every candidate keeps
//! probability at least `1 / ((n + 1) ln(n + 1))`, so a near sample reaches
//! every execution with `d` useful delays with probability at least
//! `1 / ((L' + 1) ln(L' + 1))^d`; stratified sampling pairs each near sample
//! with a uniform one, which keeps `1 / L'^d`.

use super::batch::stream_seed;
use super::order::{ChoiceOrder, Composed, EnabledSet};
use crate::config::StopFlag;
use crate::explorer::Explorer;
use crate::program::{ActorId, Enabled, Event, Program};
use crate::report::Found;
use crate::watch::Watched;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::time::Instant;

/// The two independent random streams of one sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct SampleSeeds {
    /// Seeds the generator that draws the delay positions.
    pub(super) positions: u64,
    /// Seeds the explorer ([`Explorer::seed`]); recorded in the schedule.
    pub(super) explorer: u64,
    /// Draw the delay positions log-uniformly (see the module docs, "Near
    /// placement"), not uniformly.
    pub(super) near: bool,
}

/// The seeds of sample `index` of delay bound `bound` under the search seed
/// `seed`: streams 0 and 1 of the batch runner's seed scheme
/// ([`stream_seed`]), with the bound as the round.
pub(super) fn sample_seeds(seed: u64, bound: u32, index: u64) -> SampleSeeds {
    SampleSeeds {
        positions: stream_seed(seed, u64::from(bound), index, 0),
        explorer: stream_seed(seed, u64::from(bound), index, 1),
        near: false,
    }
}

/// The seeds of the near twin of sample `index` of delay bound `bound`
/// (streams 3 and 4 of the same scheme; stream 2 is hybrid's root).
pub(super) fn near_seeds(seed: u64, bound: u32, index: u64) -> SampleSeeds {
    SampleSeeds {
        positions: stream_seed(seed, u64::from(bound), index, 3),
        explorer: stream_seed(seed, u64::from(bound), index, 4),
        near: true,
    }
}

/// The index among `n > 0` candidates that a delay takes: uniform, or
/// log-uniform when `near` (candidate `j` with probability
/// `ln((j + 2) / (j + 1)) / ln(n + 1)`).
fn pick(rng: &mut Xoshiro256PlusPlus, n: usize, near: bool) -> usize {
    if !near {
        return rng.random_range(0..n);
    }
    // x uniform in [0, ln(n + 1)): e^x - 1 is in [0, n), and its floor is
    // j exactly when x is in [ln(j + 1), ln(j + 2)).
    let x = rng.random::<f64>() * ((n + 1) as f64).ln();
    ((x.exp() - 1.0).floor() as usize).min(n - 1)
}

/// The limits every run of a sample obeys.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits<'a> {
    /// Longest execution, in steps.
    pub(super) max_steps: usize,
    /// Report deadlocks as violations.
    pub(super) deadlock: bool,
    /// Abort the sample after this instant (checked between its runs and
    /// every 65,536 steps).
    pub(super) deadline: Option<Instant>,
    /// Abort the sample when raised (checked as the deadline).
    pub(super) stop: Option<&'a StopFlag>,
}

impl Limits<'_> {
    fn expired(&self) -> bool {
        self.stop.is_some_and(StopFlag::is_raised) || self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// How a sample ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SampleEnd {
    /// Its final execution ran to the end (terminal or max-steps) without a
    /// violation.
    Done,
    /// One of its runs violated; `SampleResult::path` is that run's path.
    Violation(Found),
    /// The time limit or the stop flag cut it short; it does not count.
    Aborted,
    /// The explorer named an actor that is not enabled.
    Unsound(String),
    /// An internal invariant failed (a bug in mcheck).
    Internal(String),
}

/// What one sample did.
#[derive(Clone, Debug)]
pub struct SampleResult {
    /// How it ended.
    pub end: SampleEnd,
    /// Its delay path (p0, p1, ...: steps between delays) of the final run,
    /// or of the violating run.
    pub path: Vec<u64>,
    /// The seed its explorer was prepared with.
    pub explorer_seed: u64,
    /// Program steps over all its runs.
    pub steps: u64,
    /// The longest of its runs, in steps.
    pub longest: u64,
    /// Whether its final run was cut at max-steps.
    pub truncated: bool,
    /// The number of branching steps each placement drew from (`L'` of
    /// each delay, in order). Shorter than the bound when a run had no
    /// branching step left after the last delay (the sample then stops
    /// with fewer delays).
    pub choices: Vec<u64>,
}

impl SampleResult {
    /// Whether every delay of the bound was placed.
    pub fn placed_all(&self, bound: u32) -> bool {
        self.choices.len() as u64 >= u64::from(bound)
    }
}

/// How one run ended.
enum RunEnd {
    Violation(Found),
    Terminal,
    MaxSteps,
    Unsound(String),
    Internal(String),
    Aborted,
}

/// Steps between checks of the time limit and stop flag inside a run.
const CHECK_EVERY: u64 = 1 << 16;

/// Per-thread buffers reused by every run of every sample.
#[derive(Debug)]
pub(super) struct Scratch<S, E> {
    state: Option<S>,
    order: Option<Composed<E>>,
    en: Vec<Enabled>,
    ids: Vec<ActorId>,
    events: Vec<Event>,
    /// Absolute delay positions, non-decreasing.
    at: Vec<u64>,
    /// Branching steps of the last recording run.
    branching: Vec<u64>,
}

impl<S, E> Default for Scratch<S, E> {
    fn default() -> Self {
        Scratch {
            state: None,
            order: None,
            en: Vec::new(),
            ids: Vec::new(),
            events: Vec::new(),
            at: Vec::new(),
            branching: Vec::new(),
        }
    }
}

impl<S: Clone, E: Explorer> Scratch<S, E> {
    /// One execution from `s0` with the explorer `prepared` (seeded and
    /// initialised) and the delays at `self.at`. With `record`, the
    /// branching steps at or after the last delay go to `self.branching`.
    /// Returns the steps executed and how the run ended.
    fn run<P: Program<State = S>>(
        &mut self,
        program: Watched<'_, P>,
        start: &Start<'_, S, E>,
        limits: &Limits<'_>,
        record: bool,
    ) -> (u64, RunEnd) {
        match &mut self.state {
            Some(s) => s.clone_from(start.state),
            None => self.state = Some(start.state.clone()),
        }
        match &mut self.order {
            Some(o) => {
                o.explorer.clone_from(&start.order.explorer);
                o.alt = start.order.alt;
            }
            None => self.order = Some(start.order.clone()),
        }
        let (Some(s), Some(order)) = (self.state.as_mut(), self.order.as_mut()) else {
            return (0, RunEnd::Internal("the sample's scratch is not initialised".into()));
        };
        self.branching.clear();
        let last = self.at.last().copied();
        // Delays already placed at the last delay position.
        let at_last = last.map_or(0, |l| self.at.iter().rev().take_while(|&&a| a == l).count() as u64);
        let from = last.unwrap_or(0);
        let mut cursor = 0usize;
        let mut step = 0u64;
        while (step as usize) < limits.max_steps {
            if step % CHECK_EVERY == CHECK_EVERY - 1 && limits.expired() {
                return (step, RunEnd::Aborted);
            }
            self.en.clear();
            program.enabled(s, &mut self.en);
            if self.en.is_empty() {
                if limits.deadlock
                    && let Some(v) = program.deadlock(s)
                {
                    let found = Found {
                        violation: v,
                        step: step as usize,
                    };
                    return (step, RunEnd::Violation(found));
                }
                return (step, RunEnd::Terminal);
            }
            self.ids.clear();
            self.ids.extend(self.en.iter().map(|e| e.actor));
            if record && step >= from {
                let total: u64 = self.en.iter().map(|e| u64::from(e.alternatives)).sum();
                let placed = if Some(step) == last { at_last } else { 0 } + if step == 0 { start.taken } else { 0 };
                if total > placed + 1 {
                    self.branching.push(step);
                }
            }
            let set = EnabledSet::new(&self.en, &self.ids);
            while cursor < self.at.len() && self.at[cursor] == step {
                order.advance(&set);
                cursor += 1;
            }
            let (actor, alt) = order.current(&set);
            let alternatives = match self.ids.binary_search(&actor) {
                Ok(i) => self.en[i].alternatives,
                Err(_) => {
                    let msg = format!(
                        "step {step}: next() named actor {actor}, which is not enabled (enabled: {:?})",
                        self.ids
                    );
                    return (step, RunEnd::Unsound(msg));
                }
            };
            if alt >= alternatives {
                let msg = format!("step {step}: the composed order chose alternative {alt} of {alternatives}");
                return (step, RunEnd::Internal(msg));
            }
            self.events.clear();
            if let Err(v) = program.execute(s, actor, alt, &mut self.events) {
                let found = Found {
                    violation: v,
                    step: step as usize,
                };
                return (step + 1, RunEnd::Violation(found));
            }
            order.explorer.step(&self.events);
            order.alt = 0;
            step += 1;
        }
        (step, RunEnd::MaxSteps)
    }

    fn path(&self) -> Vec<u64> {
        let mut prev = 0;
        self.at
            .iter()
            .map(|&a| {
                let p = a - prev;
                prev = a;
                p
            })
            .collect()
    }
}

/// Where the runs of a sample start: a state, the composed order there,
/// and the delays already made at that state (0 from the initial state;
/// a hybrid root's choices taken), which a delay must exceed to be new.
#[derive(Debug)]
pub(super) struct Start<'a, S, E> {
    pub(super) state: &'a S,
    pub(super) order: &'a Composed<E>,
    pub(super) taken: u64,
}

/// Run one sample with `bound` delays: `prepared` is the explorer already
/// seeded with `seeds.explorer` and initialised ([`crate::explorer::prepare`]),
/// `s0` the program's initial state. See the module docs for the
/// algorithm and its guarantee.
pub(super) fn run_sample<P: Program, E: Explorer>(
    program: Watched<'_, P>,
    s0: &P::State,
    prepared: &E,
    seeds: SampleSeeds,
    bound: u32,
    limits: &Limits<'_>,
    scratch: &mut Scratch<P::State, E>,
) -> SampleResult {
    let order = Composed::new(prepared.clone());
    let start = Start {
        state: s0,
        order: &order,
        taken: 0,
    };
    run_sample_from(program, &start, seeds, bound, limits, scratch)
}

/// [`run_sample`] from `start` (steps and delay positions relative to
/// it; `max_steps` of `limits` counts from it).
pub(super) fn run_sample_from<P: Program, E: Explorer>(
    program: Watched<'_, P>,
    start: &Start<'_, P::State, E>,
    seeds: SampleSeeds,
    bound: u32,
    limits: &Limits<'_>,
    scratch: &mut Scratch<P::State, E>,
) -> SampleResult {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seeds.positions);
    scratch.at.clear();
    let mut result = SampleResult {
        end: SampleEnd::Done,
        path: Vec::new(),
        explorer_seed: seeds.explorer,
        steps: 0,
        longest: 0,
        truncated: false,
        choices: Vec::with_capacity(bound as usize),
    };
    loop {
        let placing = (result.choices.len() as u64) < u64::from(bound);
        let (steps, end) = scratch.run(program, start, limits, placing);
        result.steps += steps;
        result.longest = result.longest.max(steps);
        match end {
            RunEnd::Violation(found) => {
                result.end = SampleEnd::Violation(found);
                result.path = scratch.path();
                return result;
            }
            RunEnd::Aborted => {
                result.end = SampleEnd::Aborted;
                return result;
            }
            RunEnd::Unsound(msg) => {
                result.end = SampleEnd::Unsound(msg);
                result.path = scratch.path();
                return result;
            }
            RunEnd::Internal(msg) => {
                result.end = SampleEnd::Internal(msg);
                return result;
            }
            RunEnd::Terminal | RunEnd::MaxSteps => {
                let truncated = matches!(end, RunEnd::MaxSteps);
                if !placing || scratch.branching.is_empty() {
                    // The last run is the sample's execution.
                    result.truncated = truncated;
                    result.path = scratch.path();
                    return result;
                }
            }
        }
        if limits.expired() {
            result.end = SampleEnd::Aborted;
            return result;
        }
        let n = scratch.branching.len();
        result.choices.push(n as u64);
        let at = scratch.branching[pick(&mut rng, n, seeds.near)];
        scratch.at.push(at);
    }
}
