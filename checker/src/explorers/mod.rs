//! The delaying explorers of the paper (Desai, Qadeer, Seshia, ESEC/FSE
//! 2015, §2): round robin ([`RoundRobin`]), run to completion
//! ([`RunToCompletion`]) and probabilistic round robin
//! ([`ProbabilisticRoundRobin`]), one small file each, and [`AnyExplorer`],
//! the one runtime form of an explorer chosen by name: a built-in without
//! boxing, or a model's own explorer boxed ([`AnyExplorer::custom`]).
//!
//! Each keeps the soundness contract of [`Explorer`](crate::Explorer); the
//! tests check it with [`check_contract`](crate::explorer::check_contract).

mod any;
mod prr;
mod queue;
mod rr;
mod rtc;

pub use any::{AnyExplorer, BUILTIN, ExplorerSpec, builtin};
pub use prr::ProbabilisticRoundRobin;
pub use queue::ActorQueue;
pub use rr::RoundRobin;
pub use rtc::RunToCompletion;
