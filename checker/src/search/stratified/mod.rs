//! The one search loop behind SES, DFS and PB: a depth-first search of
//! P x D over an explicit stack, stratified by a cost (delays for SES,
//! preemptions for PB, nothing for DFS), with a cache of program states
//! only (paper §3, ARCHITECTURE.md, "Stratified exhaustive search (SES)").
//!
//! ```text
//! DelayBoundedDFS(s, d, i, n):         # i: choices of s taken; n: cost so far
//!   while i < |choices(s)|:
//!     s' = T(current(d), s); c = child(d); i += 1
//!     defer = i < |choices(s)| and n + cost(d) > bound
//!     if defer: frontier.push(s, advance(d), i, n + cost(d), path)
//!     if s' not in cache: cache.add(s'); DelayBoundedDFS(s', c, 0, n)
//!     if defer or i == |choices(s)|: break
//!     n += cost(d); d = advance(d)
//! ```
//!
//! Invariants of the explicit stack: a frame's child is the frame right
//! above it, explored before the frame's next choice (the continuation is
//! decided first, as in ARCHITECTURE.md, "Stratified exhaustive search (SES)", so frontier entries keep the
//! order of the recursion); a frame stays on the stack until its subtree is
//! done, so paths are derived from the stack lazily and stored in the
//! [`arena`] only when a frame is deferred or violates.
//!
//! The concerns, one module each: [`frame`] (pushing a state's frame, the
//! move to its next choice, the run-time soundness check), [`step`] (taking
//! one choice, written once for stack frames and resumed entries),
//! [`cached`] (a frame's choices whose successors are cached, the common
//! case, in a tight loop before the step), [`peek`] (successor fingerprints
//! computed ahead for prefetching), [`retire`] (entries whose remaining
//! work is only look-ups), [`budget`] (the budgets and the counters shared
//! by parallel workers) and [`chunk`] (the narrow interface of the
//! parallel driver).

mod arena;
mod budget;
mod cached;
mod chunk;
mod frame;
mod handoff;
mod part;
mod peek;
mod retire;
mod step;

pub(super) use arena::{PathNode, Remap};
pub use arena::{Piece, Remote};
pub(super) use budget::{
    CHECK_EVERY, MEMORY_EVERY, Shared, check_period, interrupted_or_late, over_memory, progress_line,
};
pub(super) use chunk::Spares;
pub(super) use frame::{offer, offer_at};
pub(super) use handoff::{Root, run_to_roots};
pub(super) use peek::key_of;

use super::error::SearchError;
use super::order::{ChoiceOrder, EnabledSet};
use super::progress::Meter;
use crate::cache::{AnyCache, FIXED_HASHER, FingerprintSet, FixedHashSet, StateCache};
use crate::config::{Config, Shortcuts, peak_rss};
use crate::program::{ActorId, Enabled, Event, Program, ProgramExt};
use crate::report::{BoundedBy, CacheKey, Found, Outcome, Report, Stratum};
use crate::watch::{Watched, Watching};
use arena::Arena;
pub(super) use part::{Away, PART_WATCHED};
use retire::{Ahead, Owed};
use std::time::Instant;

/// No path node yet: derive it from the frame below.
const NONE: u32 = u32::MAX;
/// The empty path.
const ROOT: u32 = u32::MAX - 1;
/// The parent of a node that stands for a path another worker of a
/// distributed search holds (`arena.rs`).
const REMOTE: u32 = u32::MAX - 2;
/// The bound of a stratum without one (a parallel DFS's last): no path's
/// cost comes near it.
pub(super) const UNBOUNDED: u32 = u32::MAX / 2;

/// A state on the stack, with the choices it has left in this stratum.
struct Frame<S, O> {
    /// `None` once every choice is taken or the rest was deferred.
    state: Option<S>,
    /// `None` once the state is gone and the order was moved out.
    order: Option<O>,
    /// The index of the next choice to take.
    next: u32,
    /// The choice `order` is at (`order.current`), kept so that it is
    /// found once per move.
    cur: (ActorId, u32),
    total: u32,
    cost: u32,
    depth: u32,
    node: u32,
    /// Its enabled set.
    en: Span,
    /// The fingerprints of this stratum's successors from choice
    /// `peek_base` on are `peek[peek_start..peek_start + peek_len]`
    /// (0: not computed), computed when the frame is pushed
    /// (ARCHITECTURE.md, "The optimised search").
    peek_start: u32,
    peek_base: u32,
    peek_len: u32,
    /// Bit i: enabled actor i was offered (run-time soundness check).
    offered: u64,
}

