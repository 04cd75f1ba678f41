//! Protocol models for mcheck, each with seeded bugs.
#![deny(missing_docs)]

pub mod lostupdate;
pub mod multipaxos;
