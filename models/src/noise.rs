//! The noise benchmark (`mcheck table --noise`, ARCHITECTURE.md,
//! "Models"): seeded bugs whose race happens once per execution (one
//! leader change, one timeout, one message overtaken once), among
//! `noise` independent background actors whose traffic cannot affect the
//! bug. The published prediction (Emmi, Qadeer and Rakamarić, POPL 2011)
//! is that a random walk or PCT must hit the one reordering among ever
//! more events as the actors grow while a delay bound does not depend on
//! their number; measured here, the random techniques' counts stay flat
//! and the delaying ones grow (docs/experiments.md, "One-shot bugs among
//! many actors").
//!
//! The actors ([`Actor`]) are the same in every model that takes the
//! `noise` parameter ([`PARAM`]): `noise` clients of keys of another
//! shard, each with the store that serves its key, the client putting
//! [`PUTS`] values one at a time and waiting for each acknowledgement.
//! They are created after every machine of the protocol (so the
//! protocol's ids, and with `noise=0` every state count, stay as they
//! were) and exchange messages only with each other: a pair is a chain of
//! `1 + 2 * PUTS` steps with one step enabled at a time, so it has
//! `2 + 2 * PUTS` states ([`pair_states`]) and `n` pairs multiply the
//! protocol's states by that to the `n`.
//!
//! [`ROWS`] are the benchmark's rows: a model, a bug, its base
//! parameters (in `--set` syntax) and the parameter that adds the actors.

use mcheck_checker::ParamSpec;
use mcheck_checker::machine::{Ctx, MachineId, MachineModel, Setup};
use serde::{Deserialize, Serialize};

/// The name of the parameter that adds the background actors.
pub const NOISE_PARAM: &str = "noise";

/// The most client/store pairs a model takes.
pub const MAX_NOISE: u64 = 128;

/// The `noise` parameter, the same in every model that has it; 0 by
/// default, so the model's defaults are as they were.
pub const PARAM: ParamSpec = ParamSpec::new(
    NOISE_PARAM,
    0,
    0..=MAX_NOISE,
    "independent background clients, each putting values to a key of another shard on a store of its own: traffic that cannot affect the protocol (the noise benchmark)",
);

/// The values each background client puts, one at a time.
pub const PUTS: u8 = 2;

/// A background actor.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Actor {
    /// A client of a key of another shard.
    Client {
        /// The store that serves its key.
        store: MachineId,
        /// Values still to put.
        left: u8,
    },
    /// The store that serves one client's key.
    Store {
        /// The key's value (the last put).
        value: u8,
    },
}

/// A background message.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Msg {
    /// Client: start.
    Go,
    /// Client to store: set the key to `value`.
    Put {
        /// The client.
        from: MachineId,
        /// The value.
        value: u8,
    },
    /// Store to client: the put is done.
    Done,
}

/// Create `noise` store/client pairs (after the protocol's machines) and
/// queue each client's `Go`; `machine` and `msg` wrap an actor and a
/// message in the model's own types.
pub fn setup<M: MachineModel>(
    setup: &mut Setup<M>,
    noise: u8,
    machine: fn(Actor) -> M::Machine,
    msg: fn(Msg) -> M::Msg,
) {
    for _ in 0..noise {
        let store = setup.create(machine(Actor::Store { value: 0 }));
        let client = setup.create(machine(Actor::Client { store, left: PUTS }));
        setup.send(client, msg(Msg::Go));
    }
}

