//! The end-to-end tests of the `mcheck` binary and of the library's public
//! API, one module per concern, in one test binary: each binary links the
//! whole registry (every model, explorer and strategy), so one binary
//! rather than one per file keeps the test build's disk and link time
//! small (ARCHITECTURE.md, "Layout"). One module's tests: `cargo test --test all
//! cli::`.

/// The binary's allocator, so that the library's searches here run on it
/// as the CLI's do.
#[global_allocator]
static ALLOC: mcheck::alloc::ThreadCache = mcheck::alloc::ThreadCache;

mod common;

mod browser;
mod checker;
mod cli;
mod counterexamples;
mod coverage;
mod deep;
mod distributed;
mod fuzz;
mod library;
mod lin;
mod liveness;
mod merge;
mod noise;
mod nondeterminism;
mod parallel;
mod races;
mod replay_expectation;
mod scaling;
mod ses_floor;
mod symmetry;
