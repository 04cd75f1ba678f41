//! Random transition systems and an independent breadth-first oracle, for
//! testing strategies and explorers (yours too).
//!
//! A [`RandomProgram`] has `n` states and `k` actors; at each state each
//! actor is disabled or enabled with 1 to 3 alternatives, each leading to a
//! random state (so the system has cycles unless asked to be acyclic), and
//! a few transitions may be marked as violating. Transitions also emit
//! `Sent` events, so that run-to-completion style explorers reorder.
//! [`RandomProgram::oracle`] computes the reachable set with its own
//! set and queue, sharing no code with the engine.
//!
//! [`Causal`] is a small run-to-completion-like explorer that keeps the
//! soundness contract, for tests and benchmarks that need one without the
//! built-in explorers.

use crate::cache::{FIXED_HASHER, FixedHashSet};
use crate::explorer::Explorer;
use crate::program::{ActorId, ActorInfo, Enabled, Event, Program, Violation, ViolationKind};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::VecDeque;
use std::sync::Mutex;

/// A set with the fixed-key hasher, holding `items`.
fn set_of<T: std::hash::Hash + Eq>(items: impl IntoIterator<Item = T>) -> FixedHashSet<T> {
    let mut s = FixedHashSet::with_hasher(FIXED_HASHER);
    s.extend(items);
    s
}

/// A small run-to-completion-like explorer: a priority list of actors; a
/// send moves the receiver to the front, a new actor goes to the back, a
/// halted one leaves; a delay moves the current actor to the back.
#[derive(Clone, Debug, Default)]
pub struct Causal {
    order: Vec<ActorId>,
}

impl Explorer for Causal {
    fn name(&self) -> &str {
        "causal"
    }
    fn init(&mut self, actors: &[ActorInfo]) {
        self.order = actors.iter().map(|a| a.id).collect();
    }
    fn next(&self, enabled: &[ActorId]) -> ActorId {
        *self
            .order
            .iter()
            .find(|a| enabled.binary_search(a).is_ok())
            .unwrap_or(&enabled[0])
    }
    fn step(&mut self, events: &[Event]) {
        for e in events {
            match e {
                Event::Sent { to, .. } => {
                    self.order.retain(|a| a != to);
                    self.order.insert(0, *to);
                }
                Event::Created(info) => self.order.push(info.id),
                Event::Halted(id) => self.order.retain(|a| a != id),
                Event::Custom { .. } => {}
            }
        }
    }
    fn delay(&mut self, enabled: &[ActorId]) {
        let a = self.next(enabled);
        self.order.retain(|x| *x != a);
        self.order.push(a);
    }
    fn state_hash(&self) -> Option<u64> {
        Some(crate::cache::fingerprint(&self.order))
    }
}

/// A random transition system (see the module docs).
#[derive(Debug)]
pub struct RandomProgram {
    /// Number of states (state 0 is initial).
    pub states: u32,
    /// Number of actors.
    pub actors: u32,
    /// `succ[s][a]`: the successors of actor `a` at state `s`, one per
    /// alternative (empty: disabled).
    pub succ: Vec<Vec<Vec<u32>>>,
    /// Transitions (state, actor, alternative) that violate.
    pub bad: FixedHashSet<(u32, u32, u32)>,
    /// Every state the engine generated (when recording).
    pub seen: Option<Mutex<FixedHashSet<u32>>>,
}

/// What the oracle knows about a random program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oracle {
    /// The reachable states.
    pub reachable: FixedHashSet<u32>,
    /// The number of transitions from reachable states.
    pub transitions: u64,
    /// Whether a violating transition is reachable.
    pub violation_reachable: bool,
}

