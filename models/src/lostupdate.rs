//! `lostupdate`: clients increment a shared counter through a server; the
//! smallest model that shows the engine end to end.
//!
//! A server holds a counter. Each of `clients` clients increments it
//! `increments` times by reading it and then writing it back with a
//! compare-and-swap (`Cas{old, new}`), retrying when the swap fails because
//! another client got there first. A monitor checks that when every client
//! is done, the counter equals the number of increments.
//!
//! Liveness (the `increments` monitor, ARCHITECTURE.md, "Liveness"): a client is
//! owed its increments from the start until the last one has succeeded
//! (hot while some client has increments left, halted or not). A failed
//! compare-and-swap means another client's succeeded, so the retries are
//! bounded by the total number of increments: every execution of the
//! correct model ends, with every client done.
//!
//! Symmetry (ARCHITECTURE.md, "Symmetry"): the clients are
//! interchangeable. Each starts with the same state and the same `Go`, the
//! server answers whoever asked (`from`), and neither the monitor nor the
//! counter depends on which client did what; `from` is the only id held.
//!
//! Seeded bugs (run to completion without delays runs the clients one after
//! the other, so each takes a delay to find):
//! 1. `blind-write` ([`Bug::BlindWrite`]): the client writes the new value
//!    with a plain `Write` instead of a compare-and-swap; when two clients
//!    read the same value, one increment is lost.
//! 2. `give-up-on-conflict` ([`Bug::GiveUpOnConflict`], a liveness bug):
//!    the client treats a failed compare-and-swap as fatal and exits
//!    without retrying and without telling anyone, so its increments are
//!    never done; no safety monitor sees it (the counter is only checked
//!    once every client is done).

use mcheck_checker::machine::{Ctx, MachineId, MachineModel, Machines, MonitorError, Renamed, Setup, World};
use mcheck_checker::model::SeededBug;
use mcheck_checker::{BugSpec, Model, ModelInfo, ParamSpec, Params};
use serde::{Deserialize, Serialize};

/// The model (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct LostUpdate;

/// The seeded bugs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Bug {
    /// `blind-write`: a plain write instead of a compare-and-swap.
    BlindWrite,
    /// `give-up-on-conflict` (liveness): the client exits on a failed
    /// compare-and-swap without retrying or telling anyone.
    GiveUpOnConflict,
}

impl SeededBug for Bug {
    const TABLE: &'static [(Bug, BugSpec)] = &[
        (
            Bug::BlindWrite,
            BugSpec::new(
                1,
                "blind-write",
                "the client writes the incremented value with a plain write instead of a compare-and-swap, so two clients that read the same value lose one increment",
            ),
        ),
        (
            Bug::GiveUpOnConflict,
            BugSpec::new(
                2,
                "give-up-on-conflict",
                "liveness: the client treats a failed compare-and-swap as a fatal error and exits without retrying and without telling anyone: when two clients read the same value, the one whose swap fails halts with increments left, which are never done; the execution ends with the increments monitor hot",
            ),
        ),
    ];
}

/// The parameters and their defaults (the only place they are written).
pub const PARAMS: [ParamSpec; 2] = [
    ParamSpec::new("clients", 3, 1..=6, "number of clients"),
    ParamSpec::new("increments", 3, 1..=60, "increments per client").exhaustive_max(5),
];

/// One configuration of the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cfg {
    /// Number of clients.
    pub clients: u8,
    /// Increments per client.
    pub increments: u8,
    /// The seeded bug switched on, if any.
    pub bug: Option<Bug>,
}

impl Cfg {
    /// The configuration for `params` (resolved against [`PARAMS`]).
    pub fn new(params: &Params, bug: Option<Bug>) -> Cfg {
        Cfg {
            clients: params.get("clients") as u8,
            increments: params.get("increments") as u8,
            bug,
        }
    }
}

impl Default for Cfg {
    fn default() -> Self {
        Cfg::new(&Params::defaults(&PARAMS), None)
    }
}

/// The server's id.
const SERVER: MachineId = MachineId(0);

/// The server and its counter.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Server {
    /// The counter (up to 6 clients * 60 increments).
    pub value: u16,
}

/// A client.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Client {
    /// Increments still to do.
    pub left: u8,
    /// Waiting for a reply.
    pub busy: bool,
}

/// The machines.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Machine {
    /// The server.
    Server(Server),
    /// A client.
    Client(Client),
}

/// The messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Msg {
    /// Client: start.
    Go,
    /// Client to server: read the counter.
    Read {
        /// The client.
        from: MachineId,
    },
    /// Server to client: the counter.
    Value(u16),
    /// Client to server: set the counter to `new` if it is `old`.
    Cas {
        /// The client.
        from: MachineId,
        /// The value read.
        old: u16,
        /// The value to write.
        new: u16,
    },
    /// Client to server: set the counter (bug [`Bug::BlindWrite`]).
    Write {
        /// The client.
        from: MachineId,
        /// The value to write.
        new: u16,
    },
    /// Server to client: whether the write happened.
    Written(bool),
}

/// What the monitor observes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Note {
    /// The server's counter changed to this value.
    Set(u16),
    /// A client finished all its increments.
    Done,
}

/// The monitor: the last counter value and how many clients are done.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Monitor {
    value: u16,
    done: u8,
}