impl<S, O> Frame<S, O> {
    #[inline]
    fn order(&self) -> &O {
        self.order.as_ref().expect("mcheck bug: a live frame has its order")
    }
}

/// Where a state's enabled set is in the search's `en` and `ids`, with
/// its mask ([`EnabledSet`]).
#[derive(Clone, Copy, Debug)]
struct Span {
    start: u32,
    len: u32,
    mask: Option<u64>,
}

/// The enabled set at `span` of `en`/`ids`.
#[inline(always)]
fn enabled_set<'a>(en: &'a [Enabled], ids: &'a [ActorId], span: Span) -> EnabledSet<'a> {
    let (start, end) = (span.start as usize, (span.start + span.len) as usize);
    EnabledSet {
        en: &en[start..end],
        ids: &ids[start..end],
        mask: span.mask,
    }
}

/// A deferred frame: its state, and its order and cost already moved to
/// the next choice (the move that the next stratum pays for).
pub(super) struct Entry<S, O> {
    state: S,
    order: O,
    next: u32,
    /// The cost of reaching choice `next`: the stratum that resumes the
    /// entry. An entry due after the bound passes through the stratum:
    /// its choice there was found cached when it was deferred
    /// (`retire.rs`, [`pass_cached`](Search::pass_cached)).
    cost: u32,
    depth: u32,
    node: u32,
    offered: u64,
    /// The fingerprint of the successor that resuming this entry reaches
    /// first (0: unknown), prefetched a few entries ahead (ARCHITECTURE.md, "The optimised search").
    fp: u64,
}

/// Work items in order, with the renumbering of their path nodes still to
/// apply ([`Remap::NONE`] when there is none).
pub(super) type WorkList<S, O> = (Vec<Entry<S, O>>, Remap);

/// What the search found: a violation at a step, reached by `advances`
/// (moves to the next choice, as (depth, count) from the initial state).
#[derive(Debug)]
pub(super) struct RawViolation {
    /// The violation with its step.
    pub(super) found: Found,
    /// The advances that lead to it.
    pub(super) advances: Vec<(u32, u32)>,
    /// In a distributed search, the path before `advances`: (worker, path
    /// node there); `None`: `advances` start at s0.
    pub(super) before: Option<Remote>,
}

/// The search's result: the report (without schedule) and the raw path of
/// the violation, if any.
#[derive(Debug)]
pub(super) struct SearchResult {
    /// The statistics and outcome.
    pub(super) report: Report,
    /// The violation and how to reach it.
    pub(super) violation: Option<RawViolation>,
}

/// Why the search stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stop {
    Violation,
    Budget(BoundedBy),
    /// Another worker of a parallel search stopped it.
    Halted,
}

