//! The ordered list of actor ids that every built-in explorer keeps.

use mcheck_checker::ActorId;
use smallvec::SmallVec;

/// Actor ids in the explorer's order of preference, inline for up to 12
/// actors (the shipped models have fewer), so that cloning an explorer per
/// explored state does not allocate.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ActorQueue(SmallVec<[ActorId; 12]>);

impl ActorQueue {
    /// An empty queue.
    pub fn new() -> Self {
        ActorQueue(SmallVec::new())
    }

    /// The actors, first preferred first.
    pub fn as_slice(&self) -> &[ActorId] {
        &self.0
    }

    /// Number of actors.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the queue is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Position of the first actor of the queue that is in `enabled`
    /// (sorted by id), if any.
    #[inline]
    pub fn first_enabled(&self, enabled: &[ActorId]) -> Option<usize> {
        self.0.iter().position(|a| enabled.binary_search(a).is_ok())
    }

    /// The first actor of the queue that is enabled. An enabled actor the
    /// explorer never heard of (which a program that reports every creation
    /// never shows) falls back to the lowest enabled id, so `next` stays
    /// total; the search's run-time check reports such an explorer.
    #[inline]
    pub fn next(&self, enabled: &[ActorId]) -> ActorId {
        match self.first_enabled(enabled) {
            Some(i) => self.0[i],
            None => enabled[0],
        }
    }

    /// Append `id` at the end (moving it there if present).
    pub fn push_back(&mut self, id: ActorId) {
        self.remove(id);
        self.0.push(id);
    }

    /// Put `id` first (moving it there if present).
    pub fn push_front(&mut self, id: ActorId) {
        self.remove(id);
        self.0.insert(0, id);
    }

    /// Insert `id` at position `at` (clamped), moving it if present.
    pub fn insert(&mut self, at: usize, id: ActorId) {
        self.remove(id);
        let at = at.min(self.0.len());
        self.0.insert(at, id);
    }

    /// Remove `id` if present.
    pub fn remove(&mut self, id: ActorId) {
        if let Some(i) = self.0.iter().position(|&a| a == id) {
            self.0.remove(i);
        }
    }

    /// Move the first enabled actor to the end: the delay of RR, RTC and
    /// PRR. Sound: the enabled actors keep their relative order, so k
    /// delays offer each of k enabled actors once and then repeat.
    #[inline]
    pub fn delay_first_enabled(&mut self, enabled: &[ActorId]) {
        if let Some(i) = self.first_enabled(enabled) {
            let id = self.0.remove(i);
            self.0.push(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[u32]) -> Vec<ActorId> {
        v.iter().map(|&i| ActorId(i)).collect()
    }

    #[test]
    fn delay_keeps_the_relative_order_of_the_rest() {
        let mut q = ActorQueue::new();
        for i in [3, 1, 4, 0, 2] {
            q.push_back(ActorId(i));
        }
        let en = ids(&[0, 3, 4]);
        assert_eq!(q.next(&en), ActorId(3));
        q.delay_first_enabled(&en);
        assert_eq!(q.as_slice(), &ids(&[1, 4, 0, 2, 3])[..]);
        assert_eq!(q.next(&en), ActorId(4));
        q.push_front(ActorId(2));
        assert_eq!(q.as_slice(), &ids(&[2, 1, 4, 0, 3])[..]);
        q.insert(9, ActorId(1));
        assert_eq!(q.as_slice(), &ids(&[2, 4, 0, 3, 1])[..]);
        q.remove(ActorId(4));
        assert_eq!(q.as_slice(), &ids(&[2, 0, 3, 1])[..]);
        assert_eq!(q.next(&ids(&[7])), ActorId(7));
    }
}
