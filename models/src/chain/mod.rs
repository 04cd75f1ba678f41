//! `chain`: chain replication (van Renesse and Schneider) with a master,
//! a ping/pong fault detector, a fault injector and clients.
//!
//! # Machines (ids in creation order: servers, master, timer, clients,
//! injector)
//!
//! Each role is a struct in [`Machine`] with its handler in its own module
//! ([`Server`], [`Master`], [`Client`], [`Injector`]; the timer has no
//! state).
//!
//! * `servers` **servers** `0..S` (kind `"server"`), linked head -> tail.
//!   The head numbers each client update (`seq`, continuing after its own
//!   history), appends it to its history and its `sent` list and forwards
//!   it; every server appends and forwards; the tail applies it to its
//!   store (only the tail keeps a store), answers the client and
//!   acknowledges backwards; every server removes the acknowledged update
//!   from `sent` and passes the acknowledgement on. Queries go to the tail.
//!   A server drops a forwarded update whose `seq` is not above its last
//!   one (a duplicate from a resend). The head recognises a client's
//!   resent update by (client, operation) in its history and does not
//!   number it again; if the tail has acknowledged it (it is no longer in
//!   `sent`), the head answers `UpdDone` itself.
//! * the **master** (kind `"master"`): knows the chain. It runs
//!   `heartbeats` ping rounds on its own from start-up, and one more
//!   whenever a server reports a crash (a report during a round restarts
//!   the round's pings, since a server may have answered and then crashed).
//!   A ping round is `Ping` to every server of its
//!   chain and `Start` to the timer; it handles the timer's `Timeout` once
//!   every server that is still alive has answered (it learns how many
//!   crashed, never which: that is what the ping round finds out), so the
//!   detector is accurate. The servers that did not answer are removed:
//!   a removed head makes its successor head (`BecomeHead`, clients get
//!   `NewHead`), a removed tail makes its predecessor tail (`BecomeTail`,
//!   clients get `NewTail`), a removed middle server links its
//!   neighbours (`NewSucc` to the predecessor, `NewPred` to the
//!   successor). Runs of adjacent removed servers are skipped together.
//! * the **timer** (kind `"timer"`): answers each `Start` with `Timeout`.
//! * the **fault injector** (kind `"injector"`): `failures` times, chooses
//!   a server to crash, or none (`Fail`: the server tells the master that
//!   a crash happened and halts; later sends to it are dropped).
//! * `clients` **clients** (kind `"client"`): for each of `keys` keys,
//!   `update(k, v)` at the head, then `query(k)` at the tail, one at a
//!   time; on `NewHead`/`NewTail` they resend the pending request to the
//!   new server.
//!
//! On `NewPred(p)` a server tells `p` the last sequence number it has
//! (`LastSeq`) and acknowledges to `p` every update it has and no longer
//! waits for (those are at the tail; their acknowledgements may have gone
//! to the crashed server). A server given a new successor holds its
//! forwards until the successor's `LastSeq`, then resends every update of
//! `sent` above it. The tail acknowledges a duplicate again. A server
//! promoted to tail rebuilds its store from its history and commits its
//! `sent` list (answers the clients and acknowledges upstream).
//!
//! # Monitors
//!
//! * `propagation` (an invariant over the world after every step, in
//!   the private `monitor` module): every live server's history is strictly sorted by
//!   sequence number; for every *settled* link `a -> b` (both live,
//!   `a.succ == b`, `b.pred == a`, and `a` has received `b`'s `LastSeq`
//!   since the link was made: this skips links in the middle of a
//!   reconfiguration, as the paper's monitor does) `b`'s history is a
//!   prefix of `a`'s and `a.sent` is `a.hist - b.hist` up to
//!   acknowledgements in flight, with every update of `a.hist - b.hist`
//!   queued at `b`; a live server of the master's chain with work across a
//!   link (unacknowledged updates or a queued query towards its successor,
//!   a queued client update from its predecessor's side) does not link to a
//!   server the master removed unless a reconfiguration message is queued
//!   for it; and a live client does not wait on a head (for an update) or
//!   tail (for a query) that the master removed unless a notification is
//!   queued for it.
//! * `query`: a query returns the value of the last update of its key the
//!   tail acknowledged (by sequence number).
//! * `linearizability`: the clients record each update (`put(key, val)`,
//!   invoked when first sent, done on its `UpdDone`) and query (`get(key)`,
//!   done on its `Answer`; value 0 is "none") in a
//!   [`mcheck_checker::lin::Tracker`] over a key-value map; the history of
//!   every execution must be linearizable (ARCHITECTURE.md, "Linearizability"). Resends
//!   are not new invocations.
//!
//! * liveness (`answered`, `repaired`; the private `monitor::owed`): a
//!   live client waits for an answer, or a crashed server is still in the
//!   master's chain, a server links to a removed one or waits for its new
//!   successor's `LastSeq`. Bug 10 is a liveness bug.
//!
//! Symmetry: the clients are interchangeable (the private `symmetry`
//! module); the servers are not (their ids fix the chain's order).
//!
//! The tail signals `"stable"` (an [`mcheck_checker::Event::Custom`]) when
//! it applies the first update; the custom explorer ([`explorer`]) uses it.

