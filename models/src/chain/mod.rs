//! `chain`: chain replication (van Renesse and Schneider) with a master,
//! a ping/pong fault detector, a fault injector and clients.
//!
//! # Machines (ids in creation order: servers, master, timer, clients,
//! injector)
//!
//! * `servers` **servers** `0..S` (kind `"server"`), linked head -> tail.
//!   The head numbers each client update (`seq`, continuing after its own
//!   history), appends it to its history and its `sent` list and forwards
//!   it; every server appends and forwards; the tail applies it to its
//!   store (only the tail keeps a store), answers the client and
//!   acknowledges backwards; every server removes the acknowledged update
//!   from `sent` and passes the acknowledgement on. Queries go to the tail.
//!   A server drops a forwarded update whose `seq` is not above its last
//!   one (a duplicate from a resend).
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
//!
//! The tail signals `"stable"` (an [`mcheck_checker::Event::Custom`]) when
//! it applies the first update; the custom explorer ([`explorer`]) uses it.

pub mod explorer;
mod monitor;

use mcheck_checker::machine::{Ctx, MachineId, MachineModel, Machines, Receive, Setup, World};
use mcheck_checker::{BoxedExplorer, BugSpec, ExplorerSpec, Model, ModelInfo, ParamSpec, Params};

pub use explorer::ChainExplorer;
pub use monitor::QueryMonitor;

/// Bug 1: a promoted tail does not rebuild its store.
pub const BUG_STALE_STORE: u32 = 1;
/// Bug 2: no resend of unacknowledged updates to a new successor.
pub const BUG_NO_RESEND: u32 = 2;
/// Bug 3: an unknown acknowledgement removes the oldest entry.
pub const BUG_ACK_WRONG_ENTRY: u32 = 3;
/// Bug 4: clients handle only the notification for their pending request.
pub const BUG_CLIENT_NOTIFY: u32 = 4;
/// Bug 5: the master repairs a double failure from its stale chain.
pub const BUG_STALE_DOUBLE_FAILURE: u32 = 5;
/// Bug 6: a new head numbers updates from its own stale counter.
pub const BUG_NEW_HEAD_SEQ: u32 = 6;
/// Bug 7: a predecessor prunes what its new successor has.
pub const BUG_PRUNE_ON_LASTSEQ: u32 = 7;

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
    pub bug: Option<u32>,
}

impl Default for Cfg {
    fn default() -> Self {
        Cfg {
            servers: 3,
            failures: 1,
            clients: 1,
            keys: 2,
            heartbeats: 1,
            bug: None,
        }
    }
}

/// One update: sequence number, key, value, and the client (machine id)
/// and its operation number, for the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Machine {
    /// A chain server.
    Server {
        /// Predecessor (`None`: head).
        pred: Option<MachineId>,
        /// Successor (`None`: tail).
        succ: Option<MachineId>,
        /// Whether the successor's `LastSeq` arrived since the link was made.
        linked: bool,
        /// Updates applied, in sequence order.
        hist: Vec<Upd>,
        /// Updates forwarded and not yet acknowledged.
        sent: Vec<Upd>,
        /// Per key, the value (0: none); kept by the tail only.
        store: Vec<u8>,
        /// The head's own counter (used only by bug 6).
        counter: u8,
    },
    /// The master.
    Master {
        /// The chain, head first.
        chain: Vec<MachineId>,
        /// Crashes reported so far.
        crashed: u8,
        /// Servers removed so far.
        removed: u8,
        /// Whether a ping round is running.
        probing: bool,
        /// Heartbeat rounds left.
        beats: u8,
        /// Servers that answered this round's ping.
        ponged: Vec<MachineId>,
        /// The clients to notify.
        clients: Vec<MachineId>,
    },
    /// The timer of the fault detector.
    Timer,
    /// The fault injector.
    Injector {
        /// Attempts left.
        left: u8,
        /// Servers it has crashed.
        crashed: Vec<MachineId>,
    },
    /// A client.
    Client {
        /// Its value (written to every key).
        val: u8,
        /// The head it knows.
        head: MachineId,
        /// The tail it knows.
        tail: MachineId,
        /// The current operation: `2k` updates key `k`, `2k + 1` queries it.
        op: u8,
    },
}

/// The messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
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
}

