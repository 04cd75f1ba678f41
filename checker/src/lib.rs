//! # mcheck-checker: the engine of mcheck
//!
//! mcheck is a stateless model checker for asynchronous, message-passing
//! programs. It explores the executions of a [`Program`](program::Program)
//! (a transition system, usually built from P-style state machines with the
//! [`machine`] runtime) in the order set by a delaying
//! [`Explorer`](explorer::Explorer), with the strategies of Desai, Qadeer and
//! Seshia, "Systematic testing of asynchronous reactive systems"
//! (ESEC/FSE 2015): stratified exhaustive search and stratified sampling.
#![deny(missing_docs)]

pub mod cache;
pub mod explorer;
pub mod machine;
pub mod model;
pub mod program;

pub use explorer::{BoxedExplorer, Explorer};
pub use model::{BugSpec, ExplorerSpec, Model, ModelInfo, ParamSpec, Params};
pub use program::{ActorId, ActorInfo, Enabled, Event, Program, StepTrace, Violation, ViolationKind};
