//! A Multi-Paxos node: proposer, acceptor and learner in one machine.

use super::{Bug, Cfg, Msg, Note, id};
use mcheck_checker::machine::Ctx;
use serde::{Deserialize, Serialize};

/// A node's proposer role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Role {
    /// Not leading: requests are forwarded to the known leader.
    Follower,
    /// Running phase 1 for its ballot: requests are deferred.
    Preparing,
    /// Leading its ballot: requests get slots.
    Leading,
}

/// A node: proposer, acceptor and learner.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
    /// (a count under [`Bug::LearnerCountsDuplicates`]).
    pub votes: Vec<(u8, u8, u8)>,
    /// Learner: per slot, the value learned (0: none).
    pub learned: Vec<u8>,
    /// Replica: the slots applied (answered to the client), a prefix of
    /// the learned ones.
    pub applied: u8,
}

impl Node {
    /// Acceptor side: a higher ballot was seen; a leader of a lower one
    /// steps down.
    fn see_ballot(&mut self, cfg: &Cfg, me: u8, ballot: u8) {
        if ballot > self.promised {
            self.promised = ballot;
        }
        let owner = cfg.owner(self.promised);
        if self.promised > self.ballot && owner != me {
            self.role = Role::Follower;
            self.leader = owner;
        }
    }

    fn request(&mut self, cfg: &Cfg, value: u8, ctx: &mut Ctx<Cfg>) {
        match self.role {
            Role::Follower => ctx.send(id(self.leader), Msg::Request(value)),
            // Deferred by `receive`.
            Role::Preparing => {}
            Role::Leading => {
                if let Some(slot) = self.proposals.iter().position(|p| p.1 == value) {
                    // A retransmitted request: retransmit its Accept unless
                    // it is already learned.
                    if self.learned[slot] == 0 {
                        self.propose(cfg, slot as u8, ctx);
                    }
                } else if let Some(slot) = self.proposals.iter().position(|p| p.1 == 0) {
                    self.proposals[slot] = (self.ballot, value);
                    self.propose(cfg, slot as u8, ctx);
                }
                // A full log drops the request: `updates` distinct values never
                // fill more than `updates` slots of one leader.
            }
        }
    }

    /// Phase 2 for `slot`: accept locally, then ask the other acceptors.
    fn propose(&mut self, cfg: &Cfg, slot: u8, ctx: &mut Ctx<Cfg>) {
        let me = ctx.me().0 as u8;
        let (ballot, value) = (self.ballot, self.proposals[slot as usize].1);
        self.promised = self.promised.max(ballot);
        self.accepted[slot as usize] = (ballot, value);
        self.learn(cfg, me, ballot, slot, value, ctx);
        cfg.to_others(me, Msg::Accept { ballot, slot, value }, ctx);
    }

    /// Learner: acceptor `from` accepted `(ballot, slot, value)`.
    fn learn(&mut self, cfg: &Cfg, from: u8, ballot: u8, slot: u8, value: u8, ctx: &mut Ctx<Cfg>) {
        let s = slot as usize;
        let vote = &mut self.votes[s];
        if ballot > vote.0 {
            *vote = (ballot, value, 0);
        }
        if ballot != vote.0 {
            return;
        }
        let count = if cfg.bug == Some(Bug::LearnerCountsDuplicates) {
            // Count messages, not acceptors.
            vote.2 += 1;
            vote.2 as u32
        } else {
            vote.2 |= 1 << from;
            vote.2.count_ones()
        };
        if self.learned[s] == 0 && count >= cfg.majority() {
            self.learned[s] = vote.1;
            ctx.announce(Note::Chosen {
                slot,
                value: vote.1,
                by: ctx.me().0 as u8,
            });
            self.apply(cfg, ctx);
        }
    }

