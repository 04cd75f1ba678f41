//! What a step exercises, as a coverage entry's key (ARCHITECTURE.md,
//! "Coverage and reachability"). Programs name them; nothing here knows
//! about searches.

use serde::Serialize;
use std::borrow::Cow;
use std::fmt;

/// How a step used a message, an alternative or a monitor state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum How {
    /// The machine ran its handler for the message.
    Handled,
    /// The machine continued a handler suspended at a data choice.
    Chose,
    /// The network delivered the message and kept a copy pending.
    Duplicated,
    /// The message was queued before the one taken, and the machine
    /// passed over it because it defers it in its state.
    Deferred,
    /// The machine dequeued the message and dropped it (P's `ignore`).
    Ignored,
    /// The network lost the message.
    Dropped,
    /// The machine dequeued a message it does not handle (a violation).
    Unhandled,
    /// A state reached had the monitor in this state.
    Visited,
    /// A plain program's actor took this alternative.
    Ran,
}

impl How {
    /// The JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            How::Handled => "handled",
            How::Chose => "chose",
            How::Duplicated => "duplicated",
            How::Deferred => "deferred",
            How::Ignored => "ignored",
            How::Dropped => "dropped",
            How::Unhandled => "unhandled",
            How::Visited => "visited",
            How::Ran => "ran",
        }
    }
}

impl fmt::Display for How {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One coverage entry: who (a machine kind, a monitor, a plain program's
/// actor), what (a message kind, a monitor state, an alternative) and how.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Hit {
    /// The machine kind (`"coordinator"`), monitor or actor.
    pub actor: Cow<'static, str>,
    /// The message kind (`"Prepare"`), monitor state or alternative.
    pub item: Cow<'static, str>,
    /// How the step used it.
    pub how: How,
}

impl Hit {
    /// A hit of `how` on (`actor`, `item`).
    pub fn new(actor: impl Into<Cow<'static, str>>, item: impl Into<Cow<'static, str>>, how: How) -> Self {
        Hit {
            actor: actor.into(),
            item: item.into(),
            how,
        }
    }
}