use serde::{Deserialize, Serialize};
mod bug;
mod client;
pub mod explorer;
mod injector;
mod master;
mod monitor;
mod server;
mod symmetry;

pub use bug::Bug;
use mcheck_checker::lin::{Entry, KvMap, Tracker};
use mcheck_checker::machine::{Ctx, MachineId, MachineModel, Machines, MonitorError, Receive, Renamed, Setup, World};
use mcheck_checker::model::SeededBug;
use mcheck_checker::{AnyExplorer, ExplorerSpec, Model, ModelInfo, ParamSpec, Params};

pub use client::Client;
pub use explorer::ChainExplorer;
pub use injector::Injector;
pub use master::Master;
pub use monitor::QueryMonitor;
pub use server::Server;

/// The parameters and their defaults (the only place they are written).
pub const PARAMS: [ParamSpec; 5] = [
    ParamSpec::new("servers", 3, 2..=4, "number of chain servers"),
    ParamSpec::new(
        "failures",
        1,
        0..=3,
        "crashes the fault injector may cause (clamped to servers - 1)",
    ),
    ParamSpec::new(
        "heartbeats",
        1,
        0..=3,
        "ping rounds the master runs on its own from start-up, besides those a crash report starts",
    ),
    ParamSpec::new("clients", 1, 1..=3, "number of clients"),
    ParamSpec::new("keys", 2, 1..=60, "keys each client updates then queries").exhaustive_max(3),
];

/// The parameters a run with `bug` uses: `failures` is clamped to
/// `servers - 1`; [`Bug::PruneOnLastSeq`] needs four servers and
/// [`Bug::StaleDoubleFailure`] two crashes (so at least three servers).
fn effective(params: &Params, bug: Option<Bug>) -> Params {
    let mut servers = params.get("servers");
    let mut failures = params.get("failures").min(servers - 1);
    match bug {
        Some(Bug::PruneOnLastSeq) => servers = servers.max(4),
        Some(Bug::StaleDoubleFailure) => {
            servers = servers.max(3);
            failures = failures.max(2).min(servers - 1);
        }
        _ => {}
    }
    let mut p = params.clone();
    p.set("servers", servers);
    p.set("failures", failures);
    p
}

/// The model (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct Chain;

/// One configuration of the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cfg {
    /// Number of servers (2..=4).
    pub servers: u8,
    /// Crashes the fault injector may cause (at most `servers - 1`).
    pub failures: u8,
    /// Number of clients.
    pub clients: u8,
    /// Keys each client updates then queries.
    pub keys: u8,
    /// Ping rounds the master runs on its own, one after the other, from
    /// start-up (besides the rounds a crash report starts).
    pub heartbeats: u8,
    /// The seeded bug switched on, if any.
    pub bug: Option<Bug>,
}

impl Default for Cfg {
    fn default() -> Self {
        Cfg::new(&Params::defaults(&PARAMS), None)
    }
}