/// The stratified search: one stack, one frontier, one cache.
pub(super) struct Search<'a, P: Program, O, const W: bool = false> {
    /// The program, with the run's watch when `W` (see [`Watching`]).
    program: Watching<'a, P, W>,
    config: &'a Config,
    cache: AnyCache<'a>,
    stack: Vec<Frame<P::State, O>>,
    en: Vec<Enabled>,
    ids: Vec<ActorId>,
    frontier: Vec<Entry<P::State, O>>,
    arena: Arena<'a>,
    events: Vec<Event>,
    scratch: Vec<Enabled>,
    /// The state that successors computed only for their fingerprint
    /// are made in, if the state type owns heap memory
    /// ([`peek::successor_fp`]).
    scratch_state: Option<P::State>,
    peek: Vec<u64>,
    bound: u32,
    stratum: Stratum,
    report: Report,
    violation: Option<RawViolation>,
    cut: bool,
    meter: Meter,
    started: Instant,
    next_check: u64,
    /// The transition count at which the memory is checked next.
    next_memory_check: u64,
    peak_bytes: u64,
    work_len: u64,
    /// The shared counters and stop flag of a parallel worker.
    shared: Option<&'a Shared>,
    /// The states and transitions already added to `shared`.
    synced: (u64, u64),
    /// What retired entries owe each stratum, by bound.
    retired: Owed,
    /// Entries retired (for the tests).
    retirements: u64,
    /// Successor fingerprints of a retirement check, and its choices.
    retire_fps: Vec<u64>,
    retire_choices: Vec<(ActorId, u32)>,
    /// The retirement checks of the next work items (`run_work`),
    /// prepared ahead, and their successor fingerprints and choices.
    ahead: Vec<Ahead>,
    ahead_fps: Vec<u64>,
    ahead_choices: Vec<(ActorId, u32)>,
    /// Retirements by checks prepared ahead, and deferrals of entries
    /// whose prepared check failed that took their next successor's
    /// fingerprint from it (for the tests).
    retired_ahead: u64,
    checked_fps: u64,
    /// Strata that kept entries passed through (for the tests).
    passed: u64,
    /// The shortcuts taken ([`Shortcuts::closed`]).
    on: Shortcuts,
    /// Successors explored again because the cache was full (not counted
    /// as states).
    revisits: u64,
    /// Once the cache is full: the fingerprints of the states in the next
    /// frontier, which keeps one entry per state.
    deferred: FixedHashSet<u64>,
    /// Whether a stopped stratum keeps its entries not resumed yet in
    /// `rest` (for the hybrid strategy's hand-over).
    keep_rest: bool,
    /// The state count at which the budgets are checked at once, not at
    /// the next multiple of the check interval (the hybrid strategy's
    /// `max_states`, exact; else never).
    exact_states: u64,
    /// The entries a stopped stratum did not resume (with `keep_rest`).
    rest: Vec<Entry<P::State, O>>,
    /// A parallel search's next frontier, after `frontier`: the workers'
    /// frontiers in chunk order, each with the renumbering of its path
    /// nodes still to apply (the workers of the next stratum apply it), so
    /// that no thread copies them into one list (ARCHITECTURE.md, "Parallel SES, PB and DFS").
    pending: Vec<WorkList<P::State, O>>,
    /// A distributed worker's successors that another worker owns, to be
    /// sent there (`part.rs`).
    away: Vec<Away<P::State, O>>,
    /// A distributed worker's entries of this stratum not resumed yet,
    /// the last first (`part.rs`).
    queued: Vec<Entry<P::State, O>>,
}

/// The cache budget of an exhaustive search (`None`: no cache at all).
pub(super) fn cache_budget(config: &Config) -> Option<usize> {
    if config.use_cache {
        Some(config.cache_bytes.unwrap_or(config.max_memory / 2))
    } else {
        None
    }
}

/// Symmetry needs a program that declares one, a cache and the default
/// cache key (ARCHITECTURE.md, "Symmetry").
pub(super) fn check_symmetry<P: Program>(program: &P, s0: &P::State, config: &Config) -> Result<(), SearchError> {
    if config.exact_bound {
        return Err(SearchError::Input(
            "symmetry and exact-bound do not combine: the exact bound keys the cache by the explorer's state, which names actors; use one of them".into(),
        ));
    }
    if !config.use_cache {
        return Err(SearchError::Input(
            "symmetry needs the state cache, which is off".into(),
        ));
    }
    if program.canonical_fingerprint(s0).is_none() {
        return Err(SearchError::Input(
            "symmetry is on but the program declares no symmetry (Program::symmetry, or MachineModel::symmetry for machine models, gives none)".into(),
        ));
    }
    Ok(())
}

/// Run the stratified search on one thread from the initial state with
/// `root` as the order at s0. The caller names the strategy in `report`.
pub(super) fn run<P: Program, O: ChoiceOrder>(
    program: Watched<'_, P>,
    root: O,
    config: &Config,
    report: Report,
) -> Result<SearchResult, SearchError> {
    // One instance per program type in builds with debug assertions (the
    // tests'): `Watching::<_, true>` runs without a watch too (see
    // `Watching`).
    match program.watch() {
        #[cfg(not(debug_assertions))]
        None => run_as::<P, O, false>(program, root, config, report),
        _ => run_as::<P, O, true>(program, root, config, report),
    }
}

/// [`run`] instantiated for a watch there (`W`) or not.
fn run_as<P: Program, O: ChoiceOrder, const W: bool>(
    program: Watched<'_, P>,
    root: O,
    config: &Config,
    report: Report,
) -> Result<SearchResult, SearchError> {
    let cache = AnyCache::Local(FingerprintSet::new(cache_budget(config)));
    let mut search = Search::<P, O, W>::new(Watching::new(program), config, cache, report);
    let stop = search.explore(root, |s, work| s.run_work(work))?;
    Ok(search.finish(stop))
}

