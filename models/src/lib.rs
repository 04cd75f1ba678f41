//! Protocol models for mcheck, each with seeded bugs.
#![deny(missing_docs)]

pub mod chain;
pub mod lostupdate;
pub mod multipaxos;
pub mod paxos;
pub mod raft;
pub mod twopc;
pub mod twophase;
