//! The state of a machine program: machines, one flat FIFO message buffer,
//! the multiset of unordered messages in flight, monitors and the pending
//! choice.

use super::MachineModel;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::fmt;
use std::hash::{Hash, Hasher};

/// A machine's id: its index in creation order (the actor id).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
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
#[derive(Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Slot<M> {
    /// The machine.
    pub machine: M,
    /// Halted machines take no steps and drop what is sent to them.
    pub halted: bool,
}

/// Not derived: `clone_from` is the machine's, which keeps its memory
/// where the machine's type says how ([`World`]'s `clone_from`).
impl<M: Clone> Clone for Slot<M> {
    fn clone(&self) -> Self {
        Slot {
            machine: self.machine.clone(),
            halted: self.halted,
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.machine.clone_from(&source.machine);
        self.halted = source.halted;
    }
}

/// A machine suspended in the middle of a handler at a choice.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
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

/// Identical copies of an unordered message in flight to one receiver
/// (ARCHITECTURE.md, "The network"): the network may deliver any of them next.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct InFlight<Msg> {
    pub(crate) to: MachineId,
    /// A fixed fingerprint of `msg` (the canonical order's key).
    pub(crate) fp: u64,
    pub(crate) msg: Msg,
    pub(crate) duplicated: u8,
    pub(crate) count: u32,
}

impl<Msg> InFlight<Msg> {
    /// The receiver.
    pub fn to(&self) -> MachineId {
        self.to
    }

    /// The message.
    pub fn msg(&self) -> &Msg {
        &self.msg
    }

    /// How many identical copies are in flight (at least 1).
    pub fn count(&self) -> u32 {
        self.count
    }

    /// How many duplicates the network already made of each of these
    /// copies (it keeps a message pending at most
    /// [`super::Delivery::duplicates`] times).
    pub fn duplicated(&self) -> u8 {
        self.duplicated
    }

    fn key(&self) -> (MachineId, u64, u8) {
        (self.to, self.fp, self.duplicated)
    }
}

/// A fixed fingerprint of a message: the same in every run of one build
/// (SipHash with zero keys), unlike the search's seeded hashers.
pub(crate) fn fingerprint<T: Hash + ?Sized>(t: &T) -> u64 {
    let mut h = DefaultHasher::new();
    t.hash(&mut h);
    h.finish()
}

/// What the network holds besides the FIFO buffer: the unordered messages
/// as a canonical multiset, and the duplicates already made of FIFO
/// messages. A [`World`] holds none (`None`, one word) while both are
/// empty, as always in FIFO models.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct Net<Msg> {
    /// Sorted by receiver, fingerprint, duplicates made (ties between
    /// distinct messages of equal fingerprint by their `Debug` text); one
    /// entry per distinct (receiver, message, duplicates made).
    pub(crate) flights: Vec<InFlight<Msg>>,
    /// (receiver, position in its FIFO inbox, duplicates made), sorted;
    /// only for messages duplicated at least once.
    pub(crate) fifo_dups: Vec<(MachineId, u32, u8)>,
    /// Duplicates made so far in the execution, counted only when the
    /// model bounds them ([`super::MachineModel::duplicate_budget`]).
    pub(crate) duplicates_made: u32,
}

impl<Msg> Default for Net<Msg> {
    fn default() -> Self {
        Net {
            flights: Vec::new(),
            fifo_dups: Vec::new(),
            duplicates_made: 0,
        }
    }
}

impl<Msg: Eq + Hash + fmt::Debug> Net<Msg> {
    pub(crate) fn is_empty(&self) -> bool {
        self.flights.is_empty() && self.fifo_dups.is_empty() && self.duplicates_made == 0
    }

    /// Index range of `id`'s unordered messages in `flights`.
    pub(crate) fn range(&self, id: MachineId) -> (usize, usize) {
        let lo = self.flights.partition_point(|f| f.to < id);
        let hi = lo + self.flights[lo..].partition_point(|f| f.to == id);
        (lo, hi)
    }

