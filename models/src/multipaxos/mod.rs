//! `multipaxos`: Multi-Paxos with a stable leader, a per-slot log, one
//! leader change and a client whose updates may reach any node.
//!
//! `nodes` nodes each act as proposer, acceptor and learner over a log of
//! `updates` slots. Ballot `b` (from 1) belongs to node `(b - 1) % nodes`.
//! Node 0 starts as the leader of ballot 1; as ballot 1 is the lowest,
//! nothing can have been accepted before it, so node 0 skips phase 1 (the
//! usual Multi-Paxos start-up). A client sends `updates` requests (values
//! 1, 2, ...), each to a node of its choice, then retransmits its first
//! request once (its reply may have been lost); a node that is not the
//! leader forwards a request to the leader it knows. The leader puts a new
//! request in the first free slot (a retransmitted one in its old slot,
//! unless learned) and runs phase 2 for it: it accepts it locally and sends
//! `Accept(b, slot, v)` to the other acceptors, which answer `Accepted` to
//! the ballot's leader (the learner of that ballot) or `Nack` when they
//! have promised a higher ballot. A learner records which acceptors
//! accepted `(b, slot)` and announces the value chosen when they are a
//! majority.
//!
//! A timer makes node 1 time out once: it takes ballot 2 and runs phase 1
//! (`Prepare(2)` / `Promise` carrying every slot's accepted `(ballot,
//! value)`; it promises locally), defers requests meanwhile, then
//! re-proposes in each slot the value of the highest ballot reported by a
//! majority and uses the other slots for new requests. A leader that learns
//! of a higher ballot (a `Prepare`, an `Accept` or a `Nack`) steps down.
//! Every inbox is FIFO, so acceptors see ballot 1's `Accept`s and ballot
//! 2's `Prepare` in the same order; the races come from the leaders' local
//! acceptance and from requests that reach a leader late.
//!
//! A node applies the learned slots in order and answers the client
//! `Reply(value, slot)` for each (a slot waits for every slot before it).
//! The client, after its retransmission, waits for the replies and halts
//! once every value is answered.
//!
//! Monitors: **agreement** (at most one value is chosen per slot, across
//! all learners), **validity** (a chosen value was proposed by the
//! client), **linearizability** (each value an `Append` of a
//! [`mcheck_checker::lin::Log`], its process the value itself since the
//! client pipelines, invoked when first sent and answered by its slot;
//! ARCHITECTURE.md, "Linearizability") and the liveness monitor **answered**
//! ([`Cfg::owed`]). Symmetry: nodes 2 and up are interchangeable (the
//! private `symmetry` module; a group from `nodes=4`).
//!
//! Seeded bugs (each needs the leader change to race with ballot 1's
//! phase 2, hence at least one delay under run to completion):
//!
//! 1. `stale-nack-unhandled` ([`Bug::StaleNackUnhandled`]): a deposed leader has no handler for `Nack`.
//! 2. `learner-counts-duplicates` ([`Bug::LearnerCountsDuplicates`]): the learner counts acceptances instead
//!    of distinct acceptors, so a retransmission makes one acceptor count
//!    twice.
//! 3. `takeover-without-phase1` ([`Bug::TakeoverWithoutPhase1`]): the new leader skips phase 1 and trusts
//!    its own acceptor log to find free slots.

use crate::noise;
use mcheck_checker::lin::{Entry, Log, LogOp, LogRet, Tracker};
use mcheck_checker::machine::{Ctx, MachineId, MachineModel, Machines, MonitorError, Receive, Renamed, Setup, World};
use mcheck_checker::model::SeededBug;
use mcheck_checker::{BugSpec, Model, ModelInfo, ParamSpec, Params};
use serde::{Deserialize, Serialize};

mod node;
mod symmetry;

pub use node::{Node, Role};

/// The model (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct MultiPaxos;

/// The seeded bugs (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Bug {
    /// A deposed leader has no handler for `Nack`.
    StaleNackUnhandled,
    /// The learner counts acceptances, not distinct acceptors.
    LearnerCountsDuplicates,
    /// The new leader skips phase 1 (a row of the noise benchmark,
    /// `crate::noise::ROWS`).
    TakeoverWithoutPhase1,
}

