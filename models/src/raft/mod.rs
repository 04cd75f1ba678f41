//! `raft`: the Raft consensus protocol (Ongaro and Ousterhout, 2014) with
//! crashes, elections, a retrying client and seeded bugs that real Raft
//! implementations have had.
//!
//! # Machines (ids in creation order)
//!
//! * `server0..` (`servers` of them): persistent state (current term,
//!   voted-for, log) that survives a crash and volatile state (role, commit
//!   index, the leader's next and match indexes, the candidate's votes) that
//!   does not. The cluster starts in term 1 with `server0` its leader (the
//!   others voted for it and know it) and empty logs. Elections are
//!   bounded globally:
//!   the servers share `elections` election timeouts, one pending at a
//!   time as a `Timeout` to a server (the first one to `server1`). When a
//!   server's timeout fires it arms the timer of a server of its choice
//!   (itself included) while the budget lasts, and, unless it leads, starts
//!   an election in the next term (`RequestVote` to the others, granted to
//!   a candidate whose log is at least as up to date by last term then
//!   length, once per term). So terms stay below `2 + elections` and every
//!   run terminates. A leader sends `Append` (the entries from the
//!   follower's next index, with the previous index and term and its commit
//!   index) on winning an election, on every client request, after a
//!   refusal (backing up the next index) and after it commits (as etcd's
//!   leader does, so that the followers learn the new commit index at
//!   once); it commits the highest index replicated on a majority whose
//!   entry is of its own term, then applies and acknowledges it (`Ack` to
//!   the client); it never backs a next
//!   index up to or below the match index. A follower accepts an
//!   `Append` whose previous entry it holds, replaces only the entries that
//!   conflict, and applies up to the leader's commit index.
//! * `client<servers>`: submits commands `1..=requests`, then `reads`
//!   reads of the log, one at a time to the
//!   server it believes leads (at first `server0`, then the last one it
//!   used) and tries the next server on a `Redirect` or when its timer (a
//!   `ClientTimeout` to itself) fires; after two attempts it gives the
//!   operation up and goes on with the next one.
//! * `injector<servers+1>`: up to `crashes` times, crashes a server of its
//!   choice, or stops. A crashed server restarts at once: it keeps its
//!   persistent state, becomes a follower with commit index 0, and
//!   re-applies its log as the commit index rises again.
//!
//! Delivery: see [`Cfg::delivery_of`]; the `network` parameter says how
//! server-to-server messages travel: by default unordered and lossy;
//! `network=3` also duplicates, at most `duplicates` messages (once each)
//! in an execution. Messages that can no longer change anything (a vote
//! or an append reply of an older term, a vote already counted, a success
//! already counted: see [`Server::stale`]) leave the network at once, as
//! if delivered to no effect: they would only multiply states
//! (ARCHITECTURE.md, "The network").
//!
//! # Configurations
//!
//! The default (3 servers, 1 request, 1 election, 1 crash, an unordered
//! and lossy network) is verified by SES, and every bug is found there in
//! seconds (bugs 1 and 5 raise `elections` to what their races need);
//! `docs/models.md` has the figures, written by `mcheck list --markdown
//! --measure`. Adding one duplicate (`network=3`) multiplies the states
//! about nine times. Exhaustive search does not finish much beyond the
//! default; larger configurations (requests and elections up to 60) are
//! for sampling, where executions run to hundreds of steps (`-s ss --set
//! requests=30,elections=10`: up to 300).
//!
//! # Monitors
//!
//! Raft's safety properties (the paper's Figure 3) and the client's view:
//! `election-safety` (at most one leader per term), `log-matching` (two
//! logs with an entry of the same index and term are identical up to it),
//! `leader-completeness` (a leader holds every entry committed in an
//! earlier term), `state-machine-safety` (no two servers apply different
//! commands at one index; no index is committed with two entries) and
//! `durability` (an acknowledged command is in the logs of a majority, so
//! no acknowledged command is lost).
//!
//! # Linearizability
//!
//! The client records its operations in a [`lin::Tracker`] over a
//! [`lin::Log`] kept in the monitor state (ARCHITECTURE.md,
//! "Linearizability"): operation `k` is process `k`, invoked when first
//! sent; an `Ack` carries the commands committed before the operation, so
//! a command returns its position and a read (`reads`, after the
//! commands; a read goes through the log like a command) returns the log.
//! An operation never answered, or given up after its attempts, stays
//! pending. The tracker's open operations and configurations are hashed:
//! with one client they are a function of the client's state and the
//! acknowledged set, so the default's state count is unchanged.
//!
//! # Liveness
//!
//! Two monitors say what is owed ([`answered`], [`leader_elected`]):
//! `answered` is hot while the client holds an operation neither answered
//! nor given up (its timer is never lost, so the correct client always
//! ends cold); `leader-elected` is hot while no server leads the highest
//! term and an election timeout is still pending. A spent budget
//! discharges both: with no timeout left, a lost `RequestVote` or a split
//! vote may leave the cluster leaderless for good, and a lost `Append` an
//! entry uncommitted (the model's leader does not retransmit on a timer),
//! which no bounded retry could repair, so neither is owed. With bounded
//! budgets the correct model has no cycle, and a liveness bug shows as an
//! execution that ends hot (bug 7).
//!
//! # Symmetry
//!
//! None declared: the servers are not interchangeable. `server0` starts as
//! the leader of term 1 and the others as its voters, the first election
//! timeout goes to `server1`, and the client tries servers in the cyclic
//! order `server0, server1, ..`; so no permutation of the servers maps the
//! initial state to itself except the identity, for 3 servers. For more
//! servers the followers `server2..` share the first two roles, but the
//! client's order (after `server2` comes `server3`) is preserved only by
//! the identity among them, so no group (not even the followers) keeps
//! the transitions commuting with the permutations. The client and the
//! injector are one each.
//!
//! # Seeded bugs
//!
//! See [`Bug`] (its [`SeededBug::TABLE`] explains each race): bugs 1 to 5
//! break a safety monitor, bug 6 only the client's history
//! (linearizability), bug 7 only liveness.

