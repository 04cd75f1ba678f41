//! The one search loop behind SES, DFS and PB: a depth-first search of
//! P x D over an explicit stack, stratified by a cost (delays for SES,
//! preemptions for PB, nothing for DFS), with a cache of program states
//! only (paper §3, DESIGN §3).
//!
//! ```text
//! DelayBoundedDFS(s, d, i, n):         # i: choices of s taken; n: cost so far
//!   while i < |choices(s)|:
//!     s' = T(current(d), s); i += 1
//!     if s' not in cache: cache.add(s'); DelayBoundedDFS(s', child(d), 0, n)
//!     if i < |choices(s)|:
//!       if n + cost(d) > bound: frontier.push(s, d, i, path); break
//!       n += cost(d); d = advance(d)
//! ```
//!
//! Invariants of the explicit stack: a frame's child is the frame right
//! above it, explored before the frame's next choice (the continuation is
//! decided first, as in DESIGN §3, so frontier entries keep the order of
//! the recursion); a frame stays on the stack until its subtree is done,
//! so paths are derived from the stack lazily and stored in the arena only
//! when a frame is deferred or violates.

use super::order::ChoiceOrder;
use super::parallel::Shared;
use super::progress::{human, rate, Meter};
use super::SearchError;
use crate::cache::{fingerprint, FingerprintSet, Insert};
use crate::config::{peak_rss, Config};
use crate::program::{ActorId, Enabled, Event, Program, Violation};
use crate::report::{BoundedBy, Found, Outcome, Report, Stratum};
use std::mem::size_of;
use std::time::Instant;

/// No path node yet: derive it from the frame below.
const NONE: u32 = u32::MAX;
/// The empty path.
pub(super) const ROOT: u32 = u32::MAX - 1;

/// The state cache as the search loop sees it: the single-threaded
/// [`FingerprintSet`], or a handle on the shared cache of a parallel search
/// (see `parallel`). `insert` keeps [`FingerprintSet::insert`]'s contract:
/// `New` exactly once per fingerprint (among all threads), `Full` when the
/// budget stops it from growing.
pub(super) trait StateCache {
    /// Inserts a fingerprint.
    fn insert(&mut self, fp: u64) -> Insert;
    /// The bytes the whole cache holds.
    fn bytes(&self) -> usize;
    /// Starts loading the slot of `fp` into the CPU cache (a hint).
    fn prefetch(&self, _fp: u64) {}
    /// Whether `fp` is in the cache; `false` if the cache cannot tell
    /// cheaply (which only disables retiring entries, see `Retired`).
    fn contains(&self, _fp: u64) -> bool {
        false
    }
}

impl StateCache for FingerprintSet {
    #[inline]
    fn insert(&mut self, fp: u64) -> Insert {
        FingerprintSet::insert(self, fp)
    }
    fn bytes(&self) -> usize {
        FingerprintSet::bytes(self)
    }
    #[inline]
    fn prefetch(&self, fp: u64) {
        FingerprintSet::prefetch(self, fp)
    }
    #[inline]
    fn contains(&self, fp: u64) -> bool {
        FingerprintSet::contains(self, fp)
    }
}

/// `count` moves to the next choice at step `depth`, after the path `parent`.
#[derive(Clone, Copy, Debug)]
pub(super) struct PathNode {
    pub(super) parent: u32,
    pub(super) depth: u32,
    pub(super) count: u32,
}

/// An arena of path nodes: a frontier entry's path is one index. Ids below
/// `below.len()` name the read-only nodes of earlier strata (a parallel
/// worker's view of the merged arena; empty in a sequential search), the
/// others `nodes`.
#[derive(Default)]
pub(super) struct Arena<'a> {
    pub(super) below: &'a [PathNode],
    pub(super) nodes: Vec<PathNode>,
}

impl Arena<'_> {
    fn push(&mut self, node: PathNode) -> Result<u32, SearchError> {
        let id = self.below.len() + self.nodes.len();
        if id >= ROOT as usize {
            return Err(SearchError::Internal("more than 4 billion path nodes".into()));
        }
        self.nodes.push(node);
        Ok(id as u32)
    }

    /// The path as (depth, count) pairs from the initial state on.
    fn expand(&self, mut node: u32) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        while node != ROOT {
            let i = node as usize;
            let n = match self.below.get(i) {
                Some(n) => *n,
                None => self.nodes[i - self.below.len()],
            };
            out.push((n.depth, n.count));
            node = n.parent;
        }
        out.reverse();
        out
    }
}

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
    en_start: u32,
    en_len: u32,
    /// The fingerprints of this stratum's successors from choice
    /// `peek_base` on are `peek[peek_start..peek_start + peek_len]`
    /// (0: not computed), computed when the frame is pushed (DESIGN §9).
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

    #[inline]
    fn order_mut(&mut self) -> &mut O {
        self.order.as_mut().expect("mcheck bug: a live frame has its order")
    }
}

/// A deferred frame: its state, and its order and cost already moved to
/// the next choice (the move that the next stratum pays for).
pub(super) struct Entry<S, O> {
    state: S,
    order: O,
    next: u32,
    cost: u32,
    depth: u32,
    pub(super) node: u32,
    offered: u64,
    /// The fingerprint of the successor that resuming this entry reaches
    /// first (0: unknown), prefetched a few entries ahead (DESIGN §9).
    fp: u64,
}

/// How many frontier entries ahead of the one being resumed the search
/// prefetches the cache slot of the first successor.
const PREFETCH_AHEAD: usize = 8;

/// The most successors of one frame whose fingerprints are computed ahead.
const MAX_PEEK: u32 = 64;

