//! The ordered list of actor ids that every built-in explorer keeps.

use crate::explorer::enabled_mask;
use crate::program::ActorId;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::hash::{Hash, Hasher};

/// Actors held inline (every shipped model's, at any parameters).
const INLINE: usize = 15;

/// Ids below this fit the inline form (one byte each).
const INLINE_IDS: u32 = 256;

/// The length of an inline queue, 0 to [`INLINE`]: an enum, so that the
/// values above are free for the compiler to tell the heap form by, and
/// the queue stays 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Len {
    L0,
    L1,
    L2,
    L3,
    L4,
    L5,
    L6,
    L7,
    L8,
    L9,
    L10,
    L11,
    L12,
    L13,
    L14,
    L15,
}

/// [`Len`] by value.
const LENS: [Len; INLINE + 1] = [
    Len::L0,
    Len::L1,
    Len::L2,
    Len::L3,
    Len::L4,
    Len::L5,
    Len::L6,
    Len::L7,
    Len::L8,
    Len::L9,
    Len::L10,
    Len::L11,
    Len::L12,
    Len::L13,
    Len::L14,
    Len::L15,
];

/// The storage of an [`ActorQueue`]: a plain byte array while the ids are
/// small and few, so that the queue is 16 bytes and a clone is a copy of
/// two words (the stratified search keeps one per frontier entry).
#[derive(Clone, Debug)]
enum Repr {
    Inline {
        len: Len,
        ids: [u8; INLINE],
    },
    // Boxed: a thin pointer, so that the inline form fits beside it.
    #[allow(clippy::box_collection)]
    Heap(Box<Vec<ActorId>>),
}

/// Actor ids in the explorer's order of preference, inline for up to 15
/// actors with ids below 256 (every shipped model at any parameters), so
/// that cloning an explorer per explored state does not allocate and is a
/// plain copy of 16 bytes; longer queues or larger ids move to the heap.
#[derive(Clone, Debug)]
pub struct ActorQueue(Repr);

impl Default for ActorQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialEq for ActorQueue {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for ActorQueue {}

/// A queue crosses a process boundary as its ids, first preferred first.
impl Serialize for ActorQueue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for ActorQueue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut queue = ActorQueue::new();
        Vec::<ActorId>::deserialize(deserializer)?
            .into_iter()
            .for_each(|id| queue.push_back(id));
        Ok(queue)
    }
}

impl Hash for ActorQueue {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.len());
        for a in self.iter() {
            a.hash(state);
        }
    }
}

/// Ids below this are looked up in a bitmask of the enabled set
/// ([`enabled_mask`]).
const MASK_IDS: u32 = 64;

/// Whether the id `b` of an inline queue is in `mask` (bit `i` for id
/// `i`, ids below [`MASK_IDS`]).
#[inline(always)]
fn in_mask(b: u8, mask: u64) -> bool {
    u32::from(b) < MASK_IDS && mask >> b & 1 == 1
}

/// `ids.rotate_left(1)` for the few bytes of an inline queue: a plain
/// loop, where the general rotation's call cost more than the rest of a
/// delay.
#[inline]
fn rotate_one(ids: &mut [u8]) {
    if let Some((&first, rest)) = ids.split_first() {
        let n = rest.len();
        for j in 0..n {
            ids[j] = ids[j + 1];
        }
        ids[n] = first;
    }
}

/// `ids.rotate_right(1)` for the few bytes of an inline queue, as
/// [`rotate_one`] (RTC moves the actor it ran to the front at each step).
#[inline]
fn rotate_one_right(ids: &mut [u8]) {
    if let Some((&last, rest)) = ids.split_last() {
        for j in (0..rest.len()).rev() {
            ids[j + 1] = ids[j];
        }
        ids[0] = last;
    }
}

impl ActorQueue {
    /// An empty queue.
    pub fn new() -> Self {
        ActorQueue(Repr::Inline {
            len: Len::L0,
            ids: [0; INLINE],
        })
    }

