//! The program under test: a transition system (paper §2).
//!
//! A program P = (S, Cid, T, s0) has states, actors that can move, a
//! transition function and an initial state. mcheck never looks inside a
//! state: it clones, hashes and compares it, asks which actors are enabled,
//! and executes one step of one actor at a time.

mod capability;
mod hit;

pub use capability::{Covers, Hot, Monitors, ProgramExt, Symmetry, SymmetryMismatch, Traces};
pub use hit::{Hit, How};
use serde::{Deserialize, Serialize};
use std::fmt::{self, Debug};
use std::hash::Hash;

/// The identity of an actor (a machine, a process, a thread of the program).
///
/// Ids are dense small integers assigned by the program; an id is never
/// reused for another actor within one execution.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default, Serialize, Deserialize)]
pub struct ActorId(pub u32);

impl fmt::Display for ActorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// What an explorer may know about an actor: its id, its kind (for example
/// `"server"`, `"master"`) and a human name (`"server1"`).
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct ActorInfo {
    /// The actor's id.
    pub id: ActorId,
    /// Its kind: the type of machine or process. Explorers may rank by kind.
    pub kind: &'static str,
    /// A human-readable, unique name used in traces.
    pub name: String,
}

/// One actor that can move at a state, with the number of alternatives of
/// its next step: 1 for a deterministic step, n for a data choice (a timer
/// that may or may not fire, a value among n).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Enabled {
    /// The actor.
    pub actor: ActorId,
    /// How many alternatives its next step has; always at least 1.
    pub alternatives: u32,
}

/// What a transition did, as far as an explorer is concerned (paper §4:
/// explorers are told about creation, termination and sends, and models can
/// send their own callbacks).
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Event {
    /// A new actor was created.
    Created(ActorInfo),
    /// An actor halted: it will never be enabled again.
    Halted(ActorId),
    /// `from` sent a message to `to` (enqueued in `to`'s input queue).
    Sent {
        /// The sender.
        from: ActorId,
        /// The receiver.
        to: ActorId,
    },
    /// A model-defined callback, for custom explorers (for example chain
    /// replication's "the system is stable now").
    Custom {
        /// The actor that announced it.
        actor: ActorId,
        /// A short tag naming the callback.
        tag: &'static str,
        /// A model-defined value.
        value: u64,
    },
}

/// The kind of a safety violation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    /// An assertion inside a machine or a specification invariant failed.
    Assertion,
    /// A monitor (safety specification) failed.
    Monitor,
    /// A machine dequeued an event that it neither handles nor ignores.
    UnhandledEvent,
    /// Nothing is enabled but some machine is blocked or waiting
    /// (only reported when deadlock detection is on).
    Deadlock,
    /// An execution exceeded the step limit (only when asked to report it).
    MaxSteps,
    /// Model code panicked; the message is the panic's.
    Panic,
    /// The history of client operations has no linearization with respect
    /// to the model's sequential specification (ARCHITECTURE.md, "Linearizability"); the
    /// message shows it as a timeline.
    Linearizability,
    /// A liveness violation found by exhaustive search: a fair cycle of
    /// hot states, or an execution that ends with a monitor hot
    /// (ARCHITECTURE.md, "Liveness"). The schedule is a lasso.
    Liveness,
    /// A *possible* liveness violation found by sampling: an execution
    /// reached the step limit with a monitor hot for more than the
    /// temperature threshold of consecutive steps. Never a proof.
    PossibleLiveness,
}

impl ViolationKind {
    /// Every kind, in declaration order.
    pub const ALL: [ViolationKind; 9] = [
        ViolationKind::Assertion,
        ViolationKind::Monitor,
        ViolationKind::UnhandledEvent,
        ViolationKind::Deadlock,
        ViolationKind::MaxSteps,
        ViolationKind::Panic,
        ViolationKind::Linearizability,
        ViolationKind::Liveness,
        ViolationKind::PossibleLiveness,
    ];

    /// The kind named `name` (see [`ViolationKind::as_str`]).
    pub fn from_name(name: &str) -> Option<ViolationKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The stable snake_case name used in JSON and schedule files.
    pub fn as_str(self) -> &'static str {
        match self {
            ViolationKind::Assertion => "assertion",
            ViolationKind::Monitor => "monitor",
            ViolationKind::UnhandledEvent => "unhandled_event",
            ViolationKind::Deadlock => "deadlock",
            ViolationKind::MaxSteps => "max_steps",
            ViolationKind::Panic => "panic",
            ViolationKind::Linearizability => "linearizability",
            ViolationKind::Liveness => "liveness",
            ViolationKind::PossibleLiveness => "possible_liveness",
        }
    }
}

impl fmt::Display for ViolationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A safety violation: what failed, where, and why.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Violation {
    /// What kind of failure.
    pub kind: ViolationKind,
    /// The machine (or monitor) that failed, by name, if any.
    pub machine: Option<String>,
    /// A human-readable message.
    pub message: String,
}

impl Violation {
    /// A violation of `kind` by `machine` with `message`.
    pub fn new(kind: ViolationKind, machine: impl Into<String>, message: impl Into<String>) -> Self {
        Violation {
            kind,
            machine: Some(machine.into()),
            message: message.into(),
        }
    }

