//! Round robin (RR).

use super::queue::ActorQueue;
use crate::cache::fingerprint;
use crate::explorer::Explorer;
use crate::program::{ActorId, ActorInfo, Event};
use serde::{Deserialize, Serialize};

/// Round robin: the actors in a queue in creation order. `next` is the
/// first enabled actor of the queue; `delay` moves it to the tail; a
/// created actor joins the tail and a halted one leaves.
///
/// Deterministic; sound because a delay preserves the relative order of
/// the other actors (see [`ActorQueue::delay_first_enabled`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RoundRobin {
    queue: ActorQueue,
}

impl RoundRobin {
    /// A round-robin explorer (call [`Explorer::init`] before use).
    pub fn new() -> Self {
        Self::default()
    }

    /// The queue, first preferred first.
    pub fn order(&self) -> Vec<ActorId> {
        self.queue.to_vec()
    }
}

impl Explorer for RoundRobin {
    #[inline]
    fn is_trusted(&self) -> bool {
        true
    }

    fn name(&self) -> &str {
        "rr"
    }

    fn is_randomized(&self) -> bool {
        false
    }

    fn init(&mut self, actors: &[ActorInfo]) {
        self.queue = ActorQueue::new();
        for a in actors {
            self.queue.push_back(a.id);
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
                Event::Created(info) => self.queue.push_back(info.id),
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

    fn state_hash(&self) -> Option<u64> {
        Some(fingerprint(&self.queue))
    }
}
