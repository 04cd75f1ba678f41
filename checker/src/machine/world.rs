//! The state of a machine program: machines, one flat message buffer,
//! monitors and the pending choice.

use super::MachineModel;
use smallvec::SmallVec;
use std::fmt;
use std::hash::{Hash, Hasher};

/// A machine's id: its index in creation order (the actor id).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct MachineId(pub u32);

impl fmt::Debug for MachineId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

impl fmt::Display for MachineId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// A machine and whether it has halted.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Slot<M> {
    /// The machine.
    pub machine: M,
    /// Halted machines take no steps and drop what is sent to them.
    pub halted: bool,
}

/// A machine suspended in the middle of a handler at a choice.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pending<Msg> {
    /// The machine.
    pub machine: MachineId,
    /// The message it is handling (already dequeued).
    pub msg: Msg,
    /// The values chosen so far in this handler.
    pub choices: SmallVec<[u32; 4]>,
    /// How many values the choice it waits on has.
    pub n: u32,
}

/// The whole state of a [`super::Machines`] program.
///
/// Messages live in one flat buffer sorted by receiver, each receiver's in
/// arrival order (its FIFO queue): one allocation for all queues, and a
/// derived hash that is one pass.
pub struct World<M: MachineModel + ?Sized> {
    pub(crate) slots: Vec<Slot<M::Machine>>,
    pub(crate) queue: Vec<(MachineId, M::Msg)>,
    pub(crate) monitor: M::Monitor,
    pub(crate) pending: Option<Pending<M::Msg>>,
}

impl<M: MachineModel + ?Sized> World<M> {
    /// The machines, by id.
    pub fn slots(&self) -> &[Slot<M::Machine>] {
        &self.slots
    }

    /// Machine `id`.
    pub fn machine(&self, id: MachineId) -> &M::Machine {
        &self.slots[id.0 as usize].machine
    }

    /// The live (not halted) machines with their ids.
    pub fn live(&self) -> impl Iterator<Item = (MachineId, &M::Machine)> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.halted)
            .map(|(i, s)| (MachineId(i as u32), &s.machine))
    }

    /// The monitors' state.
    pub fn monitor(&self) -> &M::Monitor {
        &self.monitor
    }

    /// The messages queued for `id`, oldest first.
    pub fn inbox(&self, id: MachineId) -> &[(MachineId, M::Msg)] {
        let (lo, hi) = self.range(id);
        &self.queue[lo..hi]
    }

    /// Every queued message, by receiver then arrival.
    pub fn messages(&self) -> &[(MachineId, M::Msg)] {
        &self.queue
    }

    /// The pending choice, if a machine is suspended at one.
    pub fn pending(&self) -> Option<&Pending<M::Msg>> {
        self.pending.as_ref()
    }

    /// Index range of `id`'s messages in the buffer.
    pub(crate) fn range(&self, id: MachineId) -> (usize, usize) {
        let lo = self.queue.partition_point(|(to, _)| *to < id);
        let hi = lo + self.queue[lo..].partition_point(|(to, _)| *to == id);
        (lo, hi)
    }

    /// Queue `msg` at the end of `to`'s queue.
    pub(crate) fn enqueue(&mut self, to: MachineId, msg: M::Msg) {
        let at = self.queue.partition_point(|(t, _)| *t <= to);
        self.queue.insert(at, (to, msg));
    }

    /// Drop every message queued for `id`.
    pub(crate) fn clear_inbox(&mut self, id: MachineId) {
        let (lo, hi) = self.range(id);
        self.queue.drain(lo..hi);
    }
}

impl<M: MachineModel + ?Sized> Clone for World<M> {
    fn clone(&self) -> Self {
        World {
            slots: self.slots.clone(),
            queue: self.queue.clone(),
            monitor: self.monitor.clone(),
            pending: self.pending.clone(),
        }
    }
}

impl<M: MachineModel + ?Sized> PartialEq for World<M> {
    fn eq(&self, other: &Self) -> bool {
        self.slots == other.slots
            && self.queue == other.queue
            && self.monitor == other.monitor
            && self.pending == other.pending
    }
}

impl<M: MachineModel + ?Sized> Eq for World<M> {}

impl<M: MachineModel + ?Sized> Hash for World<M> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.slots.hash(state);
        self.queue.hash(state);
        self.monitor.hash(state);
        self.pending.hash(state);
    }
}

impl<M: MachineModel + ?Sized> fmt::Debug for World<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("World")
            .field("machines", &self.slots)
            .field("queue", &self.queue)
            .field("monitor", &self.monitor)
            .field("pending", &self.pending)
            .finish()
    }
}
