//! One worker's part of the distributed SES (ARCHITECTURE.md,
//! "Distributed SES"): the engine's plain stratified search
//! (`mcheck_checker::search::plain`) over the states this worker owns,
//! with its partition of the cache and the frontier of its states. Its
//! route keeps the states the worker owns and turns every other successor
//! into a [`Msg::State`] in the outbox, which the dataflow (`flow.rs`)
//! delivers; the owner checks the state's fingerprint and hands it to the
//! search. This module adapts the search to the
//! dataflow: the routing, the messages, the strata the dataflow opens,
//! the worker's share of the states budget, halts and the summary.

use crate::message::{Counts, Halt, Msg, Summary, Violated};
use mcheck_checker::config::{Config, Progress, peak_rss};
use mcheck_checker::search::order::Composed;
use mcheck_checker::search::plain::{Away, Path, Plain, Route, Stopped};
use mcheck_checker::{Explorer, Program, Report, SearchError};
use std::sync::Arc;
use std::time::Instant;

/// The worker that owns fingerprint `fp` among `peers`: the high bits of
/// `fp` times an odd constant, scaled to `0..peers`. Not `fp`'s own high
/// bits: the cache's home slots are those, and a worker that owned the
/// fingerprints of one range of high bits would crowd its states into
/// that range of its table's slots, where linear probing degenerates
/// (TwoPhase with 8 RMs on 2 workers: 300 s and unfinished, against
/// seconds).
pub fn owner(fp: u64, peers: u32) -> u32 {
    const MIX: u64 = 0x9E37_79B9_7F4A_7C15;
    ((u128::from(fp.wrapping_mul(MIX)) * u128::from(peers)) >> 64) as u32
}

/// The transfers a worker makes before it lets them go: it stops resuming
/// entries, the dataflow sends them, and it resumes the rest later. The
/// outbox of a whole stratum held every transfer at once in memory
/// (TwoPhase with 9 RMs, `--processes 2`: 1.29 GB a process without
/// batches, 869 MB with them; the plain search on one thread: 1.33 GB).
const BATCH: usize = 1 << 14;

/// The slots of a worker's table of keys sent ([`Sent`]): 2^20, 8 MiB.
const SENT_SLOTS: usize = 1 << 20;

/// The keys a worker sent lately (`Shortcuts::sent`), in a table with
/// one key a slot, the slot by the key's low bits (the owner is chosen by
/// its high bits after a multiplication, the cache's home slot by its high
/// bits). A key sent before is in its owner's cache, or on its way there
/// to be explored, so the owner would drop it again: a successor whose key
/// the table holds is not sent. A key that another took the slot of costs
/// one transfer more, never a state. Not used at the step limit, where the
/// owner does not drop a cached state before its own check.
struct Sent {
    /// Empty when the shortcut is off; 0 is no key.
    slots: Vec<u64>,
}

impl Sent {
    fn new(on: bool) -> Self {
        Sent {
            slots: if on { vec![0; SENT_SLOTS] } else { Vec::new() },
        }
    }

    /// Whether `key` was sent lately; if not, it is now. A key of 0 (no
    /// fingerprint of the engine's, but a program's own may be) is never
    /// held.
    fn again(&mut self, key: u64) -> bool {
        let n = self.slots.len();
        if n == 0 || key == 0 {
            return false;
        }
        let slot = &mut self.slots[key as usize & (n - 1)];
        std::mem::replace(slot, key) == key
    }
}

/// The route of worker `me` of `peers`: keeps the states it owns, and
/// sends every other successor to its owner, unless it sent it lately.
struct Owners<S, O> {
    me: u32,
    peers: u32,
    max_steps: usize,
    recent: Sent,
    /// Successors sent, and successors not sent again.
    sent: u64,
    unsent: u64,
    /// Messages for other workers.
    outbox: Vec<Msg<S, O>>,
}

impl<S, O> Route<S, O> for Owners<S, O> {
    fn keep(&self, key: u64) -> bool {
        owner(key, self.peers) == self.me
    }

    fn send(&mut self, away: Away<S, O>) {
        if (away.depth as usize) < self.max_steps && self.recent.again(away.key) {
            self.unsent += 1;
            return;
        }
        self.sent += 1;
        self.outbox.push(Msg::State {
            state: away.state,
            order: away.order,
            to: owner(away.key, self.peers),
            fp: away.key,
            cost: away.cost,
            depth: away.depth,
            path: away.path,
        });
    }
}

