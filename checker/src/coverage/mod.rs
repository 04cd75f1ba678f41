//! Coverage and reachability properties (ARCHITECTURE.md,
//! "Coverage and reachability"): what a search actually exercised, and conditions that
//! must hold in at least one reachable state.
//!
//! * [`Covered`] wraps a program and counts what each step exercises, as
//!   the program names it ([`crate::Covers::cover_step`]: the machine
//!   runtime gives machine kind, message kind and whether the message was
//!   handled, deferred, ignored, dropped or unhandled; a plain program the
//!   actor and the alternative), over distinct transitions for exhaustive
//!   strategies and over every executed step for sampling ones; or, built
//!   with [`Covered::reaching`], ends the execution that reaches a
//!   property as a marked violation ([`reached`]): a search of it is a
//!   search for the property, and its counterexample is a schedule that
//!   replays to the property's state;
//! * [`Coverage`] is the report's section; `check::check_coverage` fills it.

mod count;
mod reach;
mod report;
mod text;

pub use crate::program::{Hit, How};
pub use count::Covered;
pub use reach::{SOMETIMES, reached, reached_property};
pub use report::{CountedOver, Coverage, Entry, Property, Status};
