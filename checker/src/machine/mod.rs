//! The machine runtime: P-style state machines with input queues and a
//! network model (ARCHITECTURE.md, "The machine runtime").
//!
//! A model implements [`MachineModel`]: its own machine type (usually an
//! enum with one variant per role), its message type, its monitors, and a
//! handler. [`Machines`] turns it into a [`Program`](crate::Program) that
//! every strategy can search:
//!
//! * one **step** = one machine dequeues its oldest message that it does not
//!   defer and runs its handler to completion, atomically: the handler
//!   sends, creates, halts, announces to monitors and asserts through its
//!   [`Ctx`];
//! * [`MachineModel::receive`] says, per machine state, whether a message is
//!   handled, **deferred** (it stays queued and later ones are looked at),
//!   **ignored** (dequeued and dropped) or **unhandled** (a violation of kind
//!   `unhandled_event` when it is the oldest non-deferred message: deferral
//!   never hides it);
//! * [`Ctx::choose`] is **explicit nondeterminism** mid-handler: the
//!   machine suspends, becomes the only enabled actor with n alternatives,
//!   and the handler continues with the value chosen. The runtime re-runs
//!   the handler from its start with the recorded prefix of choices and
//!   buffers its effects until it completes, so handlers must be
//!   deterministic functions of the machine, the message and the choices;
//!   the pending choice is part of the state;
//! * [`MachineModel::delivery`] says, per message, how the network
//!   delivers it (ARCHITECTURE.md, "The network"): FIFO per receiver (the default), or
//!   **unordered** (any pending one may come next), **lossy** (it may be
//!   dropped) and **duplicating** (delivered and kept pending, a bounded
//!   number of times). A machine's step then has alternatives, so every
//!   explorer and strategy explores the network's choices unchanged: its
//!   *candidates* are the oldest FIFO message it does not defer and every
//!   distinct unordered message in flight to it that it does not defer
//!   (identical copies are one candidate); for each candidate, in that
//!   order, the alternatives are deliver it, drop it (if lossy), deliver it
//!   and keep it pending (while its duplicate budget lasts). Alternative 0
//!   is "deliver the FIFO candidate" when there is one, else "deliver the
//!   first unordered message in the canonical order". A deferred message
//!   is never a candidate; an ignored one is dequeued when delivered; an
//!   unhandled one is a violation when delivered (not when dropped);
//! * unordered messages in flight are a multiset: kept in a canonical order
//!   (by receiver, then a fixed fingerprint of the message) with a count per
//!   distinct (receiver, message, duplicates made), so that two executions
//!   that leave the same messages in flight in a different send order
//!   reach the same state. [`World::unordered`] and [`World::in_flight`]
//!   show them to invariants;
//! * sends to a halted machine are dropped (as in P), and halting drops
//!   what was in flight to the machine;
//! * a machine blocked on deferred messages, FIFO or unordered, (or [`MachineModel::waiting`])
//!   when nothing is enabled is a **deadlock** (reported when deadlock
//!   detection is on);
//! * a panic inside a handler, a monitor or an invariant is caught and
//!   reported as a violation of kind `panic`.
//!
//! What is hashed: machines, queues, the unordered messages in flight (with
//! the duplicates made), monitor state and the pending choice.
//! Nothing else is kept in the state.

mod cover;
mod ctx;
mod delivery;
mod network;
mod program;
mod symmetry;
mod symmetry_check;
mod world;

pub use ctx::{Ctx, Setup};
pub use delivery::Delivery;
pub use program::{Machines, install_quiet_panic_hook};
pub use symmetry::MAX_CANDIDATES;
pub use world::{InFlight, MachineId, Pending, Slot, World};

use crate::program::ViolationKind;
use std::fmt::{self, Debug};
use std::hash::Hash;

/// A monitor violation: the monitor that saw it (reported as the
/// violation's machine) and what it saw, in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MonitorError {
    /// The monitor's name (`"agreement"`).
    pub monitor: &'static str,
    /// What went wrong, naming the machines and values involved.
    pub message: String,
    /// The violation's kind: [`ViolationKind::Monitor`], or
    /// [`ViolationKind::Linearizability`] for a client history checked
    /// against a sequential spec ([`crate::lin::Tracker`]).
    pub kind: ViolationKind,
}

