//! One worker's part of the distributed SES (ARCHITECTURE.md,
//! "Distributed SES"): the engine's optimised stratified search as a
//! worker runs it (`mcheck_checker::search::part`), over the states this
//! worker owns, with its part of the cache and the frontier of its
//! states. The search hands out every successor another worker owns and
//! did not send lately; this module turns them into [`Msg::State`]s in
//! the outbox, which the dataflow (`flow.rs`) delivers; the owner checks
//! the state's fingerprint and hands it to the search. This module adapts
//! the search to the dataflow: the messages, the strata the dataflow
//! opens, the worker's share of the states budget, halts and the summary.

use crate::message::{Counts, Halt, Msg, Summary, Violated};
use mcheck_checker::cache::owner;
use mcheck_checker::config::{Config, Progress, peak_rss};
use mcheck_checker::search::order::Composed;
use mcheck_checker::search::part::{Part, Piece, Stopped, Transfer};
use mcheck_checker::{Explorer, Program, Report, SearchError};
use std::sync::Arc;
use std::time::Instant;

/// The transfers a worker makes before it lets them go: it stops resuming
/// entries, the dataflow sends them, and it resumes the rest later. The
/// outbox of a whole stratum held every transfer at once in memory
/// (TwoPhase with 9 RMs, `--processes 2`, each worker on the plain
/// search: 1.29 GB a process without batches, 869 MB with them).
const BATCH: usize = 1 << 14;

/// The search of a worker: over its program, with the composed explorer.
type Search<P, E> = Part<P, Composed<E>>;

/// One worker's search.
pub struct Local<P: Program + 'static, E: 'static> {
    /// This worker's index, and the number of workers.
    me: u32,
    peers: u32,
    search: Search<P, E>,
    /// Messages for other workers.
    outbox: Vec<Msg<P::State, Composed<E>>>,
    max_delays: Option<u32>,
    /// Seconds of work (not of waiting) in the current stratum.
    elapsed_s: f64,
    /// Why this worker stopped, if it did.
    stop: Option<Halt>,
    /// Its violation.
    violation: Option<Violated>,
    error: Option<String>,
}

