//! The shipped models' tests, one module per model or concern in one
//! test binary (each binary would instantiate the search for the models
//! again).

mod chain;
mod common;
mod coverage;
mod deep;
mod hybrid;
mod liveness;
mod lostupdate;
mod multipaxos;
mod noise;
mod params;
mod paxos;
mod plain;
mod raft;
mod symmetry;
mod twopc;
mod twophase;
mod twophase_packed;
