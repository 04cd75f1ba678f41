//! One worker's part of the distributed SES (ARCHITECTURE.md,
//! "Distributed SES"): its partition of the cache, the depth-first search
//! of one stratum over the states it owns, and the frontier of its states
//! for the next strata. A successor owned by another worker becomes a
//! [`Msg::State`] in the outbox; the dataflow (`flow.rs`) delivers it.
//!
//! The loop is the recursion of ARCHITECTURE.md, "Stratified exhaustive search (SES)" on an explicit stack:
//! a frame takes its current choice, decides its continuation (the next
//! choice, or a deferral when it costs more than the bound), then explores
//! the successor if it is new. The composed delay rule is the checker's
//! own (`search::order::Composed`); every move to the next choice is one
//! delay, recorded as its step in the frame's delay positions.

use crate::message::{Halt, Msg, Summary};
use mcheck_checker::cache::{state_fingerprint, FingerprintSet, Insert};
use mcheck_checker::config::{peak_rss, Config};
use mcheck_checker::search::order::{ChoiceOrder, Composed, EnabledSet};
use mcheck_checker::{enabled_mask, ActorId, BoundedBy, Enabled, Event, Explorer, Program};
use std::sync::Arc;
use std::time::Instant;

/// Transitions between two checks of the budgets (as the single-machine
/// engine, ARCHITECTURE.md, "Budgets").
const CHECK_EVERY: u64 = 1024;

/// The worker that owns fingerprint `fp` among `peers`: the high bits of
/// `fp` scaled to `0..peers` (the cache's slots use the low bits).
pub fn owner(fp: u64, peers: u32) -> u32 {
    ((u128::from(fp) * u128::from(peers)) >> 64) as u32
}

/// A state with the choices it has left: a stack frame, or a frontier
/// entry whose order and cost already moved to its next choice.
struct Frame<S, E> {
    state: S,
    order: Composed<E>,
    en: Vec<Enabled>,
    ids: Vec<ActorId>,
    /// `enabled_mask(ids)`, computed once for the frame.
    mask: Option<u64>,
    /// Choices taken.
    next: u32,
    total: u32,
    cost: u32,
    depth: u32,
    /// The steps at which the delays of the path to this choice were taken.
    delays: Vec<u32>,
}

impl<S, E> Frame<S, E> {
    /// The frame's enabled set, with its mask.
    fn set(&self) -> EnabledSet<'_> {
        EnabledSet {
            en: &self.en,
            ids: &self.ids,
            mask: self.mask,
        }
    }
}

/// One worker's search.
pub struct Local<P: Program, E> {
    program: Arc<P>,
    config: Arc<Config>,
    /// The explorer at s0, seeded and initialised (states are rebuilt
    /// from it and a delay path).
    root: E,
    me: u32,
    peers: u32,
    cache: FingerprintSet,
    stack: Vec<Frame<P::State, E>>,
    /// Deferred frames, by the bound of the stratum that resumes them.
    frontier: std::collections::BTreeMap<u32, Vec<Frame<P::State, E>>>,
    events: Vec<Event>,
    /// Messages for other workers.
    pub outbox: Vec<Msg>,
    summary: Summary,
    started: Instant,
    next_check: u64,
    /// The share of `max_states` this worker may add.
    states_share: Option<u64>,
}

impl<P: Program, E: Explorer> Local<P, E> {
    /// Worker `me` of `peers`, with `cache_bytes` for its cache.
    pub fn new(program: Arc<P>, root: E, config: Arc<Config>, me: u32, peers: u32, cache_bytes: Option<usize>) -> Self {
        let states_share = config.max_states.map(|m| m.div_ceil(u64::from(peers)));
        Local {
            program,
            config,
            root,
            me,
            peers,
            cache: FingerprintSet::new(cache_bytes),
            stack: Vec::new(),
            frontier: Default::default(),
            events: Vec::new(),
            outbox: Vec::new(),
            summary: Summary::default(),
            started: Instant::now(),
            next_check: CHECK_EVERY,
            states_share,
        }
    }

    /// Whether this worker stopped (a violation, a budget, or another
    /// worker's halt).
    pub fn stopped(&self) -> bool {
        self.summary.stop.is_some()
    }

    /// The fingerprint the cache keys `s` by.
    fn fp(&self, s: &P::State) -> u64 {
        state_fingerprint(&*self.program, s, self.config.symmetry)
    }

    /// Stratum 0: s0, if this worker owns it.
    pub fn start(&mut self) {
        let s0 = self.program.initial();
        let fp = self.fp(&s0);
        if owner(fp, self.peers) != self.me {
            return;
        }
        self.cache.insert(fp);
        self.count_new(0);
        let order = Composed::new(self.root.clone());
        self.arrive(0, s0, order, 0, 0, Vec::new());
        self.run(0);
    }