impl SeededBug for Bug {
    const TABLE: &'static [(Bug, BugSpec)] = &[
        (
            Bug::StaleNackUnhandled,
            BugSpec::new(
                1,
                "stale-nack-unhandled",
                "a deposed leader has no handler for Nack: node 1 times out and sends Prepare(2) while node 0 (leader of ballot 1) has a client request still queued; node 0 then proposes it, accepting locally and sending Accept(1, slot, v) to nodes 1 and 2, which have promised ballot 2 and answer Nack(1, promised 2); the Prepare(2) already in node 0's inbox makes it step down to follower first, so the stale Nack reaches a follower, which does not handle it (an unhandled event)",
            ),
        ),
        (
            Bug::LearnerCountsDuplicates,
            BugSpec::new(
                2,
                "learner-counts-duplicates",
                "the learner counts acceptances per slot instead of the set of acceptors: node 1 times out and nodes 1 and 2 promise ballot 2 (empty logs) while node 0 still has the client's request v1 and its retransmission queued; node 0 proposes v1 in slot 0 (accepting locally, counted once; nodes 1 and 2 answer Nack), then the retransmitted request makes it re-propose slot 0 and accept locally again, counted a second time, so node 0 announces v1 chosen in slot 0 with a single acceptor; node 1, whose majority never saw v1, puts the next request v2 in slot 0 and gets it chosen (agreement violated)",
            ),
        ),
        (
            Bug::TakeoverWithoutPhase1,
            BugSpec::new(
                3,
                "takeover-without-phase1",
                "the timed-out node takes ballot 2 without running phase 1, trusting its own acceptor log to find the free slots: node 1 times out before node 0's Accept(1, 0, v1) reaches it, so its log shows slot 0 free; node 2 accepts v1, which with node 0's own acceptance is chosen in slot 0, and node 1 (rejecting the late Accept with a Nack) then puts the next request v2 in slot 0 with Accept(2, 0, v2), which the other acceptors take because ballot 2 is higher, so v2 is chosen in slot 0 too (agreement violated)",
            ),
        ),
    ];
}

/// The parameters and their defaults (the only place they are written).
pub const PARAMS: [ParamSpec; 3] = [
    ParamSpec::new("nodes", 3, 2..=5, "nodes, each proposer, acceptor and learner"),
    ParamSpec::new(
        "updates",
        2,
        1..=60,
        "client updates, which is also the number of log slots",
    )
    .exhaustive_max(4),
    noise::PARAM,
];

/// One configuration of the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cfg {
    /// Number of nodes (proposer + acceptor + learner each), at least 2.
    pub nodes: u8,
    /// Client updates, which is also the number of log slots.
    pub updates: u8,
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

/// The client.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Client {
    /// The next value to send (values are `1..=updates`; `updates + 1`
    /// once all are sent, `updates + 2` after the retransmission).
    pub next: u8,
    /// The values answered (a bit per value).
    pub answered: u64,
}

/// The machines.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Machine {
    /// A node.
    Node(Node),
    /// The client.
    Client(Client),
    /// The timer that makes node 1 time out once.
    Timer,
    /// A background actor ([`crate::noise`]).
    Noise(noise::Actor),
}

