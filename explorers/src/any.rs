//! Picking an explorer by name.

use crate::{ProbabilisticRoundRobin, RoundRobin, RunToCompletion};
use mcheck_checker::explorer::BoxedExplorer;
use mcheck_checker::{ActorId, ActorInfo, Event, Explorer, ExplorerSpec};

/// The built-in explorers, in the order `mcheck list` shows them.
pub const BUILTIN: &[ExplorerSpec] = &[
    ExplorerSpec {
        name: "rr",
        description: "round robin: actors in creation order; a delay moves the chosen one to the tail",
    },
    ExplorerSpec {
        name: "rtc",
        description: "run to completion: a message's receiver runs next (follows the causal chain); a delay moves the chosen one to the bottom",
    },
    ExplorerSpec {
        name: "prr",
        description: "probabilistic round robin: round robin with every actor inserted at a random position (seeded)",
    },
];

/// The built-in explorer called `name`, if there is one.
pub fn builtin(name: &str) -> Option<AnyExplorer> {
    match name {
        "rr" => Some(AnyExplorer::Rr(RoundRobin::new())),
        "rtc" => Some(AnyExplorer::Rtc(RunToCompletion::new())),
        "prr" => Some(AnyExplorer::Prr(ProbabilisticRoundRobin::new(0))),
        _ => None,
    }
}

/// Any explorer chosen at run time: the built-ins without an allocation
/// per clone, and a model's own explorer boxed.
#[derive(Clone, Debug)]
pub enum AnyExplorer {
    /// Round robin.
    Rr(RoundRobin),
    /// Run to completion.
    Rtc(RunToCompletion),
    /// Probabilistic round robin.
    Prr(ProbabilisticRoundRobin),
    /// A model's own explorer.
    Custom(BoxedExplorer),
}

macro_rules! each {
    ($self:expr, $e:ident => $body:expr) => {
        match $self {
            AnyExplorer::Rr($e) => $body,
            AnyExplorer::Rtc($e) => $body,
            AnyExplorer::Prr($e) => $body,
            AnyExplorer::Custom($e) => $body,
        }
    };
}

impl Explorer for AnyExplorer {
    fn name(&self) -> &str {
        each!(self, e => e.name())
    }
    fn seed(&mut self, seed: u64) {
        each!(self, e => e.seed(seed))
    }
    fn is_randomized(&self) -> bool {
        each!(self, e => e.is_randomized())
    }
    fn init(&mut self, actors: &[ActorInfo]) {
        each!(self, e => e.init(actors))
    }
    #[inline]
    fn next(&self, enabled: &[ActorId]) -> ActorId {
        each!(self, e => e.next(enabled))
    }
    #[inline]
    fn step(&mut self, events: &[Event]) {
        each!(self, e => e.step(events))
    }
    fn delay(&mut self, enabled: &[ActorId]) {
        each!(self, e => e.delay(enabled))
    }
    #[inline]
    fn next_masked(&self, enabled: &[ActorId], mask: Option<u64>) -> ActorId {
        each!(self, e => e.next_masked(enabled, mask))
    }
    #[inline]
    fn delay_masked(&mut self, enabled: &[ActorId], mask: Option<u64>) {
        each!(self, e => e.delay_masked(enabled, mask))
    }
    fn state_hash(&self) -> Option<u64> {
        each!(self, e => e.state_hash())
    }
}
