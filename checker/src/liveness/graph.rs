//! The state graph of the liveness check: every reachable state by
//! fingerprint, breadth first, with its outgoing edges and the tree edge
//! that first reached it (ARCHITECTURE.md, "Liveness").
//!
//! Per state it stores the fingerprint -> index entry of a hashbrown map
//! (12 bytes and a control byte, at most 7/8 full), the tree parent and the
//! choice from it (8 bytes), the offset of its edges (4 bytes) and its
//! temperature (1 byte); per transition 8 bytes (successor, actor). States
//! themselves are kept only in the breadth-first queue.

use crate::cache::{FIXED_HASHER, fingerprint};
use crate::config::Config;
use crate::program::{ActorId, Enabled, Program};
use crate::report::BoundedBy;
use std::collections::VecDeque;
use std::time::Instant;

/// The successor of a violating transition (no state).
pub(super) const NONE: u32 = u32::MAX;

/// One transition: the successor's index ([`NONE`] when the step
/// violates) and the actor that took it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Edge {
    pub(super) to: u32,
    pub(super) actor: u32,
}

/// The reachable state graph, states numbered in breadth-first order.
#[derive(Debug, Default)]
pub(super) struct Graph {
    /// Whether each state is hot.
    pub(super) hot: Vec<bool>,
    /// The tree parent of each state ([`NONE`] for the initial state).
    pub(super) parent: Vec<u32>,
    /// The choice index taken from the parent.
    pub(super) via: Vec<u32>,
    /// The edges of state i are `edges[offsets[i]..offsets[i + 1]]`, one
    /// per choice, in choice order.
    pub(super) offsets: Vec<u32>,
    /// Every transition.
    pub(super) edges: Vec<Edge>,
    /// Bytes of the fingerprint map at its peak.
    pub(super) map_bytes: u64,
}

impl Graph {
    /// The number of states.
    pub(super) fn len(&self) -> usize {
        self.hot.len()
    }

    /// The edges of state `i`.
    pub(super) fn out(&self, i: u32) -> &[Edge] {
        &self.edges[self.offsets[i as usize] as usize..self.offsets[i as usize + 1] as usize]
    }

    /// The choice path from the initial state to `i` along the tree.
    pub(super) fn stem(&self, mut i: u32) -> Vec<u64> {
        let mut path = Vec::new();
        while self.parent[i as usize] != NONE {
            path.push(u64::from(self.via[i as usize]));
            i = self.parent[i as usize];
        }
        path.reverse();
        path
    }

    /// Bytes of what the graph stores on top of the states' fingerprints.
    pub(super) fn bytes(&self) -> u64 {
        let per_state =
            self.hot.capacity() + 4 * (self.parent.capacity() + self.via.capacity() + self.offsets.capacity());
        (per_state + 8 * self.edges.capacity()) as u64 + self.map_bytes
    }
}

/// Build the graph of `program` breadth first. `Err` names the budget
/// that stopped it (`config.max_states`, `config.time_limit`, the stop
/// flag), or the graph was too large for 32-bit indices.
pub(super) fn build<P: Program>(program: &P, config: &Config, started: Instant) -> Result<Graph, BoundedBy> {
    let mut g = Graph::default();
    let mut index: hashbrown::HashMap<u64, u32, ahash::RandomState> = hashbrown::HashMap::with_hasher(FIXED_HASHER);
    let s0 = program.initial();
    index.insert(fingerprint(&s0), 0);
    let monitors = program.liveness();
    let hot = |s: &P::State| monitors.is_some_and(|m| m.hot(s));
    g.hot.push(hot(&s0));
    g.parent.push(NONE);
    g.via.push(0);
    g.offsets.push(0);
    // Each successor is made in `t`, a copy of its parent by `clone_from`,
    // which keeps the memory of a state that owns some (a machine model's
    // queues); only a new state is cloned, into the queue
    // (ARCHITECTURE.md, "Performance design").
    let mut t = s0.clone();
    let mut queue = VecDeque::from([s0]);
    let (mut en, mut events) = (Vec::<Enabled>::new(), Vec::new());
    let mut expanded = 0u64;
    while let Some(s) = queue.pop_front() {
        let me = g.offsets.len() as u32 - 1;
        expanded += 1;
        if expanded.is_multiple_of(1024) {
            if config.stop.is_raised() {
                return Err(BoundedBy::Interrupted);
            }
            if config.time_limit.is_some_and(|t| started.elapsed() >= t) {
                return Err(BoundedBy::Time);
            }
        }
        en.clear();
        program.enabled(&s, &mut en);
        let mut choice = 0u32;
        for e in &en {
            for alt in 0..e.alternatives {
                t.clone_from(&s);
                events.clear();
                let to = match program.execute(&mut t, ActorId(e.actor.0), alt, &mut events) {
                    Err(_) => NONE,
                    Ok(()) => {
                        let next = g.hot.len() as u32;
                        let fp = fingerprint(&t);
                        let to = *index.entry(fp).or_insert(next);
                        if to == next {
                            if next == NONE || config.max_states.is_some_and(|m| u64::from(next) >= m) {
                                return Err(BoundedBy::States);
                            }
                            g.hot.push(hot(&t));
                            g.parent.push(me);
                            g.via.push(choice);
                            queue.push_back(t.clone());
                        }
                        to
                    }
                };
                g.edges.push(Edge { to, actor: e.actor.0 });
                choice += 1;
            }
        }
        if g.edges.len() >= NONE as usize {
            return Err(BoundedBy::States);
        }
        g.offsets.push(g.edges.len() as u32);
    }
    // hashbrown: a slot of (u64, u32) padded to 16 bytes plus a control byte.
    g.map_bytes = (index.capacity() * 17) as u64;
    Ok(g)
}
