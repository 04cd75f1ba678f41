//! PCTCP, PCT with priorities per causal chain of messages (Ozkan,
//! Majumdar, Niksic, Befrouei, Weissenbacher, *Randomized Testing of
//! Distributed Systems with Probabilistic Guarantees*, OOPSLA 2018), as a
//! baseline.
//!
//! # The algorithm
//!
//! The events of a message-passing execution (message deliveries) are
//! partially ordered by causality, and revealed online. PCTCP partitions
//! them, as they appear, into *chains* (sets of events that causality
//! orders totally); every chain gets a random distinct priority when it is
//! created; `d - 1` priority-change points are drawn uniformly in
//! `[1, k]`; at each step the pending event of the highest-priority chain
//! runs, and at the j-th change point the chain of the event about to run
//! drops to priority j, below every initial priority. With one chain per
//! thread it is PCT.
//!
//! # The published guarantee
//!
//! For executions whose partial order has width at most `w` (the most
//! pairwise concurrent events) and at most `n` events, with the paper's
//! online chain partition (at most `w(w+1)/2` chains) and `k >= n`, PCTCP
//! samples from a d-hitting family of at most `w^2 · n^(d-1)` schedules,
//! so every bug of depth `d` (an ordering of `d` events that exposes it) is
//! hit with probability at least `1/(w^2 · n^(d-1))` per execution.
//!
//! # mcheck's adaptation (what it assumes)
//!
//! The driver sees only the enabled actors and each step's events; the
//! messages in flight are those of `super::pos::Inboxes` (a machine's step
//! delivers its oldest pending message; see the assumptions there, which
//! are exact for FIFO machines that do not defer). The chains:
//!
//! * a message sent by a step that delivered message `m` continues `m`'s
//!   chain when `m` is still its last event (the causal chain of a request
//!   and its consequences); further messages of the step, and of later
//!   steps of the same machine, take another chain whose last message was
//!   delivered to that machine (most recent first); else a new chain. Each
//!   is a chain of the causal order, since a machine's delivery precedes
//!   everything it sends later;
//! * the steps whose message the driver did not see sent (the model's setup
//!   messages, every step of a plain [`Program`]) form one chain per actor
//!   (program order), which messages do not join. For a plain program this
//!   is PCT with one priority per actor;
//! * the alternatives of a step are drawn uniformly.
//!
//! This partition uses only what the driver sees and is not the paper's
//! online algorithm, so its number of chains `c` can exceed `w(w+1)/2`
//! (it is at most the number of events). The counting argument of the
//! bound then gives `1/(c · k^(d-1))` for a bug that needs one particular
//! chain to start highest and `d - 1` particular demotions, with `k` at
//! least the number of steps; by default `k` is measured as for PCT
//! ([`super::pct_default_steps`]).

use super::error::SearchError;
use super::exec::Driver;
use super::pct::{change_points, depth_report};
use super::pos::{Delivery, Inboxes};
use super::walk::walk_until_found;
use crate::config::Config;
use crate::program::{ActorId, Enabled, Event, Program};
use crate::report::Report;
use crate::watch::Watched;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Priorities of chains that have not been demoted live above this.
const HIGH: u64 = 1 << 32;

/// The PCTCP scheduler of one execution.
#[derive(Debug)]
pub(super) struct PctcpDriver {
    rng: Xoshiro256PlusPlus,
    /// Messages in flight, tagged with their chain.
    inboxes: Inboxes,
    /// The priority of each chain, by index; higher runs first.
    chains: Vec<u64>,
    /// Each actor's chain of untracked steps (by actor id).
    home: Vec<Option<usize>>,
    /// Per actor: the chains whose last message was delivered to it, most
    /// recent last.
    open: Vec<Vec<usize>>,
    /// Change points (1-based step numbers), ascending.
    changes: Vec<u64>,
    next_change: usize,
    /// The chain of the step being taken, and what it delivers.
    taking: (usize, Delivery),
    /// Scratch: the enabled actors with the chains of their pending events.
    pending: Vec<(ActorId, usize)>,
}

/// A new chain with a random priority among the undemoted ones.
fn new_chain(chains: &mut Vec<u64>, rng: &mut Xoshiro256PlusPlus) -> usize {
    chains.push(HIGH + rng.random_range(0..HIGH));
    chains.len() - 1
}

