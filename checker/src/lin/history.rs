//! Histories: invocations and responses of client operations, in the order
//! they happened.

use super::spec::SequentialSpec;
use serde::{Deserialize, Serialize};
use std::fmt;

/// One event of a history. A *process* (a client, or one logical client
/// per request) has at most one operation open at a time: a response
/// belongs to the process's open invocation.
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(bound(
    serialize = "S::Op: Serialize, S::Ret: Serialize",
    deserialize = "S::Op: Deserialize<'de>, S::Ret: Deserialize<'de>"
))]
pub enum Entry<S: SequentialSpec> {
    /// `process` invokes `op`.
    Invoke {
        /// The process.
        process: u32,
        /// The operation.
        op: S::Op,
    },
    /// `process`'s open operation returns `ret`.
    Return {
        /// The process.
        process: u32,
        /// The value returned.
        ret: S::Ret,
    },
    /// `process`'s open operation is known to have had no effect (an
    /// aborted write): it is left out of the operations, as Knossos does
    /// with a failed operation.
    Fail {
        /// The process.
        process: u32,
    },
}

impl<S: SequentialSpec> fmt::Debug for Entry<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Entry::Invoke { process, op } => write!(f, "p{process} invoke {op:?}"),
            Entry::Return { process, ret } => write!(f, "p{process} return {ret:?}"),
            Entry::Fail { process } => write!(f, "p{process} fail"),
        }
    }
}

/// An operation of a history: its invocation, its response if any, and
/// where both are in the history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation<S: SequentialSpec> {
    /// The process.
    pub process: u32,
    /// The operation.
    pub op: S::Op,
    /// What it returned; `None` while pending (it may or may not have taken
    /// effect).
    pub ret: Option<S::Ret>,
    /// Index of its invocation in the history.
    pub call: usize,
    /// Index of its response; `None` while pending.
    pub returned: Option<usize>,
}

/// A history that is not well formed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HistoryError {
    /// A process invoked an operation while one of its own was open.
    Overlapping {
        /// The process.
        process: u32,
        /// Index of the second invocation.
        at: usize,
    },
    /// A response with no open operation of its process.
    Unmatched {
        /// The process.
        process: u32,
        /// Index of the response.
        at: usize,
    },
}

impl fmt::Display for HistoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HistoryError::Overlapping { process, at } => write!(
                f,
                "event {at}: process p{process} invokes an operation while its previous one is still open"
            ),
            HistoryError::Unmatched { process, at } => {
                write!(f, "event {at}: process p{process} returns but has no open operation")
            }
        }
    }
}

impl std::error::Error for HistoryError {}

/// A history: events in the order they happened.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct History<S: SequentialSpec> {
    entries: Vec<Entry<S>>,
}

impl<S: SequentialSpec> Default for History<S> {
    fn default() -> Self {
        History { entries: Vec::new() }
    }
}

impl<S: SequentialSpec> fmt::Debug for History<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.entries).finish()
    }
}

impl<S: SequentialSpec> History<S> {
    /// An empty history.
    pub fn new() -> Self {
        Self::default()
    }

    /// `process` invokes `op`.
    pub fn invoke(&mut self, process: u32, op: S::Op) {
        self.entries.push(Entry::Invoke { process, op });
    }

    /// `process`'s open operation returns `ret`.
    pub fn respond(&mut self, process: u32, ret: S::Ret) {
        self.entries.push(Entry::Return { process, ret });
    }

    /// `process`'s open operation had no effect.
    pub fn fail(&mut self, process: u32) {
        self.entries.push(Entry::Fail { process });
    }

    /// The events, in order.
    pub fn entries(&self) -> &[Entry<S>] {
        &self.entries
    }

    /// The number of events.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing happened.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The operations in the order of their invocations, each with its
    /// response if it has one (failed ones left out); an error when the history is not well
    /// formed (a process with two open operations, a response without
    /// one).
    pub fn operations(&self) -> Result<Vec<Operation<S>>, HistoryError> {
        let mut ops: Vec<Operation<S>> = Vec::new();
        // (process, index in ops) of the open operations.
        let mut open: Vec<(u32, usize)> = Vec::new();
        let mut failed: Vec<usize> = Vec::new();
        for (at, e) in self.entries.iter().enumerate() {
            match e {
                Entry::Invoke { process, op } => {
                    if open.iter().any(|(p, _)| p == process) {
                        return Err(HistoryError::Overlapping { process: *process, at });
                    }
                    open.push((*process, ops.len()));
                    ops.push(Operation {
                        process: *process,
                        op: op.clone(),
                        ret: None,
                        call: at,
                        returned: None,
                    });
                }
                Entry::Return { process, ret } => {
                    let Some(k) = open.iter().position(|(p, _)| p == process) else {
                        return Err(HistoryError::Unmatched { process: *process, at });
                    };
                    let (_, i) = open.swap_remove(k);
                    ops[i].ret = Some(ret.clone());
                    ops[i].returned = Some(at);
                }
                Entry::Fail { process } => {
                    let Some(k) = open.iter().position(|(p, _)| p == process) else {
                        return Err(HistoryError::Unmatched { process: *process, at });
                    };
                    let (_, i) = open.swap_remove(k);
                    failed.push(i);
                }
            }
        }
        let mut i = 0;
        ops.retain(|_| {
            i += 1;
            !failed.contains(&(i - 1))
        });
        Ok(ops)
    }
}

impl<S: SequentialSpec> FromIterator<Entry<S>> for History<S> {
    fn from_iter<I: IntoIterator<Item = Entry<S>>>(iter: I) -> Self {
        History {
            entries: iter.into_iter().collect(),
        }
    }
}
