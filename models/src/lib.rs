//! Protocol models for mcheck, each with seeded bugs.
#![deny(missing_docs)]

pub mod chain;
pub mod lostupdate;