use serde::{Deserialize, Serialize};
mod bug;
mod client;
mod liveness;
mod monitor;
mod server;

pub use client::{Client, Injector};
pub use liveness::{answered, leader_elected};
pub use monitor::{Committed, Monitor, Verdict, check, observe};
pub use server::{Role, Server};

use crate::noise;
pub use bug::Bug;
use mcheck_checker::lin;
use mcheck_checker::machine::{Ctx, Delivery, MachineId, MachineModel, Machines, MonitorError, Setup, World};
use mcheck_checker::model::SeededBug;
use mcheck_checker::{Model, ModelInfo, ParamSpec, Params};
use std::fmt;

/// The model (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct Raft;

/// The parameters and their defaults (the only place they are written).
pub const PARAMS: [ParamSpec; 8] = [
    ParamSpec::new(
        "servers",
        3,
        1..=5,
        "number of Raft servers (a majority is servers/2+1)",
    ),
    ParamSpec::new("requests", 1, 0..=60, "commands the client submits, one at a time").exhaustive_max(1),
    ParamSpec::new(
        "elections",
        1,
        0..=60,
        "election timeouts the servers share (so terms stay at most 1 + elections)",
    )
    .exhaustive_max(3),
    ParamSpec::new(
        "network",
        2,
        0..=3,
        "how server-to-server messages travel: 0 FIFO and reliable, 1 unordered, 2 unordered and lossy, 3 unordered, lossy and duplicating (each message at most once, at most `duplicates` of them per execution)",
    ),
    ParamSpec::new(
        "duplicates",
        1,
        0..=60,
        "messages the network may duplicate in one execution (network=3; each at most once)",
    )
    .exhaustive_max(1),
    ParamSpec::new(
        "crashes",
        1,
        0..=60,
        "crashes (each followed by a restart) the fault injector may cause",
    )
    .exhaustive_max(1),
    ParamSpec::new(
        "reads",
        0,
        0..=3,
        "reads of the whole log the client makes after its commands (through the log, like its commands)",
    )
    .exhaustive_max(1),
    noise::PARAM,
];

/// One configuration of the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cfg {
    /// Number of servers.
    pub servers: u8,
    /// Commands the client submits.
    pub requests: u8,
    /// Election timeouts the servers share.
    pub elections: u8,
    /// Crashes the injector may cause.
    pub crashes: u8,
    /// How server-to-server messages travel (see [`Cfg::delivery_of`]).
    pub network: u8,
    /// Messages the network may duplicate in one execution.
    pub duplicates: u8,
    /// Reads the client makes after its commands.
    pub reads: u8,
    /// Background client/store pairs ([`crate::noise`]).
    pub noise: u8,
    /// The seeded bug switched on, if any.
    pub bug: Option<Bug>,
}