/// What retired entries still owe one stratum's statistics.
///
/// An entry is *retired* when it is deferred again and every successor
/// its remaining choices reach is already cached: resuming it would only
/// look each one up (found), one choice per stratum, and defer it again,
/// changing nothing but the counts. Its work is done at once (the
/// successors computed and looked up); the strata it would have visited
/// get its transition, deferral and frontier slot here, so every
/// complete stratum's counts are those of the plain search, and so are
/// the states, their order and every counterexample: the cache only
/// grows, so a successor found now is found then. (The stratum where a
/// search stops early, at a violation or a budget, counts only the work
/// done before it stopped, without what retired entries owe it.) (On TwoPhase most
/// deferrals are of such entries; keeping them cost a frontier entry
/// written and read, an enabled set and explorer moves per stratum.)
#[derive(Clone, Copy, Default, Debug)]
pub(super) struct Retired {
    transitions: u64,
    deferrals: u64,
    frontier: u64,
}

impl Retired {
    /// Adds what `other` owes (a parallel worker's, merged).
    pub(super) fn add(&mut self, other: &Retired) {
        self.transitions += other.transitions;
        self.deferrals += other.deferrals;
        self.frontier += other.frontier;
    }
}

/// Retiring is tried while at least 1 in `RETIRE_HIT_RATE` tries succeeds
/// (each failed try computed successors for nothing), and after that on
/// every `RETIRE_PROBE`th chance, to notice when it pays again.
const RETIRE_HIT_RATE: u64 = 2;
const RETIRE_PROBE: u64 = 16;

/// What the search found: a violation at a step, reached by `advances`
/// (moves to the next choice, as (depth, count) from the initial state).
#[derive(Debug)]
pub struct RawViolation {
    /// The violation with its step.
    pub found: Found,
    /// The advances that lead to it.
    pub advances: Vec<(u32, u32)>,
}

/// The search's result: the report (without schedule) and the raw path of
/// the violation, if any.
pub struct SearchResult {
    /// The statistics and outcome.
    pub report: Report,
    /// The violation and how to reach it.
    pub violation: Option<RawViolation>,
}

/// Why the search stopped early.
pub(super) enum Stop {
    Violation,
    Budget(BoundedBy),
    /// Another worker of a parallel search stopped it.
    Halted,
}

pub(super) struct Search<'a, P: Program, O, C = FingerprintSet> {
    program: &'a P,
    config: &'a Config,
    pub(super) cache: C,
    stack: Vec<Frame<P::State, O>>,
    en: Vec<Enabled>,
    ids: Vec<ActorId>,
    pub(super) frontier: Vec<Entry<P::State, O>>,
    pub(super) arena: Arena<'a>,
    events: Vec<Event>,
    scratch: Vec<Enabled>,
    peek: Vec<u64>,
    pub(super) bound: u32,
    pub(super) stratum: Stratum,
    pub(super) report: Report,
    pub(super) violation: Option<RawViolation>,
    pub(super) cut: bool,
    pub(super) meter: Meter,
    pub(super) started: Instant,
    next_check: u64,
    pub(super) peak_bytes: u64,
    work_len: u64,
    /// The shared counters and stop flag of a parallel worker.
    pub(super) shared: Option<&'a Shared>,
    /// The states and transitions already added to `shared`.
    synced: (u64, u64),
    /// What retired entries owe each stratum, by bound.
    pub(super) retired: Vec<Retired>,
    /// Retiring: tries, successes and chances skipped.
    retire_stats: (u64, u64, u64),
    /// Successor fingerprints of a retirement check.
    retire_fps: Vec<u64>,
    /// Whether entries may retire (always, but for the test that compares).
    retire_on: bool,
}

/// The cache budget of an exhaustive search (`None`: no cache at all).
pub(super) fn cache_budget(config: &Config) -> Option<usize> {
    if config.use_cache {
        Some(config.cache_bytes.unwrap_or(config.max_memory / 2))
    } else {
        None
    }
}

/// Run the stratified search from the initial state with `root` as the
/// order at s0. The caller names the strategy in `report`.
pub fn run<P: Program, O: ChoiceOrder>(
    program: &P,
    root: O,
    config: &Config,
    report: Report,
) -> Result<SearchResult, SearchError> {
    let cache = FingerprintSet::new(cache_budget(config));
    let mut search = Search::new(program, config, cache, report);
    let stop = search.explore(root)?;
    Ok(search.finish(stop))
}

