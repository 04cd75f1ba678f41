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
//! Monitors: **agreement** (at most one value is chosen per slot, across
//! all learners) and **validity** (a chosen value was proposed by the
//! client).
//!
//! Seeded bugs (each needs the leader change to race with ballot 1's
//! phase 2, hence at least one delay under run to completion):
//!
//! 1. `stale-nack-unhandled`: a deposed leader has no handler for `Nack`.
//! 2. `learner-counts-duplicates`: the learner counts acceptances instead
//!    of distinct acceptors, so a retransmission makes one acceptor count
//!    twice.
//! 3. `takeover-without-phase1`: the new leader skips phase 1 and trusts
//!    its own acceptor log to find free slots.

use mcheck_checker::machine::{Ctx, MachineId, MachineModel, Machines, Receive, Setup};
use mcheck_checker::{BugSpec, Model, ModelInfo, ParamSpec, Params};

/// The model (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct MultiPaxos;

/// One configuration of the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cfg {
    /// Number of nodes (proposer + acceptor + learner each), at least 2.
    pub nodes: u8,
    /// Client updates, which is also the number of log slots.
    pub updates: u8,
    /// The seeded bug switched on, if any.
    pub bug: Option<u32>,
}

impl Default for Cfg {
    fn default() -> Self {
        Cfg {
            nodes: 3,
            updates: 2,
            bug: None,
        }
    }
}

/// A node's proposer role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Not leading: requests are forwarded to the known leader.
    Follower,
    /// Running phase 1 for its ballot: requests are deferred.
    Preparing,
    /// Leading its ballot: requests get slots.
    Leading,
}

/// A node: proposer, acceptor and learner.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Node {
    /// Proposer role.
    pub role: Role,
    /// The ballot it leads or prepares (0: none).
    pub ballot: u8,
    /// The leader it knows (a node index).
    pub leader: u8,
    /// Promises received for `ballot` (a bit per node).
    pub promises: u8,
    /// Per slot, the proposer's `(ballot, value)` (value 0: free).
    pub proposals: Vec<(u8, u8)>,
    /// Acceptor: the highest ballot promised or accepted.
    pub promised: u8,
    /// Acceptor: per slot, the accepted `(ballot, value)` (value 0: none).
    pub accepted: Vec<(u8, u8)>,
    /// Learner: per slot, `(ballot, value, acceptors)`: a bit per acceptor
    /// (a count under bug 2).
    pub votes: Vec<(u8, u8, u8)>,
    /// Learner: per slot, the value learned (0: none).
    pub learned: Vec<u8>,
}

/// The machines.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Machine {
    /// A node.
    Node(Node),
    /// The client.
    Client {
        /// The next value to send (values are `1..=updates`).
        next: u8,
    },
    /// The timer that makes node 1 time out once.
    Timer,
}

/// The messages. Node indices are machine ids (nodes are created first).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
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
}

/// What the monitors observe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Note {
    /// The client proposed this value.
    Proposed(u8),
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

/// The monitors' state: the values proposed (a bit per value) and the
/// value chosen per slot (0: none yet).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Monitor {
    proposed: u32,
    chosen: Vec<u8>,
}

const TIMEOUT_NODE: u8 = 1;

fn id(node: u8) -> MachineId {
    MachineId(node as u32)
}

impl Cfg {
    fn majority(&self) -> u32 {
        self.nodes as u32 / 2 + 1
    }

    /// The node that owns `ballot` (>= 1).
    fn owner(&self, ballot: u8) -> u8 {
        (ballot - 1) % self.nodes
    }

    /// Acceptor side: a higher ballot was seen; a leader of a lower one
    /// steps down.
    fn see_ballot(&self, node: &mut Node, me: u8, ballot: u8) {
        if ballot > node.promised {
            node.promised = ballot;
        }
        let owner = self.owner(node.promised);
        if node.promised > node.ballot && owner != me {
            node.role = Role::Follower;
            node.leader = owner;
        }
    }

    fn on_request(&self, node: &mut Node, value: u8, ctx: &mut Ctx<Self>) {
        match node.role {
            Role::Follower => ctx.send(id(node.leader), Msg::Request(value)),
            // Deferred by `receive`.
            Role::Preparing => {}
            Role::Leading => {
                if let Some(slot) = node.proposals.iter().position(|p| p.1 == value) {
                    // A retransmitted request: retransmit its Accept unless
                    // it is already learned.
                    if node.learned[slot] == 0 {
                        self.propose(node, slot as u8, ctx);
                    }
                } else if let Some(slot) = node.proposals.iter().position(|p| p.1 == 0) {
                    node.proposals[slot] = (node.ballot, value);
                    self.propose(node, slot as u8, ctx);
                }
                // A full log drops the request (no liveness is checked).
            }
        }
    }