impl Cfg {
    /// The configuration for `params` (resolved against [`PARAMS`]) with
    /// `bug`, after the adjustments [`Model::effective_params`] reports.
    pub fn new(params: &Params, bug: Option<Bug>) -> Cfg {
        let p = effective(params, bug);
        Cfg {
            servers: p.get("servers") as u8,
            failures: p.get("failures") as u8,
            clients: p.get("clients") as u8,
            keys: p.get("keys") as u8,
            heartbeats: p.get("heartbeats") as u8,
            bug,
        }
    }

    fn has(&self, bug: Bug) -> bool {
        self.bug == Some(bug)
    }

    fn master_id(&self) -> MachineId {
        MachineId(self.servers as u32)
    }

    fn timer_id(&self) -> MachineId {
        MachineId(self.servers as u32 + 1)
    }
}

/// One update: sequence number, key, value, and the client (machine id)
/// and its operation number, for the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Upd {
    /// Sequence number given by the head (from 1).
    pub seq: u8,
    /// The key.
    pub key: u8,
    /// The value (from 1).
    pub val: u8,
    /// The client's machine id.
    pub client: u32,
    /// The client's operation number.
    pub op: u8,
}

/// The machines.
#[derive(Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Machine {
    /// A chain server.
    Server(Server),
    /// The master.
    Master(Master),
    /// The timer of the fault detector (answers each `Start` with
    /// `Timeout`).
    Timer,
    /// The fault injector.
    Injector(Injector),
    /// A client.
    Client(Client),
}

/// Not derived: `clone_from` keeps the buffers of a machine of the same
/// kind, as the `MachineModel` contract asks, so that the successors the
/// search makes in one scratch state do not allocate them anew
/// (ARCHITECTURE.md, "Performance design").
impl Clone for Machine {
    fn clone(&self) -> Self {
        match self {
            Machine::Server(s) => Machine::Server(s.clone()),
            Machine::Master(m) => Machine::Master(m.clone()),
            Machine::Timer => Machine::Timer,
            Machine::Injector(i) => Machine::Injector(i.clone()),
            Machine::Client(c) => Machine::Client(c.clone()),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        match (self, source) {
            (Machine::Server(a), Machine::Server(b)) => a.clone_from(b),
            (Machine::Master(a), Machine::Master(b)) => a.clone_from(b),
            (Machine::Injector(a), Machine::Injector(b)) => a.clone_from(b),
            (a, b) => *a = b.clone(),
        }
    }
}

/// The messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Msg {
    /// Client, injector: start.
    Go,
    /// Client to head.
    Update {
        /// The client.
        client: MachineId,
        /// Its operation number.
        op: u8,
        /// The key.
        key: u8,
        /// The value.
        val: u8,
    },
    /// Client to tail.
    Query {
        /// The client.
        client: MachineId,
        /// Its operation number.
        op: u8,
        /// The key.
        key: u8,
    },
    /// Server to successor.
    Fwd {
        /// The sender.
        from: MachineId,
        /// The update.
        upd: Upd,
    },
    /// Server to predecessor: the tail has update `seq`.
    Ack(u8),
    /// Tail to client: update `op` is done.
    UpdDone(u8),
    /// Tail to client: the answer to query `op`.
    Answer {
        /// The operation number.
        op: u8,
        /// The value (0: none).
        val: u8,
    },
    /// Master to itself: run a heartbeat ping round.
    Heartbeat,
    /// Master to server.
    Ping,
    /// Server to master.
    Pong(MachineId),
    /// Master to timer.
    Start,
    /// Timer to master.
    Timeout,
    /// Injector to server: crash.
    Fail,
    /// Crashing server to master (no name: the ping round finds out who).
    Crashed,
    /// Master to server: your new successor.
    NewSucc(MachineId),
    /// Master to server: your new predecessor.
    NewPred(MachineId),
    /// Master to server: you are the head.
    BecomeHead,
    /// Master to server: you are the tail.
    BecomeTail,
    /// Successor to new predecessor: the last sequence number I have.
    LastSeq {
        /// The successor.
        from: MachineId,
        /// Its last sequence number (0: none).
        seq: u8,
    },
    /// Master to clients.
    NewHead(MachineId),
    /// Master to clients.
    NewTail(MachineId),
}