impl MonitorError {
    /// Monitor `monitor` reports `message`.
    pub fn new(monitor: &'static str, message: impl Into<String>) -> Self {
        MonitorError {
            monitor,
            message: message.into(),
            kind: ViolationKind::Monitor,
        }
    }

    /// The history of client operations is not linearizable (reported by
    /// the monitor `linearizability`, of kind
    /// [`ViolationKind::Linearizability`]).
    pub fn linearizability(error: crate::lin::TrackError) -> Self {
        let kind = match error {
            crate::lin::TrackError::NotLinearizable(_) => ViolationKind::Linearizability,
            crate::lin::TrackError::Malformed(_) => ViolationKind::Monitor,
        };
        MonitorError {
            monitor: "linearizability",
            message: error.to_string(),
            kind,
        }
    }
}

impl fmt::Display for MonitorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "monitor {}: {}", self.monitor, self.message)
    }
}

impl std::error::Error for MonitorError {}

/// What a machine in its current state does with a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Receive {
    /// Dequeue it and run the handler.
    Handle,
    /// Leave it queued (P's `defer`); the machine looks at later messages.
    Defer,
    /// Dequeue it and drop it (P's `ignore`); counts as a step.
    Ignore,
    /// Not handled here: dequeuing it is an `unhandled_event` violation.
    Unhandled,
}

/// A model written as communicating state machines.
///
/// # Contract
///
/// * `handle`, `receive`, `observe` and `invariant` are deterministic: the
///   same inputs give the same effects (the runtime re-runs handlers to
///   implement [`Ctx::choose`], and replay depends on it).
/// * Machine, message and monitor values are the whole state: derive
///   `Hash`/`Eq` on them and keep counters or traces out.
/// * A machine or monitor that owns heap memory (a `Vec`) is copied into
///   a scratch state for every successor the search only fingerprints:
///   a `Clone` with `clone_from` written to reuse that memory (field by
///   field, as paxos's monitor does) spares an allocation per copy
///   (ARCHITECTURE.md, "Performance design").
///
/// # Example
///
/// Two clients race to take one lock that does not check whether it is
/// held; SES with run to completion finds the double grant with one delay.
///
/// ```
/// use mcheck_checker::explorers::RunToCompletion;
/// use mcheck_checker::machine::{Ctx, MachineId, MachineModel, Machines, Setup};
/// use mcheck_checker::{run, Config, Strategy};
///
/// #[derive(Clone, Debug, PartialEq, Eq, Hash)]
/// enum Machine { Lock { holder: Option<MachineId> }, Client }
/// #[derive(Clone, Debug, PartialEq, Eq, Hash)]
/// enum Msg { Go, Acquire(MachineId), Granted }
///
/// struct Race;
/// impl MachineModel for Race {
///     type Machine = Machine;
///     type Msg = Msg;
///     type Announce = ();
///     type Monitor = ();
///     fn setup(&self, s: &mut Setup<Self>) {
///         s.create(Machine::Lock { holder: None });
///         for _ in 0..2 {
///             let c = s.create(Machine::Client);
///             s.send(c, Msg::Go);
///         }
///     }
///     fn kind(&self, m: &Machine) -> &'static str {
///         if let Machine::Lock { .. } = m { "lock" } else { "client" }
///     }
///     fn handle(&self, m: &mut Machine, msg: &Msg, ctx: &mut Ctx<Self>) {
///         let me = ctx.me();
///         match (m, msg) {
///             (Machine::Client, Msg::Go) => ctx.send(MachineId(0), Msg::Acquire(me)),
///             (Machine::Client, Msg::Granted) => ctx.halt(),
///             (Machine::Lock { holder }, Msg::Acquire(c)) => {
///                 ctx.assert(holder.is_none(), || format!("{c:?} granted a held lock"));
///                 *holder = Some(*c);
///                 ctx.send(*c, Msg::Granted);
///             }
///             (_, msg) => ctx.assert(false, || format!("unexpected {msg:?}")),
///         }
///     }
/// }
///
/// let report = run(&Machines(Race), RunToCompletion::new(), &Strategy::Ses, &Config::default()).unwrap();
/// assert!(report.is_violation());
/// assert_eq!(report.violation.unwrap().violation.message, "#2 granted a held lock");
/// ```
pub trait MachineModel: Send + Sync {
    /// A machine: a value of the model's own type.
    type Machine: Clone + Eq + Hash + Debug + Send + Sync;
    /// A message.
    type Msg: Clone + Eq + Hash + Debug + Send + Sync;
    /// What machines announce to the monitors.
    type Announce: Debug;
    /// The monitors' state (`()` when there are none).
    type Monitor: Clone + Eq + Hash + Debug + Send + Sync + Default;