    /// Add one copy of `msg` to `to`, already duplicated `duplicated` times.
    pub(crate) fn insert(&mut self, to: MachineId, msg: Msg, duplicated: u8) {
        let key = (to, fingerprint(&msg), duplicated);
        let mut at = self.flights.partition_point(|f| f.key() < key);
        let mut text: Option<String> = None;
        while at < self.flights.len() && self.flights[at].key() == key {
            let f = &mut self.flights[at];
            if f.msg == msg {
                f.count += 1;
                return;
            }
            // A fingerprint collision between distinct messages: order them
            // by their text so that the order stays canonical.
            let mine = text.get_or_insert_with(|| format!("{msg:?}"));
            if format!("{:?}", f.msg).as_str().cmp(mine.as_str()) == Ordering::Greater {
                break;
            }
            at += 1;
        }
        self.flights.insert(
            at,
            InFlight {
                to,
                fp: key.1,
                msg,
                duplicated,
                count: 1,
            },
        );
    }

    /// Take one copy out of entry `j`: its message and duplicates made.
    pub(crate) fn take(&mut self, j: usize) -> (Msg, u8)
    where
        Msg: Clone,
    {
        let f = &mut self.flights[j];
        if f.count > 1 {
            f.count -= 1;
            (f.msg.clone(), f.duplicated)
        } else {
            let f = self.flights.remove(j);
            (f.msg, f.duplicated)
        }
    }

    fn fifo_dup_index(&self, id: MachineId, pos: u32) -> Result<usize, usize> {
        self.fifo_dups.binary_search_by(|&(to, p, _)| (to, p).cmp(&(id, pos)))
    }

    /// Duplicates made of the FIFO message at `pos` in `id`'s inbox.
    #[inline]
    pub(crate) fn fifo_duplicated(&self, id: MachineId, pos: u32) -> u8 {
        if self.fifo_dups.is_empty() {
            return 0;
        }
        self.fifo_dup_index(id, pos).map_or(0, |k| self.fifo_dups[k].2)
    }

    /// One more duplicate made of the FIFO message at `pos` in `id`'s inbox.
    pub(crate) fn fifo_duplicate(&mut self, id: MachineId, pos: u32) {
        match self.fifo_dup_index(id, pos) {
            Ok(k) => self.fifo_dups[k].2 += 1,
            Err(k) => self.fifo_dups.insert(k, (id, pos, 1)),
        }
    }

    /// The FIFO message at `pos` in `id`'s inbox left it: forget its
    /// duplicates and shift the later positions of `id`.
    #[inline]
    pub(crate) fn fifo_removed(&mut self, id: MachineId, pos: u32) {
        if self.fifo_dups.is_empty() {
            return;
        }
        self.fifo_dups.retain(|&(to, p, _)| !(to == id && p == pos));
        for (to, p, _) in &mut self.fifo_dups {
            if *to == id && *p > pos {
                *p -= 1;
            }
        }
    }

    /// Forget everything in flight to `id` (it halted).
    pub(crate) fn clear(&mut self, id: MachineId) {
        let (lo, hi) = self.range(id);
        self.flights.drain(lo..hi);
        self.fifo_dups.retain(|(to, _, _)| *to != id);
    }
}

/// The whole state of a [`super::Machines`] program.
///
/// FIFO messages live in one flat buffer sorted by receiver, each
/// receiver's in arrival order (its FIFO queue): one allocation for all
/// queues, and a derived hash that is one pass. Unordered messages live in
/// a second buffer, usually empty, kept as a canonical multiset (sorted,
/// with a count per distinct message) so that the order in which they were
/// sent is not part of the state.
///
/// It crosses a process boundary (the distributed SES) with serde when
/// the model's machines, messages and monitors do: derive `Serialize` and
/// `Deserialize` on them.
#[derive(Serialize, Deserialize)]
#[serde(bound(
    serialize = "M::Machine: Serialize, M::Msg: Serialize, M::Monitor: Serialize",
    deserialize = "M::Machine: Deserialize<'de>, M::Msg: Deserialize<'de>, M::Monitor: Deserialize<'de>"
))]
pub struct World<M: MachineModel + ?Sized> {
    pub(crate) slots: Vec<Slot<M::Machine>>,
    pub(crate) queue: Vec<(MachineId, M::Msg)>,
    pub(crate) monitor: M::Monitor,
    pub(crate) pending: Option<Pending<M::Msg>>,
    /// `None` when nothing is in flight unordered and no FIFO message was
    /// duplicated (kept so by [`World::tidy_net`]).
    pub(crate) net: Option<Box<Net<M::Msg>>>,
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