/// What the query monitor observes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Note {
    /// The tail acknowledged an update.
    Acked {
        /// Sequence number.
        seq: u8,
        /// Key.
        key: u8,
        /// Value.
        val: u8,
    },
    /// The tail answered a query.
    Answered {
        /// Key.
        key: u8,
        /// Value returned.
        val: u8,
    },
    /// A client invoked an operation or got its answer (the history
    /// checked for linearizability against a key-value map).
    Client(Entry<KvMap>),
}

/// The monitors' state: the query monitor and the clients' history.
pub type Monitors = (QueryMonitor, Tracker<KvMap>);

impl MachineModel for Cfg {
    type Machine = Machine;
    type Msg = Msg;
    type Announce = Note;
    type Monitor = Monitors;

    fn setup(&self, setup: &mut Setup<Self>) {
        let n = self.servers as u32;
        let servers: Vec<MachineId> = (0..n).map(MachineId).collect();
        for i in 0..n {
            setup.create(Machine::Server(Server {
                pred: i.checked_sub(1).map(MachineId),
                succ: (i + 1 < n).then_some(MachineId(i + 1)),
                linked: true,
                hist: Vec::new(),
                sent: Vec::new(),
                store: vec![0; self.keys as usize],
                counter: 0,
            }));
        }
        let clients: Vec<MachineId> = (0..self.clients as u32).map(|c| MachineId(n + 2 + c)).collect();
        let master = setup.create(Machine::Master(Master {
            chain: servers,
            crashed: 0,
            removed: 0,
            probing: false,
            beats: self.heartbeats,
            ponged: Vec::new(),
            clients: clients.clone(),
        }));
        if self.heartbeats > 0 {
            setup.send(master, Msg::Heartbeat);
        }
        setup.create(Machine::Timer);
        for c in 0..self.clients {
            let id = setup.create(Machine::Client(Client {
                val: c + 1,
                head: MachineId(0),
                tail: MachineId(n - 1),
                op: 0,
            }));
            setup.send(id, Msg::Go);
        }
        let inj = setup.create(Machine::Injector(Injector {
            left: self.failures,
            crashed: Vec::new(),
        }));
        if self.failures > 0 {
            setup.send(inj, Msg::Go);
        }
    }