impl Server {
    fn handle(&mut self, msg: &Msg, ctx: &mut Ctx<Cfg>) {
        match *msg {
            Msg::Read { from } => ctx.send(from, Msg::Value(self.value)),
            Msg::Cas { from, old, new } => {
                let ok = self.value == old;
                if ok {
                    self.value = new;
                    ctx.announce(Note::Set(new));
                }
                ctx.send(from, Msg::Written(ok));
            }
            Msg::Write { from, new } => {
                self.value = new;
                ctx.announce(Note::Set(new));
                ctx.send(from, Msg::Written(true));
            }
            _ => ctx.assert(false, || format!("server cannot handle {msg:?}")),
        }
    }
}

impl Client {
    fn handle(&mut self, cfg: &Cfg, msg: &Msg, ctx: &mut Ctx<Cfg>) {
        let me = ctx.me();
        match *msg {
            Msg::Go => {
                self.busy = true;
                ctx.send(SERVER, Msg::Read { from: me });
            }
            Msg::Value(v) => {
                let new = v.wrapping_add(1);
                if cfg.bug == Some(Bug::BlindWrite) {
                    ctx.send(SERVER, Msg::Write { from: me, new });
                } else {
                    ctx.send(SERVER, Msg::Cas { from: me, old: v, new });
                }
            }
            Msg::Written(ok) => {
                if ok {
                    self.left -= 1;
                } else if cfg.bug == Some(Bug::GiveUpOnConflict) {
                    self.busy = false;
                    ctx.halt();
                    return;
                }
                if self.left == 0 {
                    self.busy = false;
                    ctx.announce(Note::Done);
                    ctx.halt();
                } else {
                    ctx.send(SERVER, Msg::Read { from: me });
                }
            }
            _ => ctx.assert(false, || format!("client cannot handle {msg:?}")),
        }
    }
}

impl MachineModel for Cfg {
    type Machine = Machine;
    type Msg = Msg;
    type Announce = Note;
    type Monitor = Monitor;

    fn setup(&self, setup: &mut Setup<Self>) {
        setup.create(Machine::Server(Server { value: 0 }));
        for _ in 0..self.clients {
            let c = setup.create(Machine::Client(Client {
                left: self.increments,
                busy: false,
            }));
            setup.send(c, Msg::Go);
        }
    }

    fn kind(&self, m: &Machine) -> &'static str {
        match m {
            Machine::Server(_) => "server",
            Machine::Client(_) => "client",
        }
    }

    fn handle(&self, m: &mut Machine, msg: &Msg, ctx: &mut Ctx<Self>) {
        match m {
            Machine::Server(server) => server.handle(msg, ctx),
            Machine::Client(client) => client.handle(self, msg, ctx),
        }
    }

    fn observe(&self, mon: &mut Monitor, note: &Note) -> Result<(), MonitorError> {
        match note {
            Note::Set(v) => mon.value = *v,
            Note::Done => mon.done += 1,
        }
        let total = u16::from(self.clients) * u16::from(self.increments);
        if mon.done == self.clients && mon.value != total {
            return Err(MonitorError::new(
                "counter",
                format!(
                    "all {} clients are done but the counter is {} instead of {total}: an increment was lost",
                    self.clients, mon.value
                ),
            ));
        }
        Ok(())
    }

    /// Liveness (`increments`): hot while a client, halted or not, has
    /// increments left (see the module docs).
    fn has_liveness(&self) -> bool {
        true
    }

    fn hot(&self, world: &World<Self>) -> bool {
        world
            .slots()
            .iter()
            .any(|s| matches!(&s.machine, Machine::Client(c) if c.left > 0))
    }

    fn owed(&self, world: &World<Self>) -> Option<MonitorError> {
        world.slots().iter().enumerate().find_map(|(i, s)| match &s.machine {
            Machine::Client(c) if c.left > 0 => Some(MonitorError::new(
                "increments",
                format!("client{i} still owes {} of its {} increments", c.left, self.increments),
            )),
            _ => None,
        })
    }

    /// The clients are interchangeable (see the module docs).
    fn symmetry(&self) -> Vec<Vec<MachineId>> {
        vec![(1..=u32::from(self.clients)).map(MachineId).collect()]
    }

    fn rename(&self, value: Renamed<'_, Self>, f: &dyn Fn(MachineId) -> MachineId) {
        if let Renamed::Msg(Msg::Read { from } | Msg::Cas { from, .. } | Msg::Write { from, .. }) = value {
            *from = f(*from);
        }
    }

    fn handlers(&self) -> Vec<(&'static str, &'static str)> {
        let write = if self.bug == Some(Bug::BlindWrite) {
            "Write"
        } else {
            "Cas"
        };
        vec![
            ("client", "Go"),
            ("client", "Value"),
            ("client", "Written"),
            ("server", "Read"),
            ("server", write),
        ]
    }

    fn sometimes(&self) -> Vec<&'static str> {
        vec!["all-clients-done", "counter-at-total"]
    }

    fn holds(&self, world: &World<Self>, property: usize) -> bool {
        let mon = world.monitor();
        match property {
            0 => mon.done == self.clients,
            1 => mon.value == u16::from(self.clients) * u16::from(self.increments),
            _ => false,
        }
    }
}

impl Model for LostUpdate {
    type Program = Machines<Cfg>;

    fn info(&self) -> ModelInfo {
        ModelInfo::new(
            "lostupdate",
            "clients increment a shared counter through a server with read then compare-and-swap",
        )
        .params(PARAMS)
        .bugs(Bug::specs())
    }

    fn build(&self, params: &Params, bug: Option<u32>) -> Machines<Cfg> {
        Machines(Cfg::new(params, Bug::from_build(bug)))
    }
}