/// The messages. Node indices are machine ids (nodes are created first).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Msg {
    /// Client, timer: act.
    Go,
    /// Timer to node 1: the leader looks dead; take over.
    Timeout,
    /// Client (or a forwarding node) to a node: put `value` in the log.
    Request(u8),
    /// Phase 1a.
    Prepare {
        /// The ballot.
        ballot: u8,
    },
    /// Phase 1b: the acceptor `from` promises `ballot` and reports its log.
    Promise {
        /// The ballot promised.
        ballot: u8,
        /// The acceptor.
        from: u8,
        /// Per slot, its accepted `(ballot, value)`.
        log: Vec<(u8, u8)>,
    },
    /// Phase 2a.
    Accept {
        /// The ballot.
        ballot: u8,
        /// The slot.
        slot: u8,
        /// The value.
        value: u8,
    },
    /// Phase 2b, to the ballot's leader (its learner).
    Accepted {
        /// The ballot.
        ballot: u8,
        /// The slot.
        slot: u8,
        /// The value.
        value: u8,
        /// The acceptor.
        from: u8,
    },
    /// An acceptor rejects `ballot`: it has promised `promised`.
    Nack {
        /// The rejected ballot.
        ballot: u8,
        /// The acceptor's promise.
        promised: u8,
    },
    /// A node to the client: `value` is applied at position `slot` of the
    /// log (every slot up to it is chosen).
    Reply {
        /// The value.
        value: u8,
        /// Its slot.
        slot: u8,
    },
    /// Background traffic ([`crate::noise`]).
    Noise(noise::Msg),
}

/// What the monitors observe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Note {
    /// The client proposed this value.
    Proposed(u8),
    /// The client's history (an append per value, its process the value
    /// itself, answered by the slot), checked for linearizability against
    /// a log.
    Client(Entry<Log>),
    /// A learner learned that `value` is chosen in `slot`.
    Chosen {
        /// The slot.
        slot: u8,
        /// The value.
        value: u8,
        /// The learner (node index).
        by: u8,
    },
}

/// The monitors' state: the values proposed (a bit per value), the
/// value chosen per slot (0: none yet) and the client's history.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Monitor {
    proposed: u64,
    chosen: Vec<u8>,
    history: Tracker<Log>,
}

const TIMEOUT_NODE: u8 = 1;

pub(crate) fn id(node: u8) -> MachineId {
    MachineId(node as u32)
}

impl Cfg {
    /// The configuration for `params` (resolved against [`PARAMS`]).
    pub fn new(params: &Params, bug: Option<Bug>) -> Cfg {
        Cfg {
            nodes: params.get("nodes") as u8,
            updates: params.get("updates") as u8,
            noise: params.get(noise::NOISE_PARAM) as u8,
            bug,
        }
    }

    pub(crate) fn majority(&self) -> u32 {
        self.nodes as u32 / 2 + 1
    }

    /// The node that owns `ballot` (>= 1).
    pub(crate) fn client_id(&self) -> MachineId {
        MachineId(self.nodes as u32)
    }

    pub(crate) fn owner(&self, ballot: u8) -> u8 {
        (ballot - 1) % self.nodes
    }

    /// Send `msg` to every node but `me`.
    pub(crate) fn to_others(&self, me: u8, msg: Msg, ctx: &mut Ctx<Self>) {
        for n in (0..self.nodes).filter(|&n| n != me) {
            ctx.send(id(n), msg.clone());
        }
    }
}

impl Client {
    fn done(&self, cfg: &Cfg) -> bool {
        self.answered.count_ones() == u32::from(cfg.updates)
    }

    fn handle(&mut self, cfg: &Cfg, msg: &Msg, ctx: &mut Ctx<Cfg>) {
        if let Msg::Reply { value, slot } = *msg {
            if self.answered & (1 << value) == 0 {
                self.answered |= 1 << value;
                let ret = LogRet::Index(u64::from(slot));
                ctx.announce(Note::Client(Entry::Return {
                    process: u32::from(value),
                    ret,
                }));
                if self.done(cfg) && self.next > cfg.updates {
                    ctx.halt();
                }
            }
            return;
        }
        let to = ctx.choose(cfg.nodes as u32, "target") as u8;
        if self.next <= cfg.updates {
            let value = self.next;
            ctx.announce(Note::Proposed(value));
            ctx.announce(Note::Client(Entry::Invoke {
                process: u32::from(value),
                op: LogOp::Append(u64::from(value)),
            }));
            ctx.send(id(to), Msg::Request(value));
            self.next += 1;
            ctx.send(ctx.me(), Msg::Go);
        } else if self.done(cfg) {
            ctx.halt();
        } else {
            // The first update may be unanswered because its request was
            // lost with a deposed leader: retransmit it once (not a new
            // invocation), then wait for the replies.
            if self.answered & 2 == 0 {
                ctx.send(id(to), Msg::Request(1));
            }
            self.next += 1;
        }
    }
}