    /// An assertion failure of a specification invariant with no machine.
    pub fn invariant(message: impl Into<String>) -> Self {
        Violation {
            kind: ViolationKind::Assertion,
            machine: None,
            message: message.into(),
        }
    }

    /// True when `other` is "the same bug": same kind and same machine.
    /// Shrinking and replay use this, since messages may carry values.
    pub fn same_bug(&self, other: &Violation) -> bool {
        self.kind == other.kind && self.machine == other.machine
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.machine {
            Some(m) => write!(f, "{} in {}: {}", self.kind, m, self.message),
            None => write!(f, "{}: {}", self.kind, self.message),
        }
    }
}

/// A human-readable account of one step, filled by [`Traces::execute_traced`].
/// Only replay builds these; the search never does. Outside this crate,
/// start from `StepTrace::default()` and set the fields.
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StepTrace {
    /// The step's index in the execution, from 0.
    pub step: usize,
    /// The actor that ran.
    pub actor: ActorId,
    /// Its name.
    pub actor_name: String,
    /// The alternative taken and how many there were.
    pub alternative: u32,
    /// How many alternatives the actor had.
    pub alternatives: u32,
    /// The event handled with its payload (`"Prepare(tx=1)"`), if any.
    pub handled: Option<String>,
    /// The state the machine was in before the step, if it has named states.
    pub state_before: Option<String>,
    /// The state after the step.
    pub state_after: Option<String>,
    /// Messages sent: receiver name and message with payload.
    pub sent: Vec<(String, String)>,
    /// Names of the actors created.
    pub created: Vec<String>,
    /// Data choices made during the step, as text (`"vote = commit"`).
    pub choices: Vec<String>,
    /// Events announced to monitors.
    pub announced: Vec<String>,
    /// Free-form notes (for raw transition systems: the action's name).
    pub notes: Vec<String>,
    /// True when the actor halted in this step.
    pub halted: bool,
}

/// What a person sees of one actor in a state: its name, its state and the
/// messages waiting for it, as text (for counterexample pages; see
/// [`Traces::view`]). Outside this crate, start from
/// `ActorView::default()` and set the fields.
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ActorView {
    /// The actor's name.
    pub name: String,
    /// Its state, as text (the machine runtime: the model's
    /// `MachineModel::show`, by default the machine's `Debug`).
    pub state: String,
    /// The messages queued for it in FIFO order, oldest first.
    pub inbox: Vec<String>,
    /// Unordered messages in flight to it, one entry per copy.
    pub unordered: Vec<String>,
    /// True once it has halted.
    pub halted: bool,
    /// True while it is suspended at a data choice (its next step continues
    /// the same handler rather than taking a message).
    pub choosing: bool,
}

/// What a person sees of a whole state: every actor by id, and the
/// monitors (see [`Traces::view`]). Outside this crate, start from
/// `StateView::default()` and set the fields.
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StateView {
    /// Every actor that exists, indexed by its id.
    pub actors: Vec<ActorView>,
    /// The monitors' state, as text (empty when there are none).
    pub monitors: String,
}

/// A transition system under test.
///
/// # Contract
///
/// * **Determinism.** `initial`, `enabled` and `execute` are pure functions
///   of their arguments: the same state and choice give the same successor
///   and the same events, in every run and on every thread. Hidden inputs
///   (time, hash-map iteration order with random keys, globals) break
///   replay; `mcheck replay` detects them and says so.
/// * `enabled` lists each enabled actor once, in increasing id order, each
///   with at least one alternative. An empty list means the state is
///   terminal.
/// * `execute(s, a, alt)` is only called with an `a` that `enabled(s)`
///   listed and `alt` below its alternatives.
/// * What is hashed is what the state is: two states that compare equal
///   must behave identically. Counters, traces and statistics stay out of
///   the state.
///
/// # Example
///
/// Two processes each increment a shared counter in two steps (read, then
/// write the value read plus one), a lost update when they interleave.
/// SES with run to completion needs one delay to find it; the invariant
/// is checked when both are done.
///
/// ```
/// use mcheck_checker::explorers::RunToCompletion;
/// use mcheck_checker::{run, ActorId, ActorInfo, Config, Enabled, Event, Program, Strategy, Violation};
///
/// /// The counter, and per process its program counter (0 read, 1 write,
/// /// 2 done) and the value it read.
/// #[derive(Clone, Debug, PartialEq, Eq, Hash)]
/// struct State { counter: u32, pc: [u8; 2], read: [u32; 2] }
///
/// struct Increments;
/// impl Program for Increments {
///     type State = State;
///     fn initial(&self) -> State {
///         State { counter: 0, pc: [0, 0], read: [0, 0] }
///     }
///     fn actors(&self, _s: &State) -> Vec<ActorInfo> {
///         (0..2).map(|i| ActorInfo { id: ActorId(i), kind: "process", name: format!("p{i}") }).collect()
///     }
///     fn enabled(&self, s: &State, out: &mut Vec<Enabled>) {
///         for i in 0..2 {
///             if s.pc[i] < 2 {
///                 out.push(Enabled { actor: ActorId(i as u32), alternatives: 1 });
///             }
///         }
///     }
///     fn execute(&self, s: &mut State, actor: ActorId, _alt: u32, _events: &mut Vec<Event>) -> Result<(), Violation> {
///         let i = actor.0 as usize;
///         match s.pc[i] {
///             0 => s.read[i] = s.counter,
///             _ => s.counter = s.read[i] + 1,
///         }
///         s.pc[i] += 1;
///         if s.pc == [2, 2] && s.counter != 2 {
///             return Err(Violation::invariant(format!("the counter is {} after two increments", s.counter)));
///         }
///         Ok(())
///     }
/// }
///
/// let report = run(&Increments, RunToCompletion::new(), &Strategy::Ses, &Config::default()).unwrap();
/// assert_eq!(report.violation.unwrap().violation.message, "the counter is 1 after two increments");
/// assert_eq!(report.bound_reached, 1);
/// ```
pub trait Program: Sync {
    /// A program state. Keep it flat and cheap to clone and hash.
    type State: Clone + Eq + Hash + Send + Sync + Debug;

