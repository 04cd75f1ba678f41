//! What a model and its tests need, in one import:
//! `use mcheck::prelude::*;` brings the machine runtime's traits and types
//! ([`MachineModel`], [`Machines`], [`Ctx`], [`Setup`], [`MachineId`]),
//! the [`Model`] description ([`ModelInfo`], [`ParamSpec`], [`BugSpec`],
//! [`Params`]), the [`Program`] and [`Explorer`] traits, and the
//! [`Checker`] builder with what it takes ([`Strategy`], [`Config`],
//! [`builtin`] explorers, [`AnyExplorer`]).
//!
//! ```
//! use mcheck::prelude::*;
//!
//! /// Two clients increment a counter by reading it, then writing it back.
//! struct Counter;
//!
//! #[derive(Clone, Debug, PartialEq, Eq, Hash)]
//! enum Machine { Server(u8), Client }
//! #[derive(Clone, Debug, PartialEq, Eq, Hash)]
//! enum Msg { Go, Read(MachineId), Value(u8), Write(u8) }
//!
//! impl MachineModel for Counter {
//!     type Machine = Machine;
//!     type Msg = Msg;
//!     type Announce = ();
//!     type Monitor = ();
//!     fn setup(&self, s: &mut Setup<Self>) {
//!         s.create(Machine::Server(0));
//!         for _ in 0..2 {
//!             let c = s.create(Machine::Client);
//!             s.send(c, Msg::Go);
//!         }
//!     }
//!     fn kind(&self, m: &Machine) -> &'static str {
//!         match m { Machine::Server(_) => "server", Machine::Client => "client" }
//!     }
//!     fn handle(&self, m: &mut Machine, msg: &Msg, ctx: &mut Ctx<Self>) {
//!         let me = ctx.me();
//!         match (m, msg) {
//!             (Machine::Client, Msg::Go) => ctx.send(MachineId(0), Msg::Read(me)),
//!             (Machine::Client, Msg::Value(v)) => ctx.send(MachineId(0), Msg::Write(v + 1)),
//!             (Machine::Server(n), Msg::Read(from)) => ctx.send(*from, Msg::Value(*n)),
//!             (Machine::Server(n), Msg::Write(v)) => *n = *v,
//!             _ => {}
//!         }
//!     }
//! }
//!
//! let report = Checker::new(&Machines(Counter)).run().unwrap();
//! assert!(report.is_verified()); // nothing is asserted: the lost update goes unseen
//! ```

pub use crate::checker::Checker;
pub use mcheck_checker::machine::{Ctx, MachineId, MachineModel, Machines, Setup};
pub use mcheck_checker::{
    AnyExplorer, BugSpec, Config, Explorer, Model, ModelInfo, ParamSpec, Params, Program, Strategy, builtin,
};
