//! Run to completion (RTC).

use super::queue::ActorQueue;
use crate::cache::fingerprint;
use crate::explorer::Explorer;
use crate::program::{ActorId, ActorInfo, Event};
use serde::{Deserialize, Serialize};

/// Run to completion: a priority list that follows the causal chain of
/// messages. A message sent to an actor moves the receiver to the top, so
/// that the zero-delay execution handles each message as soon as it is
/// sent; a created actor also goes to the top (its creation is the cause
/// of its first step); `next` is the highest-priority enabled actor;
/// `delay` moves it to the bottom; a halted actor leaves the list.
///
/// Deterministic; sound because a delay preserves the relative order of
/// the other actors.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RunToCompletion {
    queue: ActorQueue,
}

impl RunToCompletion {
    /// A run-to-completion explorer (call [`Explorer::init`] before use).
    pub fn new() -> Self {
        Self::default()
    }

    /// The priority list, highest first.
    pub fn order(&self) -> Vec<ActorId> {
        self.queue.to_vec()
    }
}

impl Explorer for RunToCompletion {
    #[inline]
    fn is_trusted(&self) -> bool {
        true
    }

    fn name(&self) -> &str {
        "rtc"
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
                Event::Created(info) => self.queue.push_front(info.id),
                Event::Sent { to, .. } => self.queue.push_front(*to),
                Event::Halted(id) => self.queue.remove(*id),
                Event::Custom { .. } => {}
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
        Some(fingerprint(self))
    }
}
