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
//!
//! ```
//! use mcheck_checker::lin::{check, History, RegOp, RegRet, Register};
//!
//! // Process 1 writes 1; process 2 reads 0 while the write is open, then
//! // reads 0 again after it returned: a stale read.
//! let mut h = History::<Register>::new();
//! h.invoke(1, RegOp::Write(1));
//! h.invoke(2, RegOp::Read);
//! h.respond(2, RegRet::Value(0));
//! h.respond(1, RegRet::Ok);
//! assert!(check(&Register, &h).unwrap().is_ok());
//! h.invoke(2, RegOp::Read);
//! h.respond(2, RegRet::Value(0));
//! let failure = check(&Register, &h).unwrap().unwrap_err();
//! assert_eq!((failure.culprit, failure.would_return), (2, RegRet::Value(1)));
//! ```

mod check;
mod history;
mod spec;
mod text;
mod track;

pub use check::{NotLinearizable, Verdict, check};
pub use history::{Entry, History, HistoryError, Operation};
pub use spec::{KvMap, KvOp, KvRet, Log, LogOp, LogRet, RegOp, RegRet, Register, SequentialSpec};
pub use text::{explain, timeline};
pub use track::{MAX_CONFIGS, TrackError, Tracker};