impl<'a, P: Program, O: ChoiceOrder, const W: bool> Search<'a, P, O, W> {
    /// A search at bound 0 with nothing explored yet.
    fn new(program: Watching<'a, P, W>, config: &'a Config, cache: AnyCache<'a>, report: Report) -> Self {
        let on = config.shortcuts.closed();
        Search {
            program,
            config,
            cache,
            stack: Vec::new(),
            en: Vec::new(),
            ids: Vec::new(),
            frontier: Vec::new(),
            arena: Arena::default(),
            events: Vec::new(),
            scratch: Vec::new(),
            scratch_state: None,
            peek: Vec::new(),
            bound: 0,
            stratum: Stratum::default(),
            report,
            violation: None,
            cut: false,
            meter: Meter::new(config.progress.clone()),
            started: Instant::now(),
            next_check: 0,
            next_memory_check: 0,
            peak_bytes: 0,
            work_len: 0,
            shared: None,
            synced: (0, 0),
            retired: Owed::default(),
            retirements: 0,
            retire_fps: Vec::new(),
            retire_choices: Vec::new(),
            ahead: Vec::new(),
            ahead_fps: Vec::new(),
            ahead_choices: Vec::new(),
            retired_ahead: 0,
            checked_fps: 0,
            passed: 0,
            on,
            revisits: 0,
            deferred: FixedHashSet::with_hasher(FIXED_HASHER),
            keep_rest: false,
            exact_states: u64::MAX,
            rest: Vec::new(),
            pending: Vec::new(),
            away: Vec::new(),
            queued: Vec::new(),
        }
    }

    /// The loop over strata, written once: stratum 0 from the initial state
    /// with `root` as its order, then bound 1, 2, ..., each running the
    /// previous stratum's frontier with `run_stratum` (which must empty the
    /// work list it is given, in order), until the frontier is empty, a
    /// stop or `max_delays`.
    pub(super) fn explore(
        &mut self,
        root: O,
        mut run_stratum: impl FnMut(&mut Self, &mut Vec<Entry<P::State, O>>) -> Result<Option<Stop>, SearchError>,
    ) -> Result<Option<Stop>, SearchError> {
        let mut started = Instant::now();
        let mut spare = Vec::new();
        let mut stop = self.start(root)?;
        loop {
            self.close_stratum(started.elapsed().as_secs_f64(), stop.is_none());
            if stop.is_some() || (self.frontier_len() == 0 && !self.owed_later()) {
                return Ok(stop);
            }
            if self.config.max_delays.is_some_and(|m| self.bound >= m) {
                return Ok(Some(Stop::Budget(BoundedBy::MaxDelays)));
            }
            // The next stratum: resume the deferred work items in insertion order.
            self.bound += 1;
            started = Instant::now();
            // The work list and the next frontier swap buffers, so that
            // their pages stay mapped from one stratum to the next.
            let mut work = std::mem::replace(&mut self.frontier, std::mem::take(&mut spare));
            self.deferred.clear();
            stop = run_stratum(self, &mut work)?;
            work.clear();
            spare = work;
        }
    }

    /// Stratum 0: the search from the initial state with `root` as its order.
    fn start(&mut self, root: O) -> Result<Option<Stop>, SearchError> {
        let s0 = self.program.initial();
        if self.config.symmetry {
            check_symmetry(self.program.program(), &s0, self.config)?;
        }
        if self.config.use_cache {
            let key = self.key(self.fp(&s0), &root);
            self.cache.insert(key);
        }
        self.report.states = 1;
        self.stratum.new_states = 1;
        self.program.count_state(&s0);
        let stop = self.push_frame(s0, root, 0, 0, ROOT, None, None)?;
        if stop.is_some() {
            return Ok(stop);
        }
        self.run_stack()
    }

    /// The entries of the next frontier: `frontier`'s and the pending
    /// lists' of a parallel search.
    pub(in crate::search) fn frontier_len(&self) -> u64 {
        (self.frontier.len() + self.pending.iter().map(|(list, _)| list.len()).sum::<usize>()) as u64
    }

    /// Whether retired entries owe counts to a stratum after this one.
    fn owed_later(&self) -> bool {
        self.retired.after(self.bound as usize)
    }