impl Default for Cfg {
    fn default() -> Self {
        Cfg::new(&Params::defaults(&PARAMS), None)
    }
}

/// The elections and reads a bug's race needs (the one place that says
/// so): the Figure 8 race takes three elections, the double vote two, the
/// double append a read that shows it.
fn room_needed(bug: Option<Bug>) -> (u8, u8) {
    match bug {
        Some(Bug::Figure8Commit) => (3, 0),
        Some(Bug::VolatileVote) => (2, 0),
        Some(Bug::RetryAppendedTwice) => (0, 1),
        _ => (0, 0),
    }
}

impl Cfg {
    /// The configuration for `params` (resolved against [`PARAMS`]).
    pub fn new(params: &Params, bug: Option<Bug>) -> Cfg {
        Cfg {
            servers: params.get("servers") as u8,
            requests: params.get("requests") as u8,
            elections: params.get("elections") as u8,
            crashes: params.get("crashes") as u8,
            network: params.get("network") as u8,
            duplicates: params.get("duplicates") as u8,
            reads: params.get("reads") as u8,
            noise: params.get(noise::NOISE_PARAM) as u8,
            bug,
        }
        .with_room_for(bug)
    }

    /// Raises the bounds a bug's race needs ([`room_needed`]).
    fn with_room_for(mut self, bug: Option<Bug>) -> Cfg {
        let (elections, reads) = room_needed(bug);
        self.elections = self.elections.max(elections);
        self.reads = self.reads.max(reads);
        self
    }

    /// Whether the seeded bug `bug` is switched on.
    pub fn has(&self, bug: Bug) -> bool {
        self.bug == Some(bug)
    }

    /// The client's operations: commands `1..=requests`, then reads.
    pub fn ops(&self) -> u8 {
        self.requests + self.reads
    }

    /// Whether operation `op` is a command (else a read).
    pub fn is_command(&self, op: u8) -> bool {
        op <= self.requests
    }

    /// Size of a majority of servers.
    pub fn majority(&self) -> u32 {
        u32::from(self.servers) / 2 + 1
    }

    /// How a message travels (the one place that says so): server-to-server
    /// messages as `network` says (0: FIFO and reliable, 1: unordered, 2:
    /// also lossy, 3: also duplicated, each message at most once and at
    /// most [`Cfg::duplicates`] of them in an execution, see
    /// `duplicate_budget`); timers fire at any time
    /// (unordered, never lost); client traffic, crashes and starts are FIFO
    /// and reliable.
    pub fn delivery_of(&self, msg: &Msg) -> Delivery {
        match msg {
            Msg::RequestVote { .. } | Msg::Vote { .. } | Msg::Append(_) | Msg::AppendReply { .. } => Delivery {
                unordered: self.network >= 1,
                lossy: self.network >= 2,
                duplicates: u8::from(self.network >= 3),
            },
            Msg::Timeout { .. } | Msg::ClientTimeout(_) => Delivery {
                unordered: true,
                lossy: false,
                duplicates: 0,
            },
            Msg::Go | Msg::Crash | Msg::Request(_) | Msg::Ack { .. } | Msg::Redirect { .. } | Msg::Noise(_) => {
                Delivery::FIFO
            }
        }
    }

    /// The client's id.
    pub fn client(&self) -> MachineId {
        MachineId(u32::from(self.servers))
    }
}

/// A log entry: the term it was created in and the client's operation (a
/// command, or a read: [`Cfg::is_command`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Entry {
    /// The term of the leader that appended it.
    pub term: u8,
    /// The command (from 1).
    pub cmd: u8,
}

impl fmt::Debug for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "(t{} c{})", self.term, self.cmd)
    }
}

/// The AppendEntries request.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Append {
    /// The leader's term.
    pub term: u8,
    /// The leader.
    pub from: u8,
    /// Index of the entry before `entries`.
    pub prev_index: u8,
    /// Its term.
    pub prev_term: u8,
    /// The entries from `prev_index + 1` on (none: a heartbeat).
    pub entries: Vec<Entry>,
    /// The leader's commit index.
    pub commit: u8,
}

