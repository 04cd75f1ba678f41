//! Probabilistic round robin (PRR).

use super::queue::ActorQueue;
use crate::cache::fingerprint;
use crate::explorer::Explorer;
use crate::program::{ActorId, ActorInfo, Event};
use rand::{Rng, RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

/// Probabilistic round robin: round robin, except that every actor (the
/// initial ones in creation order, then each created one) is inserted at a
/// uniformly random position of the queue, drawn from the explorer's own
/// seeded generator. `next` and `delay` are those of RR, so it is just as
/// sound; the seed picks one of many deterministic explorers.
///
/// The generator is held as its seed and the number of outputs drawn so
/// far, not as its 32 bytes of state: the stratified search keeps one
/// explorer per frontier entry, and this keeps PRR beside RR and RTC in
/// [`AnyExplorer`](super::AnyExplorer) without a box. A draw replays the
/// stream from the seed (one step per earlier output: a few dozen for the
/// actors a model creates), so a clone continues exactly as the original
/// would (the determinism contract of [`Explorer`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProbabilisticRoundRobin {
    queue: ActorQueue,
    seed: u64,
    drawn: u64,
}

impl Default for ProbabilisticRoundRobin {
    fn default() -> Self {
        Self::new(0)
    }
}

/// The generator `drawn` outputs past `seed`, counting the outputs a draw
/// takes (a uniform draw may reject and draw again).
struct Stream {
    rng: Xoshiro256PlusPlus,
    drawn: u64,
}

impl Stream {
    fn at(seed: u64, drawn: u64) -> Stream {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        for _ in 0..drawn {
            rng.next_u64();
        }
        Stream { rng, drawn }
    }
}

impl RngCore for Stream {
    fn next_u32(&mut self) -> u32 {
        self.drawn += 1;
        self.rng.next_u32()
    }

    fn next_u64(&mut self) -> u64 {
        self.drawn += 1;
        self.rng.next_u64()
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        rand::rand_core::impls::fill_bytes_via_next(self, dest);
    }
}

impl ProbabilisticRoundRobin {
    /// A PRR explorer seeded with `seed` (call [`Explorer::init`] before use).
    pub fn new(seed: u64) -> Self {
        ProbabilisticRoundRobin {
            queue: ActorQueue::new(),
            seed,
            drawn: 0,
        }
    }

    /// The queue, first preferred first.
    pub fn order(&self) -> Vec<ActorId> {
        self.queue.to_vec()
    }

    fn insert_randomly(queue: &mut ActorQueue, stream: &mut Stream, id: ActorId) {
        queue.remove(id);
        let at = stream.random_range(0..=queue.len());
        queue.insert(at, id);
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
        self.seed = seed;
        self.drawn = 0;
    }

    fn init(&mut self, actors: &[ActorInfo]) {
        self.queue = ActorQueue::new();
        let mut stream = Stream::at(self.seed, self.drawn);
        for a in actors {
            Self::insert_randomly(&mut self.queue, &mut stream, a.id);
        }
        self.drawn = stream.drawn;
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
        let mut stream = None;
        for e in events {
            match e {
                Event::Created(info) => {
                    let s = stream.get_or_insert_with(|| Stream::at(self.seed, self.drawn));
                    Self::insert_randomly(&mut self.queue, s, info.id);
                }
                Event::Halted(id) => self.queue.remove(*id),
                Event::Sent { .. } | Event::Custom { .. } => {}
            }
        }
        if let Some(s) = stream {
            self.drawn = s.drawn;
        }
    }

    fn delay(&mut self, enabled: &[ActorId]) {
        self.queue.delay_first_enabled(enabled);
    }

    #[inline]
    fn delay_masked(&mut self, enabled: &[ActorId], mask: Option<u64>) {
        self.queue.delay_first_enabled_masked(enabled, mask);
    }

    /// The queue and the generator's state: its seed and the count of
    /// outputs drawn determine it, so they are hashed rather than the
    /// stream replayed (`--exact-bound` keys every state with this).
    fn state_hash(&self) -> Option<u64> {
        Some(fingerprint(&(&self.queue, self.seed, self.drawn)))
    }
}