/// Grow `v` so that `i` is an index.
fn slot<T: Default + Clone>(v: &mut Vec<T>, i: ActorId) -> &mut T {
    let i = i.0 as usize;
    if v.len() <= i {
        v.resize(i + 1, T::default());
    }
    &mut v[i]
}

impl PctcpDriver {
    /// A driver with `depth - 1` change points in `[1, steps]`.
    pub(super) fn new(seed: u64, depth: u32, steps: u64) -> Self {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let changes = change_points(&mut rng, depth, steps);
        PctcpDriver {
            rng,
            inboxes: Inboxes::default(),
            chains: Vec::new(),
            home: Vec::new(),
            open: Vec::new(),
            changes,
            next_change: 0,
            taking: (0, Delivery::Untracked),
            pending: Vec::new(),
        }
    }

    /// The chain of `actor`'s pending event at a state with `en` enabled.
    fn chain_of(&mut self, actor: ActorId, en: &[Enabled]) -> usize {
        if self.inboxes.continuing(en) {
            return self.taking.0;
        }
        if let Some(m) = self.inboxes.head(actor) {
            return m.tag as usize;
        }
        let (chains, rng) = (&mut self.chains, &mut self.rng);
        *slot(&mut self.home, actor).get_or_insert_with(|| new_chain(chains, rng))
    }

    /// The enabled actor whose chain has the highest priority (ties, which
    /// random draws make rare, to the lowest id), with that chain.
    fn top(&self, pending: &[(ActorId, usize)]) -> (ActorId, usize) {
        let mut best = pending[0];
        for &(a, c) in &pending[1..] {
            if self.chains[c] > self.chains[best.1] {
                best = (a, c);
            }
        }
        best
    }
}

impl Driver for PctcpDriver {
    fn choose(&mut self, step: usize, en: &[Enabled], _ids: &[ActorId]) -> Result<Option<(ActorId, u32)>, String> {
        let mut pending = std::mem::take(&mut self.pending);
        pending.clear();
        pending.extend(en.iter().map(|e| (e.actor, self.chain_of(e.actor, en))));
        let mut best = self.top(&pending);
        while self.next_change < self.changes.len() && self.changes[self.next_change] == step as u64 + 1 {
            self.next_change += 1;
            self.chains[best.1] = self.next_change as u64;
            best = self.top(&pending);
        }
        self.pending = pending;
        let (actor, chain) = best;
        let alternatives = en.iter().find(|e| e.actor == actor).map_or(1, |e| e.alternatives);
        self.taking = (chain, self.inboxes.take(actor, en));
        Ok(Some((actor, self.rng.random_range(0..alternatives))))
    }

    fn observe(&mut self, actor: ActorId, events: &[Event]) {
        let (chain, delivered) = self.taking;
        let open = slot(&mut self.open, actor);
        if let Delivery::Message(_) = delivered {
            // Its last event was delivered here: what this machine sends
            // from now on is causally after it.
            open.push(chain);
        }
        let (chains, rng) = (&mut self.chains, &mut self.rng);
        self.inboxes.observe(actor, events, |_| {
            open.pop().unwrap_or_else(|| new_chain(chains, rng)) as u64
        });
    }
}

/// PCTCP (see the module docs) with bug depth `depth` (>= 1) and change
/// points in `[1, steps]` (None: [`super::pct_default_steps`]). Runs until
/// a violation or a budget. The counterexample is a choice path.
pub fn pctcp<P: Program>(program: &P, config: &Config, depth: u32, steps: Option<u64>) -> Result<Report, SearchError> {
    pctcp_on(Watched::bare(program), config, depth, steps)
}

/// [`pctcp`] on a watched program.
pub(crate) fn pctcp_on<P: Program>(
    program: Watched<'_, P>,
    config: &Config,
    depth: u32,
    steps: Option<u64>,
) -> Result<Report, SearchError> {
    let (k, report) = depth_report("pctcp", program, config, depth, steps)?;
    walk_until_found(program, config, report, "pctcp", |seed| {
        PctcpDriver::new(seed, depth, k)
    })
}