    /// Build the initial state: create the machines (ids in creation order,
    /// from 0) and queue their first messages.
    fn setup(&self, setup: &mut Setup<Self>);

    /// A short kind name for explorers and traces (`"coordinator"`).
    fn kind(&self, machine: &Self::Machine) -> &'static str;

    /// The machine's display name; by default its kind and id
    /// (`"participant2"`).
    fn name(&self, id: MachineId, machine: &Self::Machine) -> String {
        format!("{}{}", self.kind(machine), id.0)
    }

    /// The name of the machine's current state, for traces.
    fn state_name(&self, _machine: &Self::Machine) -> Option<String> {
        None
    }

    /// The machine as text for counterexample pages (`mcheck replay
    /// --format html`). Default: its `Debug`; a model whose machines have
    /// a `Display` may return that instead.
    fn show(&self, machine: &Self::Machine) -> String {
        format!("{machine:?}")
    }

    /// What `machine` does with `msg` now. Default: handle everything.
    fn receive(&self, _machine: &Self::Machine, _msg: &Self::Msg) -> Receive {
        Receive::Handle
    }

    /// How the network delivers `msg` (per message type, or the same for
    /// every message of the model). Default: [`Delivery::FIFO`]. Must be a
    /// pure function of the message: it is asked when the message is sent
    /// (FIFO queue or unordered multiset) and again at each step that may
    /// take it (how many alternatives it gives).
    fn delivery(&self, _msg: &Self::Msg) -> Delivery {
        Delivery::FIFO
    }

    /// At most this many duplicates in one execution, over all messages,
    /// on top of each message's own bound ([`Delivery::duplicates`]); the
    /// number made so far is then part of the state. Default: `None`, no
    /// bound but the per-message one.
    fn duplicate_budget(&self) -> Option<u32> {
        None
    }

    /// Whether `msg` is **stale** for `machine`: delivering it to the
    /// machine now, or in any state the machine can reach from this one,
    /// changes nothing (no state change, no send, no announcement, no
    /// choice). The runtime takes a stale unordered message out of the
    /// network at once, as if delivered to no effect (a message that can
    /// only be taken to no effect multiplies states and interleavings, not
    /// behaviours): at the send, and after each step of its receiver
    /// (ARCHITECTURE.md, "The network"). FIFO messages are not asked. Must be a pure
    /// function of its arguments; a wrong `true` hides behaviours.
    /// Default: never.
    fn stale(&self, _machine: &Self::Machine, _msg: &Self::Msg) -> bool {
        false
    }

    /// Handle `msg` (which `receive` said to handle).
    fn handle(&self, machine: &mut Self::Machine, msg: &Self::Msg, ctx: &mut Ctx<Self>);

    /// Monitors: observe an announcement synchronously; an error is a
    /// monitor violation.
    fn observe(&self, _monitor: &mut Self::Monitor, _event: &Self::Announce) -> Result<(), MonitorError> {
        Ok(())
    }

    /// A global safety invariant checked after every step, over the whole
    /// state; an error is a monitor violation. Default: none. Keep it
    /// cheap: it runs once per transition.
    fn invariant(&self, _world: &World<Self>) -> Result<(), MonitorError> {
        Ok(())
    }

    /// Whether a machine waits for something that may never come (counted
    /// as a deadlock when nothing is enabled). Default: no.
    fn waiting(&self, _machine: &Self::Machine) -> bool {
        false
    }