    /// Replica: apply the learned slots in order, answering the client for
    /// each; a slot waits for every slot before it.
    fn apply(&mut self, cfg: &Cfg, ctx: &mut Ctx<Cfg>) {
        while let Some(&value) = self.learned.get(self.applied as usize).filter(|v| **v != 0) {
            let slot = self.applied;
            ctx.send(cfg.client_id(), Msg::Reply { value, slot });
            self.applied += 1;
        }
    }

    fn lead(&mut self, cfg: &Cfg, ctx: &mut Ctx<Cfg>) {
        self.role = Role::Leading;
        for slot in 0..cfg.updates {
            if self.proposals[slot as usize].1 != 0 {
                self.proposals[slot as usize].0 = self.ballot;
                self.propose(cfg, slot, ctx);
            }
        }
    }

    /// Proposer: a promise for its ballot from `from` with its log.
    fn promise(&mut self, cfg: &Cfg, from: u8, log: &[(u8, u8)], ctx: &mut Ctx<Cfg>) {
        self.promises |= 1 << from;
        for (mine, theirs) in self.proposals.iter_mut().zip(log) {
            if theirs.1 != 0 && theirs.0 >= mine.0 {
                *mine = *theirs;
            }
        }
        if self.promises.count_ones() >= cfg.majority() {
            self.lead(cfg, ctx);
        }
    }

    /// The timer fired: take the next ballot this node owns.
    fn take_over(&mut self, cfg: &Cfg, ctx: &mut Ctx<Cfg>) {
        let me = ctx.me().0 as u8;
        let mut ballot = self.promised + 1;
        while cfg.owner(ballot) != me {
            ballot += 1;
        }
        self.ballot = ballot;
        self.leader = me;
        self.promised = ballot;
        if cfg.bug == Some(Bug::TakeoverWithoutPhase1) {
            // No phase 1; the local acceptor log stands in for a
            // majority's.
            self.proposals = self.accepted.clone();
            self.lead(cfg, ctx);
        } else {
            self.role = Role::Preparing;
            self.promises = 0;
            self.proposals = vec![(0, 0); cfg.updates as usize];
            let log = self.accepted.clone();
            self.promise(cfg, me, &log, ctx);
            cfg.to_others(me, Msg::Prepare { ballot }, ctx);
        }
    }

    pub(crate) fn handle(&mut self, cfg: &Cfg, msg: &Msg, ctx: &mut Ctx<Cfg>) {
        let me = ctx.me().0 as u8;
        match msg {
            Msg::Request(v) => self.request(cfg, *v, ctx),
            Msg::Timeout => self.take_over(cfg, ctx),
            Msg::Prepare { ballot } => {
                let from = cfg.owner(*ballot);
                if *ballot > self.promised {
                    self.see_ballot(cfg, me, *ballot);
                    let log = self.accepted.clone();
                    ctx.send(
                        id(from),
                        Msg::Promise {
                            ballot: *ballot,
                            from: me,
                            log,
                        },
                    );
                } else {
                    let promised = self.promised;
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
                if self.role == Role::Preparing && *ballot == self.ballot {
                    self.promise(cfg, *from, log, ctx);
                }
            }
            Msg::Accept { ballot, slot, value } => {
                let leader = cfg.owner(*ballot);
                if *ballot >= self.promised {
                    self.see_ballot(cfg, me, *ballot);
                    self.accepted[*slot as usize] = (*ballot, *value);
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
                    let promised = self.promised;
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
            } => self.learn(cfg, *from, *ballot, *slot, *value, ctx),
            Msg::Nack { ballot, promised } => {
                // A follower ignores a Nack in `receive` (it is unhandled
                // there under `Bug::StaleNackUnhandled`); a stale one for an
                // older ballot is ignored here.
                if *ballot == self.ballot && *promised > self.ballot {
                    self.role = Role::Follower;
                    self.leader = cfg.owner(*promised);
                }
            }
            Msg::Go | Msg::Reply { .. } | Msg::Noise(_) => {
                ctx.assert(false, || format!("node{me} cannot handle {msg:?}"))
            }
        }
    }
}
