//! One worker's part of the distributed SES (ARCHITECTURE.md,
//! "Distributed SES"): the engine's plain stratified search
//! (`mcheck_checker::search::plain`) over the states this worker owns,
//! with its partition of the cache and the frontier of its states. Its
//! route keeps the states the worker owns and turns every other successor
//! into a [`Msg::State`] in the outbox, which the dataflow (`flow.rs`)
//! delivers; the owner rebuilds the state from s0 by replaying its path
//! and hands it to the search. This module adapts the search to the
//! dataflow: the routing, the messages, the strata the dataflow opens,
//! the worker's share of the states budget, halts and the summary.

use crate::message::{Counts, Halt, Msg, Summary, Violated};
use mcheck_checker::config::{peak_rss, Config, Progress};
use mcheck_checker::search::order::{ChoiceOrder, Composed, EnabledSet};
use mcheck_checker::search::plain::{Away, Plain, Route, Stopped};
use mcheck_checker::{Explorer, Program, Report, SearchError};
use std::sync::Arc;
use std::time::Instant;

/// The worker that owns fingerprint `fp` among `peers`: the high bits of
/// `fp` scaled to `0..peers` (the cache's slots use the low bits).
pub fn owner(fp: u64, peers: u32) -> u32 {
    ((u128::from(fp) * u128::from(peers)) >> 64) as u32
}

/// The route of worker `me` of `peers`: keeps the states it owns, and
/// sends every other successor to its owner.
struct Owners {
    me: u32,
    peers: u32,
    /// Messages for other workers.
    outbox: Vec<Msg>,
}

impl Route for Owners {
    fn keep(&self, key: u64) -> bool {
        owner(key, self.peers) == self.me
    }

    fn send(&mut self, away: Away) {
        self.outbox.push(Msg::State {
            to: owner(away.key, self.peers),
            fp: away.key,
            cost: away.cost,
            depth: away.depth,
            path: away.path,
        });
    }
}

/// One worker's search.
pub struct Local<P: Program<State: 'static>, E> {
    program: Arc<P>,
    /// This worker's index, and the number of workers.
    me: u32,
    peers: u32,
    search: Plain<'static, P, Arc<P>, Composed<E>, Owners>,
    max_delays: Option<u32>,
    max_steps: usize,
    /// Seconds of work (not of waiting) in the current stratum.
    elapsed_s: f64,
    /// Why this worker stopped, if it did.
    stop: Option<Halt>,
    /// Its violation.
    violation: Option<Violated>,
    error: Option<String>,
}

