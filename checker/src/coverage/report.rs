//! The coverage section of a report (ARCHITECTURE.md,
//! "Coverage and reachability").

use crate::program::How;
use crate::schedule::Schedule;
use serde::Serialize;

/// What coverage counts are over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CountedOver {
    /// Exhaustive strategies: each distinct transition (state, actor,
    /// alternative) once, and the monitor states of each distinct state
    /// once.
    DistinctTransitions,
    /// Sampling strategies: every step of every execution run.
    Executions,
}

impl CountedOver {
    /// In words, for the text report.
    pub fn text(self) -> &'static str {
        match self {
            CountedOver::DistinctTransitions => "distinct transitions",
            CountedOver::Executions => "steps of the executions run",
        }
    }
}

/// One coverage count.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// The machine kind, monitor or actor.
    pub actor: String,
    /// The message kind, monitor state or alternative.
    pub item: String,
    /// How it was used.
    pub how: How,
    /// How many times.
    pub count: u64,
    /// Declared by the program (a handler it has), so listed even at 0.
    pub declared: bool,
}

/// What the search found of a reachability property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// A state where it holds was reached; the schedule replays to it.
    Reached,
    /// An exhaustive search covered every reachable state and it holds in
    /// none.
    Unreached,
    /// The search (sampling, or stopped by a budget) did not see it.
    NotSeen,
}

impl Status {
    /// The JSON name, also used in the text report.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Reached => "reached",
            Status::Unreached => "unreached",
            Status::NotSeen => "not seen",
        }
    }
}

/// A reachability property and what the search found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Property {
    /// Its name.
    pub name: String,
    /// Reached, unreached or not seen.
    pub status: Status,
    /// The number of steps to the first state found where it holds (0:
    /// the initial state).
    pub steps: Option<usize>,
    /// A schedule that replays to that state (`mcheck replay`), unless it
    /// is the initial state.
    pub schedule: Option<Schedule>,
}

/// The coverage section of a report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Coverage {
    /// What the counts are over.
    pub counted_over: CountedOver,
    /// Every count, the declared handlers included at 0.
    pub entries: Vec<Entry>,
    /// Every reachability property.
    pub properties: Vec<Property>,
}

impl Coverage {
    /// The declared entries that no step hit.
    pub fn dead(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(|e| e.declared && e.count == 0)
    }

    /// The properties that an exhaustive search proved unreachable.
    pub fn unreached(&self) -> impl Iterator<Item = &Property> {
        self.properties.iter().filter(|p| p.status == Status::Unreached)
    }
}