impl RandomProgram {
    /// A random system from `seed`: 20 to 200 states (8 to 24 when acyclic), 2 to 5 actors, 1 to 3
    /// alternatives, with cycles unless `acyclic` (then every transition
    /// goes to a higher-numbered state). With `plant`, one to three
    /// transitions violate (reachable or not).
    pub fn generate(seed: u64, acyclic: bool, plant: bool) -> RandomProgram {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        // Without a cache every path is explored, so acyclic systems stay
        // small enough for their path count to be modest.
        let n = if acyclic {
            rng.random_range(8..=24u32)
        } else {
            rng.random_range(20..=200u32)
        };
        let k = rng.random_range(2..=5u32);
        let density = rng.random_range(0.3..0.8);
        let mut succ = vec![vec![Vec::new(); k as usize]; n as usize];
        for s in 0..n {
            for a in 0..k {
                if acyclic && s + 1 >= n {
                    continue;
                }
                if rng.random_bool(density) {
                    let alts = rng.random_range(1..=3);
                    for _ in 0..alts {
                        let t = if acyclic {
                            rng.random_range(s + 1..n)
                        } else {
                            rng.random_range(0..n)
                        };
                        succ[s as usize][a as usize].push(t);
                    }
                }
            }
        }
        let mut bad = set_of([]);
        if plant {
            for _ in 0..rng.random_range(1..=3) {
                let s = rng.random_range(0..n);
                let a = rng.random_range(0..k);
                let alts = succ[s as usize][a as usize].len() as u32;
                if alts > 0 {
                    bad.insert((s, a, rng.random_range(0..alts)));
                }
            }
        }
        RandomProgram {
            states: n,
            actors: k,
            succ,
            bad,
            seen: None,
        }
    }

    /// Record every state the engine generates (see [`RandomProgram::seen_states`]).
    pub fn recording(mut self) -> Self {
        self.seen = Some(Mutex::new(set_of([0])));
        self
    }

    /// The states generated so far (with [`RandomProgram::recording`]).
    pub fn seen_states(&self) -> FixedHashSet<u32> {
        self.seen
            .as_ref()
            .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()).clone())
            .unwrap_or_else(|| set_of([]))
    }

    /// Breadth-first search over `succ`, independent of the engine.
    pub fn oracle(&self) -> Oracle {
        let mut reachable = set_of([0u32]);
        let mut queue = VecDeque::from([0u32]);
        let mut transitions = 0;
        let mut violation_reachable = false;
        while let Some(s) = queue.pop_front() {
            for (a, targets) in self.succ[s as usize].iter().enumerate() {
                for (alt, &t) in targets.iter().enumerate() {
                    transitions += 1;
                    if self.bad.contains(&(s, a as u32, alt as u32)) {
                        violation_reachable = true;
                    }
                    if reachable.insert(t) {
                        queue.push_back(t);
                    }
                }
            }
        }
        Oracle {
            reachable,
            transitions,
            violation_reachable,
        }
    }
}

impl Program for RandomProgram {
    type State = u32;

    fn initial(&self) -> u32 {
        0
    }

    fn actors(&self, _s: &u32) -> Vec<ActorInfo> {
        (0..self.actors)
            .map(|a| ActorInfo {
                id: ActorId(a),
                kind: if a % 2 == 0 { "even" } else { "odd" },
                name: format!("p{a}"),
            })
            .collect()
    }

    fn enabled(&self, s: &u32, out: &mut Vec<Enabled>) {
        for (a, targets) in self.succ[*s as usize].iter().enumerate() {
            if !targets.is_empty() {
                out.push(Enabled {
                    actor: ActorId(a as u32),
                    alternatives: targets.len() as u32,
                });
            }
        }
    }

    fn execute(&self, s: &mut u32, actor: ActorId, alt: u32, events: &mut Vec<Event>) -> Result<(), Violation> {
        let from = *s;
        if self.bad.contains(&(from, actor.0, alt)) {
            return Err(Violation::new(
                ViolationKind::Assertion,
                format!("p{}", actor.0),
                format!("planted violation at state {from}, alternative {alt}"),
            ));
        }
        let t = self.succ[from as usize][actor.0 as usize][alt as usize];
        *s = t;
        if let Some(seen) = &self.seen {
            seen.lock().unwrap_or_else(|e| e.into_inner()).insert(t);
        }
        // A send to a state-dependent actor, so that RTC reorders.
        events.push(Event::Sent {
            from: actor,
            to: ActorId((from + t) % self.actors),
        });
        Ok(())
    }
}