/// The plain search of a worker: over its program, with the composed
/// explorer, routing by owner.
type Search<P, E> = Plain<'static, P, Arc<P>, Composed<E>, Owners<<P as Program>::State, Composed<E>>>;

/// One worker's search.
pub struct Local<P: Program<State: 'static>, E> {
    /// This worker's index, and the number of workers.
    me: u32,
    peers: u32,
    search: Search<P, E>,
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
            max_steps: config.max_steps,
            recent: Sent::new(config.shortcuts.sent),
            sent: 0,
            unsent: 0,
            outbox: Vec::new(),
        };
        let order = Composed::new(root);
        Local {
            search: Plain::new(program, order, worker, cache_bytes, route, report),
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
    pub fn outbox(&mut self) -> std::vec::Drain<'_, Msg<P::State, Composed<E>>> {
        self.search.route().outbox.drain(..)
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
            .and_then(|()| self.search.resume_while(|route| route.outbox.len() < BATCH));
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
                    path,
                    ..
                } => {
                    let result = self
                        .enter(bound)
                        .and_then(|()| self.receive_state(state, order, fp, cost, depth, path));
                    self.settle(result);
                }
            }
        }
        self.elapsed_s += started.elapsed().as_secs_f64();
    }

    /// The state `fp` with the order `order` there, reached by `path` in
    /// `depth` steps with `cost` delays: visited, unless it is cached (and
    /// not at the step limit, where the search decides).
    fn receive_state(
        &mut self,
        state: P::State,
        order: Composed<E>,
        fp: u64,
        cost: u32,
        depth: u32,
        path: Path,
    ) -> Result<Option<Stopped>, SearchError> {
        if (depth as usize) < self.max_steps && self.search.cached(fp) {
            return Ok(None);
        }
        if self.search.cache_key(&state, &order) != fp {
            return Err(SearchError::Internal(format!(
                "a state received by worker {} has another fingerprint than where it was sent from: does its Serialize and Deserialize round-trip, and is its Hash deterministic?",
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

    /// What a call of the search came to.
    fn settle(&mut self, result: Result<Option<Stopped>, SearchError>) {
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
        let route = self.search.route();
        let (sent, unsent) = (route.sent, route.unsent);
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
            sent,
            unsent,
            error: self.error.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{SENT_SLOTS, Sent, owner};

    /// A key is held from its second send on, until a key of the same slot
    /// takes its place; a key of 0 is never held, and nothing without the
    /// shortcut.
    #[test]
    fn the_table_of_keys_sent_holds_a_key_until_its_slot_is_taken() {
        let mut on = Sent::new(true);
        let (a, b) = (0x1234_5678_9abc_def1, 0x1234_5678_9abc_def1 + SENT_SLOTS as u64);
        assert_eq!((on.again(a), on.again(a), on.again(a)), (false, true, true));
        assert!(!on.again(b), "b takes a's slot");
        assert_eq!((on.again(a), on.again(b)), (false, false));
        assert_eq!((on.again(0), on.again(0)), (false, false));
        let mut off = Sent::new(false);
        assert_eq!((off.again(a), off.again(a)), (false, false));
    }
    use mcheck_checker::cache::fingerprint;

    /// What a worker owns is spread over the whole range of high bits,
    /// which the cache's home slots are: for 2, 3 and 4 workers, each
    /// owns between 0.9 and 1.1 times its share of the fingerprints in
    /// every sixteenth of that range (of 2^18 fingerprints). Owning by the
    /// high bits themselves fails it at once (worker 0 of 2 owns nothing
    /// in the upper half).
    #[test]
    fn each_worker_owns_its_share_of_every_range_of_home_slots() {
        let fps: Vec<u64> = (0u64..1 << 18).map(|i| fingerprint(&i)).collect();
        for peers in 2..=4u32 {
            let mut counts = vec![[0u32; 16]; peers as usize];
            for &fp in &fps {
                counts[owner(fp, peers) as usize][(fp >> 60) as usize] += 1;
            }
            let share = fps.len() as f64 / 16.0 / f64::from(peers);
            for (w, ranges) in counts.iter().enumerate() {
                for (r, &n) in ranges.iter().enumerate() {
                    let ratio = f64::from(n) / share;
                    assert!(
                        (0.9..1.1).contains(&ratio),
                        "worker {w} of {peers}, range {r}: {ratio:.3}"
                    );
                }
            }
        }
    }
}