    fn kind(&self, m: &Machine) -> &'static str {
        match m {
            Machine::Server(_) => "server",
            Machine::Master(_) => "master",
            Machine::Timer => "timer",
            Machine::Injector(_) => "injector",
            Machine::Client(_) => "client",
        }
    }

    fn state_name(&self, m: &Machine) -> Option<String> {
        match m {
            Machine::Server(s) => Some(
                match (s.pred, s.succ) {
                    (None, None) => "alone",
                    (None, Some(_)) => "head",
                    (Some(_), None) => "tail",
                    (Some(_), Some(_)) if !s.linked => "linking",
                    (Some(_), Some(_)) => "middle",
                }
                .to_string(),
            ),
            Machine::Master(m) => Some(if m.probing { "probing" } else { "idle" }.to_string()),
            Machine::Client(c) => Some(format!("op{}", c.op)),
            _ => None,
        }
    }

    fn receive(&self, m: &Machine, msg: &Msg) -> Receive {
        match (m, msg) {
            // Requests wait until the server has been told it is head/tail.
            (Machine::Server(s), Msg::Update { .. }) if s.pred.is_some() => Receive::Defer,
            (Machine::Server(s), Msg::Query { .. }) if s.succ.is_some() => Receive::Defer,
            // The timeout counts once every live server has answered.
            (Machine::Master(m), Msg::Timeout) => {
                let alive = m.chain.len() - (m.crashed - m.removed) as usize;
                if m.ponged.len() < alive {
                    Receive::Defer
                } else {
                    Receive::Handle
                }
            }
            (Machine::Client(c), Msg::NewHead(_)) if self.has(Bug::ClientNotify) && !c.op.is_multiple_of(2) => {
                Receive::Unhandled
            }
            (Machine::Client(c), Msg::NewTail(_)) if self.has(Bug::ClientNotify) && c.op.is_multiple_of(2) => {
                Receive::Unhandled
            }
            _ => Receive::Handle,
        }
    }

    fn handle(&self, m: &mut Machine, msg: &Msg, ctx: &mut Ctx<Self>) {
        match m {
            Machine::Server(s) => s.handle(self, msg, ctx),
            Machine::Master(m) => m.handle(self, msg, ctx),
            Machine::Timer => ctx.send(self.master_id(), Msg::Timeout),
            Machine::Injector(i) => i.handle(self, ctx),
            Machine::Client(c) => c.handle(self, msg, ctx),
        }
    }

    fn observe(&self, (mon, history): &mut Monitors, note: &Note) -> Result<(), MonitorError> {
        match note {
            Note::Acked { seq, key, val } => {
                mon.acked(*seq, *key, *val);
                Ok(())
            }
            Note::Answered { key, val } => mon.answered(*key, *val).map_err(|e| MonitorError::new("query", e)),
            Note::Client(entry) => history.record(entry).map_err(MonitorError::linearizability),
        }
    }

    fn invariant(&self, world: &World<Self>) -> Result<(), MonitorError> {
        monitor::propagation(self, world).map_err(|e| MonitorError::new("propagation", e))
    }

    fn has_liveness(&self) -> bool {
        true
    }

    fn symmetry(&self) -> Vec<Vec<MachineId>> {
        symmetry::groups(self)
    }

    fn rename(&self, value: Renamed<'_, Self>, f: &dyn Fn(MachineId) -> MachineId) {
        symmetry::rename(value, f)
    }

    fn hot(&self, world: &World<Self>) -> bool {
        monitor::owed(self, world).is_some()
    }

    fn owed(&self, world: &World<Self>) -> Option<MonitorError> {
        monitor::owed(self, world).map(|owed| MonitorError::new(owed.monitor(), owed.to_string()))
    }

    fn handlers(&self) -> Vec<(&'static str, &'static str)> {
        vec![
            ("client", "Answer"),
            ("client", "Go"),
            ("client", "NewHead"),
            ("client", "NewTail"),
            ("client", "UpdDone"),
            ("injector", "Go"),
            ("master", "Crashed"),
            ("master", "Heartbeat"),
            ("master", "Pong"),
            ("master", "Timeout"),
            ("server", "Ack"),
            ("server", "BecomeHead"),
            ("server", "BecomeTail"),
            ("server", "Fail"),
            ("server", "Fwd"),
            ("server", "LastSeq"),
            ("server", "NewPred"),
            ("server", "NewSucc"),
            ("server", "Ping"),
            ("server", "Query"),
            ("server", "Update"),
            ("timer", "Start"),
        ]
    }

    fn sometimes(&self) -> Vec<&'static str> {
        vec!["update-then-query-done", "chain-repaired"]
    }

    fn holds(&self, world: &World<Self>, property: usize) -> bool {
        match property {
            // A client's update was acknowledged and its query answered.
            0 => world
                .slots()
                .iter()
                .any(|s| matches!(&s.machine, Machine::Client(c) if c.op >= 2)),
            // The master removed a crashed server from the chain.
            1 => matches!(world.machine(self.master_id()), Machine::Master(m) if m.removed > 0),
            _ => false,
        }
    }
}

impl Model for Chain {
    type Program = Machines<Cfg>;

    fn info(&self) -> ModelInfo {
        ModelInfo::new(
            "chain",
            "chain replication: head, middle and tail servers, a master with a ping/pong fault detector and a \
                timer, a fault injector that crashes servers, and clients that update then query each key; \
                monitors: update propagation along the chain and query consistency (a query returns the last \
                acknowledged update of its key)",
        )
        .params(PARAMS)
        .bugs(Bug::specs())
        .explorer(ExplorerSpec::new(
            "chain-custom",
            "round robin over all machines, servers first until the tail signals that the first update is \
                acknowledged, then the master and the fault injector first (failures after initialisation)",
        ))
    }

    fn build(&self, params: &Params, bug: Option<u32>) -> Machines<Cfg> {
        Machines(Cfg::new(params, Bug::from_build(bug)))
    }

    fn effective_params(&self, params: &Params, bug: Option<u32>) -> Params {
        effective(params, Bug::from_build(bug))
    }

    fn explorer(&self, name: &str) -> Option<AnyExplorer> {
        (name == "chain-custom").then(|| AnyExplorer::custom(ChainExplorer::new()))
    }
}
