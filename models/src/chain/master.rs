//! The master: the chain's configuration and its fault detector.

use super::{Bug, Cfg, Msg};
use mcheck_checker::machine::{Ctx, MachineId};
use serde::{Deserialize, Serialize};

/// The master (see the module docs of [`super`]): it knows the chain, runs
/// ping rounds and repairs the chain around the servers that did not
/// answer.
#[derive(Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Master {
    /// The chain, head first.
    pub chain: Vec<MachineId>,
    /// Crashes reported so far.
    pub crashed: u8,
    /// Servers removed so far.
    pub removed: u8,
    /// Whether a ping round is running.
    pub probing: bool,
    /// Heartbeat rounds left.
    pub beats: u8,
    /// Servers that answered this round's ping.
    pub ponged: Vec<MachineId>,
    /// The clients to notify.
    pub clients: Vec<MachineId>,
}

/// Not derived: `clone_from` keeps the vectors' memory ([`super::Machine`]).
impl Clone for Master {
    fn clone(&self) -> Self {
        let mut m = Master {
            chain: Vec::new(),
            crashed: 0,
            removed: 0,
            probing: false,
            beats: 0,
            ponged: Vec::new(),
            clients: Vec::new(),
        };
        m.clone_from(self);
        m
    }

    fn clone_from(&mut self, source: &Self) {
        let Master {
            chain,
            crashed,
            removed,
            probing,
            beats,
            ponged,
            clients,
        } = source;
        self.chain.clone_from(chain);
        self.crashed = *crashed;
        self.removed = *removed;
        self.probing = *probing;
        self.beats = *beats;
        self.ponged.clone_from(ponged);
        self.clients.clone_from(clients);
    }
}

impl Master {
    pub(crate) fn handle(&mut self, cfg: &Cfg, msg: &Msg, ctx: &mut Ctx<Cfg>) {
        match *msg {
            Msg::Heartbeat => {
                self.beats -= 1;
                if !self.probing {
                    self.probe(cfg, ctx);
                }
            }
            Msg::Crashed => {
                self.crashed += 1;
                if self.probing {
                    // A server may have answered and crashed since: restart
                    // the round (the pending timeout serves it).
                    self.ponged.clear();
                    self.ping(ctx);
                } else {
                    self.probe(cfg, ctx);
                }
            }
            Msg::Pong(s) => {
                if self.probing && !self.ponged.contains(&s) {
                    self.ponged.push(s);
                }
            }
            Msg::Timeout => {
                let dead: Vec<MachineId> = self
                    .chain
                    .iter()
                    .copied()
                    .filter(|s| !self.ponged.contains(s))
                    .collect();
                self.probing = false;
                self.ponged.clear();
                if !dead.is_empty() {
                    self.removed += dead.len() as u8;
                    self.reconfigure(cfg, &dead, ctx);
                }
                if self.crashed > self.removed {
                    self.probe(cfg, ctx);
                } else if self.beats > 0 {
                    ctx.send(ctx.me(), Msg::Heartbeat);
                }
            }
            _ => ctx.assert(false, || format!("master cannot handle {msg:?}")),
        }
    }

    fn ping(&self, ctx: &mut Ctx<Cfg>) {
        for s in &self.chain {
            ctx.send(*s, Msg::Ping);
        }
    }

    /// Start a ping round: ping every server of the chain, start the timer.
    fn probe(&mut self, cfg: &Cfg, ctx: &mut Ctx<Cfg>) {
        self.probing = true;
        self.ponged.clear();
        self.ping(ctx);
        ctx.send(cfg.timer_id(), Msg::Start);
    }

    /// Remove `dead` from the chain and send the repairs.
    fn reconfigure(&mut self, cfg: &Cfg, dead: &[MachineId], ctx: &mut Ctx<Cfg>) {
        let old = self.chain.clone();
        self.chain.retain(|s| !dead.contains(s));
        let neighbour = |i: Option<usize>| i.and_then(|i| old.get(i).copied());
        if cfg.has(Bug::StaleDoubleFailure) {
            // Each removed server is repaired on its own, from the chain as
            // it was before the round: its old neighbours, dead or not.
            for d in dead {
                let i = old.iter().position(|s| s == d).unwrap_or(0);
                self.repair(neighbour(i.checked_sub(1)), neighbour(Some(i + 1)), ctx);
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
            self.repair(neighbour(start.checked_sub(1)), neighbour(Some(i)), ctx);
        }
    }

    /// Link `pred` and `succ` around removed servers: promote `succ` to
    /// head or `pred` to tail when the other is missing (and tell the
    /// clients), or link them to each other.
    fn repair(&self, pred: Option<MachineId>, succ: Option<MachineId>, ctx: &mut Ctx<Cfg>) {
        match (pred, succ) {
            (None, Some(s)) => {
                ctx.send(s, Msg::BecomeHead);
                self.notify(Msg::NewHead(s), ctx);
            }
            (Some(p), None) => {
                ctx.send(p, Msg::BecomeTail);
                self.notify(Msg::NewTail(p), ctx);
            }
            (Some(p), Some(s)) => {
                ctx.send(p, Msg::NewSucc(s));
                ctx.send(s, Msg::NewPred(p));
            }
            (None, None) => {}
        }
    }

    fn notify(&self, msg: Msg, ctx: &mut Ctx<Cfg>) {
        for c in &self.clients {
            ctx.send(*c, msg.clone());
        }
    }
}
