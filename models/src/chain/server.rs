//! A chain server: head, middle or tail, by its links.

use super::{Bug, Cfg, Msg, Note, Upd};
use mcheck_checker::machine::{Ctx, MachineId};
use serde::{Deserialize, Serialize};

/// A chain server (see the module docs of [`super`] for the protocol).
#[derive(Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Server {
    /// Predecessor (`None`: head).
    pub pred: Option<MachineId>,
    /// Successor (`None`: tail).
    pub succ: Option<MachineId>,
    /// Whether the successor's `LastSeq` arrived since the link was made.
    pub linked: bool,
    /// Updates applied, in sequence order.
    pub hist: Vec<Upd>,
    /// Updates forwarded and not yet acknowledged.
    pub sent: Vec<Upd>,
    /// Per key, the value (0: none); kept by the tail only.
    pub store: Vec<u8>,
    /// The head's own counter (used only by [`Bug::NewHeadSeq`]).
    pub counter: u8,
}

/// Not derived: `clone_from` keeps the vectors' memory ([`super::Machine`]).
impl Clone for Server {
    fn clone(&self) -> Self {
        let mut s = Server {
            pred: None,
            succ: None,
            linked: false,
            hist: Vec::new(),
            sent: Vec::new(),
            store: Vec::new(),
            counter: 0,
        };
        s.clone_from(self);
        s
    }

    fn clone_from(&mut self, source: &Self) {
        let Server {
            pred,
            succ,
            linked,
            hist,
            sent,
            store,
            counter,
        } = source;
        self.pred = *pred;
        self.succ = *succ;
        self.linked = *linked;
        self.hist.clone_from(hist);
        self.sent.clone_from(sent);
        self.store.clone_from(store);
        self.counter = *counter;
    }
}

impl Server {
    /// The last sequence number in its history (0: none).
    fn last(&self) -> u8 {
        self.hist.last().map_or(0, |u| u.seq)
    }

    pub(crate) fn handle(&mut self, cfg: &Cfg, msg: &Msg, ctx: &mut Ctx<Cfg>) {
        let me = ctx.me();
        let last = self.last();
        match *msg {
            Msg::Update { client, op, key, val } => {
                // A client resends its update to a new head, which may have
                // it already (the crashed head forwarded it): appending it
                // again would order it after other clients' later writes.
                // Acknowledged by the tail, it is committed: the head
                // answers it again (the tail's answer may be on its way).
                if let Some(u) = self.hist.iter().find(|u| u.client == client.0 && u.op == op) {
                    if !self.sent.contains(u) {
                        ctx.send(client, Msg::UpdDone(op));
                    }
                    return;
                }
                self.counter += 1;
                let seq = if cfg.has(Bug::NewHeadSeq) {
                    self.counter
                } else {
                    last + 1
                };
                let upd = Upd {
                    seq,
                    key,
                    val,
                    client: client.0,
                    op,
                };
                if cfg.has(Bug::EarlyUpdateDone) && self.succ.is_some() {
                    ctx.send(client, Msg::UpdDone(op));
                }
                self.append(upd, ctx);
            }
            Msg::Fwd { upd, .. } => {
                if upd.seq <= last {
                    // A duplicate (a resend): the tail acknowledges it
                    // again so that the sender can prune it.
                    if let (None, Some(p)) = (self.succ, self.pred) {
                        ctx.send(p, Msg::Ack(upd.seq));
                    }
                    return;
                }
                self.append(upd, ctx);
            }
            Msg::Ack(seq) => self.acknowledged(cfg, seq, ctx),
            Msg::Query { client, op, key } => {
                let val = self.store[key as usize];
                ctx.announce(Note::Answered { key, val });
                ctx.send(client, Msg::Answer { op, val });
            }
            Msg::Ping => ctx.send(cfg.master_id(), Msg::Pong(me)),
            Msg::Fail => {
                ctx.send(cfg.master_id(), Msg::Crashed);
                ctx.halt();
            }
            Msg::NewSucc(s) => {
                self.succ = Some(s);
                self.linked = false;
            }
            Msg::LastSeq { from, seq } if self.succ == Some(from) => self.relink(cfg, from, seq, ctx),
            Msg::LastSeq { .. } => {}
            Msg::NewPred(p) => {
                self.pred = Some(p);
                if !(cfg.has(Bug::SilentEmptySuccessor) && last == 0) {
                    ctx.send(p, Msg::LastSeq { from: me, seq: last });
                }
                // What it has and no longer waits for is at the tail: the
                // acknowledgements may have gone to the crashed predecessor.
                for u in self.hist.iter().filter(|u| !self.sent.contains(u)) {
                    ctx.send(p, Msg::Ack(u.seq));
                }
            }
            Msg::BecomeHead => self.pred = None,
            Msg::BecomeTail => {
                self.succ = None;
                self.linked = true;
                if !cfg.has(Bug::StaleStore) {
                    for u in &self.hist {
                        self.store[u.key as usize] = u.val;
                    }
                }
                for u in std::mem::take(&mut self.sent) {
                    self.commit(&u, false, ctx);
                }
            }
            _ => ctx.assert(false, || format!("server cannot handle {msg:?}")),
        }
    }