    /// Phase 2 for `slot`: accept locally, then ask the other acceptors.
    fn propose(&self, node: &mut Node, slot: u8, ctx: &mut Ctx<Self>) {
        let me = ctx.me().0 as u8;
        let (ballot, value) = (node.ballot, node.proposals[slot as usize].1);
        node.promised = node.promised.max(ballot);
        node.accepted[slot as usize] = (ballot, value);
        self.learn(node, me, ballot, slot, value, ctx);
        for n in (0..self.nodes).filter(|&n| n != me) {
            ctx.send(id(n), Msg::Accept { ballot, slot, value });
        }
    }

    /// Learner: acceptor `from` accepted `(ballot, slot, value)`.
    fn learn(&self, node: &mut Node, from: u8, ballot: u8, slot: u8, value: u8, ctx: &mut Ctx<Self>) {
        let s = slot as usize;
        let vote = &mut node.votes[s];
        if ballot > vote.0 {
            *vote = (ballot, value, 0);
        }
        if ballot != vote.0 {
            return;
        }
        let count = if self.bug == Some(2) {
            // Bug 2: count messages, not acceptors.
            vote.2 += 1;
            vote.2 as u32
        } else {
            vote.2 |= 1 << from;
            vote.2.count_ones()
        };
        if node.learned[s] == 0 && count >= self.majority() {
            node.learned[s] = vote.1;
            ctx.announce(Note::Chosen {
                slot,
                value: vote.1,
                by: ctx.me().0 as u8,
            });
        }
    }

    fn lead(&self, node: &mut Node, ctx: &mut Ctx<Self>) {
        node.role = Role::Leading;
        for slot in 0..self.updates {
            if node.proposals[slot as usize].1 != 0 {
                node.proposals[slot as usize].0 = node.ballot;
                self.propose(node, slot, ctx);
            }
        }
    }

    /// Proposer: a promise for `ballot` from `from` with its log.
    fn promise(&self, node: &mut Node, from: u8, log: &[(u8, u8)], ctx: &mut Ctx<Self>) {
        node.promises |= 1 << from;
        for (mine, theirs) in node.proposals.iter_mut().zip(log) {
            if theirs.1 != 0 && theirs.0 >= mine.0 {
                *mine = *theirs;
            }
        }
        if node.promises.count_ones() >= self.majority() {
            self.lead(node, ctx);
        }
    }