impl<'a, P: Program, O: ChoiceOrder, C: StateCache> Search<'a, P, O, C> {
    /// A search at bound 0 with nothing explored yet.
    pub(super) fn new(program: &'a P, config: &'a Config, cache: C, report: Report) -> Self {
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
            peek: Vec::new(),
            bound: 0,
            stratum: Stratum::default(),
            report,
            violation: None,
            cut: false,
            meter: Meter::new(config.progress.clone()),
            started: Instant::now(),
            next_check: 0,
            peak_bytes: 0,
            work_len: 0,
            shared: None,
            synced: (0, 0),
            retired: Vec::new(),
            retire_stats: (0, 0, 0),
            retire_fps: Vec::new(),
            retire_on: true,
        }
    }

    /// Stratum 0: the search from the initial state with `root` as its order.
    pub(super) fn start(&mut self, root: O) -> Result<Option<Stop>, SearchError> {
        let s0 = self.program.initial();
        if self.config.use_cache {
            self.cache.insert(fingerprint(&s0));
        }
        self.report.states = 1;
        self.stratum.new_states = 1;
        let stop = self.push_frame(s0, root, 0, 0, ROOT)?;
        if stop.is_some() {
            return Ok(stop);
        }
        self.run_stack()
    }

    /// Resumes deferred work items in order (at the current bound) until
    /// they are done or the search stops.
    /// Drains `work`, prefetching the cache slot of the successor each
    /// entry reaches first a few entries ahead.
    pub(super) fn run_work(&mut self, work: &mut Vec<Entry<P::State, O>>) -> Result<Option<Stop>, SearchError> {
        self.work_len = work.len() as u64;
        let mut stop = None;
        let mut entries = work.drain(..);
        while let Some(entry) = entries.next() {
            if let Some(ahead) = entries.as_slice().get(PREFETCH_AHEAD) {
                self.cache.prefetch(ahead.fp);
            }
            self.work_len -= 1;
            stop = self.resume(entry)?;
            if stop.is_none() {
                stop = self.run_stack()?;
            }
            if stop.is_some() {
                break;
            }
        }
        self.work_len = 0;
        Ok(stop)
    }

    fn explore(&mut self, root: O) -> Result<Option<Stop>, SearchError> {
        let mut started = Instant::now();
        let mut spare = Vec::new();
        let mut stop = self.start(root)?;
        loop {
            self.close_stratum(started, stop.is_none());
            if stop.is_some() || (self.frontier.is_empty() && !self.owed_later()) {
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
            stop = self.run_work(&mut work)?;
            work.clear();
            spare = work;
        }
    }

    /// Whether retired entries owe counts to a stratum after this one.
    pub(super) fn owed_later(&self) -> bool {
        self.retired.len() > self.bound as usize + 1
    }

    /// Records the stratum just run; a `complete` one gets what retired
    /// entries owe it.
    pub(super) fn close_stratum(&mut self, started: Instant, complete: bool) {
        let mut s = std::mem::take(&mut self.stratum);
        s.bound = self.bound;
        s.frontier = self.frontier.len() as u64;
        if let Some(r) = self.retired.get(self.bound as usize).filter(|_| complete) {
            s.transitions += r.transitions;
            s.deferrals += r.deferrals;
            s.frontier += r.frontier;
            self.report.transitions += r.transitions;
            self.report.deferrals += r.deferrals;
        }
        s.elapsed_s = started.elapsed().as_secs_f64();
        self.report.strata.push(s);
        self.report.bound_reached = self.bound;
    }

    /// Compute the enabled set of `state`; push a frame for it unless it is
    /// terminal (then check deadlock).
    fn push_frame(
        &mut self,
        state: P::State,
        order: O,
        cost: u32,
        depth: u32,
        node: u32,
    ) -> Result<Option<Stop>, SearchError> {
        self.program.enabled(&state, &mut self.scratch);
        let en_start = self.en.len();
        let total = self.load_enabled();
        self.push_loaded(state, order, cost, depth, node, None, (en_start, total))
    }

    /// Moves the enabled set in `scratch` to the end of `en`/`ids`; returns
    /// the number of choices.
    fn load_enabled(&mut self) -> u32 {
        debug_assert!(
            self.scratch.iter().all(|e| e.alternatives >= 1),
            "mcheck: Program::enabled listed an actor with 0 alternatives"
        );
        let total = self.scratch.iter().map(|e| e.alternatives.max(1)).sum();
        self.en.extend_from_slice(&self.scratch);
        self.ids.extend(self.scratch.iter().map(|e| e.actor));
        self.scratch.clear();
        total
    }

    /// [`push_frame`](Self::push_frame) once the state's enabled set is
    /// loaded: `en[en_start..]`, with `total` choices (0: terminal).
    #[allow(clippy::too_many_arguments)]
    fn push_loaded(
        &mut self,
        state: P::State,
        order: O,
        cost: u32,
        depth: u32,
        node: u32,
        resume: Option<(u32, u64, u64)>,
        (en_start, total): (usize, u32),
    ) -> Result<Option<Stop>, SearchError> {
        if total == 0 {
            if self.config.deadlock {
                if let Some(v) = self.program.deadlock(&state) {
                    // The violating "step" is the state reached after `depth` steps.
                    let top = self.stack.len();
                    self.stack.push(Frame {
                        state: None,
                        order: Some(order),
                        next: 1,
                        cur: (ActorId(0), 0),
                        total: 0,
                        cost,
                        depth,
                        node,
                        en_start: en_start as u32,
                        en_len: 0,
                        peek_start: 0,
                        peek_base: 0,
                        peek_len: 0,
                        offered: 0,
                    });
                    let path = self.materialize(top)?;
                    let advances = self.arena.expand(path);
                    self.stack.pop();
                    return Ok(Some(self.violate(v, depth as usize, advances)));
                }
            }
            return Ok(None);
        }
        let en_len = self.en.len() - en_start;
        let ids = &self.ids[en_start..];
        let (cur, offered, next) = match resume {
            None => {
                let cur = order.current(&self.en[en_start..], ids);
                (cur, self.offer(0, cur.0, ids, &order)?, 0)
            }
            Some((next, offered, _)) => {
                // A deferred frame resumes one move on, paid by this stratum
                // (the entry holds the order and cost after the move).
                let cur = order.current(&self.en[en_start..], ids);
                // Alternative 0 starts another actor's block: it must be a fresh actor.
                let (after, alt) = cur;
                let offered = if alt > 0 {
                    offered
                } else {
                    self.offer(offered, after, ids, &order)?
                };
                (cur, offered, next)
            }
        };
        // Built in place: a frame is large.
        self.stack.push(Frame {
            state: Some(state),
            order: Some(order),
            next,
            cur,
            total,
            cost,
            depth,
            node,
            en_start: en_start as u32,
            en_len: en_len as u32,
            peek_start: 0,
            peek_base: 0,
            peek_len: 0,
            offered,
        });
        if self.config.use_cache {
            let top = self.stack.len() - 1;
            self.peek_successors(top);
            if let Some((_, _, fp)) = resume.filter(|&(_, _, fp)| fp != 0 && self.stack[top].peek_len == 0) {
                // The deferred frame's first successor, computed at deferral.
                self.peek.push(fp);
                self.stack[top].peek_len = 1;
            }
        }
        Ok(None)
    }

    /// Computes the fingerprints of the successors that frame `k` (just
    /// pushed) will reach in this stratum, in order, and prefetches the
    /// look-ups of the first few, so that their cache misses overlap
    /// (DESIGN §9). Nothing is inserted or counted here: the successors are
    /// still taken, looked up and explored in the search's order. A frame
    /// that takes one choice only computes nothing.
    fn peek_successors(&mut self, k: usize) {
        let peek_start = self.peek.len() as u32;
        let frame = &mut self.stack[k];
        frame.peek_start = peek_start;
        frame.peek_base = frame.next;
        let frame = &self.stack[k];
        let (start, len) = (frame.en_start as usize, frame.en_len as usize);
        let en = &self.en[start..start + len];
        let ids = &self.ids[start..start + len];
        let remaining = frame.total - frame.next;
        if remaining < 2 || frame.cost + frame.order().advance_cost(en, ids) > self.bound {
            return;
        }
        let Some(state) = frame.state.as_ref() else {
            return;
        };
        let mut order = frame.order().clone();
        let mut cost = frame.cost;
        let mut cur = frame.cur;
        for k in 0..remaining.min(MAX_PEEK) {
            let (actor, alt) = cur;
            let mut child = state.clone();
            self.events.clear();
            let fp = match self.program.execute(&mut child, actor, alt, &mut self.events) {
                Ok(()) => fingerprint(&child),
                Err(_) => 0,
            };
            self.peek.push(fp);
            if (k as usize) < PREFETCH_AHEAD {
                self.cache.prefetch(fp);
            }
            if k + 1 == remaining {
                break;
            }
            let step = order.advance_cost(en, ids);
            if cost + step > self.bound {
                break;
            }
            cost += step;
            order.advance_from(cur, en, ids);
            cur = order.current(en, ids);
        }
        self.stack[k].peek_len = self.peek.len() as u32 - peek_start;
    }

    /// The run-time soundness check: a newly offered actor must be enabled
    /// and not offered before at this state.
    fn offer(&self, offered: u64, actor: ActorId, ids: &[ActorId], order: &O) -> Result<u64, SearchError> {
        match ids.binary_search(&actor) {
            Err(_) => Err(SearchError::UnsoundExplorer {
                explorer: order.name().to_string(),
                message: format!("it chose actor {actor}, which is not enabled (enabled: {ids:?})"),
            }),
            Ok(i) if i < 64 => {
                if offered & (1 << i) != 0 {
                    Err(SearchError::UnsoundExplorer {
                        explorer: order.name().to_string(),
                        message: format!(
                            "it offered actor {actor} twice at one state before offering every enabled actor (enabled: {ids:?})"
                        ),
                    })
                } else {
                    Ok(offered | (1 << i))
                }
            }
            Ok(_) => Ok(offered),
        }
    }

    /// Resumes a deferred entry. The common case, where the entry takes
    /// its one choice of this stratum and the move after it needs another
    /// stratum (always in SES, where every frame's cost is the bound), is
    /// done without a stack frame: look up (and if new, execute) the
    /// successor, defer the entry again one move on, then push the
    /// successor's frame. The same steps, in the same order, as the
    /// general path of `push_frame` and `run_stack`, which every other
    /// case takes.
    fn resume(&mut self, e: Entry<P::State, O>) -> Result<Option<Stop>, SearchError> {
        self.program.enabled(&e.state, &mut self.scratch);
        let en_start = self.en.len();
        let total = self.load_enabled();
        let index = e.next;
        let last = index + 1 == total;
        let end = self.en.len();
        let (en, ids) = (&self.en[en_start..end], &self.ids[en_start..end]);
        let step_cost = if last { 0 } else { e.order.advance_cost(en, ids) };
        if total <= index || !(last || e.cost + step_cost > self.bound) {
            let resume = Some((e.next, e.offered, e.fp));
            return self.push_loaded(e.state, e.order, e.cost, e.depth, e.node, resume, (en_start, total));
        }
        let Entry {
            state,
            mut order,
            cost,
            depth,
            node,
            fp: peeked,
            ..
        } = e;
        let cur = order.current(en, ids);
        let (actor, alt) = cur;
        // Alternative 0 starts another actor's block: it must be a fresh actor.
        let offered = if alt > 0 {
            e.offered
        } else {
            self.offer(e.offered, actor, ids, &order)?
        };
        let child_depth = depth + 1;
        self.report.transitions += 1;
        self.stratum.transitions += 1;
        let looked_up =
            (peeked != 0 && (child_depth as usize) < self.config.max_steps).then(|| self.cache.insert(peeked));
        let skip = looked_up == Some(Insert::Present);
        let (mut child, kept) = match (last, skip) {
            (true, true) => (None, None),
            (true, false) => (Some(state), None),
            (false, true) => (None, Some(state)),
            (false, false) => (Some(state.clone()), Some(state)),
        };
        if let Some(c) = child.as_mut() {
            self.events.clear();
            if let Err(v) = self.program.execute(c, actor, alt, &mut self.events) {
                let node = self.child_node(node, depth, index)?;
                let advances = self.arena.expand(node);
                self.en.truncate(en_start);
                self.ids.truncate(en_start);
                return Ok(Some(self.violate(v, depth as usize, advances)));
            }
        }
        let (fresh, cut) = self.classify(looked_up, child.as_ref(), peeked, 0, child_depth);
        // The explorer steps only into a successor that is explored.
        let child_order = match kept {
            None => fresh.then(|| order.into_child(actor, &self.events)),
            Some(state) => {
                let child_order = fresh.then(|| order.child(actor, &self.events));
                // Deferred again, one move on, before the successor's subtree.
                let (en, ids) = (&self.en[en_start..end], &self.ids[en_start..end]);
                order.advance_from(cur, en, ids);
                let next_choice = order.current(en, ids);
                let fp = self.first_fp(&state, next_choice);
                let remaining = total - (index + 1);
                let retire = (depth, remaining, (en_start, end));
                // Tried only when this choice's successor was cached: near
                // new states, later successors seldom all are.
                if !(skip && self.try_retire(&state, &order, next_choice, fp, offered, retire)) {
                    self.frontier.push(Entry {
                        state,
                        order,
                        next: index + 1,
                        cost: cost + step_cost,
                        depth,
                        node,
                        offered,
                        fp,
                    });
                }
                self.report.deferrals += 1;
                self.stratum.deferrals += 1;
                child_order
            }
        };
        self.en.truncate(en_start);
        self.ids.truncate(en_start);
        if cut {
            self.cut = true;
        } else if let (Some(child_order), Some(child)) = (child_order, child) {
            let child_node = self.child_node(node, depth, index)?;
            if let Some(stop) = self.enter(child, child_order, cost, child_depth, child_node)? {
                return Ok(Some(stop));
            }
        }
        Ok(self.budgets_due())
    }

    /// Retires an entry about to be deferred again (see [`Retired`]) if
    /// every successor its `remaining` choices reach is cached: `first`
    /// is its next choice, `fp` that successor's fingerprint. Their
    /// look-ups are prefetched together, then made. Any doubt (a violating
    /// successor, the step bound, an explorer that the run-time check
    /// would reject) keeps the entry. In a parallel search a successor
    /// another worker has not inserted yet only keeps it too.
    fn try_retire(
        &mut self,
        state: &P::State,
        order: &O,
        first: (ActorId, u32),
        fp: u64,
        offered: u64,
        (depth, remaining, (en_start, end)): (u32, u32, (usize, usize)),
    ) -> bool {
        if !self.retire_on || fp == 0 || depth as usize + 1 >= self.config.max_steps {
            return false;
        }
        let (tries, hits, skipped) = &mut self.retire_stats;
        if *tries >= 64 && *hits * RETIRE_HIT_RATE < *tries {
            *skipped += 1;
            if *skipped % RETIRE_PROBE != 0 {
                return false;
            }
        }
        *tries += 1;
        self.cache.prefetch(fp);
        let mut fps = std::mem::take(&mut self.retire_fps);
        fps.clear();
        fps.push(fp);
        let mut order = order.clone();
        let (mut cur, mut offered, mut sound) = (first, offered, true);
        for k in 0..remaining {
            let ids = &self.ids[en_start..end];
            if cur.1 == 0 {
                match self.offer(offered, cur.0, ids, &order) {
                    Ok(o) => offered = o,
                    Err(_) => {
                        sound = false;
                        break;
                    }
                }
            }
            if k + 1 == remaining {
                break;
            }
            let en = &self.en[en_start..end];
            order.advance_from(cur, en, ids);
            cur = order.current(en, ids);
            let f = self.successor_fp(state, cur);
            if f == 0 {
                sound = false;
                break;
            }
            self.cache.prefetch(f);
            fps.push(f);
        }
        let all = sound && fps.iter().all(|&f| self.cache.contains(f));
        self.retire_fps = fps;
        if !all {
            return false;
        }
        self.retire_stats.1 += 1;
        // Its deferral now is counted by the caller; it would be in this
        // stratum's frontier, then taken once in each of the next
        // `remaining` strata, and deferred again in all but the last.
        let bound = self.bound as usize;
        let r = remaining as usize;
        if self.retired.len() < bound + r + 1 {
            self.retired.resize(bound + r + 1, Retired::default());
        }
        self.retired[bound].frontier += 1;
        for j in 1..=r {
            let owed = &mut self.retired[bound + j];
            owed.transitions += 1;
            if j < r {
                owed.deferrals += 1;
                owed.frontier += 1;
            }
        }
        true
    }

    /// The path node of frame `k`, creating nodes for the frames below it
    /// that have none yet.
    fn materialize(&mut self, k: usize) -> Result<u32, SearchError> {
        let mut j = k;
        while self.stack[j].node == NONE {
            j -= 1;
        }
        for m in j + 1..=k {
            let p = &self.stack[m - 1];
            let count = p.next - 1;
            let node = if count == 0 {
                p.node
            } else {
                self.arena.push(PathNode {
                    parent: p.node,
                    depth: p.depth,
                    count,
                })?
            };
            self.stack[m].node = node;
        }
        Ok(self.stack[k].node)
    }

    fn violate(&mut self, v: Violation, step: usize, advances: Vec<(u32, u32)>) -> Stop {
        self.violation = Some(RawViolation {
            found: Found { violation: v, step },
            advances,
        });
        Stop::Violation
    }

    /// Whether a successor is explored (new), and whether it was cut at
    /// the step bound: `looked_up` is the result of a look-up made before
    /// it was executed (of `peeked`, its fingerprint), else `child` is the
    /// executed successor (`None` only after a `Present` look-up), with its
    /// fingerprint `child_fp` if computed (0: not).
    #[inline(always)]
    fn classify(
        &mut self,
        looked_up: Option<Insert>,
        child: Option<&P::State>,
        peeked: u64,
        child_fp: u64,
        child_depth: u32,
    ) -> (bool, bool) {
        let mut cut = false;
        let fresh = match (looked_up, child) {
            (Some(Insert::Present), _) => false,
            (Some(Insert::New), c) => {
                debug_assert!(
                    c.is_some_and(|c| fingerprint(c) == peeked),
                    "mcheck bug: a transition is not deterministic"
                );
                true
            }
            (Some(Insert::Full), _) => {
                self.report.cache_full = true;
                true
            }
            (None, None) => false,
            (None, Some(c)) => {
                if child_depth as usize >= self.config.max_steps {
                    // Cut: not cached, so that a shorter path may explore it.
                    self.program.enabled(c, &mut self.scratch);
                    cut = !self.scratch.is_empty();
                    self.scratch.clear();
                }
                let fp = if child_fp != 0 { child_fp } else { fingerprint(c) };
                !cut && (!self.config.use_cache
                    || match self.cache.insert(fp) {
                        Insert::New => true,
                        Insert::Present => false,
                        Insert::Full => {
                            self.report.cache_full = true;
                            true
                        }
                    })
            }
        };
        (fresh, cut)
    }

    /// The fingerprint of the successor of `state` by `choice` (0 if it
    /// violates), computed to prefetch its look-up.
    fn successor_fp(&mut self, state: &P::State, (actor, alt): (ActorId, u32)) -> u64 {
        let mut c = state.clone();
        self.events.clear();
        match self.program.execute(&mut c, actor, alt, &mut self.events) {
            Ok(()) => fingerprint(&c),
            Err(_) => 0,
        }
    }

    /// The fingerprint of the successor a deferred entry reaches first when
    /// resumed (0 without a cache): its look-up is prefetched when the
    /// entry comes up.
    #[inline]
    fn first_fp(&mut self, state: &P::State, choice: (ActorId, u32)) -> u64 {
        if self.config.use_cache {
            self.successor_fp(state, choice)
        } else {
            0
        }
    }

    /// A new successor is counted and gets its frame.
    #[inline]
    fn enter(
        &mut self,
        child: P::State,
        order: O,
        cost: u32,
        depth: u32,
        node: u32,
    ) -> Result<Option<Stop>, SearchError> {
        self.report.states += 1;
        self.stratum.new_states += 1;
        self.push_frame(child, order, cost, depth, node)
    }

    /// The budgets, checked every few thousand transitions.
    #[inline]
    fn budgets_due(&mut self) -> Option<Stop> {
        if self.report.transitions >= self.next_check {
            self.check_budgets()
        } else {
            None
        }
    }

    /// The path node of the successor reached by choice `index` of the
    /// state at `node` and `depth`.
    fn child_node(&mut self, node: u32, depth: u32, index: u32) -> Result<u32, SearchError> {
        if index == 0 {
            Ok(node)
        } else {
            self.arena.push(PathNode {
                parent: node,
                depth,
                count: index,
            })
        }
    }

    fn run_stack(&mut self) -> Result<Option<Stop>, SearchError> {
        while let Some(top_index) = self.stack.len().checked_sub(1) {
            let top = &mut self.stack[top_index];
            if top.state.is_none() {
                let start = top.en_start as usize;
                self.en.truncate(start);
                self.ids.truncate(start);
                self.peek.truncate(top.peek_start as usize);
                self.stack.pop();
                continue;
            }
            let (start, len) = (top.en_start as usize, top.en_len as usize);
            let en = &self.en[start..start + len];
            let ids = &self.ids[start..start + len];
            let (actor, alt) = top.cur;
            debug_assert_eq!(top.cur, top.order().current(en, ids));
            let index = top.next;
            // The successor's fingerprint if computed at push time; prefetch
            // the look-up of a later one.
            let j = index - top.peek_base;
            let peeked = if j < top.peek_len {
                let p = (top.peek_start + j) as usize;
                if j + (PREFETCH_AHEAD as u32) < top.peek_len {
                    self.cache.prefetch(self.peek[p + PREFETCH_AHEAD]);
                }
                self.peek[p]
            } else {
                0
            };
            top.next += 1;
            let last = top.next == top.total;
            let step_cost = if last { 0 } else { top.order().advance_cost(en, ids) };
            let defer = !last && top.cost + step_cost > self.bound;
            let cost_at_choice = top.cost;
            let depth = top.depth;
            let child_depth = depth + 1;
            // A successor whose fingerprint is known is looked up before it
            // is executed: a cached one is not executed again.
            let looked_up =
                (peeked != 0 && (child_depth as usize) < self.config.max_steps).then(|| self.cache.insert(peeked));
            let skip = looked_up == Some(Insert::Present);
            let top = &mut self.stack[top_index];
            let (mut child, kept) = if last {
                let s = top.state.take().expect("frame has a state");
                (if skip { None } else { Some(s) }, None)
            } else if defer {
                let s = top.state.take().expect("frame has a state");
                (if skip { None } else { Some(s.clone()) }, Some(s))
            } else if skip {
                (None, None)
            } else {
                (top.state.clone(), None)
            };
            self.report.transitions += 1;
            self.stratum.transitions += 1;
            if let Some(c) = child.as_mut() {
                self.events.clear();
                if let Err(v) = self.program.execute(c, actor, alt, &mut self.events) {
                    let node = self.materialize(top_index)?;
                    let node = self.child_node(node, depth, index)?;
                    let advances = self.arena.expand(node);
                    return Ok(Some(self.violate(v, depth as usize, advances)));
                }
            }
            // A successor not looked up yet: its fingerprint now and its
            // look-up prefetched, made after the deferral below so that a
            // miss overlaps that work.
            let child_fp = match (&child, looked_up) {
                (Some(c), None) if self.config.use_cache && (child_depth as usize) < self.config.max_steps => {
                    let fp = fingerprint(c);
                    self.cache.prefetch(fp);
                    fp
                }
                _ => 0,
            };
            let top = &mut self.stack[top_index];
            // The successor's order if it is new: the explorer steps only
            // into a successor that is explored.
            let mut deferred_child_order = None;
            let deferred = kept.is_some();
            if let Some(state) = kept {
                let order = top.order.take().expect("mcheck bug: a live frame has its order");
                // Before the move, and before the events are reused.
                deferred_child_order = child.is_some().then(|| order.child(actor, &self.events));
                let (mut order, next, offered) = (order, top.next, top.offered);
                // The entry resumes one move on: it holds the order after
                // the move and the cost with it.
                let en = &self.en[start..start + len];
                let ids = &self.ids[start..start + len];
                order.advance_from((actor, alt), en, ids);
                let cur = order.current(en, ids);
                let fp = self.first_fp(&state, cur);
                let node = self.materialize(top_index)?;
                self.frontier.push(Entry {
                    state,
                    order,
                    next,
                    cost: cost_at_choice + step_cost,
                    depth,
                    node,
                    offered,
                    fp,
                });
                self.report.deferrals += 1;
                self.stratum.deferrals += 1;
            }
            let (fresh, cut) = self.classify(looked_up, child.as_ref(), peeked, child_fp, child_depth);
            let top = &mut self.stack[top_index];
            // A frame done with its state gives its order away.
            let child_order = if deferred {
                deferred_child_order.filter(|_| fresh)
            } else if last {
                let order = top.order.take().expect("mcheck bug: a live frame has its order");
                fresh.then(|| order.into_child(actor, &self.events))
            } else {
                let child_order = fresh.then(|| top.order().child(actor, &self.events));
                let en = &self.en[start..start + len];
                let ids = &self.ids[start..start + len];
                top.order_mut().advance_from((actor, alt), en, ids);
                top.cost += step_cost;
                let (now, now_alt) = top.order().current(en, ids);
                top.cur = (now, now_alt);
                if now_alt == 0 {
                    let offered = top.offered;
                    let order = self.stack[top_index].order();
                    let o = self.offer(offered, now, &self.ids[start..start + len], order)?;
                    self.stack[top_index].offered = o;
                }
                child_order
            };
            if cut {
                self.cut = true;
                continue;
            }
            if let (Some(child_order), Some(child)) = (child_order, child) {
                if let Some(stop) = self.enter(child, child_order, cost_at_choice, child_depth, NONE)? {
                    return Ok(Some(stop));
                }
            }
            if let Some(stop) = self.budgets_due() {
                return Ok(Some(stop));
            }
        }
        Ok(None)
    }

    pub(super) fn search_bytes(&self) -> u64 {
        let entry = size_of::<Entry<P::State, O>>() as u64;
        let frame = size_of::<Frame<P::State, O>>() as u64;
        self.cache.bytes() as u64
            + (self.frontier.capacity() as u64 + self.work_len) * entry
            + self.stack.capacity() as u64 * frame
            + (self.en.capacity() * (size_of::<Enabled>() + size_of::<ActorId>())) as u64
            + (self.arena.nodes.capacity() * size_of::<PathNode>()) as u64
    }

    fn check_budgets(&mut self) -> Option<Stop> {
        self.next_check = self.report.transitions + 4096;
        let c = self.config;
        if c.stop.is_raised() {
            return Some(Stop::Budget(BoundedBy::Interrupted));
        }
        // A parallel worker publishes its counts and judges by the totals.
        let (states, transitions, extra_bytes) = match self.shared {
            Some(shared) => {
                let (s, t) = (self.report.states, self.report.transitions);
                let totals = shared.add(s - self.synced.0, t - self.synced.1);
                self.synced = (s, t);
                if shared.is_halted() {
                    return Some(Stop::Halted);
                }
                totals
            }
            None => (self.report.states, self.report.transitions, 0),
        };
        if c.max_states.is_some_and(|m| states >= m) {
            return Some(Stop::Budget(BoundedBy::States));
        }
        let elapsed = self.started.elapsed();
        if c.time_limit.is_some_and(|t| elapsed >= t) {
            return Some(Stop::Budget(BoundedBy::Time));
        }
        let bytes = self.search_bytes() + extra_bytes;
        self.peak_bytes = self.peak_bytes.max(bytes);
        let rss = current_rss().unwrap_or(0) as u64;
        if bytes.max(rss) > c.max_memory as u64 {
            self.report.notes.push(format!(
                "stopped at the memory budget of {} MiB: resident {} MiB, cache {} MiB, frontier {} entries ({} MiB), path arena {} MiB",
                c.max_memory >> 20,
                rss >> 20,
                self.cache.bytes() >> 20,
                self.frontier.len() as u64 + self.work_len,
                ((self.frontier.capacity() as u64 + self.work_len) * size_of::<Entry<P::State, O>>() as u64) >> 20,
                (self.arena.nodes.capacity() * size_of::<PathNode>()) >> 20,
            ));
            return Some(Stop::Budget(BoundedBy::Memory));
        }
        let (frontier, bound) = (self.frontier.len() as u64 + self.work_len, self.bound);
        let strategy = self.report.strategy.clone();
        let meter = &mut self.meter;
        let mut shared_meter = self.shared.and_then(|s| s.meter());
        let meter = shared_meter.as_deref_mut().unwrap_or(meter);
        meter.tick(|secs| {
            format!(
                "{strategy}: bound {bound}, {} states ({}), {} transitions, frontier {}, {:.0}s",
                human(states as f64),
                rate(states, secs),
                human(transitions as f64),
                human(frontier as f64),
                secs
            )
        });
        None
    }

    pub(super) fn finish(mut self, stop: Option<Stop>) -> SearchResult {
        self.meter.finish();
        self.peak_bytes = self.peak_bytes.max(self.search_bytes());
        let r = &mut self.report;
        r.steps = r.transitions;
        r.peak_frontier = r.strata.iter().map(|s| s.frontier).max().unwrap_or(0);
        r.cache_bytes = self.cache.bytes() as u64;
        r.peak_search_bytes = self.peak_bytes;
        r.elapsed_s = self.started.elapsed().as_secs_f64();
        r.peak_memory_mb = peak_rss().unwrap_or(0) as f64 / (1 << 20) as f64;
        match stop {
            Some(Stop::Violation) => {
                r.outcome = Outcome::Violation;
                r.violation = self.violation.as_ref().map(|v| v.found.clone());
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
            None if self.cut => {
                r.outcome = Outcome::Bounded;
                r.bounded_by = Some(BoundedBy::MaxSteps);
                r.notes.push(format!(
                    "some executions were cut at --max-steps {}: the state space was not covered",
                    self.config.max_steps
                ));
            }
            None => {
                r.outcome = Outcome::Verified;
                r.collision_probability = Some(Report::collision_bound(r.states));
            }
        }
        if r.cache_full {
            r.notes.push(format!(
                "the state cache filled its budget of {} MiB and stopped growing: the search stayed sound but re-explored states",
                self.cache.bytes() >> 20
            ));
        }
        SearchResult {
            report: self.report,
            violation: self.violation,
        }
    }
}

/// This process's current resident memory in bytes, if known.
fn current_rss() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explorer::Explorer;
    use crate::program::ActorInfo;
    use crate::search::order::Composed;
    use crate::testing::RandomProgram;

    /// Round robin over a plain list: a delay moves the current actor last.
    #[derive(Clone, Debug, Default)]
    struct Rotate(Vec<ActorId>);

    impl Explorer for Rotate {
        fn name(&self) -> &str {
            "rotate"
        }
        fn init(&mut self, actors: &[ActorInfo]) {
            self.0 = actors.iter().map(|a| a.id).collect();
        }
        fn next(&self, enabled: &[ActorId]) -> ActorId {
            *self
                .0
                .iter()
                .find(|a| enabled.binary_search(a).is_ok())
                .unwrap_or(&enabled[0])
        }
        fn step(&mut self, _events: &[Event]) {}
        fn delay(&mut self, enabled: &[ActorId]) {
            let a = self.next(enabled);
            self.0.retain(|&b| b != a);
            self.0.push(a);
        }
    }

    fn search(program: &RandomProgram, retire: bool) -> (SearchResult, u64) {
        let config = Config::default();
        let mut explorer = Rotate::default();
        explorer.init(&program.actors(&program.initial()));
        let cache = FingerprintSet::new(cache_budget(&config));
        let mut s = Search::new(program, &config, cache, Report::new("ses", Some("rotate"), 0, 1));
        s.retire_on = retire;
        let stop = s.explore(Composed::new(explorer)).expect("a sound explorer");
        let retired = s.retire_stats.1;
        (s.finish(stop), retired)
    }

    fn counts(r: &Report) -> Vec<(u32, u64, u64, u64, u64)> {
        r.strata
            .iter()
            .map(|s| (s.bound, s.new_states, s.transitions, s.deferrals, s.frontier))
            .collect()
    }

    /// Retiring entries changes nothing a user sees: every stratum's
    /// counts, the totals, the outcome and the counterexample are those of
    /// the search that keeps every entry.
    #[test]
    fn retiring_entries_keeps_every_count() {
        let (mut systems_with_retirements, mut retirements) = (0, 0);
        for seed in 0..400u64 {
            let program = RandomProgram::generate(seed, false, seed % 2 == 0);
            let (kept, _) = search(&program, false);
            let (retiring, retired) = search(&program, true);
            let (a, b) = (&kept.report, &retiring.report);
            let (ca, cb) = (counts(a), counts(b));
            assert_eq!(ca.len(), cb.len(), "seed {seed}");
            assert_eq!((a.states, &a.outcome), (b.states, &b.outcome), "seed {seed}");
            if kept.violation.is_none() {
                assert_eq!(ca, cb, "seed {seed}");
                assert_eq!(
                    (a.transitions, a.deferrals, a.peak_frontier),
                    (b.transitions, b.deferrals, b.peak_frontier),
                    "seed {seed}"
                );
            } else {
                // The stratum where it stopped counts only the work done.
                let last = ca.len() - 1;
                assert_eq!(ca[..last], cb[..last], "seed {seed}");
                let ((_, na, ta, da, _), (_, nb, tb, db, _)) = (ca[last], cb[last]);
                assert!(
                    na == nb && tb <= ta && db <= da,
                    "seed {seed}: {:?} {:?}",
                    ca[last],
                    cb[last]
                );
            }
            assert_eq!(
                kept.violation.as_ref().map(|v| (&v.found, &v.advances)),
                retiring.violation.as_ref().map(|v| (&v.found, &v.advances)),
                "seed {seed}"
            );
            systems_with_retirements += u64::from(retired > 0);
            retirements += retired;
        }
        // Not vacuous: most systems retire entries.
        assert!(
            systems_with_retirements > 200,
            "{systems_with_retirements} systems retired entries"
        );
        assert!(retirements > 5_000, "{retirements} retirements");
    }
}
