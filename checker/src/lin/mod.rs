//! Linearizability: client histories checked against a sequential
//! specification (ARCHITECTURE.md, "Linearizability").
//!
//! * [`SequentialSpec`] with ready specs: [`Register`], [`KvMap`] (checked
//!   key by key), [`Log`];
//! * [`History`]: invocations and responses as they happened;
//! * [`check`]: Wing and Gong's search with Lowe's memoization, the
//!   culprit of a failure in [`NotLinearizable`] and its text
//!   ([`explain`], [`timeline`]);
//! * [`Tracker`]: the incremental check a machine model keeps in its
//!   monitor state (the part that decides the future is hashed, the
//!   history is not).

mod check;
mod history;
mod spec;
mod text;
mod track;

pub use check::{check, NotLinearizable, Verdict};
pub use history::{Entry, History, HistoryError, Operation};
pub use spec::{KvMap, KvOp, KvRet, Log, LogOp, LogRet, RegOp, RegRet, Register, SequentialSpec};
pub use text::{explain, timeline};
pub use track::{TrackError, Tracker, MAX_CONFIGS};
