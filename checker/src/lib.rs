//! # mcheck-checker: the engine of mcheck
//!
//! mcheck is a stateless model checker for asynchronous, message-passing
//! programs. It explores the executions of a [`Program`] (a transition
//! system, usually built from P-style state machines with the [`machine`]
//! runtime) in the order set by a delaying [`Explorer`], with the
//! strategies of Desai, Qadeer and Seshia, "Systematic testing of
//! asynchronous reactive systems" (ESEC/FSE 2015): stratified exhaustive
//! search and stratified sampling. The paper's explorers are built in
//! ([`explorers`]); [`AnyExplorer`] is the one runtime form of an explorer
//! chosen by name, a built-in or a model's own ([`Model::explorer`]).
#![deny(missing_docs)]
#![deny(missing_debug_implementations)]

pub mod alloc;
pub mod cache;
pub mod check;
pub mod config;
pub mod coverage;
pub mod explorer;
pub mod explorers;
pub mod instance;
pub mod lin;
pub mod liveness;
pub mod machine;
pub mod model;
pub mod orbits;
pub mod program;
pub mod races;
pub mod replay;
pub mod report;
pub mod run;
pub mod schedule;
pub mod search;
pub mod shrink;
pub mod testing;
pub mod watch;

pub use check::{Checked, Counterexample, check_instance, check_model, replay_model, shrink_model};
pub use config::{Config, Pace, Progress, Shortcuts, StopFlag};
pub use coverage::{CountedOver, Coverage, Status as PropertyStatus};
pub use explorer::{Explorer, enabled_mask};
pub use explorers::{AnyExplorer, ExplorerSpec, builtin};
pub use instance::Instance;
pub use model::{BugSpec, Model, ModelInfo, ParamError, ParamSpec, Params};
pub use program::{
    ActorId, ActorInfo, ActorView, Covers, Enabled, Event, Hot, Monitors, Program, ProgramExt, StateView, StepTrace,
    Symmetry, SymmetryMismatch, Traces, Violation, ViolationKind,
};
pub use races::{ExplainError, Explanation, Race, Variant, explain, explain_model};
pub use replay::{Cause, Divergence, Field, NotReproduced, ReplayError, replay};
pub use report::{BoundedBy, CacheKey, Found, Outcome, Report, Stratum};
pub use run::{run, run_watched};
pub use schedule::{ParseError, PathKind, Schedule};
pub use search::exec::{End, Execution};
pub use search::{SearchError, Strategy};
pub use shrink::{ShrinkError, Shrunk};
pub use watch::{Watch, Watched};
