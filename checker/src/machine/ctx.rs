//! What a handler can do: the effects it buffers until it completes.

use super::MachineModel;
use super::world::MachineId;
use smallvec::SmallVec;

/// The messages a handler sends and the announcements it makes, kept
/// inline up to these counts (no allocation per step); a handler that
/// makes more spills to the heap.
const SENT_INLINE: usize = 4;
const ANNOUNCED_INLINE: usize = 2;

/// The handler's view of the runtime. Effects are buffered and applied when
/// the handler returns (and only if it did not stop at a new choice), in
/// this order: the machine's new value, creations, sends, announcements,
/// halt.
pub struct Ctx<'a, M: MachineModel + ?Sized> {
    pub(crate) me: MachineId,
    pub(crate) next_id: u32,
    pub(crate) created: Vec<M::Machine>,
    pub(crate) sent: SmallVec<[(MachineId, M::Msg); SENT_INLINE]>,
    pub(crate) announced: SmallVec<[M::Announce; ANNOUNCED_INLINE]>,
    pub(crate) signals: Vec<(&'static str, u64)>,
    pub(crate) halt: bool,
    pub(crate) failure: Option<String>,
    pub(crate) prefix: &'a [u32],
    pub(crate) cursor: usize,
    /// `Some(n)`: the handler asked for a choice beyond the prefix.
    pub(crate) suspended: Option<u32>,
    pub(crate) labels: Vec<String>,
    pub(crate) traced: bool,
}

impl<'a, M: MachineModel + ?Sized> Ctx<'a, M> {
    pub(crate) fn new(me: MachineId, next_id: u32, prefix: &'a [u32], traced: bool) -> Self {
        Ctx {
            me,
            next_id,
            created: Vec::new(),
            sent: SmallVec::new(),
            announced: SmallVec::new(),
            signals: Vec::new(),
            halt: false,
            failure: None,
            prefix,
            cursor: 0,
            suspended: None,
            labels: Vec::new(),
            traced,
        }
    }

    /// The running machine's id.
    pub fn me(&self) -> MachineId {
        self.me
    }

    /// Send `msg` to `to` (appended to its FIFO queue, or put in flight
    /// unordered as [`MachineModel::delivery`] says; dropped if `to` has
    /// halted by then).
    pub fn send(&mut self, to: MachineId, msg: M::Msg) {
        self.sent.push((to, msg));
    }

    /// Create a machine; it gets the returned id and an empty queue (send it
    /// a first message to start it).
    pub fn create(&mut self, machine: M::Machine) -> MachineId {
        let id = MachineId(self.next_id);
        self.next_id += 1;
        self.created.push(machine);
        id
    }

    /// Halt the running machine when the handler returns: its queue is
    /// dropped and later sends to it too.
    pub fn halt(&mut self) {
        self.halt = true;
    }

    /// Announce an event to the monitors (observed when the handler
    /// returns, in order).
    pub fn announce(&mut self, event: M::Announce) {
        self.announced.push(event);
    }

    /// Tell the explorer something (a [`crate::Event::Custom`]), e.g. that
    /// the system is stable. Not part of the state.
    pub fn signal(&mut self, tag: &'static str, value: u64) {
        self.signals.push((tag, value));
    }

    /// Assert `cond`; on failure the step is an `assertion` violation with
    /// `message()`. The handler keeps running, but its effects are dropped.
    pub fn assert(&mut self, cond: bool, message: impl FnOnce() -> String) {
        if !cond && self.failure.is_none() {
            self.failure = Some(message());
        }
    }

    /// A nondeterministic choice among `0..n` (n >= 1), named `label` in
    /// traces. The machine suspends here and becomes the only enabled actor
    /// with `n` alternatives; the handler then runs again from its start and
    /// this call returns the value chosen. `n == 1` returns 0 without a
    /// step; `n == 0` is an assertion violation.
    pub fn choose(&mut self, n: u32, label: &str) -> u32 {
        if n == 0 {
            self.assert(false, || format!("choose({label:?}) among 0 values"));
            return 0;
        }
        if n == 1 {
            return 0;
        }
        if self.suspended.is_some() {
            return 0;
        }
        match self.prefix.get(self.cursor) {
            Some(&v) => {
                self.cursor += 1;
                if self.traced {
                    self.labels.push(format!("{label} = {v} of {n}"));
                }
                v.min(n - 1)
            }
            None => {
                self.suspended = Some(n);
                0
            }
        }
    }

    /// A nondeterministic boolean (a choice among 2; `true` is value 1).
    pub fn choose_bool(&mut self, label: &str) -> bool {
        self.choose(2, label) == 1
    }
}

/// Builds the initial state: creates machines and queues first messages.
pub struct Setup<M: MachineModel + ?Sized> {
    pub(crate) machines: Vec<M::Machine>,
    pub(crate) sent: Vec<(MachineId, M::Msg)>,
    pub(crate) monitor: M::Monitor,
}

impl<M: MachineModel + ?Sized> Setup<M> {
    /// Create a machine; ids are given in creation order from 0.
    pub fn create(&mut self, machine: M::Machine) -> MachineId {
        self.machines.push(machine);
        MachineId(self.machines.len() as u32 - 1)
    }

    /// Queue `msg` for `to` in the initial state.
    pub fn send(&mut self, to: MachineId, msg: M::Msg) {
        self.sent.push((to, msg));
    }

    /// Set the monitors' initial state (default: `Default::default()`).
    pub fn monitor(&mut self, monitor: M::Monitor) {
        self.monitor = monitor;
    }
}

impl<M: MachineModel + ?Sized> std::fmt::Debug for Ctx<'_, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx")
            .field("me", &self.me)
            .field("created", &self.created.len())
            .field("sent", &self.sent.len())
            .field("halt", &self.halt)
            .field("suspended", &self.suspended)
            .finish_non_exhaustive()
    }
}

impl<M: MachineModel + ?Sized> std::fmt::Debug for Setup<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Setup")
            .field("machines", &self.machines.len())
            .field("sent", &self.sent.len())
            .finish_non_exhaustive()
    }
}