    /// Every unordered message in flight (sent with
    /// [`super::Delivery::unordered`]), in the canonical order: by receiver,
    /// then by a fixed fingerprint of the message. Not in [`World::inbox`]
    /// or [`World::messages`], which hold the FIFO messages.
    pub fn unordered(&self) -> &[InFlight<M::Msg>] {
        self.net.as_deref().map_or(&[], |n| &n.flights)
    }

    /// The unordered messages in flight to `id`.
    pub fn unordered_to(&self, id: MachineId) -> &[InFlight<M::Msg>] {
        match self.net.as_deref() {
            Some(n) => {
                let (lo, hi) = n.range(id);
                &n.flights[lo..hi]
            }
            None => &[],
        }
    }

    /// Every message in flight, FIFO and unordered, once per copy: receiver
    /// and message (for invariants over everything the network holds).
    pub fn in_flight(&self) -> impl Iterator<Item = (MachineId, &M::Msg)> {
        let fifo = self.queue.iter().map(|(to, m)| (*to, m));
        let unordered = self
            .unordered()
            .iter()
            .flat_map(|f| std::iter::repeat_n((f.to, &f.msg), f.count as usize));
        fifo.chain(unordered)
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

    /// Drop every message queued or in flight for `id`.
    pub(crate) fn clear_inbox(&mut self, id: MachineId) {
        let (lo, hi) = self.range(id);
        self.queue.drain(lo..hi);
        if let Some(n) = self.net.as_deref_mut() {
            n.clear(id);
            self.tidy_net();
        }
    }

    /// The network's unordered messages and FIFO duplicates, if any.
    pub(crate) fn live_net(&self) -> Option<&Net<M::Msg>> {
        self.net.as_deref().filter(|n| !n.is_empty())
    }

    /// The network, created when first needed.
    pub(crate) fn net_mut(&mut self) -> &mut Net<M::Msg> {
        self.net.get_or_insert_with(Default::default)
    }

    /// Free the network when it became empty (so that states without one
    /// stay one word smaller and cheap to clone).
    pub(crate) fn tidy_net(&mut self) {
        if self.net.as_deref().is_some_and(Net::is_empty) {
            self.net = None;
        }
    }
}

impl<M: MachineModel + ?Sized> Clone for World<M> {
    fn clone(&self) -> Self {
        World {
            slots: self.slots.clone(),
            queue: self.queue.clone(),
            monitor: self.monitor.clone(),
            pending: self.pending.clone(),
            net: self.net.clone(),
        }
    }

    /// Reuses `self`'s buffers (the slots, the queue, the monitor's),
    /// so that a search that makes successors in one scratch state does
    /// not allocate for each.
    fn clone_from(&mut self, source: &Self) {
        self.slots.clone_from(&source.slots);
        self.queue.clone_from(&source.queue);
        self.monitor.clone_from(&source.monitor);
        self.pending.clone_from(&source.pending);
        self.net.clone_from(&source.net);
    }
}

impl<M: MachineModel + ?Sized> PartialEq for World<M> {
    fn eq(&self, other: &Self) -> bool {
        self.slots == other.slots
            && self.queue == other.queue
            && self.monitor == other.monitor
            && self.pending == other.pending
            && self.live_net() == other.live_net()
    }
}

impl<M: MachineModel + ?Sized> Eq for World<M> {}

impl<M: MachineModel + ?Sized> Hash for World<M> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.slots.hash(state);
        self.queue.hash(state);
        self.monitor.hash(state);
        self.pending.hash(state);
        // Not hashed when empty: FIFO models keep their fingerprints.
        if let Some(n) = self.live_net() {
            n.hash(state);
        }
    }
}

impl<M: MachineModel + ?Sized> fmt::Debug for World<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("World")
            .field("machines", &self.slots)
            .field("queue", &self.queue)
            .field("monitor", &self.monitor)
            .field("pending", &self.pending)
            .field("net", &self.net)
            .finish()
    }
}