impl Cfg {
    /// The liveness monitor `answered` (ARCHITECTURE.md, "Liveness"):
    /// what is owed in `world`, if anything. The client retransmits once
    /// and a deposed leader's proposals may be lost with it, so a request
    /// is owed only once the *current* leader holds it: a node that is
    /// not a follower and whose ballot no node has promised to exceed
    /// (nobody competes with it any more). Every value in its proposals
    /// or in a `Request` queued at it must be answered: chosen in its
    /// slot, applied after every slot before it, and the reply received.
    ///
    /// The value owed first, the leader that holds it and the leader's
    /// ballot.
    pub fn unanswered(&self, world: &World<Self>) -> Option<(u8, u8, u8)> {
        let mut answered = 0;
        let mut top = 0;
        for (_, m) in world.live() {
            if let Machine::Node(n) = m {
                top = top.max(n.promised);
            }
        }
        for slot in world.slots() {
            if let Machine::Client(c) = &slot.machine {
                answered = c.answered;
            }
        }
        let leader = (0..self.nodes).find(
            |&n| matches!(world.machine(id(n)), Machine::Node(x) if x.role != Role::Follower && x.ballot >= top),
        )?;
        let Machine::Node(l) = world.machine(id(leader)) else {
            return None;
        };
        let queued = world.inbox(id(leader)).iter().filter_map(|(_, m)| match m {
            Msg::Request(v) => Some(*v),
            _ => None,
        });
        let held = l.proposals.iter().map(|p| p.1).chain(queued);
        let v = held.filter(|&v| v != 0 && answered & (1 << v) == 0).min()?;
        Some((v, leader, l.ballot))
    }
}

impl MachineModel for Cfg {
    type Machine = Machine;
    type Msg = Msg;
    type Announce = Note;
    type Monitor = Monitor;

    fn setup(&self, setup: &mut Setup<Self>) {
        let slots = self.updates as usize;
        for n in 0..self.nodes {
            let leader = n == 0;
            setup.create(Machine::Node(Node {
                role: if leader { Role::Leading } else { Role::Follower },
                ballot: if leader { 1 } else { 0 },
                leader: 0,
                promises: 0,
                proposals: vec![(0, 0); slots],
                promised: 0,
                accepted: vec![(0, 0); slots],
                votes: vec![(0, 0, 0); slots],
                learned: vec![0; slots],
                applied: 0,
            }));
        }
        let client = setup.create(Machine::Client(Client { next: 1, answered: 0 }));
        setup.send(client, Msg::Go);
        let timer = setup.create(Machine::Timer);
        setup.send(timer, Msg::Go);
        noise::setup(setup, self.noise, Machine::Noise, Msg::Noise);
        setup.monitor(Monitor {
            proposed: 0,
            chosen: vec![0; slots],
            history: Tracker::default(),
        });
    }

