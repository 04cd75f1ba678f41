//! # mcheck: the model checker and its command line, as a library
//!
//! One dependency is enough: this crate re-exports the checker's public API
//! (programs, explorers, searches, schedules, replay: everything of
//! `mcheck_checker` at the root, as in `mcheck::search::ses`,
//! `mcheck::Schedule`, `mcheck::replay`), the built-in explorers
//! ([`explorers`], [`builtin`]) and the shipped models ([`models`]).
//!
//! In a test, `use mcheck::prelude::*` ([`prelude`]) is enough to write a
//! model and check it with the [`Checker`] builder, whose assertions panic
//! with the counterexample as `mcheck run` prints it:
//!
//! ```
//! use mcheck::models::lostupdate::LostUpdate;
//! use mcheck::prelude::*;
//!
//! let checker = Checker::model(&LostUpdate).set("clients", 2).set("increments", 1);
//! checker.assert_verified();
//! let schedule = checker.assert_reachable("all-clients-done");
//! assert!(schedule.to_text().starts_with("mcheck2:lostupdate:p=clients=2,increments=1:"));
//! ```
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
#![deny(missing_debug_implementations)]

mod args;
pub mod cell;
pub mod checker;
pub mod cli;
pub mod deep;
pub mod distributed;
pub mod html;
pub mod list;
pub mod merge;
pub mod noise;
mod output;
mod plot;
pub mod prelude;
mod printing;
pub mod render;
pub mod scaling;
mod settings;
mod signals;
pub mod stats;
pub mod table;

pub use checker::Checker;
pub use cli::main_with;
pub use mcheck_registry as registry;
pub use registry::Registry;

// The checker's public API, its built-in explorers among it
// (`mcheck::explorers`, `mcheck::builtin`, `mcheck::AnyExplorer`).
pub use mcheck_checker::*;
pub use mcheck_models as models;

/// The README's code blocks, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