impl Actor {
    /// The actor's kind, for explorers and traces.
    pub fn kind(&self) -> &'static str {
        match self {
            Actor::Client { .. } => "noise-client",
            Actor::Store { .. } => "noise-store",
        }
    }

    /// Handle `msg`, `None` for a message of the protocol (which an actor
    /// cannot handle); `wrap` puts a background message in the model's
    /// type.
    pub fn handle<M: MachineModel>(&mut self, msg: Option<&Msg>, ctx: &mut Ctx<M>, wrap: fn(Msg) -> M::Msg) {
        let Some(msg) = msg else {
            let kind = self.kind();
            return ctx.assert(false, || format!("{kind} cannot handle a message of the protocol"));
        };
        match (self, msg) {
            (Actor::Client { store, left }, Msg::Go | Msg::Done) => {
                if *msg == Msg::Done {
                    *left -= 1;
                }
                if *left == 0 {
                    ctx.halt();
                } else {
                    let value = PUTS + 1 - *left;
                    let from = ctx.me();
                    ctx.send(*store, wrap(Msg::Put { from, value }));
                }
            }
            (Actor::Store { value }, Msg::Put { from, value: v }) => {
                *value = *v;
                ctx.send(*from, wrap(Msg::Done));
            }
            (actor, msg) => ctx.assert(false, || format!("{} cannot handle {msg:?}", actor.kind())),
        }
    }
}

/// The handlers the background actors run, for a model's
/// `MachineModel::handlers` (none without actors).
pub fn handlers(noise: u8) -> Vec<(&'static str, &'static str)> {
    if noise == 0 {
        return vec![];
    }
    vec![("noise-client", "Done"), ("noise-client", "Go"), ("noise-store", "Put")]
}

/// The reachable states of one client/store pair alone: its `1 + 2 *
/// PUTS` steps happen one after the other, so one more state than steps.
pub const fn pair_states() -> u64 {
    2 + 2 * PUTS as u64
}

/// One row of the noise benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoiseRow {
    /// The model.
    pub model: &'static str,
    /// The seeded bug.
    pub bug: u32,
    /// The base parameters (`--set` syntax), where the bug's race happens
    /// once per execution.
    pub params: &'static str,
    /// The parameter that adds the background actors.
    pub param: &'static str,
    /// The race, and the published bug or report it mirrors.
    pub mirrors: &'static str,
}

/// The sizes of [`NOISE_PARAM`] that `mcheck table --noise` runs.
pub const SIZES: &[u64] = &[1, 4, 16, 64];

/// The rows of `mcheck table --noise`, each a bug whose race happens once
/// per execution at its base parameters.
pub const ROWS: &[NoiseRow] = &[
    NoiseRow {
        model: "raft",
        bug: 2,
        params: "requests=1,elections=1",
        param: NOISE_PARAM,
        mirrors: "one leader change while the leader's Append is in flight; votes granted without the election restriction (Raft, section 5.4.1), as reported in jgroups-raft issue 14 and akka-raft issue 30",
    },
    NoiseRow {
        model: "paxos",
        bug: 2,
        params: "proposals=1",
        param: NOISE_PARAM,
        mirrors: "one Accept overtaken by a higher Prepare; an acceptor that checks an Accept against its accepted ballot instead of its promise, Cassandra's lightweight transactions in CASSANDRA-6023 (\"CAS should distinguish promised and accepted ballots\")",
    },
    NoiseRow {
        model: "multipaxos",
        bug: 3,
        params: "updates=2",
        param: NOISE_PARAM,
        mirrors: "one leader takeover racing the old leader's Accept; a new leader that skips phase 1 and trusts its own log (the recovery step that Paxos Made Live and ZooKeeper's Zab synchronisation phase exist for); no single published report",
    },
    NoiseRow {
        model: "2pc",
        bug: 1,
        params: "transactions=1",
        param: NOISE_PARAM,
        mirrors: "one coordinator timeout between two votes; a vote handler that does not check the transaction is still undecided, the timeout-versus-vote race of the TaxDC collection's distributed-concurrency bugs (a local timeout racing a message); no single published report",
    },
    NoiseRow {
        model: "2pc",
        bug: 2,
        params: "transactions=1",
        param: NOISE_PARAM,
        mirrors: "one stale timer message overtaking the decision; a timeout handler that does not check the transaction is still undecided (a late timer after a failed cancel, the class of TaxDC's timeout bugs); no single published report",
    },
];

/// The row of `model`'s bug `bug`, if the benchmark has one.
pub fn noise_row(model: &str, bug: u32) -> Option<&'static NoiseRow> {
    ROWS.iter().find(|r| r.model == model && r.bug == bug)
}
