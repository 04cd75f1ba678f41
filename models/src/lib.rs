//! Protocol models for mcheck, each with seeded bugs.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![deny(missing_debug_implementations)]

pub mod chain;
mod deep;
pub mod lostupdate;
pub mod multipaxos;
pub mod noise;
pub mod paxos;
pub mod raft;
pub mod twopc;
pub mod twophase;
pub mod twophase_packed;

pub use deep::{deep_params, workload_param};
