//! The roles of single-decree Paxos: the acceptor's and the proposer's
//! handlers (the proposer is also the learner of its own ballots).

use super::{Acceptor, Ballot, Bug, Cfg, Msg, Note, Phase, Proposer, Value};
use mcheck_checker::machine::Ctx;

impl Acceptor {
    pub(super) fn handle(&mut self, cfg: &Cfg, msg: &Msg, ctx: &mut Ctx<Cfg>) {
        let acc = ctx.me().0 as u8;
        match *msg {
            Msg::Prepare(b) => {
                let to = cfg.proposer(b.pid);
                if self.promised.is_none_or(|p| b > p) {
                    self.promised = Some(b);
                    let last = self.accepted;
                    ctx.send(to, Msg::Promise { b, acc, last });
                } else {
                    ctx.send(to, Msg::Nack(b));
                }
            }
            Msg::Accept(b, v) => {
                let to = cfg.proposer(b.pid);
                let ok = if cfg.bug == Some(Bug::AcceptBelowPromise) {
                    self.accepted.is_none_or(|(a, _)| b >= a)
                } else {
                    self.promised.is_none_or(|p| b >= p)
                };
                if ok {
                    if self.promised.is_none_or(|p| b > p) {
                        self.promised = Some(b);
                    }
                    self.accepted = Some((b, v));
                    ctx.announce(Note::Accepted(b, v, acc));
                    ctx.send(to, Msg::Accepted { b, acc });
                } else if cfg.bug != Some(Bug::SilentRefusal) {
                    ctx.send(to, Msg::Nack(b));
                }
            }
            _ => ctx.assert(false, || format!("acceptor cannot handle {msg:?}")),
        }
    }
}

impl Proposer {
    /// The ballot of the current round.
    fn ballot(&self) -> Ballot {
        Ballot {
            round: self.round,
            pid: self.pid,
        }
    }

    /// Start the next round: phase 1 to its quorum, and the round's timer
    /// if a retry is left.
    fn start_round(&mut self, cfg: &Cfg, ctx: &mut Ctx<Cfg>) {
        self.round += 1;
        self.phase = Phase::Preparing;
        self.acks = 0;
        self.best = None;
        let b = self.ballot();
        cfg.to_quorum(cfg.quorum(b), Msg::Prepare(b), ctx);
        if self.retries > 0 {
            ctx.send(ctx.me(), Msg::Timeout(self.round));
        }
    }

    /// Gives up on the current round: starts the next one if retries are
    /// left, ends the proposal (stopped) otherwise.
    fn give_up(&mut self, cfg: &Cfg, ctx: &mut Ctx<Cfg>) {
        if self.retries == 0 {
            self.phase = Phase::Stopped;
            self.next_proposal(cfg, ctx);
            return;
        }
        self.retries -= 1;
        self.start_round(cfg, ctx);
    }

    /// The current proposal ended (decided or stopped): start the next one
    /// in a higher round with fresh retries, or halt after the last.
    fn next_proposal(&mut self, cfg: &Cfg, ctx: &mut Ctx<Cfg>) {
        if self.proposals <= 1 {
            ctx.halt();
            return;
        }
        self.proposals -= 1;
        self.retries = cfg.retries;
        self.start_round(cfg, ctx);
    }

    /// A promise from acceptor `acc` for ballot `b`, reporting `last`.
    fn promised(&mut self, cfg: &Cfg, b: Ballot, acc: u8, last: Option<(Ballot, Value)>, ctx: &mut Ctx<Cfg>) {
        let current = self.ballot();
        let fresh = cfg.bug == Some(Bug::StalePromise) || b == current;
        if self.phase != Phase::Preparing || !fresh || self.acks & (1 << acc) != 0 {
            return;
        }
        self.acks |= 1 << acc;
        if let Some((lb, lv)) = last {
            let adopt = match self.best {
                None => true,
                Some((bb, _)) => cfg.bug != Some(Bug::FirstValue) && lb > bb,
            };
            if adopt {
                self.best = Some((lb, lv));
            }
        }
        if self.acks.count_ones() >= cfg.majority() {
            let v = self.best.map_or(Value(self.pid), |(_, v)| v);
            let quorum = self.acks;
            self.phase = Phase::Accepting;
            self.acks = 0;
            self.best = Some((current, v));
            ctx.announce(Note::Proposed(current, v));
            cfg.to_quorum(quorum, Msg::Accept(current, v), ctx);
        }
    }

    pub(super) fn handle(&mut self, cfg: &Cfg, msg: &Msg, ctx: &mut Ctx<Cfg>) {
        let current = self.ballot();
        match *msg {
            Msg::Go => self.start_round(cfg, ctx),
            Msg::Promise { b, acc, last } => self.promised(cfg, b, acc, last, ctx),
            Msg::Accepted { b, acc } => {
                if self.phase != Phase::Accepting || b != current {
                    return;
                }
                self.acks |= 1 << acc;
                if self.acks.count_ones() >= cfg.majority() {
                    self.phase = Phase::Decided;
                    if let Some((_, v)) = self.best {
                        ctx.announce(Note::Decided(current, v));
                    }
                    self.next_proposal(cfg, ctx);
                }
            }
            Msg::Nack(b) => {
                if b == current && matches!(self.phase, Phase::Preparing | Phase::Accepting) {
                    self.give_up(cfg, ctx);
                }
            }
            Msg::Timeout(r) => {
                if r == self.round && self.retries > 0 && self.phase == Phase::Preparing && ctx.choose_bool("give up") {
                    self.give_up(cfg, ctx);
                }
            }
            Msg::Prepare(_) | Msg::Accept(..) | Msg::Noise(_) => {
                ctx.assert(false, || format!("proposer cannot handle {msg:?}"))
            }
        }
    }
}
