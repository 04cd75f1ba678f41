//! The delaying explorers of the paper (Desai, Qadeer, Seshia, ESEC/FSE
//! 2015, §2): round robin ([`RoundRobin`]), run to completion
//! ([`RunToCompletion`]) and probabilistic round robin
//! ([`ProbabilisticRoundRobin`]), one small file each, and [`AnyExplorer`],
//! the enum the CLI uses to pick one by name without boxing.
//!
//! Each keeps the soundness contract of [`Explorer`]; the tests check it
//! with [`mcheck_checker::explorer::check_contract`].
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![deny(missing_debug_implementations)]

mod any;
mod prr;
mod queue;
mod rr;
mod rtc;

pub use any::{builtin, AnyExplorer, BUILTIN};
pub use mcheck_checker::Explorer;
pub use prr::ProbabilisticRoundRobin;
pub use queue::ActorQueue;
pub use rr::RoundRobin;
pub use rtc::RunToCompletion;