    /// The bounds whose deferred frames wait for their stratum.
    pub fn waiting(&self) -> impl Iterator<Item = u32> + '_ {
        self.frontier.keys().copied()
    }

    /// Stratum `bound`: resume the frames deferred to it.
    pub fn resume(&mut self, bound: u32) {
        let Some(entries) = self.frontier.remove(&bound) else {
            return;
        };
        if self.config.max_delays.is_some_and(|m| bound > m) {
            self.stop(Halt::MaxDelays);
            return;
        }
        let started = Instant::now();
        for frame in entries {
            if self.stopped() {
                break;
            }
            self.stack.push(frame);
            self.run(bound);
        }
        self.stratum(bound).elapsed_s += started.elapsed().as_secs_f64();
    }

    /// A message from another worker, in stratum `bound`.
    pub fn receive(&mut self, bound: u32, msg: Msg) {
        if self.stopped() {
            return;
        }
        match msg {
            Msg::Halt { .. } => {
                self.summary.stop = Some(Halt::Halted);
                self.frontier.clear();
                self.stack.clear();
            }
            Msg::State {
                fp,
                cost,
                depth,
                delays,
                ..
            } => {
                let started = Instant::now();
                self.receive_state(bound, fp, cost, depth, delays);
                self.stratum(bound).elapsed_s += started.elapsed().as_secs_f64();
            }
        }
    }

    fn receive_state(&mut self, bound: u32, fp: u64, cost: u32, depth: u32, delays: Vec<u32>) {
        let cut_depth = depth as usize >= self.config.max_steps;
        if !cut_depth && self.cache.contains(fp) {
            return;
        }
        let (state, order) = match self.rebuild(depth, &delays) {
            Ok(x) => x,
            Err(e) => return self.fail(e),
        };
        if self.fp(&state) != fp {
            return self.fail(format!(
                "the state reached by delay path {delays:?} in {depth} steps has another fingerprint on worker {} than where it was generated: is the program deterministic?",
                self.me
            ));
        }
        if cut_depth && self.is_cut(&state) {
            return;
        }
        match self.cache.insert(fp) {
            Insert::Present => return,
            Insert::New => self.count_new(bound),
            Insert::Full => self.summary.cache_full = true,
        }
        self.arrive(bound, state, order, cost, depth, delays);
        self.run(bound);
    }

    /// The state and composed order reached from s0 by `depth` steps with
    /// delays at the steps `delays` (the receiving side of a transfer).
    fn rebuild(&self, depth: u32, delays: &[u32]) -> Result<(P::State, Composed<E>), String> {
        let mut s = self.program.initial();
        let mut order = Composed::new(self.root.clone());
        let (mut en, mut ids, mut events) = (Vec::new(), Vec::new(), Vec::new());
        let mut cursor = 0;
        for step in 0..depth {
            en.clear();
            self.program.enabled(&s, &mut en);
            ids.clear();
            ids.extend(en.iter().map(|e| e.actor));
            let set = EnabledSet::new(&en, &ids);
            while delays.get(cursor) == Some(&step) {
                order.advance(&set);
                cursor += 1;
            }
            let (actor, alt) = order.current(&set);
            events.clear();
            self.program.execute(&mut s, actor, alt, &mut events).map_err(|v| {
                format!("rebuilding a transferred state, step {step} violates ({v}): is the program deterministic?")
            })?;
            order = order.into_child(actor, &events);
        }
        Ok((s, order))
    }

    /// A state reached at `depth` beyond the step limit with something
    /// enabled: the search is cut there (not cached, as in the
    /// single-machine engine).
    fn is_cut(&mut self, s: &P::State) -> bool {
        let mut en = Vec::new();
        self.program.enabled(s, &mut en);
        let cut = !en.is_empty();
        self.summary.cut |= cut;
        cut
    }

    /// A new state: its frame on the stack, or the deadlock check of a
    /// terminal state.
    fn arrive(&mut self, bound: u32, s: P::State, order: Composed<E>, cost: u32, depth: u32, delays: Vec<u32>) {
        let mut en = Vec::new();
        self.program.enabled(&s, &mut en);
        if en.is_empty() {
            if self.config.deadlock && self.program.deadlock(&s).is_some() {
                self.violate(bound, delays, depth);
            }
            return;
        }
        let ids: Vec<ActorId> = en.iter().map(|e| e.actor).collect();
        let total = en.iter().map(|e| e.alternatives).sum();
        self.stack.push(Frame {
            state: s,
            order,
            mask: enabled_mask(&ids),
            en,
            ids,
            next: 0,
            total,
            cost,
            depth,
            delays,
        });
        let _ = bound;
    }

    /// The depth-first search of stratum `bound` from the frames on the stack.
    fn run(&mut self, bound: u32) {
        while let Some(top) = self.stack.last_mut() {
            if top.next >= top.total {
                self.stack.pop();
                continue;
            }
            let (actor, alt) = top.order.current(&top.set());
            if top.ids.binary_search(&actor).is_err() {
                let message = format!(
                    "explorer {} is unsound: it offered actor {actor}, which is not enabled (enabled: {:?})",
                    top.order.name(),
                    top.ids
                );
                return self.fail(message);
            }
            let mut s = top.state.clone();
            self.events.clear();
            let result = self.program.execute(&mut s, actor, alt, &mut self.events);
            top.next += 1;
            let (cost, depth) = (top.cost, top.depth + 1);
            self.summary.transitions += 1;
            self.stratum(bound).transitions += 1;
            let top = self.stack.last_mut().expect("the frame just used");
            if result.is_err() {
                let delays = top.delays.clone();
                self.violate(bound, delays, depth - 1);
                return;
            }
            let child_order = top.order.child(actor, &self.events);
            let child_delays = top.delays.clone();
            // The continuation first, as in the recursion (ARCHITECTURE.md, "Stratified exhaustive search (SES)").
            if top.next < top.total {
                let set = EnabledSet {
                    en: &top.en,
                    ids: &top.ids,
                    mask: top.mask,
                };
                let c = top.order.advance_cost(&set);
                top.order.advance(&set);
                top.cost += c;
                top.delays.push(top.depth);
                if top.cost > bound {
                    let frame = self.stack.pop().expect("the frame just used");
                    self.frontier.entry(frame.cost).or_default().push(frame);
                    self.summary.deferrals += 1;
                    self.stratum(bound).deferrals += 1;
                }
            }
            self.successor(bound, s, child_order, cost, depth, child_delays);
            if self.summary.transitions >= self.next_check {
                self.next_check += CHECK_EVERY;
                self.check_budgets();
            }
            if self.stopped() {
                self.stack.clear();
                return;
            }
        }
    }

    /// A successor: explored here if this worker owns it and it is new,
    /// else sent to its owner.
    fn successor(&mut self, bound: u32, s: P::State, order: Composed<E>, cost: u32, depth: u32, delays: Vec<u32>) {
        let fp = self.fp(&s);
        let to = owner(fp, self.peers);
        if to != self.me {
            self.outbox.push(Msg::State {
                to,
                fp,
                cost,
                depth,
                delays,
            });
            return;
        }
        if depth as usize >= self.config.max_steps && self.is_cut(&s) {
            return;
        }
        match self.cache.insert(fp) {
            Insert::Present => return,
            Insert::New => self.count_new(bound),
            Insert::Full => self.summary.cache_full = true,
        }
        self.arrive(bound, s, order, cost, depth, delays);
    }

    fn count_new(&mut self, bound: u32) {
        self.summary.states += 1;
        self.stratum(bound).new_states += 1;
    }

    /// The statistics of stratum `bound`.
    fn stratum(&mut self, bound: u32) -> &mut crate::message::Counts {
        let strata = &mut self.summary.strata;
        if strata.len() <= bound as usize {
            strata.resize(bound as usize + 1, Default::default());
        }
        &mut strata[bound as usize]
    }

    /// A violation at step `step` of the path with delays at `delays`.
    fn violate(&mut self, bound: u32, delays: Vec<u32>, step: u32) {
        self.summary.violation = Some((bound, delays, step));
        self.stop(Halt::Violation);
    }

    /// An error (an unsound explorer, a nondeterministic program).
    fn fail(&mut self, message: String) {
        self.summary.error = Some(message);
        self.stop(Halt::Error);
    }

    /// Stop this worker and tell the others.
    fn stop(&mut self, why: Halt) {
        self.summary.stop = Some(why);
        self.stack.clear();
        self.frontier.clear();
        for to in (0..self.peers).filter(|&w| w != self.me) {
            self.outbox.push(Msg::Halt { to });
        }
    }

    /// The budgets: the stop flag, time, this process's memory and this
    /// worker's share of the states.
    pub fn check_budgets(&mut self) {
        if self.stopped() {
            return;
        }
        let c = &self.config;
        let by = if c.stop.is_raised() {
            Some(BoundedBy::Interrupted)
        } else if c.time_limit.is_some_and(|t| self.started.elapsed() >= t) {
            Some(BoundedBy::Time)
        } else if self.states_share.is_some_and(|m| self.summary.states >= m) {
            Some(BoundedBy::States)
        } else if peak_rss().is_some_and(|b| b >= c.max_memory) {
            Some(BoundedBy::Memory)
        } else {
            None
        };
        if let Some(by) = by {
            self.stop(Halt::from(by));
        }
    }

    /// What this worker did, for the report (with its cache's size).
    pub fn finish(&self, process: u32) -> Summary {
        Summary {
            cache_bytes: self.cache.bytes() as u64,
            fingerprint_bits: self.cache.fingerprint_bits(),
            worker: self.me,
            process,
            peak_rss: peak_rss().unwrap_or(0) as u64,
            ..self.summary.clone()
        }
    }
}