impl<P: Program<State: 'static>, E: Explorer> Local<P, E> {
    /// Worker `me` of `peers`, with `cache_bytes` for its cache and its
    /// share of `max_states`.
    pub fn new(program: Arc<P>, root: E, config: Arc<Config>, me: u32, peers: u32, cache_bytes: Option<usize>) -> Self {
        let name = root.name().to_string();
        let report = Report::new("ses", Some(&name), config.seed, 1);
        let mut worker = (*config).clone().progress(Progress::Off);
        worker.max_states = config.max_states.map(|m| m.div_ceil(u64::from(peers)));
        let route = Owners {
            me,
            peers,
            outbox: Vec::new(),
        };
        let order = Composed::new(root);
        Local {
            search: Plain::new(Arc::clone(&program), order, worker, cache_bytes, route, report),
            program,
            me,
            peers,
            max_delays: config.max_delays,
            max_steps: config.max_steps,
            elapsed_s: 0.0,
            stop: None,
            violation: None,
            error: None,
        }
    }

    /// Whether this worker stopped (a violation, a budget, or another
    /// worker's halt).
    pub fn stopped(&self) -> bool {
        self.stop.is_some()
    }

    /// The messages for other workers, taken.
    pub fn outbox(&mut self) -> std::vec::Drain<'_, Msg> {
        self.search.route().outbox.drain(..)
    }

    /// Stratum 0: s0, if this worker owns it.
    pub fn start(&mut self) {
        let started = Instant::now();
        let result = self.search.start();
        self.settle(result, started);
    }

    /// The bounds whose deferred entries wait for their stratum: the
    /// current one's, if a message opened it before it was resumed, and the
    /// next one's.
    pub fn waiting(&self) -> impl Iterator<Item = u32> {
        let (bound, (work, frontier)) = (self.search.bound(), self.search.pending());
        let now = (work > 0).then_some(bound);
        now.into_iter().chain((frontier > 0).then_some(bound + 1))
    }

    /// Stratum `bound`: resume the entries deferred to it.
    pub fn resume(&mut self, bound: u32) {
        if self.stopped() {
            return;
        }
        if self.max_delays.is_some_and(|m| bound > m) {
            return self.stop(Halt::MaxDelays);
        }
        let started = Instant::now();
        let result = self.enter(bound).and_then(|()| self.search.resume());
        self.settle(result, started);
    }

    /// A message from another worker, in stratum `bound`.
    pub fn receive(&mut self, bound: u32, msg: Msg) {
        if self.stopped() {
            return;
        }
        match msg {
            Msg::Halt { .. } => {
                self.stop = Some(Halt::Halted);
                self.search.halt();
            }
            Msg::State {
                fp, cost, depth, path, ..
            } => {
                let started = Instant::now();
                let result = self
                    .enter(bound)
                    .and_then(|()| self.receive_state(fp, cost, depth, path));
                self.settle(result, started);
            }
        }
    }

    /// The state `fp` reached by `path` in `depth` steps with `cost`
    /// delays: rebuilt and visited, unless it is cached (and not at the
    /// step limit, where the search decides).
    fn receive_state(
        &mut self,
        fp: u64,
        cost: u32,
        depth: u32,
        path: Vec<(u32, u32)>,
    ) -> Result<Option<Stopped>, SearchError> {
        if (depth as usize) < self.max_steps && self.search.cached(fp) {
            return Ok(None);
        }
        let (state, order) = self.rebuild(depth, &path)?;
        if self.search.cache_key(&state, &order) != fp {
            return Err(SearchError::Internal(format!(
                "the state reached by path {path:?} in {depth} steps has another fingerprint on worker {} than where it was generated: is the program deterministic?",
                self.me
            )));
        }
        self.search.accept(state, order, cost, depth, path)
    }

    /// The stratum `bound`: the search's current one, or a later one
    /// opened (the dataflow never delivers an earlier one).
    fn enter(&mut self, bound: u32) -> Result<(), SearchError> {
        if bound < self.search.bound() {
            return Err(SearchError::Internal(format!(
                "a message of stratum {bound} arrived in stratum {}",
                self.search.bound()
            )));
        }
        while self.search.bound() < bound {
            self.search.close_stratum(std::mem::take(&mut self.elapsed_s));
            self.search.open();
        }
        Ok(())
    }

    /// The state and composed order reached from s0 by `depth` steps along
    /// `path` (the receiving side of a transfer): at each depth the path
    /// names, the order moves on that many times before its choice.
    fn rebuild(&self, depth: u32, path: &[(u32, u32)]) -> Result<(P::State, Composed<E>), SearchError> {
        let mut s = self.program.initial();
        let mut order = self.search.root().clone();
        let (mut en, mut ids, mut events) = (Vec::new(), Vec::new(), Vec::new());
        let mut moves = path.iter().peekable();
        for step in 0..depth {
            en.clear();
            self.program.enabled(&s, &mut en);
            ids.clear();
            ids.extend(en.iter().map(|e| e.actor));
            let set = EnabledSet::new(&en, &ids);
            if let Some(&(_, count)) = moves.next_if(|m| m.0 == step) {
                (0..count).for_each(|_| order.advance(&set));
            }
            let (actor, alt) = order.current(&set);
            events.clear();
            self.program.execute(&mut s, actor, alt, &mut events).map_err(|v| {
                SearchError::Internal(format!(
                    "rebuilding a transferred state, step {step} violates ({v}): is the program deterministic?"
                ))
            })?;
            order = order.into_child(actor, &events);
        }
        Ok((s, order))
    }

    /// What a call of the search that started at `started` came to.
    fn settle(&mut self, result: Result<Option<Stopped>, SearchError>, started: Instant) {
        self.elapsed_s += started.elapsed().as_secs_f64();
        match result {
            Ok(None) => {}
            Ok(Some(Stopped::Violation)) => {
                let bound = self.search.bound();
                self.violation = self.search.violation().map(|(found, path)| Violated {
                    bound,
                    path: path.to_vec(),
                    step: found.step as u32,
                });
                self.stop(Halt::Violation);
            }
            Ok(Some(Stopped::Budget(by))) => self.stop(Halt::from(by)),
            Err(e) => {
                self.error = Some(match e {
                    SearchError::Internal(m) => m,
                    e => e.to_string(),
                });
                self.stop(Halt::Error);
            }
        }
    }

    /// Stop this worker and tell the others.
    fn stop(&mut self, why: Halt) {
        self.stop = Some(why);
        self.search.halt();
        let me = self.me;
        let outbox = &mut self.search.route().outbox;
        outbox.extend((0..self.peers).filter(|&w| w != me).map(|to| Msg::Halt { to }));
    }

    /// What this worker did, for the report (with its cache's size); its
    /// last stratum closes.
    pub fn finish(&mut self, process: u32) -> Summary {
        self.search.close_stratum(std::mem::take(&mut self.elapsed_s));
        let r = self.search.report();
        let counts = |s: &mcheck_checker::Stratum| Counts {
            new_states: s.new_states,
            transitions: s.transitions,
            deferrals: s.deferrals,
            elapsed_s: s.elapsed_s,
        };
        let cache = self.search.cache();
        Summary {
            worker: self.me,
            process,
            states: r.states,
            transitions: r.transitions,
            deferrals: r.deferrals,
            strata: r.strata.iter().map(counts).collect(),
            stop: self.stop,
            violation: self.violation.clone(),
            cut: self.search.cut(),
            cache_full: r.cache_full,
            cache_bytes: cache.bytes() as u64,
            fingerprint_bits: cache.fingerprint_bits(),
            peak_rss: peak_rss().unwrap_or(0) as u64,
            error: self.error.clone(),
        }
    }
}
