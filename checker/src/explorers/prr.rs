//! Probabilistic round robin (PRR).

use super::queue::ActorQueue;
use crate::cache::fingerprint;
use crate::explorer::Explorer;
use crate::program::{ActorId, ActorInfo, Event};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

/// Probabilistic round robin: round robin, except that every actor (the
/// initial ones in creation order, then each created one) is inserted at a
/// uniformly random position of the queue, drawn from the explorer's own
/// seeded generator. `next` and `delay` are those of RR, so it is just as
/// sound; the seed picks one of many deterministic explorers.
///
/// The generator is held by value: a clone continues exactly as the
/// original would (the determinism contract of [`Explorer`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProbabilisticRoundRobin {
    queue: ActorQueue,
    rng: Xoshiro256PlusPlus,
}

impl Default for ProbabilisticRoundRobin {
    fn default() -> Self {
        Self::new(0)
    }
}

impl ProbabilisticRoundRobin {
    /// A PRR explorer seeded with `seed` (call [`Explorer::init`] before use).
    pub fn new(seed: u64) -> Self {
        ProbabilisticRoundRobin {
            queue: ActorQueue::new(),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }

    /// The queue, first preferred first.
    pub fn order(&self) -> Vec<ActorId> {
        self.queue.to_vec()
    }

    fn insert_randomly(&mut self, id: ActorId) {
        self.queue.remove(id);
        let at = self.rng.random_range(0..=self.queue.len());
        self.queue.insert(at, id);
    }
}

impl Explorer for ProbabilisticRoundRobin {
    #[inline]
    fn is_trusted(&self) -> bool {
        true
    }

    fn name(&self) -> &str {
        "prr"
    }

    fn seed(&mut self, seed: u64) {
        self.rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    }

    fn init(&mut self, actors: &[ActorInfo]) {
        self.queue = ActorQueue::new();
        for a in actors {
            self.insert_randomly(a.id);
        }
    }

    #[inline]
    fn next(&self, enabled: &[ActorId]) -> ActorId {
        self.queue.next(enabled)
    }

    #[inline]
    fn next_masked(&self, enabled: &[ActorId], mask: Option<u64>) -> ActorId {
        self.queue.next_masked(enabled, mask)
    }

    fn step(&mut self, events: &[Event]) {
        for e in events {
            match e {
                Event::Created(info) => self.insert_randomly(info.id),
                Event::Halted(id) => self.queue.remove(*id),
                Event::Sent { .. } | Event::Custom { .. } => {}
            }
        }
    }

    fn delay(&mut self, enabled: &[ActorId]) {
        self.queue.delay_first_enabled(enabled);
    }

    #[inline]
    fn delay_masked(&mut self, enabled: &[ActorId], mask: Option<u64>) {
        self.queue.delay_first_enabled_masked(enabled, mask);
    }

    /// The queue and the generator's state, the latter through its next
    /// four outputs (256 bits, its whole state's size), drawn from a clone.
    fn state_hash(&self) -> Option<u64> {
        let mut rng = self.rng.clone();
        let ahead: [u64; 4] = std::array::from_fn(|_| rng.random());
        Some(fingerprint(&(&self.queue, ahead)))
    }
}