    /// Monitor temperature (liveness, ARCHITECTURE.md, "Liveness"): whether some
    /// monitor is **hot** in `world`, owed something, rather than cold.
    /// Read the monitors' state (`world.monitor`) and, where what is owed
    /// depends on it, the machines. A pure function of the world, and
    /// cheap: with liveness on it runs after every step of a sampled
    /// execution, so decide here and describe in [`MachineModel::owed`].
    /// Default: never hot.
    fn hot(&self, _world: &World<Self>) -> bool {
        false
    }

    /// What the hot monitor of `world` is owed (`monitor` names it,
    /// `message` says what is owed), `None` when every monitor is cold:
    /// `Some` exactly when [`MachineModel::hot`] is true. Asked only where
    /// a report needs the words. Default: `None`.
    fn owed(&self, _world: &World<Self>) -> Option<MonitorError> {
        None
    }

    /// Whether [`MachineModel::hot`] can ever be true (the runtime then
    /// offers the program's `liveness`): a model with liveness monitors
    /// says `true`. Default: `false`.
    fn has_liveness(&self) -> bool {
        false
    }

    /// Groups of interchangeable machines, by id, for symmetry reduction
    /// (`--symmetry`; ARCHITECTURE.md, "Symmetry"). Default: none.
    ///
    /// Contract: for every permutation π of the ids of one group, applied to
    /// a world by moving machine i to π(i) and renaming every id with
    /// [`MachineModel::rename`], the transitions commute with π (s -> t iff
    /// π(s) -> π(t)), the initial world's orbit contains its own image, and
    /// `receive`, `delivery`, `stale`, `waiting`, the monitors and the
    /// invariant give the same verdicts on π(s) as on s. The runtime then
    /// caches one world per orbit, exactly (the module `machine::symmetry`).
    fn symmetry(&self) -> Vec<Vec<MachineId>> {
        Vec::new()
    }

    /// Rename every machine id that a machine, a message or the monitors
    /// hold by `f`, including ids encoded otherwise (an index, a bit in a
    /// mask, a position in a vector). Only called with symmetry on; the
    /// default renames nothing (no value holds an id).
    fn rename(&self, _value: Renamed<'_, Self>, _f: &dyn Fn(MachineId) -> MachineId) {}

    /// Coverage (ARCHITECTURE.md, "Coverage and reachability"): the
    /// kind of `msg` (`"Prepare"`). Default: its `Debug` text up to the
    /// first `(`, `{` or space, computed once per enum variant.
    fn message_kind(&self, msg: &Self::Msg) -> &'static str {
        cover::debug_kind(msg)
    }

    /// Coverage: the model's handlers, as (machine kind, message kind)
    /// pairs. The coverage report lists each one, with count 0 when no
    /// step ran it: a dead handler is the finding. Default: none (the
    /// report lists only what ran).
    fn handlers(&self) -> Vec<(&'static str, &'static str)> {
        Vec::new()
    }

    /// Coverage: the states the monitors are in, as (monitor, state)
    /// pairs; the report counts the states reached in each. Default: none.
    fn monitor_states(&self, _monitor: &Self::Monitor) -> Vec<(&'static str, &'static str)> {
        Vec::new()
    }

    /// Reachability properties ("sometimes"): the names of conditions that
    /// must hold in at least one reachable state (a transaction commits).
    /// Default: none.
    fn sometimes(&self) -> Vec<&'static str> {
        Vec::new()
    }

    /// Whether reachability property `property` (an index into
    /// [`MachineModel::sometimes`]) holds in `world`. Deterministic and
    /// cheap: it runs after every step of a property's search.
    fn holds(&self, _world: &World<Self>, _property: usize) -> bool {
        false
    }
}

/// A value of a model whose machine ids [`MachineModel::rename`] renames.
pub enum Renamed<'a, M: MachineModel + ?Sized> {
    /// A machine.
    Machine(&'a mut M::Machine),
    /// A message (queued, in flight or being handled).
    Msg(&'a mut M::Msg),
    /// The monitors' state.
    Monitor(&'a mut M::Monitor),
}

impl<M: MachineModel + ?Sized> Debug for Renamed<'_, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Renamed::Machine(m) => f.debug_tuple("Machine").field(m).finish(),
            Renamed::Msg(m) => f.debug_tuple("Msg").field(m).finish(),
            Renamed::Monitor(m) => f.debug_tuple("Monitor").field(m).finish(),
        }
    }
}