    /// The actors, first preferred first.
    #[inline]
    pub fn iter(&self) -> impl ExactSizeIterator<Item = ActorId> + '_ {
        let (bytes, heap): (&[u8], &[ActorId]) = match &self.0 {
            Repr::Inline { len, ids } => (&ids[..*len as usize], &[]),
            Repr::Heap(v) => (&[], v),
        };
        // One of the two is empty.
        let n = bytes.len() + heap.len();
        (0..n).map(move |i| match bytes.get(i) {
            Some(&b) => ActorId(b as u32),
            None => heap[i],
        })
    }

    /// The actors, first preferred first, as a vector.
    pub fn to_vec(&self) -> Vec<ActorId> {
        self.iter().collect()
    }

    /// The actor at position `i`, if any.
    #[inline]
    pub fn get(&self, i: usize) -> Option<ActorId> {
        match &self.0 {
            Repr::Inline { len, ids } => ids[..*len as usize].get(i).map(|&b| ActorId(b as u32)),
            Repr::Heap(v) => v.get(i).copied(),
        }
    }

    /// Number of actors.
    #[inline]
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Inline { len, .. } => *len as usize,
            Repr::Heap(v) => v.len(),
        }
    }

    /// Whether the queue is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The position of `id`, if present.
    fn position(&self, id: ActorId) -> Option<usize> {
        match &self.0 {
            Repr::Inline { len, ids } => {
                if id.0 >= INLINE_IDS {
                    return None;
                }
                ids[..*len as usize].iter().position(|&b| b as u32 == id.0)
            }
            Repr::Heap(v) => v.iter().position(|&a| a == id),
        }
    }

    /// Position of the first actor of the queue that is in `enabled`
    /// (sorted by id), if any.
    #[inline]
    pub fn first_enabled(&self, enabled: &[ActorId]) -> Option<usize> {
        self.first_enabled_masked(enabled, enabled_mask(enabled))
    }

    /// [`first_enabled`](Self::first_enabled), given `mask`, which must be
    /// `enabled_mask(enabled)`.
    #[inline]
    pub fn first_enabled_masked(&self, enabled: &[ActorId], mask: Option<u64>) -> Option<usize> {
        // Small ids (every shipped model's): one bitmask of the enabled set.
        match (&self.0, mask) {
            (Repr::Inline { len, ids }, Some(mask)) => ids[..*len as usize].iter().position(|&b| in_mask(b, mask)),
            _ => self.iter().position(|a| enabled.binary_search(&a).is_ok()),
        }
    }

    /// The first actor of the queue that is enabled. An enabled actor the
    /// explorer never heard of (which a program that reports every creation
    /// never shows) falls back to the lowest enabled id, so `next` stays
    /// total; the search's run-time check reports such an explorer.
    #[inline]
    pub fn next(&self, enabled: &[ActorId]) -> ActorId {
        self.next_masked(enabled, enabled_mask(enabled))
    }

    /// [`next`](Self::next), given `mask`, which must be
    /// `enabled_mask(enabled)`.
    ///
    /// The common case (an inline queue and a mask) is inlined into the
    /// caller, the rest is a call: inlined whole, the function's
    /// registers for the rest cost more than the common case's scan.
    #[inline(always)]
    pub fn next_masked(&self, enabled: &[ActorId], mask: Option<u64>) -> ActorId {
        if let (Repr::Inline { len, ids }, Some(mask)) = (&self.0, mask) {
            for &b in &ids[..*len as usize] {
                if in_mask(b, mask) {
                    return ActorId(u32::from(b));
                }
            }
            return enabled[0];
        }
        self.next_searched(enabled, mask)
    }

    /// [`next_masked`](Self::next_masked) of a queue on the heap or
    /// without a mask.
    #[inline(never)]
    fn next_searched(&self, enabled: &[ActorId], mask: Option<u64>) -> ActorId {
        match self.first_enabled_masked(enabled, mask).and_then(|i| self.get(i)) {
            Some(a) => a,
            None => enabled[0],
        }
    }

    /// Inserts `id` at `at` (at most the length), known to be absent.
    fn insert_at(&mut self, at: usize, id: ActorId) {
        match &mut self.0 {
            Repr::Inline { len, ids } if (*len as usize) < INLINE && id.0 < INLINE_IDS => {
                let n = *len as usize;
                ids.copy_within(at..n, at + 1);
                ids[at] = id.0 as u8;
                *len = LENS[n + 1];
            }
            Repr::Inline { .. } => {
                let mut v = self.to_vec();
                v.insert(at, id);
                self.0 = Repr::Heap(Box::new(v));
            }
            Repr::Heap(v) => v.insert(at, id),
        }
    }

    /// Removes and returns the actor at `at` (less than the length).
    fn remove_at(&mut self, at: usize) -> ActorId {
        match &mut self.0 {
            Repr::Inline { len, ids } => {
                let id = ids[at];
                let n = *len as usize;
                ids.copy_within(at + 1..n, at);
                *len = LENS[n - 1];
                ActorId(id as u32)
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
        match (self.position(id), &mut self.0) {
            // Present: one rotation of the prefix up to it.
            (Some(p), Repr::Inline { ids, .. }) => rotate_one_right(&mut ids[..=p]),
            (Some(p), Repr::Heap(v)) => v[..=p].rotate_right(1),
            (None, _) => self.insert_at(0, id),
        }
    }

    /// Insert `id` at position `at` (clamped), moving it if present.
    pub fn insert(&mut self, at: usize, id: ActorId) {
        self.remove(id);
        let at = at.min(self.len());
        self.insert_at(at, id);
    }

    /// Remove `id` if present.
    pub fn remove(&mut self, id: ActorId) {
        if let Some(i) = self.position(id) {
            self.remove_at(i);
        }
    }

    /// Move the first enabled actor to the end: the delay of RR, RTC and
    /// PRR. Sound: the enabled actors keep their relative order, so k
    /// delays offer each of k enabled actors once and then repeat.
    #[inline]
    pub fn delay_first_enabled(&mut self, enabled: &[ActorId]) {
        self.delay_first_enabled_masked(enabled, enabled_mask(enabled))
    }

    /// [`delay_first_enabled`](Self::delay_first_enabled), given `mask`,
    /// which must be `enabled_mask(enabled)`.
    #[inline(always)]
    pub fn delay_first_enabled_masked(&mut self, enabled: &[ActorId], mask: Option<u64>) {
        // The common case inlined, as in `next_masked`.
        if let (Repr::Inline { len, ids }, Some(mask)) = (&mut self.0, mask) {
            let ids = &mut ids[..*len as usize];
            if let Some(i) = ids.iter().position(|&b| in_mask(b, mask)) {
                rotate_one(&mut ids[i..]);
            }
            return;
        }
        self.delay_searched(enabled, mask);
    }

    /// [`delay_first_enabled_masked`](Self::delay_first_enabled_masked) of
    /// a queue on the heap or without a mask.
    #[inline(never)]
    fn delay_searched(&mut self, enabled: &[ActorId], mask: Option<u64>) {
        if let Some(i) = self.first_enabled_masked(enabled, mask) {
            // One rotation of the suffix from it.
            match &mut self.0 {
                Repr::Inline { len, ids } => rotate_one(&mut ids[i..*len as usize]),
                Repr::Heap(v) => v[i..].rotate_left(1),
            }
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
        assert_eq!(q.to_vec(), ids(&[1, 4, 0, 2, 3]));
        assert_eq!(q.next(&en), ActorId(4));
        q.push_front(ActorId(2));
        assert_eq!(q.to_vec(), ids(&[2, 1, 4, 0, 3]));
        q.insert(9, ActorId(1));
        assert_eq!(q.to_vec(), ids(&[2, 4, 0, 3, 1]));
        q.remove(ActorId(4));
        assert_eq!(q.to_vec(), ids(&[2, 0, 3, 1]));
        assert_eq!(q.next(&ids(&[7])), ActorId(7));
    }

    #[test]
    fn rotating_one_is_the_slice_rotation() {
        for n in 0..=INLINE {
            let mut got: Vec<u8> = (0..n as u8).map(|k| 200 - 13 * k).collect();
            let mut want = got.clone();
            if n > 0 {
                want.rotate_left(1);
            }
            rotate_one(&mut got);
            assert_eq!(got, want, "{n} bytes");
            let mut back = got.clone();
            if n > 0 {
                want.rotate_right(1);
            }
            rotate_one_right(&mut back);
            assert_eq!(back, want, "{n} bytes, to the right");
        }
    }

    /// The same operations on a queue of the actors `ids` (at least 4,
    /// distinct), against the order they must give; returns the queue.
    fn exercise(ids: &[u32]) -> ActorQueue {
        let n = ids.len();
        let all: Vec<ActorId> = ids.iter().map(|&i| ActorId(i)).collect();
        let mut q = ActorQueue::new();
        for &a in all.iter().rev() {
            q.push_front(a);
        }
        assert_eq!(q.to_vec(), all);
        // Enabled: the second, the middle and the last actor, sorted by id.
        let picks = [all[1], all[n / 2], all[n - 1]];
        let mut en = picks.to_vec();
        en.sort();
        for &p in &picks {
            assert_eq!(q.next(&en), p);
            assert_eq!(q.first_enabled(&en).and_then(|i| q.get(i)), Some(p));
            q.delay_first_enabled(&en);
        }
        // Three delays moved the three to the end, the rest kept its order.
        let mut want: Vec<ActorId> = all.iter().copied().filter(|a| !picks.contains(a)).collect();
        want.extend(picks);
        assert_eq!(q.to_vec(), want);
        assert_eq!(q.get(n - 1), Some(all[n - 1]));
        assert_eq!(q.get(n), None);
        // An enabled actor the queue never heard of: the lowest enabled id.
        let stranger = ActorId(ids.iter().max().unwrap() + 1);
        assert_eq!(q.next(&[stranger]), stranger);
        q
    }

    #[test]
    fn every_form_behaves_the_same_at_its_boundaries() {
        let step = |n: u32, step: u32, from: u32| (0..n).map(|i| from + i * step).collect::<Vec<u32>>();
        // (ids, inline?): inline with ids above the bitmask's 64, up to the
        // largest inline id 255 and the largest inline length 15; on the
        // heap by id (256) and by length (16).
        let cases = [
            (step(15, 17, 0), true),
            (step(15, 1, 241), true),
            (step(4, 1, 252), true),
            (step(4, 1, 253), false),
            (step(15, 1, 242), false),
            (step(16, 1, 0), false),
            (step(30, 7, 0), false),
            (step(20, 30, 0), false),
        ];
        for (ids, inline) in cases {
            let mut q = exercise(&ids);
            assert_eq!(matches!(q.0, Repr::Inline { .. }), inline, "{ids:?}");
            let mut r = ActorQueue::new();
            for a in q.iter() {
                r.push_back(a);
            }
            assert_eq!(q, r);
            q.remove(ActorId(ids[0]));
            assert_eq!(q.len(), ids.len() - 1);
            assert_ne!(q, r);
            assert_eq!(q.position(ActorId(ids[0])), None);
        }
        // Crossing the boundary: id 256 moves an inline queue to the heap,
        // in place, and the order is kept.
        let mut q = ActorQueue::new();
        for i in [255, 64, 0] {
            q.push_back(ActorId(i));
        }
        assert!(matches!(q.0, Repr::Inline { .. }));
        q.insert(1, ActorId(256));
        assert!(matches!(q.0, Repr::Heap(_)));
        assert_eq!(q.to_vec(), ids(&[255, 256, 64, 0]));
        assert_eq!(q.next(&ids(&[0, 64, 256])), ActorId(256));
        assert_eq!(q.position(ActorId(256)), Some(1));
        // An inline queue and a heap one with the same actors are equal.
        let mut heap = ActorQueue(Repr::Heap(Box::default()));
        let mut inline = ActorQueue::new();
        for i in [4, 1, 3] {
            heap.push_back(ActorId(i));
            inline.push_back(ActorId(i));
        }
        assert_eq!(heap, inline);
        assert_eq!(std::mem::size_of::<ActorQueue>(), 16);
    }
}