    /// The initial state s0.
    fn initial(&self) -> Self::State;

    /// The actors that exist in `s` with their kinds and names, in id order
    /// (explorers learn the initial actors from this).
    fn actors(&self, s: &Self::State) -> Vec<ActorInfo>;

    /// Push the enabled actors of `s` onto `out` (which the caller has
    /// cleared), in increasing id order.
    fn enabled(&self, s: &Self::State, out: &mut Vec<Enabled>);

    /// Apply alternative `alt` of `actor`'s step to `s` in place, pushing
    /// what happened onto `events` (which the caller has cleared). `Err` is
    /// a safety violation; `s` may be partially updated then and is not
    /// used again.
    fn execute(&self, s: &mut Self::State, actor: ActorId, alt: u32, events: &mut Vec<Event>) -> Result<(), Violation>;

    /// Called on a terminal state (nothing enabled) when deadlock detection
    /// is on: a violation if some actor is blocked or waiting.
    fn deadlock(&self, _s: &Self::State) -> Option<Violation> {
        None
    }

    /// The program's liveness monitors, if it has any (see [`Monitors`]):
    /// liveness checking (the graph pass after an exhaustive search, the
    /// temperature of sampled executions) runs only for a program that
    /// answers `Some`, so that programs without liveness monitors pay
    /// nothing for it. Default: `None`. The machine runtime answers for
    /// models whose `MachineModel::has_liveness` is true.
    fn liveness(&self) -> Option<&dyn Monitors<Self::State>> {
        None
    }

    /// The program's symmetry, if it declares one (see [`Symmetry`]): the
    /// exhaustive searches ask for it only with [`crate::Config::symmetry`].
    /// Default: `None`. The machine runtime answers from
    /// [`crate::machine::MachineModel::symmetry`].
    fn symmetry(&self) -> Option<&dyn Symmetry<Self::State>> {
        None
    }

    /// What the program's steps and states exercise, and its reachability
    /// properties (see [`Covers`]), asked for only by a run that counts
    /// coverage or seeks a property. Default: `None`, and then coverage
    /// counts each actor's alternatives by the actor's name
    /// ([`ProgramExt::cover_step`]). The machine runtime answers with its
    /// machines, handlers and monitors.
    fn coverage(&self) -> Option<&dyn Covers<Self::State>> {
        None
    }

    /// Names, step descriptions and views for people (see [`Traces`]),
    /// asked for only by replay, traces and counterexample pages. Default:
    /// `None`, and then actors are named as [`Program::actors`] names them
    /// and steps are described by their actor and alternative only. The
    /// machine runtime answers with its machines' names, handlers and
    /// queues.
    fn traces(&self) -> Option<&dyn Traces<Self::State>> {
        None
    }
}

/// Blanket implementation so that `&P` is a program too.
impl<P: Program + ?Sized> Program for &P {
    type State = P::State;
    fn initial(&self) -> Self::State {
        (**self).initial()
    }
    fn actors(&self, s: &Self::State) -> Vec<ActorInfo> {
        (**self).actors(s)
    }
    fn enabled(&self, s: &Self::State, out: &mut Vec<Enabled>) {
        (**self).enabled(s, out)
    }
    fn execute(&self, s: &mut Self::State, actor: ActorId, alt: u32, events: &mut Vec<Event>) -> Result<(), Violation> {
        (**self).execute(s, actor, alt, events)
    }
    fn deadlock(&self, s: &Self::State) -> Option<Violation> {
        (**self).deadlock(s)
    }
    fn liveness(&self) -> Option<&dyn Monitors<Self::State>> {
        (**self).liveness()
    }
    fn symmetry(&self) -> Option<&dyn Symmetry<Self::State>> {
        (**self).symmetry()
    }
    fn coverage(&self) -> Option<&dyn Covers<Self::State>> {
        (**self).coverage()
    }
    fn traces(&self) -> Option<&dyn Traces<Self::State>> {
        (**self).traces()
    }
}
