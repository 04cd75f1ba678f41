//! The ordered list of actor ids that every built-in explorer keeps.

use mcheck_checker::ActorId;
use std::hash::{Hash, Hasher};

/// Actors held inline (the shipped models have fewer).
const INLINE: usize = 12;

/// The storage of an [`ActorQueue`]: a plain array while it fits, so that
/// a clone is a copy of a few words.
#[derive(Clone, Debug)]
enum Repr {
    Inline { len: u8, ids: [ActorId; INLINE] },
    Heap(Vec<ActorId>),
}

/// Actor ids in the explorer's order of preference, inline for up to 12
/// actors (the shipped models have fewer), so that cloning an explorer per
/// explored state does not allocate and is a plain copy.
#[derive(Clone, Debug)]
pub struct ActorQueue(Repr);

impl Default for ActorQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialEq for ActorQueue {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for ActorQueue {}

impl Hash for ActorQueue {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state)
    }
}

/// Ids below this are looked up in a bitmask of the enabled set.
const MASK_IDS: u32 = 64;

impl ActorQueue {
    /// An empty queue.
    pub fn new() -> Self {
        ActorQueue(Repr::Inline {
            len: 0,
            ids: [ActorId(0); INLINE],
        })
    }

    /// The actors, first preferred first.
    #[inline]
    pub fn as_slice(&self) -> &[ActorId] {
        match &self.0 {
            Repr::Inline { len, ids } => &ids[..*len as usize],
            Repr::Heap(v) => v,
        }
    }

    /// Number of actors.
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// Whether the queue is empty.
    pub fn is_empty(&self) -> bool {
        self.as_slice().is_empty()
    }

    /// Position of the first actor of the queue that is in `enabled`
    /// (sorted by id), if any.
    #[inline]
    pub fn first_enabled(&self, enabled: &[ActorId]) -> Option<usize> {
        let queue = self.as_slice();
        // Small ids (every shipped model's): one bitmask of the enabled set.
        let mut mask = 0u64;
        for a in enabled {
            if a.0 >= MASK_IDS {
                return queue.iter().position(|a| enabled.binary_search(a).is_ok());
            }
            mask |= 1 << a.0;
        }
        queue.iter().position(|a| a.0 < MASK_IDS && mask >> a.0 & 1 == 1)
    }

    /// The first actor of the queue that is enabled. An enabled actor the
    /// explorer never heard of (which a program that reports every creation
    /// never shows) falls back to the lowest enabled id, so `next` stays
    /// total; the search's run-time check reports such an explorer.
    #[inline]
    pub fn next(&self, enabled: &[ActorId]) -> ActorId {
        match self.first_enabled(enabled) {
            Some(i) => self.as_slice()[i],
            None => enabled[0],
        }
    }

    /// Inserts `id` at `at` (at most the length), known to be absent.
    fn insert_at(&mut self, at: usize, id: ActorId) {
        match &mut self.0 {
            Repr::Inline { len, ids } if (*len as usize) < INLINE => {
                let n = *len as usize;
                ids.copy_within(at..n, at + 1);
                ids[at] = id;
                *len += 1;
            }
            Repr::Inline { len, ids } => {
                let mut v = ids[..*len as usize].to_vec();
                v.insert(at, id);
                self.0 = Repr::Heap(v);
            }
            Repr::Heap(v) => v.insert(at, id),
        }
    }

    /// Removes and returns the actor at `at` (less than the length).
    fn remove_at(&mut self, at: usize) -> ActorId {
        match &mut self.0 {
            Repr::Inline { len, ids } => {
                let id = ids[at];
                ids.copy_within(at + 1..*len as usize, at);
                *len -= 1;
                id
            }
            Repr::Heap(v) => v.remove(at),
        }
    }

    /// Append `id` at the end (moving it there if present).
    pub fn push_back(&mut self, id: ActorId) {
        self.remove(id);
        self.insert_at(self.len(), id);
    }

    /// Put `id` first (moving it there if present).
    pub fn push_front(&mut self, id: ActorId) {
        self.remove(id);
        self.insert_at(0, id);
    }

    /// Insert `id` at position `at` (clamped), moving it if present.
    pub fn insert(&mut self, at: usize, id: ActorId) {
        self.remove(id);
        let at = at.min(self.len());
        self.insert_at(at, id);
    }

    /// Remove `id` if present.
    pub fn remove(&mut self, id: ActorId) {
        if let Some(i) = self.as_slice().iter().position(|&a| a == id) {
            self.remove_at(i);
        }
    }

    /// Move the first enabled actor to the end: the delay of RR, RTC and
    /// PRR. Sound: the enabled actors keep their relative order, so k
    /// delays offer each of k enabled actors once and then repeat.
    #[inline]
    pub fn delay_first_enabled(&mut self, enabled: &[ActorId]) {
        if let Some(i) = self.first_enabled(enabled) {
            let id = self.remove_at(i);
            self.insert_at(self.len(), id);
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

    #[test]
    fn long_queues_and_large_ids_behave_the_same() {
        // 20 actors spill to the heap; ids 100.. take the binary-search path.
        let mut q = ActorQueue::new();
        for i in (0..20).rev() {
            q.push_front(ActorId(i * 7));
        }
        assert_eq!(q.len(), 20);
        assert_eq!(q.as_slice()[..3], ids(&[0, 7, 14])[..]);
        let en = ids(&[14, 63, 133]);
        assert_eq!(q.next(&en), ActorId(14));
        q.delay_first_enabled(&en);
        assert_eq!(q.next(&en), ActorId(63));
        q.delay_first_enabled(&en);
        assert_eq!(q.next(&en), ActorId(133));
        q.delay_first_enabled(&en);
        assert_eq!(q.as_slice()[17..], ids(&[14, 63, 133])[..]);
        let mut r = ActorQueue::new();
        for a in q.as_slice() {
            r.push_back(*a);
        }
        assert_eq!(q, r);
        q.remove(ActorId(0));
        assert_eq!(q.len(), 19);
        assert_ne!(q, r);
    }
}
