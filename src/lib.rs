//! # mcheck: the command line, as a library
//!
//! The CLI is a function over a [`Registry`] of models, so a crate with its
//! own models gets the same CLI with a three-line `main`:
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     mcheck::main_with(&mcheck::Registry::builtin(), std::env::args().skip(1))
//! }
//! ```
#![deny(missing_docs)]

mod args;
pub mod cli;
mod output;
mod printing;
pub mod registry;
pub mod render;
mod settings;
mod signals;
pub mod table;

pub use cli::main_with;
pub use registry::Registry;

/// The README's code blocks, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
