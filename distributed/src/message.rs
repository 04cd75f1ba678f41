//! What workers send each other: a successor for its owner, a halt, and
//! at the end each worker's summary for worker 0 (ARCHITECTURE.md,
//! "Distributed SES"). A successor travels as itself: the program state
//! and the explorer's state there (serde, encoded by timely between
//! processes and moved between the threads of one), with the (worker,
//! path node) that holds its path, for the counterexample that a
//! violation below it would need; and the rounds that put such a path
//! together from the workers that hold its pieces.

use mcheck_checker::BoundedBy;
use mcheck_checker::search::part::Remote;
use serde::{Deserialize, Serialize};

/// A message between workers, with the program's states `S` and the
/// explorer's `O`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Msg<S, O> {
    /// A successor for worker `to`, which owns fingerprint `fp`.
    State {
        /// The state.
        state: S,
        /// The (composed) explorer at the state.
        order: O,
        /// The owner.
        to: u32,
        /// The state's cache key.
        fp: u64,
        /// Delays on its path.
        cost: u32,
        /// Steps from s0.
        depth: u32,
        /// The (worker, path node there) that holds the path of the state
        /// it is a successor of (`None`: the empty path).
        via: Option<Remote>,
        /// The index of the choice there that reached it.
        index: u32,
    },
    /// Stop: another worker found a violation or hit a budget.
    Halt {
        /// The worker told.
        to: u32,
    },
}

impl<S, O> Msg<S, O> {
    /// The worker the message is for.
    pub fn to(&self) -> u32 {
        match self {
            Msg::State { to, .. } | Msg::Halt { to } => *to,
        }
    }
}

/// Why a worker stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Halt {
    /// It found a violation.
    Violation,
    /// A budget stopped it (`BoundedBy` as its index in [`BUDGETS`]).
    Budget(u8),
    /// The delay bound `max_delays` was reached with work left.
    MaxDelays,
    /// Another worker halted it.
    Halted,
    /// An error (see [`Summary::error`]).
    Error,
}

/// The budgets a worker can hit, by index.
pub const BUDGETS: [BoundedBy; 4] = [
    BoundedBy::Interrupted,
    BoundedBy::Time,
    BoundedBy::States,
    BoundedBy::Memory,
];

impl From<BoundedBy> for Halt {
    fn from(by: BoundedBy) -> Halt {
        Halt::Budget(BUDGETS.iter().position(|&b| b == by).unwrap_or(0) as u8)
    }
}

impl Halt {
    /// What bounded the search, if this halt says.
    pub fn bounded_by(self) -> Option<BoundedBy> {
        match self {
            Halt::Budget(i) => BUDGETS.get(i as usize).copied(),
            Halt::MaxDelays => Some(BoundedBy::MaxDelays),
            _ => None,
        }
    }
}

/// One stratum's counts on one worker.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Counts {
    /// New states.
    pub new_states: u64,
    /// Transitions executed.
    pub transitions: u64,
    /// Entries deferred to the next stratum.
    pub deferrals: u64,
    /// Seconds of work (not of waiting).
    pub elapsed_s: f64,
}

/// Where a worker found a violation.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Violated {
    /// The stratum.
    pub bound: u32,
    /// The path's (depth, index) pairs: from s0, or from the path that
    /// `before` names.
    pub path: Vec<(u32, u32)>,
    /// The (worker, path node there) that holds the path before `path`,
    /// until the rounds of `flow::resolve` have put it in front.
    pub before: Option<Remote>,
    /// The step that violated.
    pub step: u32,
}

/// What one worker did.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Summary {
    /// The worker's index among all workers.
    pub worker: u32,
    /// Its process.
    pub process: u32,
    /// States it owns and explored.
    pub states: u64,
    /// Transitions it executed.
    pub transitions: u64,
    /// Entries it deferred.
    pub deferrals: u64,
    /// Per stratum.
    pub strata: Vec<Counts>,
    /// Why it stopped, if it did.
    pub stop: Option<Halt>,
    /// Its violation.
    pub violation: Option<Violated>,
    /// An execution was cut at the step limit.
    pub cut: bool,
    /// Its cache reached its budget.
    pub cache_full: bool,
    /// Its cache's bytes.
    pub cache_bytes: u64,
    /// The fingerprint bits its cache keeps (64, fewer once compact).
    pub fingerprint_bits: u32,
    /// Its process's peak resident memory, in bytes.
    pub peak_rss: u64,
    /// Successors it sent to other workers.
    pub sent: u64,
    /// Successors it did not send again because it had sent them lately.
    pub unsent: u64,
    /// An error that stopped it.
    pub error: Option<String>,
}