    /// The tail has update `seq`: drop it from `sent` and pass the
    /// acknowledgement on.
    fn acknowledged(&mut self, cfg: &Cfg, seq: u8, ctx: &mut Ctx<Cfg>) {
        let i = match self.sent.iter().position(|u| u.seq == seq) {
            Some(i) => i,
            None if cfg.has(Bug::AckWrongEntry) && !self.sent.is_empty() => 0,
            None => return,
        };
        let u = self.sent.remove(i);
        if let Some(p) = self.pred {
            ctx.send(p, Msg::Ack(u.seq));
        }
    }

    /// The new successor `from` has every update up to `seq`: resend the
    /// rest of `sent`; the link is settled.
    fn relink(&mut self, cfg: &Cfg, from: MachineId, seq: u8, ctx: &mut Ctx<Cfg>) {
        let me = ctx.me();
        if cfg.has(Bug::PruneOnLastSeq) {
            // The successor has these: taken as acknowledged.
            let pruned: Vec<u8> = self.sent.iter().filter(|u| u.seq <= seq).map(|u| u.seq).collect();
            self.sent.retain(|u| u.seq > seq);
            if let Some(p) = self.pred {
                for s in pruned {
                    ctx.send(p, Msg::Ack(s));
                }
            }
        }
        if !cfg.has(Bug::NoResend) {
            for u in self.sent.iter().filter(|u| u.seq > seq) {
                ctx.send(from, Msg::Fwd { from: me, upd: *u });
            }
        }
        self.linked = true;
    }

    /// Append `upd` to the history: forward it (the tail commits it).
    fn append(&mut self, upd: Upd, ctx: &mut Ctx<Cfg>) {
        self.hist.push(upd);
        match self.succ {
            Some(s) => {
                self.sent.push(upd);
                // While linking, the LastSeq handler forwards it.
                if self.linked {
                    ctx.send(s, Msg::Fwd { from: ctx.me(), upd });
                }
            }
            None => self.commit(&upd, true, ctx),
        }
    }

    /// Apply an update as tail (to the store if `apply`): announce, answer
    /// the client, acknowledge upstream.
    fn commit(&mut self, upd: &Upd, apply: bool, ctx: &mut Ctx<Cfg>) {
        if apply {
            self.store[upd.key as usize] = upd.val;
        }
        ctx.announce(Note::Acked {
            seq: upd.seq,
            key: upd.key,
            val: upd.val,
        });
        ctx.send(MachineId(upd.client), Msg::UpdDone(upd.op));
        if let Some(p) = self.pred {
            ctx.send(p, Msg::Ack(upd.seq));
        }
        if upd.seq == 1 {
            ctx.signal("stable", 1);
        }
    }
}