    /// Records the stratum just run, which took `elapsed_s`; a `complete`
    /// one gets what retired entries owe it.
    fn close_stratum(&mut self, elapsed_s: f64, complete: bool) {
        let mut s = std::mem::take(&mut self.stratum);
        s.bound = self.bound;
        s.frontier = self.frontier_len();
        // An unbounded stratum is owed what `lift_bound` put last.
        if complete {
            let r = if self.bound == UNBOUNDED {
                self.retired.last()
            } else {
                self.retired.at(self.bound as usize)
            };
            s.transitions += r.transitions;
            s.deferrals += r.deferrals;
            s.frontier += r.frontier;
            self.report.transitions += r.transitions;
            self.report.deferrals += r.deferrals;
        }
        s.elapsed_s = elapsed_s;
        self.report.strata.push(s);
        self.report.bound_reached = self.bound;
    }

    /// The report, with the outcome `stop` says.
    pub(super) fn finish(mut self, stop: Option<Stop>) -> SearchResult {
        self.meter.finish();
        let end = Ending {
            stop,
            cut: self.cut,
            revisits: self.revisits,
            peak_bytes: self.peak_bytes.max(self.search_bytes()),
            started: self.started,
        };
        close_report(self.report, self.violation, self.config, &self.cache, end)
    }
}

/// How a stratified search ended, for [`close_report`].
pub(super) struct Ending {
    /// Why it stopped early, if it did.
    pub(super) stop: Option<Stop>,
    /// Whether some executions were cut at the step limit.
    pub(super) cut: bool,
    /// Successors explored again because the cache was full.
    pub(super) revisits: u64,
    /// The peak of the search's own bytes.
    pub(super) peak_bytes: u64,
    /// When it started.
    pub(super) started: Instant,
}

/// The result of a stratified search, the optimised one's or the plain
/// one's (`search/plain.rs`), from its report and `violation`: the totals
/// its strata give, the cache's figures, and the outcome `end` says with
/// its notes.
pub(super) fn close_report<C: StateCache>(
    mut report: Report,
    violation: Option<RawViolation>,
    config: &Config,
    cache: &C,
    end: Ending,
) -> SearchResult {
    let r = &mut report;
    r.steps = r.transitions;
    r.peak_frontier = r.strata.iter().map(|s| s.frontier).max().unwrap_or(0);
    r.cache_bytes = cache.bytes() as u64;
    r.cache_key = config.use_cache.then_some(if config.exact_bound {
        CacheKey::ProgramAndExplorerState
    } else {
        CacheKey::ProgramState
    });
    if config.symmetry {
        r.symmetry = true;
        r.notes.push(format!(
            "symmetry: on; the {} states counted are orbits (one canonical state per class of states equal up to renaming interchangeable actors)",
            r.states
        ));
    }
    r.peak_search_bytes = end.peak_bytes;
    r.elapsed_s = end.started.elapsed().as_secs_f64();
    r.peak_memory_mb = peak_rss().unwrap_or(0) as f64 / (1 << 20) as f64;
    match end.stop {
        Some(Stop::Violation) => {
            r.outcome = Outcome::Violation;
            r.violation = violation.as_ref().map(|v| v.found.clone());
        }
        Some(Stop::Budget(by)) => {
            r.outcome = Outcome::Bounded;
            r.bounded_by = Some(by);
        }
        Some(Stop::Halted) => {
            // Only a worker halts, and workers never finish.
            r.outcome = Outcome::Bounded;
            r.bounded_by = Some(BoundedBy::Interrupted);
        }
        None if end.cut => {
            r.outcome = Outcome::Bounded;
            r.bounded_by = Some(BoundedBy::MaxSteps);
            r.notes.push(format!(
                "some executions were cut at --max-steps {}: the state space was not covered",
                config.max_steps
            ));
        }
        None => {
            r.outcome = Outcome::Verified;
            r.collision_probability = Some(Report::collision_bound(r.states, cache.fingerprint_bits()));
        }
    }
    if r.cache_full {
        r.notes.push(format!(
            "the state cache filled its budget of {} KiB ({} states) and stopped growing: the search stayed sound but explored {} successors again that it could not remember (not counted as states)",
            cache.bytes() >> 10,
            r.states,
            end.revisits
        ));
    }
    SearchResult { report, violation }
}

#[cfg(test)]
mod tests;