impl Cfg {
    fn has(&self, bug: u32) -> bool {
        self.bug == Some(bug)
    }

    fn master_id(&self) -> MachineId {
        MachineId(self.servers as u32)
    }

    /// Apply an update as tail: store it, announce, answer, acknowledge.
    fn commit(&self, upd: &Upd, pred: Option<MachineId>, store: &mut [u8], apply: bool, ctx: &mut Ctx<Self>) {
        if apply {
            store[upd.key as usize] = upd.val;
        }
        ctx.announce(Note::Acked {
            seq: upd.seq,
            key: upd.key,
            val: upd.val,
        });
        ctx.send(MachineId(upd.client), Msg::UpdDone(upd.op));
        if let Some(p) = pred {
            ctx.send(p, Msg::Ack(upd.seq));
        }
        if upd.seq == 1 {
            ctx.signal("stable", 1);
        }
    }

    fn server(&self, m: &mut Machine, msg: &Msg, ctx: &mut Ctx<Self>) {
        let me = ctx.me();
        let Machine::Server {
            pred,
            succ,
            linked,
            hist,
            sent,
            store,
            counter,
        } = m
        else {
            return;
        };
        let last = hist.last().map_or(0, |u| u.seq);
        match msg {
            Msg::Update { client, op, key, val } => {
                *counter += 1;
                let seq = if self.has(BUG_NEW_HEAD_SEQ) { *counter } else { last + 1 };
                let upd = Upd {
                    seq,
                    key: *key,
                    val: *val,
                    client: client.0,
                    op: *op,
                };
                self.append(upd, me, *pred, (*succ, *linked), hist, sent, store, ctx);
            }
            Msg::Fwd { upd, .. } => {
                if upd.seq <= last {
                    // A duplicate (a resend): the tail acknowledges it
                    // again so that the sender can prune it.
                    if let (None, Some(p)) = (*succ, *pred) {
                        ctx.send(p, Msg::Ack(upd.seq));
                    }
                    return;
                }
                self.append(*upd, me, *pred, (*succ, *linked), hist, sent, store, ctx);
            }
            Msg::Ack(seq) => match sent.iter().position(|u| u.seq == *seq) {
                Some(i) => {
                    sent.remove(i);
                    if let Some(p) = pred {
                        ctx.send(*p, Msg::Ack(*seq));
                    }
                }
                None if self.has(BUG_ACK_WRONG_ENTRY) && !sent.is_empty() => {
                    let u = sent.remove(0);
                    if let Some(p) = pred {
                        ctx.send(*p, Msg::Ack(u.seq));
                    }
                }
                None => {}
            },
            Msg::Query { client, op, key } => {
                let val = store[*key as usize];
                ctx.announce(Note::Answered { key: *key, val });
                ctx.send(*client, Msg::Answer { op: *op, val });
            }
            Msg::Ping => ctx.send(self.master_id(), Msg::Pong(me)),
            Msg::Fail => {
                ctx.send(self.master_id(), Msg::Crashed);
                ctx.halt();
            }
            Msg::NewSucc(s) => {
                *succ = Some(*s);
                *linked = false;
            }
            Msg::LastSeq { from, seq } if *succ == Some(*from) => {
                if self.has(BUG_PRUNE_ON_LASTSEQ) {
                    // The successor has these: taken as acknowledged.
                    let pruned: Vec<u8> = sent.iter().filter(|u| u.seq <= *seq).map(|u| u.seq).collect();
                    sent.retain(|u| u.seq > *seq);
                    if let Some(p) = pred {
                        for s in pruned {
                            ctx.send(*p, Msg::Ack(s));
                        }
                    }
                }
                if !self.has(BUG_NO_RESEND) {
                    for u in sent.iter().filter(|u| u.seq > *seq) {
                        ctx.send(*from, Msg::Fwd { from: me, upd: *u });
                    }
                }
                *linked = true;
            }
            Msg::LastSeq { .. } => {}
            Msg::NewPred(p) => {
                *pred = Some(*p);
                ctx.send(*p, Msg::LastSeq { from: me, seq: last });
                // What it has and no longer waits for is at the tail: the
                // acknowledgements may have gone to the crashed predecessor.
                for u in hist.iter().filter(|u| !sent.contains(u)) {
                    ctx.send(*p, Msg::Ack(u.seq));
                }
            }
            Msg::BecomeHead => *pred = None,
            Msg::BecomeTail => {
                *succ = None;
                *linked = true;
                let rebuild = !self.has(BUG_STALE_STORE);
                if rebuild {
                    for u in hist.iter() {
                        store[u.key as usize] = u.val;
                    }
                }
                for u in std::mem::take(sent) {
                    self.commit(&u, *pred, store, false, ctx);
                }
            }
            _ => ctx.assert(false, || format!("server cannot handle {msg:?}")),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn append(
        &self,
        upd: Upd,
        me: MachineId,
        pred: Option<MachineId>,
        (succ, linked): (Option<MachineId>, bool),
        hist: &mut Vec<Upd>,
        sent: &mut Vec<Upd>,
        store: &mut [u8],
        ctx: &mut Ctx<Self>,
    ) {
        hist.push(upd);
        match succ {
            Some(s) => {
                sent.push(upd);
                // While linking, the LastSeq handler forwards it.
                if linked {
                    ctx.send(s, Msg::Fwd { from: me, upd });
                }
            }
            None => self.commit(&upd, pred, store, true, ctx),
        }
    }

    fn master(&self, m: &mut Machine, msg: &Msg, ctx: &mut Ctx<Self>) {
        let Machine::Master {
            chain,
            crashed,
            removed,
            probing,
            beats,
            ponged,
            clients,
        } = m
        else {
            return;
        };
        match msg {
            Msg::Heartbeat => {
                *beats -= 1;
                if !*probing {
                    self.probe(chain, probing, ponged, ctx);
                }
            }
            Msg::Crashed => {
                *crashed += 1;
                if *probing {
                    // A server may have answered and crashed since: restart
                    // the round (the pending timeout serves it).
                    ponged.clear();
                    for s in chain.iter() {
                        ctx.send(*s, Msg::Ping);
                    }
                } else {
                    self.probe(chain, probing, ponged, ctx);
                }
            }
            Msg::Pong(s) => {
                if *probing && !ponged.contains(s) {
                    ponged.push(*s);
                }
            }
            Msg::Timeout => {
                let dead: Vec<MachineId> = chain.iter().copied().filter(|s| !ponged.contains(s)).collect();
                *probing = false;
                ponged.clear();
                if !dead.is_empty() {
                    *removed += dead.len() as u8;
                    self.reconfigure(chain, &dead, clients, ctx);
                }
                if *crashed > *removed {
                    self.probe(chain, probing, ponged, ctx);
                } else if *beats > 0 {
                    ctx.send(ctx.me(), Msg::Heartbeat);
                }
            }
            _ => ctx.assert(false, || format!("master cannot handle {msg:?}")),
        }
    }

    fn probe(&self, chain: &[MachineId], probing: &mut bool, ponged: &mut Vec<MachineId>, ctx: &mut Ctx<Self>) {
        *probing = true;
        ponged.clear();
        for s in chain {
            ctx.send(*s, Msg::Ping);
        }
        ctx.send(MachineId(self.servers as u32 + 1), Msg::Start);
    }

    /// Remove `dead` from `chain` and send the repairs.
    fn reconfigure(&self, chain: &mut Vec<MachineId>, dead: &[MachineId], clients: &[MachineId], ctx: &mut Ctx<Self>) {
        let old = chain.clone();
        chain.retain(|s| !dead.contains(s));
        let notify = |ctx: &mut Ctx<Self>, msg: Msg| {
            for c in clients {
                ctx.send(*c, msg.clone());
            }
        };
        if self.has(BUG_STALE_DOUBLE_FAILURE) {
            // Each removed server is repaired on its own, from the chain as
            // it was before the round: its old neighbours, dead or not.
            for d in dead {
                let i = old.iter().position(|s| s == d).unwrap_or(0);
                let p = i.checked_sub(1).map(|j| old[j]);
                let s = old.get(i + 1).copied();
                match (p, s) {
                    (None, Some(s)) => {
                        ctx.send(s, Msg::BecomeHead);
                        notify(ctx, Msg::NewHead(s));
                    }
                    (Some(p), None) => {
                        ctx.send(p, Msg::BecomeTail);
                        notify(ctx, Msg::NewTail(p));
                    }
                    (Some(p), Some(s)) => {
                        ctx.send(p, Msg::NewSucc(s));
                        ctx.send(s, Msg::NewPred(p));
                    }
                    (None, None) => {}
                }
            }
            return;
        }
        // Each maximal run of removed servers, between live neighbours.
        let mut i = 0;
        while i < old.len() {
            if !dead.contains(&old[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < old.len() && dead.contains(&old[i]) {
                i += 1;
            }
            let p = start.checked_sub(1).map(|j| old[j]);
            let s = old.get(i).copied();
            match (p, s) {
                (None, Some(s)) => {
                    ctx.send(s, Msg::BecomeHead);
                    notify(ctx, Msg::NewHead(s));
                }
                (Some(p), None) => {
                    ctx.send(p, Msg::BecomeTail);
                    notify(ctx, Msg::NewTail(p));
                }
                (Some(p), Some(s)) => {
                    ctx.send(p, Msg::NewSucc(s));
                    ctx.send(s, Msg::NewPred(p));
                }
                (None, None) => {}
            }
        }
    }

    fn client(&self, m: &mut Machine, msg: &Msg, ctx: &mut Ctx<Self>) {
        let me = ctx.me();
        let Machine::Client { val, head, tail, op } = m else {
            return;
        };
        match msg {
            Msg::Go => self.request(me, *val, *head, *tail, *op, ctx),
            Msg::UpdDone(o) | Msg::Answer { op: o, .. } => {
                if *o == *op {
                    *op += 1;
                    if *op == 2 * self.keys {
                        ctx.halt();
                    } else {
                        self.request(me, *val, *head, *tail, *op, ctx);
                    }
                }
            }
            Msg::NewHead(h) => {
                *head = *h;
                if op.is_multiple_of(2) {
                    self.request(me, *val, *head, *tail, *op, ctx);
                }
            }
            Msg::NewTail(t) => {
                *tail = *t;
                if !op.is_multiple_of(2) {
                    self.request(me, *val, *head, *tail, *op, ctx);
                }
            }
            _ => ctx.assert(false, || format!("client cannot handle {msg:?}")),
        }
    }

    fn request(&self, me: MachineId, val: u8, head: MachineId, tail: MachineId, op: u8, ctx: &mut Ctx<Self>) {
        let key = op / 2;
        if op.is_multiple_of(2) {
            ctx.send(
                head,
                Msg::Update {
                    client: me,
                    op,
                    key,
                    val,
                },
            );
        } else {
            ctx.send(tail, Msg::Query { client: me, op, key });
        }
    }

    fn injector(&self, m: &mut Machine, ctx: &mut Ctx<Self>) {
        let Machine::Injector { left, crashed } = m else {
            return;
        };
        let candidates: Vec<MachineId> = (0..self.servers as u32)
            .map(MachineId)
            .filter(|s| !crashed.contains(s))
            .collect();
        let pick = ctx.choose(candidates.len() as u32 + 1, "crash");
        if let Some(&victim) = candidates.get(pick as usize) {
            crashed.push(victim);
            ctx.send(victim, Msg::Fail);
        }
        *left -= 1;
        if *left > 0 {
            ctx.send(ctx.me(), Msg::Go);
        }
    }

    /// The update-propagation invariant (see the module docs).
    fn propagation(&self, world: &World<Self>) -> Result<(), String> {
        let name = |id: MachineId| format!("server{}", id.0);
        let master = match world.machine(self.master_id()) {
            Machine::Master { chain, .. } => chain,
            _ => return Ok(()),
        };
        let halted = |id: MachineId| world.slots()[id.0 as usize].halted;
        for (id, m) in world.live() {
            if let Machine::Client { head, tail, op, .. } = m {
                let (target, side) = if op.is_multiple_of(2) {
                    (head, "head")
                } else {
                    (tail, "tail")
                };
                let told = world
                    .inbox(id)
                    .iter()
                    .any(|(_, m)| matches!(m, Msg::NewHead(_) | Msg::NewTail(_)));
                if !master.contains(target) && !told {
                    return Err(format!(
                        "client{} waits on its {side} {}, which the master removed from the chain, and no notification is on its way",
                        id.0,
                        name(*target)
                    ));
                }
                continue;
            }
            let Machine::Server {
                pred,
                succ,
                linked,
                hist,
                sent,
                ..
            } = m
            else {
                continue;
            };
            monitor::check_history(&name(id), hist)?;
            let inbox = world.inbox(id);
            if master.contains(&id) {
                let removed = |x: &Option<MachineId>| x.filter(|x| !master.contains(x)).map(name);
                let queued = |f: fn(&Msg) -> bool| inbox.iter().any(|(_, m)| f(m));
                let succ_fix = queued(|m| matches!(m, Msg::NewSucc(_) | Msg::BecomeTail));
                let succ_work = !sent.is_empty() || queued(|m| matches!(m, Msg::Query { .. }));
                monitor::check_links(&name(id), "successor", removed(succ).as_deref(), succ_fix || !succ_work)?;
                let pred_fix = queued(|m| matches!(m, Msg::NewPred(_) | Msg::BecomeHead));
                let pred_work = queued(|m| matches!(m, Msg::Update { .. }));
                monitor::check_links(
                    &name(id),
                    "predecessor",
                    removed(pred).as_deref(),
                    pred_fix || !pred_work,
                )?;
            }
            let Some(b) = *succ else { continue };
            if !*linked || halted(b) {
                continue;
            }
            let Machine::Server {
                pred: b_pred,
                hist: b_hist,
                sent: b_sent,
                ..
            } = world.machine(b)
            else {
                continue;
            };
            if *b_pred != Some(id) {
                continue;
            }
            let in_flight: Vec<u8> = world
                .inbox(b)
                .iter()
                .filter_map(|(_, m)| match m {
                    Msg::Fwd { from, upd } if *from == id => Some(upd.seq),
                    _ => None,
                })
                .collect();
            let acks: Vec<u8> = inbox
                .iter()
                .filter_map(|(_, m)| match m {
                    Msg::Ack(s) => Some(*s),
                    _ => None,
                })
                .collect();
            monitor::check_pair(&monitor::Pair {
                pred_name: &name(id),
                succ_name: &name(b),
                pred_hist: hist,
                pred_sent: sent,
                succ_hist: b_hist,
                succ_sent: b_sent,
                in_flight: &in_flight,
                acks_queued: &acks,
            })?;
        }
        Ok(())
    }
}

impl MachineModel for Cfg {
    type Machine = Machine;
    type Msg = Msg;
    type Announce = Note;
    type Monitor = QueryMonitor;

    fn setup(&self, setup: &mut Setup<Self>) {
        let n = self.servers as u32;
        let servers: Vec<MachineId> = (0..n).map(MachineId).collect();
        for i in 0..n {
            setup.create(Machine::Server {
                pred: i.checked_sub(1).map(MachineId),
                succ: (i + 1 < n).then_some(MachineId(i + 1)),
                linked: true,
                hist: Vec::new(),
                sent: Vec::new(),
                store: vec![0; self.keys as usize],
                counter: 0,
            });
        }
        let clients: Vec<MachineId> = (0..self.clients as u32).map(|c| MachineId(n + 2 + c)).collect();
        let master = setup.create(Machine::Master {
            chain: servers,
            crashed: 0,
            removed: 0,
            probing: false,
            beats: self.heartbeats,
            ponged: Vec::new(),
            clients: clients.clone(),
        });
        if self.heartbeats > 0 {
            setup.send(master, Msg::Heartbeat);
        }
        setup.create(Machine::Timer);
        for c in 0..self.clients {
            let id = setup.create(Machine::Client {
                val: c + 1,
                head: MachineId(0),
                tail: MachineId(n - 1),
                op: 0,
            });
            setup.send(id, Msg::Go);
        }
        let inj = setup.create(Machine::Injector {
            left: self.failures,
            crashed: Vec::new(),
        });
        if self.failures > 0 {
            setup.send(inj, Msg::Go);
        }
    }

    fn kind(&self, m: &Machine) -> &'static str {
        match m {
            Machine::Server { .. } => "server",
            Machine::Master { .. } => "master",
            Machine::Timer => "timer",
            Machine::Injector { .. } => "injector",
            Machine::Client { .. } => "client",
        }
    }

    fn state_name(&self, m: &Machine) -> Option<String> {
        match m {
            Machine::Server { pred, succ, linked, .. } => Some(
                match (pred, succ) {
                    (None, None) => "alone",
                    (None, Some(_)) => "head",
                    (Some(_), None) => "tail",
                    (Some(_), Some(_)) if !*linked => "linking",
                    (Some(_), Some(_)) => "middle",
                }
                .to_string(),
            ),
            Machine::Master { probing, .. } => Some(if *probing { "probing" } else { "idle" }.to_string()),
            Machine::Client { op, .. } => Some(format!("op{op}")),
            _ => None,
        }
    }

    fn receive(&self, m: &Machine, msg: &Msg) -> Receive {
        match (m, msg) {
            // Requests wait until the server has been told it is head/tail.
            (Machine::Server { pred: Some(_), .. }, Msg::Update { .. }) => Receive::Defer,
            (Machine::Server { succ: Some(_), .. }, Msg::Query { .. }) => Receive::Defer,
            // The timeout counts once every live server has answered.
            (
                Machine::Master {
                    chain,
                    crashed,
                    removed,
                    ponged,
                    ..
                },
                Msg::Timeout,
            ) => {
                let alive = chain.len() - (*crashed - *removed) as usize;
                if ponged.len() < alive {
                    Receive::Defer
                } else {
                    Receive::Handle
                }
            }
            (Machine::Client { op, .. }, Msg::NewHead(_)) if self.has(BUG_CLIENT_NOTIFY) && !op.is_multiple_of(2) => {
                Receive::Unhandled
            }
            (Machine::Client { op, .. }, Msg::NewTail(_)) if self.has(BUG_CLIENT_NOTIFY) && op.is_multiple_of(2) => {
                Receive::Unhandled
            }
            _ => Receive::Handle,
        }
    }

    fn handle(&self, m: &mut Machine, msg: &Msg, ctx: &mut Ctx<Self>) {
        match m {
            Machine::Server { .. } => self.server(m, msg, ctx),
            Machine::Master { .. } => self.master(m, msg, ctx),
            Machine::Timer => ctx.send(self.master_id(), Msg::Timeout),
            Machine::Injector { .. } => self.injector(m, ctx),
            Machine::Client { .. } => self.client(m, msg, ctx),
        }
    }

    fn observe(&self, mon: &mut QueryMonitor, note: &Note) -> Result<(), (&'static str, String)> {
        match note {
            Note::Acked { seq, key, val } => {
                mon.acked(*seq, *key, *val);
                Ok(())
            }
            Note::Answered { key, val } => mon.answered(*key, *val).map_err(|e| ("query", e)),
        }
    }

    fn invariant(&self, world: &World<Self>) -> Result<(), (&'static str, String)> {
        self.propagation(world).map_err(|e| ("propagation", e))
    }
}

impl Model for Chain {
    type Program = Machines<Cfg>;

    fn info(&self) -> ModelInfo {
        ModelInfo {
            name: "chain",
            description: "chain replication: head/middle/tail servers, a master with a ping/pong fault detector and a timer, a fault injector that crashes servers, clients doing update then query per key; monitors: update propagation (sorted histories, successor's history a prefix of its predecessor's, sent = predecessor's history minus successor's up to acknowledgements in flight, no unrepaired link to a removed server) and query consistency (a query returns the last acknowledged update of its key)",
            params: vec![
                ParamSpec {
                    name: "servers",
                    default: 3,
                    min: 2,
                    max: 4,
                    description: "number of chain servers",
                },
                ParamSpec {
                    name: "failures",
                    default: 1,
                    min: 0,
                    max: 3,
                    description: "crashes the fault injector may cause (clamped to servers - 1)",
                },
                ParamSpec {
                    name: "heartbeats",
                    default: 1,
                    min: 0,
                    max: 3,
                    description: "ping rounds the master runs on its own from start-up, besides those a crash report starts",
                },
                ParamSpec {
                    name: "clients",
                    default: 1,
                    min: 1,
                    max: 3,
                    description: "number of clients",
                },
                ParamSpec {
                    name: "keys",
                    default: 2,
                    min: 1,
                    max: 3,
                    description: "keys each client updates then queries",
                },
            ],
            bugs: bug_specs(),
            explorers: vec![ExplorerSpec {
                name: "chain-custom",
                description: "round robin over all machines, servers first until the tail signals that the first update is acknowledged, then the master and the fault injector first (failures after initialisation)",
            }],
            notes: "bug 5 needs two crashes: it raises failures to 2 (and servers to at least 3); the chain-custom explorer finds it fastest",
        }
    }

    fn build(&self, params: &Params, bug: Option<u32>) -> Machines<Cfg> {
        let servers = params.get("servers") as u8;
        let mut failures = (params.get("failures") as u8).min(servers - 1);
        let mut servers = servers;
        if bug == Some(BUG_PRUNE_ON_LASTSEQ) {
            servers = servers.max(4);
        }
        if bug == Some(BUG_STALE_DOUBLE_FAILURE) {
            servers = servers.max(3);
            failures = failures.max(2).min(servers - 1);
        }
        Machines(Cfg {
            servers,
            failures,
            clients: params.get("clients") as u8,
            keys: params.get("keys") as u8,
            heartbeats: params.get("heartbeats") as u8,
            bug,
        })
    }

    fn explorer(&self, name: &str) -> Option<BoxedExplorer> {
        (name == "chain-custom").then(|| BoxedExplorer::new(ChainExplorer::new()))
    }
}

fn bug_specs() -> Vec<BugSpec> {
    vec![
        BugSpec {
            id: BUG_STALE_STORE,
            name: "promoted-tail-stale-store",
            description: "only the tail keeps a store; when the tail crashes and its predecessor is promoted (BecomeTail), the new tail commits its unacknowledged updates but does not rebuild its store from its history, so a later query of a key updated before the crash returns a stale value (query monitor); needs the crash after the update passed the predecessor",
        },
        BugSpec {
            id: BUG_NO_RESEND,
            name: "no-resend",
            description: "when a middle server crashes, its predecessor, on the new successor's LastSeq, marks the link ready but does not resend the updates of its sent list above that sequence number; an update the crashed server had not passed on (or that the predecessor held while linking) is lost between the two (propagation monitor); needs the crash while an update is between the head and the middle server",
        },
        BugSpec {
            id: BUG_ACK_WRONG_ENTRY,
            name: "ack-wrong-entry",
            description: "an acknowledgement for a sequence number that is not in sent removes the oldest entry of sent instead of being ignored. After the middle server crashes, the tail's re-acknowledgement on NewPred of an update the head already pruned (the crashed server passed its acknowledgement on) reaches the head after the client's next update entered it, and removes that update from sent although the tail does not have it (propagation monitor)",
        },
        BugSpec {
            id: BUG_CLIENT_NOTIFY,
            name: "client-ignores-notify",
            description: "the client handles NewHead only while an update is pending and NewTail only while a query is pending; a tail change that arrives while the client waits for an update (or a head change during a query) is an unhandled event; needs the crash of the tail while the client's update is on its way",
        },
        BugSpec {
            id: BUG_STALE_DOUBLE_FAILURE,
            name: "stale-double-failure",
            description: "runs with failures=2 (build raises it, and servers to 3): when two neighbouring servers crash before the master's ping round, the master repairs each one on its own from the chain as it was before the round, so it links the survivor to the other crashed server (NewSucc/NewPred to a dead server) or promotes a dead one, and notifies the clients of a dead head or tail: a live server or a client is left waiting on a removed server with no repair on the way (propagation monitor). The injector must crash twice in a row and both servers must handle their Fail before the master's ping round; The injector is created last, so RR and RTC run it only when nothing else can run, after the client is done and nothing is at stake: they need a delay to move it ahead of the workload and the search spends its first strata on other interleavings (PRR likewise). chain-custom runs the servers first until the tail acknowledges the first update, then the injector and the master first: both crashes happen back to back while the client's query is pending, with no delay",
        },
        BugSpec {
            id: BUG_NEW_HEAD_SEQ,
            name: "new-head-stale-seq",
            description: "the head numbers updates with its own counter of updates it received instead of continuing after its history; a server promoted to head after the head crashes restarts from its (small) counter and gives an update a sequence number it already has, so its history is no longer sorted (propagation monitor)",
        },
        BugSpec {
            id: BUG_PRUNE_ON_LASTSEQ,
            name: "prune-on-lastseq",
            description: "runs with servers=4 (build raises it): when a middle server crashes, its predecessor takes the new successor's LastSeq as an acknowledgement and drops from sent (and acknowledges upstream) every update the successor has; but the successor is not the tail, and it still waits for the tail's acknowledgement of those updates, so the predecessor's sent list no longer covers them (propagation monitor); with a three-server chain the new successor is the tail and the shortcut happens to be right"
        },
    ]
}