/// The messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Msg {
    /// Client and injector: start.
    Go,
    /// A server's election timer fired (one of the shared budget).
    Timeout {
        /// Timeouts left in the budget after this one.
        left: u8,
    },
    /// Client to itself: its timer for this command fired.
    ClientTimeout(u8),
    /// Injector to server: crash and restart.
    Crash,
    /// Candidate to server.
    RequestVote {
        /// The candidate's term.
        term: u8,
        /// The candidate.
        from: u8,
        /// Index of its last entry.
        last_index: u8,
        /// Term of its last entry.
        last_term: u8,
    },
    /// Server to candidate.
    Vote {
        /// The voter's term.
        term: u8,
        /// The voter.
        from: u8,
        /// Whether it voted for the candidate.
        granted: bool,
    },
    /// Leader to server.
    Append(Append),
    /// Server to leader.
    AppendReply {
        /// The follower's term.
        term: u8,
        /// The follower.
        from: u8,
        /// Whether it accepted the request.
        success: bool,
        /// On success the last index the request covered; on failure its
        /// previous index.
        index: u8,
    },
    /// Client to server: an operation (a command or a read).
    Request(u8),
    /// Leader to client: the operation is committed.
    Ack {
        /// The operation.
        cmd: u8,
        /// The commands committed before it, in log order (a command's
        /// position is their number; a read returns them).
        before: Vec<u8>,
    },
    /// Non-leader to client: ask someone else.
    Redirect {
        /// The command.
        cmd: u8,
        /// The server that refused it.
        from: u8,
    },
    /// Background traffic ([`crate::noise`]).
    Noise(noise::Msg),
}

/// What the machines tell the monitors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Note {
    /// A server became the leader of a term.
    Leader {
        /// The term.
        term: u8,
        /// The server.
        id: u8,
    },
    /// A leader committed an entry.
    Committed {
        /// Its index.
        index: u8,
        /// The entry.
        entry: Entry,
        /// The leader.
        by: u8,
        /// The leader's term.
        term: u8,
    },
    /// A server applied a command.
    Applied {
        /// The server.
        server: u8,
        /// The index.
        index: u8,
        /// The command.
        cmd: u8,
    },
    /// The client received the acknowledgement of a command.
    Acked(u8),
    /// The client invoked an operation or got its answer (the history
    /// checked for linearizability against a log).
    Client(lin::Entry<lin::Log>),
}

/// The machines.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Machine {
    /// A Raft server.
    Server(Server),
    /// The client.
    Client(Client),
    /// The fault injector.
    Injector(Injector),
    /// A background actor ([`crate::noise`]).
    Noise(noise::Actor),
}

impl MachineModel for Cfg {
    type Machine = Machine;
    type Msg = Msg;
    type Announce = Note;
    type Monitor = Monitor;

    fn setup(&self, setup: &mut Setup<Self>) {
        for id in 0..self.servers {
            setup.create(Machine::Server(Server::new(self, id)));
        }
        if self.elections > 0 && self.servers > 1 {
            setup.send(
                MachineId(1),
                Msg::Timeout {
                    left: self.elections - 1,
                },
            );
        }
        let client = setup.create(Machine::Client(Client::new()));
        setup.send(client, Msg::Go);
        if self.crashes > 0 {
            let injector = setup.create(Machine::Injector(Injector { left: self.crashes }));
            setup.send(injector, Msg::Go);
        }
        noise::setup(setup, self.noise, Machine::Noise, Msg::Noise);
        setup.monitor(Monitor {
            leaders: vec![0, 1],
            ..Monitor::default()
        });
    }