impl<P: Program + 'static, E: Explorer + 'static> Local<P, E> {
    /// Worker `me` of `peers`, with `cache_bytes` for its cache and its
    /// share of `max_states`.
    pub fn new(program: Arc<P>, root: E, config: Arc<Config>, me: u32, peers: u32, cache_bytes: Option<usize>) -> Self {
        let name = root.name().to_string();
        let report = Report::new("ses", Some(&name), config.seed, 1);
        let mut worker = (*config).clone().progress(Progress::Off);
        worker.max_states = config.max_states.map(|m| m.div_ceil(u64::from(peers)));
        let order = Composed::new(root);
        Local {
            search: Part::new(program, order, worker, me, peers, cache_bytes, report),
            outbox: Vec::new(),
            me,
            peers,
            max_delays: config.max_delays,
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
    pub fn outbox(&mut self) -> std::vec::Drain<'_, Msg<P::State, Composed<E>>> {
        let peers = self.peers;
        self.outbox.extend(self.search.away().map(|a| Msg::State {
            to: owner(a.key, peers),
            state: a.state,
            order: a.order,
            fp: a.key,
            cost: a.cost,
            depth: a.depth,
            via: a.via,
            index: a.index,
        }));
        self.outbox.drain(..)
    }

    /// Stratum 0: s0, if this worker owns it.
    pub fn start(&mut self) {
        let started = Instant::now();
        let result = self.search.start();
        self.elapsed_s += started.elapsed().as_secs_f64();
        self.settle(result);
    }

    /// The bounds whose deferred entries wait for their stratum: the
    /// current one's, if a message opened it before it was resumed, and the
    /// next one's.
    pub fn waiting(&self) -> impl Iterator<Item = u32> + use<P, E> {
        let (bound, (work, frontier)) = (self.search.bound(), self.search.pending());
        let now = (work > 0).then_some(bound);
        now.into_iter().chain((frontier > 0).then_some(bound + 1))
    }

    /// Stratum `bound`: resume the entries deferred to it until
    /// [`BATCH`] transfers wait in the outbox; whether none is left to
    /// resume (or the worker stopped).
    pub fn resume(&mut self, bound: u32) -> bool {
        if self.stopped() {
            return true;
        }
        if self.max_delays.is_some_and(|m| bound > m) {
            self.stop(Halt::MaxDelays);
            return true;
        }
        let started = Instant::now();
        let result = self
            .enter(bound)
            .and_then(|()| self.search.resume_while(|waiting| waiting < BATCH));
        self.elapsed_s += started.elapsed().as_secs_f64();
        self.settle(result);
        self.stopped() || self.search.pending().0 == 0
    }

    /// A batch of messages from other workers, in stratum `bound` (timed
    /// as a whole: a clock read per message cost 2% of a run).
    pub fn receive(&mut self, bound: u32, msgs: impl IntoIterator<Item = Msg<P::State, Composed<E>>>) {
        let started = Instant::now();
        for msg in msgs {
            if self.stopped() {
                break;
            }
            match msg {
                Msg::Halt { .. } => {
                    self.stop = Some(Halt::Halted);
                    self.search.halt();
                }
                Msg::State {
                    state,
                    order,
                    fp,
                    cost,
                    depth,
                    via,
                    index,
                    ..
                } => {
                    let t = Transfer {
                        state,
                        order,
                        key: fp,
                        cost,
                        depth,
                        via,
                        index,
                    };
                    let result = self.enter(bound).and_then(|()| self.receive_state(t));
                    self.settle(result);
                }
            }
        }
        self.elapsed_s += started.elapsed().as_secs_f64();
    }

    /// A state another worker sent: visited, unless it is cached.
    fn receive_state(&mut self, t: Transfer<P::State, Composed<E>>) -> Result<Option<Stopped>, SearchError> {
        if self.search.cached(t.key) {
            return Ok(None);
        }
        if self.search.cache_key(&t.state, &t.order) != t.key {
            return Err(SearchError::Internal(format!(
                "a state received by worker {} has another fingerprint than where it was sent from: does its Serialize and Deserialize round-trip, and is its Hash deterministic?",
                self.me
            )));
        }
        self.search.accept(t)
    }

    /// The pairs of the path that this worker's path node `node` names,
    /// and the (worker, node) that holds the path before them, if another
    /// worker does.
    pub fn path_here(&self, node: u32) -> Piece {
        self.search.path_here(node)
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

    /// What a call of the search came to.
    fn settle(&mut self, result: Result<Option<Stopped>, SearchError>) {
        match result {
            Ok(None) => {}
            Ok(Some(Stopped::Violation)) => {
                let bound = self.search.bound();
                self.violation = self.search.violation().map(|(found, (path, before))| Violated {
                    bound,
                    path,
                    before,
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
        self.outbox
            .extend((0..self.peers).filter(|&w| w != me).map(|to| Msg::Halt { to }));
    }

    /// What this worker did, for the report (with its cache's size); its
    /// last stratum closes.
    pub fn finish(&mut self, process: u32) -> Summary {
        self.search.finish(std::mem::take(&mut self.elapsed_s));
        let (sent, unsent) = self.search.transfers();
        let r = self.search.report();
        let counts = |s: &mcheck_checker::Stratum| Counts {
            new_states: s.new_states,
            transitions: s.transitions,
            deferrals: s.deferrals,
            elapsed_s: s.elapsed_s,
        };
        let (cache_bytes, fingerprint_bits) = self.search.cache_size();
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
            cache_bytes,
            fingerprint_bits,
            peak_rss: peak_rss().unwrap_or(0) as u64,
            sent,
            unsent,
            error: self.error.clone(),
        }
    }
}