    fn on_node(&self, node: &mut Node, msg: &Msg, ctx: &mut Ctx<Self>) {
        let me = ctx.me().0 as u8;
        match msg {
            Msg::Request(v) => self.on_request(node, *v, ctx),
            Msg::Timeout => {
                let mut ballot = node.promised + 1;
                while self.owner(ballot) != me {
                    ballot += 1;
                }
                node.ballot = ballot;
                node.leader = me;
                node.promised = ballot;
                if self.bug == Some(3) {
                    // Bug 3: no phase 1; the local acceptor log stands in
                    // for a majority's.
                    node.proposals = node.accepted.clone();
                    self.lead(node, ctx);
                } else {
                    node.role = Role::Preparing;
                    node.promises = 0;
                    node.proposals = vec![(0, 0); self.updates as usize];
                    let log = node.accepted.clone();
                    self.promise(node, me, &log, ctx);
                    for n in (0..self.nodes).filter(|&n| n != me) {
                        ctx.send(id(n), Msg::Prepare { ballot });
                    }
                }
            }
            Msg::Prepare { ballot } => {
                let from = self.owner(*ballot);
                if *ballot > node.promised {
                    self.see_ballot(node, me, *ballot);
                    let log = node.accepted.clone();
                    ctx.send(
                        id(from),
                        Msg::Promise {
                            ballot: *ballot,
                            from: me,
                            log,
                        },
                    );
                } else {
                    let promised = node.promised;
                    ctx.send(
                        id(from),
                        Msg::Nack {
                            ballot: *ballot,
                            promised,
                        },
                    );
                }
            }
            Msg::Promise { ballot, from, log } => {
                if node.role == Role::Preparing && *ballot == node.ballot {
                    self.promise(node, *from, log, ctx);
                }
            }
            Msg::Accept { ballot, slot, value } => {
                let leader = self.owner(*ballot);
                if *ballot >= node.promised {
                    self.see_ballot(node, me, *ballot);
                    node.accepted[*slot as usize] = (*ballot, *value);
                    ctx.send(
                        id(leader),
                        Msg::Accepted {
                            ballot: *ballot,
                            slot: *slot,
                            value: *value,
                            from: me,
                        },
                    );
                } else {
                    let promised = node.promised;
                    ctx.send(
                        id(leader),
                        Msg::Nack {
                            ballot: *ballot,
                            promised,
                        },
                    );
                }
            }
            Msg::Accepted {
                ballot,
                slot,
                value,
                from,
            } => self.learn(node, *from, *ballot, *slot, *value, ctx),
            Msg::Nack { ballot, promised } => {
                // A follower ignores a Nack in `receive` (bug 1: it is
                // unhandled there); a stale one for an older ballot is
                // ignored here.
                if *ballot == node.ballot && *promised > node.ballot {
                    node.role = Role::Follower;
                    node.leader = self.owner(*promised);
                }
            }
            Msg::Go => ctx.assert(false, || format!("node{me} cannot handle {msg:?}")),
        }
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
            }));
        }
        let client = setup.create(Machine::Client { next: 1 });
        setup.send(client, Msg::Go);
        let timer = setup.create(Machine::Timer);
        setup.send(timer, Msg::Go);
        setup.monitor(Monitor {
            proposed: 0,
            chosen: vec![0; slots],
        });
    }

    fn kind(&self, m: &Machine) -> &'static str {
        match m {
            Machine::Node(_) => "node",
            Machine::Client { .. } => "client",
            Machine::Timer => "timer",
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
                if self.bug == Some(1) {
                    // Bug 1: only a leader was expected to get rejections.
                    Receive::Unhandled
                } else {
                    Receive::Ignore
                }
            }
            (Machine::Node(_), Msg::Go) => Receive::Unhandled,
            (Machine::Client { .. } | Machine::Timer, Msg::Go) => Receive::Handle,
            (Machine::Client { .. } | Machine::Timer, _) => Receive::Unhandled,
            _ => Receive::Handle,
        }
    }

    fn handle(&self, m: &mut Machine, msg: &Msg, ctx: &mut Ctx<Self>) {
        match m {
            Machine::Node(node) => self.on_node(node, msg, ctx),
            Machine::Client { next } => {
                let to = ctx.choose(self.nodes as u32, "target") as u8;
                if *next <= self.updates {
                    let value = *next;
                    ctx.announce(Note::Proposed(value));
                    ctx.send(id(to), Msg::Request(value));
                    *next += 1;
                    ctx.send(ctx.me(), Msg::Go);
                } else {
                    // No reply came for the first update: retransmit it once.
                    ctx.send(id(to), Msg::Request(1));
                    ctx.halt();
                }
            }
            Machine::Timer => {
                ctx.send(id(TIMEOUT_NODE), Msg::Timeout);
                ctx.halt();
            }
        }
    }

    fn observe(&self, mon: &mut Monitor, note: &Note) -> Result<(), (&'static str, String)> {
        match note {
            Note::Proposed(v) => mon.proposed |= 1 << v,
            Note::Chosen { slot, value, by } => {
                if mon.proposed & (1 << value) == 0 {
                    return Err((
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
                    return Err((
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
}

impl Model for MultiPaxos {
    type Program = Machines<Cfg>;

    fn info(&self) -> ModelInfo {
        ModelInfo {
            name: "multipaxos",
            description: "Multi-Paxos: a leader runs phase 2 per log slot, one leader change runs phase 1, a client sends updates to any node",
            params: vec![
                ParamSpec {
                    name: "nodes",
                    default: 3,
                    min: 2,
                    max: 5,
                    description: "nodes, each proposer, acceptor and learner",
                },
                ParamSpec {
                    name: "updates",
                    default: 2,
                    min: 1,
                    max: 4,
                    description: "client updates, which is also the number of log slots",
                },
            ],
            bugs: vec![
                BugSpec {
                    id: 1,
                    name: "stale-nack-unhandled",
                    description: "a deposed leader has no handler for Nack: node 1 times out and sends Prepare(2) while node 0 (leader of ballot 1) has a client request still queued; node 0 then proposes it, accepting locally and sending Accept(1, slot, v) to nodes 1 and 2, which have promised ballot 2 and answer Nack(1, promised 2); the Prepare(2) already in node 0's inbox makes it step down to follower first, so the stale Nack reaches a follower, which does not handle it (an unhandled event)",
                },
                BugSpec {
                    id: 2,
                    name: "learner-counts-duplicates",
                    description: "the learner counts acceptances per slot instead of the set of acceptors: node 1 times out and nodes 1 and 2 promise ballot 2 (empty logs) while node 0 still has the client's request v1 and its retransmission queued; node 0 proposes v1 in slot 0 (accepting locally, counted once; nodes 1 and 2 answer Nack), then the retransmitted request makes it re-propose slot 0 and accept locally again, counted a second time, so node 0 announces v1 chosen in slot 0 with a single acceptor; node 1, whose majority never saw v1, puts the next request v2 in slot 0 and gets it chosen (agreement violated)",
                },
                BugSpec {
                    id: 3,
                    name: "takeover-without-phase1",
                    description: "the timed-out node takes ballot 2 without running phase 1, trusting its own acceptor log to find the free slots: node 1 times out before node 0's Accept(1, 0, v1) reaches it, so its log shows slot 0 free; node 2 accepts v1, which with node 0's own acceptance is chosen in slot 0, and node 1 (rejecting the late Accept with a Nack) then puts the next request v2 in slot 0 with Accept(2, 0, v2), which the other acceptors take because ballot 2 is higher, so v2 is chosen in slot 0 too (agreement violated)",
                },
            ],
            explorers: vec![],
            notes: "",
        }
    }

    fn build(&self, params: &Params, bug: Option<u32>) -> Machines<Cfg> {
        Machines(Cfg {
            nodes: params.get("nodes") as u8,
            updates: params.get("updates") as u8,
            bug,
        })
    }
}