    fn kind(&self, m: &Machine) -> &'static str {
        match m {
            Machine::Server(_) => "server",
            Machine::Client(_) => "client",
            Machine::Injector(_) => "injector",
            Machine::Noise(a) => a.kind(),
        }
    }

    fn state_name(&self, m: &Machine) -> Option<String> {
        match m {
            Machine::Server(s) => {
                let role = match s.role {
                    Role::Follower => "Follower",
                    Role::Candidate { .. } => "Candidate",
                    Role::Leader { .. } => "Leader",
                };
                Some(format!("{role}@{} log={:?} commit={}", s.term, s.log, s.commit))
            }
            Machine::Client(c) => Some(format!("c{} attempt {}", c.cmd, c.attempts)),
            Machine::Injector(_) | Machine::Noise(_) => None,
        }
    }

    fn handle(&self, m: &mut Machine, msg: &Msg, ctx: &mut Ctx<Self>) {
        match m {
            Machine::Server(s) => s.handle(self, msg, ctx),
            Machine::Client(c) => c.handle(self, msg, ctx),
            Machine::Injector(i) => i.handle(self, msg, ctx),
            Machine::Noise(a) => {
                let m = if let Msg::Noise(m) = msg { Some(m) } else { None };
                a.handle(m, ctx, Msg::Noise)
            }
        }
    }

    fn delivery(&self, msg: &Msg) -> Delivery {
        self.delivery_of(msg)
    }

    fn duplicate_budget(&self) -> Option<u32> {
        Some(u32::from(self.duplicates))
    }

    fn stale(&self, m: &Machine, msg: &Msg) -> bool {
        match m {
            Machine::Server(s) => s.stale(self, msg),
            Machine::Client(c) => c.stale(msg),
            Machine::Injector(_) | Machine::Noise(_) => false,
        }
    }

    fn observe(&self, mon: &mut Monitor, note: &Note) -> Verdict {
        observe(mon, note)
    }

    /// Liveness (see the module docs, "Liveness"): `answered` and
    /// `leader-elected`.
    fn has_liveness(&self) -> bool {
        true
    }

    fn hot(&self, world: &World<Self>) -> bool {
        liveness::hot(self, world)
    }

    fn owed(&self, world: &World<Self>) -> Option<MonitorError> {
        liveness::owed(self, world)
    }

    fn invariant(&self, world: &World<Self>) -> Verdict {
        let servers: Vec<&Server> = world
            .slots()
            .iter()
            .filter_map(|s| match &s.machine {
                Machine::Server(s) => Some(s),
                _ => None,
            })
            .collect();
        check(self, &servers, world.monitor())
    }

    fn handlers(&self) -> Vec<(&'static str, &'static str)> {
        let mut h = vec![
            ("client", "Ack"),
            ("client", "ClientTimeout"),
            ("client", "Go"),
            ("client", "Redirect"),
            ("server", "Append"),
            ("server", "AppendReply"),
            ("server", "Request"),
        ];
        if self.elections > 0 && self.servers > 1 {
            h.extend([("server", "RequestVote"), ("server", "Timeout"), ("server", "Vote")]);
        }
        if self.crashes > 0 {
            h.extend([("injector", "Go"), ("server", "Crash")]);
        }
        h.extend(noise::handlers(self.noise));
        h
    }

    fn sometimes(&self) -> Vec<&'static str> {
        let mut s = vec!["entry-committed", "command-acked"];
        if self.elections > 0 && self.servers > 1 {
            s.push("new-leader-elected");
        }
        s
    }

    fn holds(&self, world: &World<Self>, property: usize) -> bool {
        let mon = world.monitor();
        match property {
            0 => !mon.committed.is_empty(),
            1 => mon.acked != 0,
            // A leader of a term after the first (index = term).
            2 => mon.leaders.iter().skip(2).any(|l| *l != 0),
            _ => false,
        }
    }
}

impl Model for Raft {
    type Program = Machines<Cfg>;

    fn info(&self) -> ModelInfo {
        ModelInfo::new(
            "raft",
            "Raft with crashes and restarts, elections by timeout, a client that retries elsewhere on a redirect \
                or a timeout, and server-to-server messages that may be reordered, lost and (network=3) \
                duplicated; monitors: election safety, log matching, leader completeness, state machine safety, \
                durability of acknowledged commands, linearizability of the client's history, and liveness \
                (answered, leader-elected)",
        )
        .params(PARAMS)
        .bugs(Bug::specs())
    }

    fn build(&self, params: &Params, bug: Option<u32>) -> Machines<Cfg> {
        Machines(Cfg::new(params, Bug::from_build(bug)))
    }

    /// The parameters the run uses: `elections` and `reads` raised to what
    /// the bug's race needs, so that reports and schedules show it.
    fn effective_params(&self, params: &Params, bug: Option<u32>) -> Params {
        let mut p = params.clone();
        let (elections, reads) = room_needed(Bug::from_build(bug));
        p.set("elections", p.get("elections").max(u64::from(elections)));
        p.set("reads", p.get("reads").max(u64::from(reads)));
        p
    }
}