    fn kind(&self, m: &Machine) -> &'static str {
        match m {
            Machine::Node(_) => "node",
            Machine::Client(_) => "client",
            Machine::Timer => "timer",
            Machine::Noise(a) => a.kind(),
        }
    }

    fn state_name(&self, m: &Machine) -> Option<String> {
        match m {
            Machine::Node(n) => Some(format!("{:?}", n.role)),
            _ => None,
        }
    }

    fn receive(&self, m: &Machine, msg: &Msg) -> Receive {
        match (m, msg) {
            (Machine::Node(n), Msg::Request(_)) if n.role == Role::Preparing => Receive::Defer,
            (Machine::Node(n), Msg::Nack { .. }) if n.role == Role::Follower => {
                if self.bug == Some(Bug::StaleNackUnhandled) {
                    // Only a leader was expected to get rejections.
                    Receive::Unhandled
                } else {
                    Receive::Ignore
                }
            }
            (Machine::Node(_), Msg::Go) => Receive::Unhandled,
            (Machine::Client(_) | Machine::Timer, Msg::Go) => Receive::Handle,
            (Machine::Client(_), Msg::Reply { .. }) => Receive::Handle,
            (Machine::Noise(_), Msg::Noise(_)) => Receive::Handle,
            (Machine::Client(_) | Machine::Timer | Machine::Noise(_), _) => Receive::Unhandled,
            _ => Receive::Handle,
        }
    }

    fn handle(&self, m: &mut Machine, msg: &Msg, ctx: &mut Ctx<Self>) {
        match m {
            Machine::Node(node) => node.handle(self, msg, ctx),
            Machine::Client(client) => client.handle(self, msg, ctx),
            Machine::Timer => {
                ctx.send(id(TIMEOUT_NODE), Msg::Timeout);
                ctx.halt();
            }
            Machine::Noise(a) => {
                let m = if let Msg::Noise(m) = msg { Some(m) } else { None };
                a.handle(m, ctx, Msg::Noise)
            }
        }
    }

    fn observe(&self, mon: &mut Monitor, note: &Note) -> Result<(), MonitorError> {
        match note {
            Note::Proposed(v) => mon.proposed |= 1 << v,
            Note::Client(entry) => mon.history.record(entry).map_err(MonitorError::linearizability)?,
            Note::Chosen { slot, value, by } => {
                if mon.proposed & (1 << value) == 0 {
                    return Err(MonitorError::new(
                        "validity",
                        format!("node{by} learned value {value} in slot {slot}, which no client proposed"),
                    ));
                }
                let s = *slot as usize;
                if mon.chosen.len() <= s {
                    mon.chosen.resize(s + 1, 0);
                }
                let chosen = &mut mon.chosen[s];
                if *chosen != 0 && *chosen != *value {
                    return Err(MonitorError::new(
                        "agreement",
                        format!(
                            "node{by} learned value {value} in slot {slot}, where value {} was chosen",
                            *chosen
                        ),
                    ));
                }
                *chosen = *value;
            }
        }
        Ok(())
    }

    fn has_liveness(&self) -> bool {
        true
    }

    fn symmetry(&self) -> Vec<Vec<MachineId>> {
        symmetry::groups(self)
    }

    fn rename(&self, value: Renamed<'_, Self>, f: &dyn Fn(MachineId) -> MachineId) {
        symmetry::rename(self, value, f)
    }

    fn hot(&self, world: &World<Self>) -> bool {
        self.unanswered(world).is_some()
    }

    fn owed(&self, world: &World<Self>) -> Option<MonitorError> {
        let (v, leader, ballot) = self.unanswered(world)?;
        let owed = format!("value {v} is held by node{leader}, the leader of ballot {ballot}, and not answered");
        Some(MonitorError::new("answered", owed))
    }

    fn handlers(&self) -> Vec<(&'static str, &'static str)> {
        let mut h = vec![
            ("client", "Go"),
            ("client", "Reply"),
            ("node", "Accept"),
            ("node", "Accepted"),
            ("node", "Prepare"),
            ("node", "Promise"),
            ("node", "Request"),
            ("node", "Timeout"),
            ("timer", "Go"),
        ];
        h.extend(noise::handlers(self.noise));
        h
    }

    fn sometimes(&self) -> Vec<&'static str> {
        vec!["value-chosen", "every-update-chosen"]
    }

    fn holds(&self, world: &World<Self>, property: usize) -> bool {
        let chosen = world.monitor().chosen.iter().filter(|v| **v != 0).count();
        match property {
            0 => chosen > 0,
            1 => chosen >= usize::from(self.updates),
            _ => false,
        }
    }
}

impl Model for MultiPaxos {
    type Program = Machines<Cfg>;

    fn info(&self) -> ModelInfo {
        ModelInfo::new("multipaxos", "Multi-Paxos: a leader runs phase 2 per log slot, one leader change runs phase 1, a client sends updates to any node").params(PARAMS).bugs(Bug::specs())
    }

    fn build(&self, params: &Params, bug: Option<u32>) -> Machines<Cfg> {
        Machines(Cfg::new(params, Bug::from_build(bug)))
    }
}
