//! The roles of two-phase commit: each machine's state and handler.

use super::{Bug, COORDINATOR, Cfg, MAX_CLIENTS, Msg, Note, TIMER};
use mcheck_checker::lin::{Entry, KvOp, KvRet};
use mcheck_checker::machine::Ctx;
use mcheck_checker::machine::MachineId;
use serde::{Deserialize, Serialize};

/// A client's progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Phase {
    /// Waiting for the result of its write.
    Writing,
    /// Waiting for the value it reads back (the write's outcome).
    Reading {
        /// Whether the write committed.
        committed: bool,
    },
}

/// The coordinator.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Coordinator {
    /// The latest transaction id (0 before the first).
    pub txn: u8,
    /// Whether it is collecting votes for `txn`.
    pub collecting: bool,
    /// The client whose write `txn` is.
    pub client: MachineId,
    /// Yes votes received for `txn`, one bit per participant.
    pub votes: u8,
}

/// The timer.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Timer {
    /// The transaction it is armed for.
    pub armed: Option<u8>,
}

/// A participant.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Participant {
    /// The prepared write `(txn, key, value)`, if any.
    pub pending: Option<(u8, u8, u8)>,
    /// Committed writes not yet applied to the store.
    pub unapplied: u8,
    /// The store, one value per key.
    pub store: [u8; MAX_CLIENTS],
}

/// A client.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Client {
    /// Its key.
    pub key: u8,
    /// Writes done so far (the current value written is `round + 1`).
    pub round: u8,
    /// What it waits for.
    pub phase: Phase,
}

impl Coordinator {
    pub(crate) fn handle(&mut self, cfg: &Cfg, msg: &Msg, ctx: &mut Ctx<Cfg>) {
        match *msg {
            Msg::Write { from, key, value } => {
                self.txn += 1;
                self.collecting = true;
                self.client = from;
                self.votes = 0;
                let txn = self.txn;
                ctx.send(TIMER, Msg::Start(txn));
                cfg.to_participants(ctx, || Msg::Prepare { txn, key, value });
            }
            Msg::Vote { txn, from, yes } => {
                let current = txn == self.txn || cfg.bug == Some(Bug::StaleVote);
                let open = self.collecting || cfg.bug == Some(Bug::CommitAfterTimeout);
                if !(current && open) {
                    return;
                }
                if !yes {
                    self.decide(cfg, false, ctx);
                    return;
                }
                self.votes |= 1 << from;
                if self.votes == cfg.all_votes() {
                    self.decide(cfg, true, ctx);
                }
            }
            Msg::Timeout(t) if t == self.txn && (self.collecting || cfg.bug == Some(Bug::AbortAfterCommit)) => {
                self.decide(cfg, false, ctx);
            }
            _ => {}
        }
    }

    /// Close the current transaction: cancel the timer, answer the client,
    /// tell the participants.
    fn decide(&mut self, cfg: &Cfg, commit: bool, ctx: &mut Ctx<Cfg>) {
        let txn = self.txn;
        self.collecting = false;
        ctx.send(TIMER, Msg::Cancel(txn));
        ctx.send(self.client, Msg::Result(commit));
        if !commit && cfg.bug == Some(Bug::AbortOnlyCounted) {
            for i in (0..cfg.participants).rev().filter(|i| self.votes & (1 << i) != 0) {
                ctx.send(cfg.participant_id(i), Msg::Abort(txn));
            }
            return;
        }
        cfg.to_participants(ctx, || if commit { Msg::Commit(txn) } else { Msg::Abort(txn) });
    }
}

impl Timer {
    pub(crate) fn handle(&mut self, msg: &Msg, ctx: &mut Ctx<Cfg>) {
        match *msg {
            Msg::Start(t) => {
                self.armed = Some(t);
                ctx.send(TIMER, Msg::Tick(t));
            }
            Msg::Tick(t) if self.armed == Some(t) && ctx.choose_bool("fire") => {
                self.armed = None;
                ctx.send(COORDINATOR, Msg::Timeout(t));
            }
            Msg::Cancel(t) if self.armed == Some(t) => self.armed = None,
            _ => {}
        }
    }
}

impl Participant {
    pub(crate) fn handle(&mut self, cfg: &Cfg, msg: &Msg, ctx: &mut Ctx<Cfg>) {
        let p = (ctx.me().0 - 2) as u8;
        match *msg {
            Msg::Prepare { txn, key, value } => {
                let yes = ctx.choose_bool("vote yes");
                if yes {
                    self.pending = Some((txn, key, value));
                } else {
                    ctx.announce(Note::VotedNo { p, txn });
                }
                ctx.send(COORDINATOR, Msg::Vote { txn, from: p, yes });
            }
            Msg::Commit(txn) => {
                if let Some((t, key, value)) = self.pending
                    && t == txn
                {
                    self.pending = None;
                    self.unapplied += 1;
                    ctx.send(ctx.me(), Msg::Apply { key, value });
                }
                ctx.announce(Note::Decided { p, txn, commit: true });
            }
            Msg::Abort(txn) => {
                if let Some((t, key, _)) = self.pending
                    && t == txn
                {
                    self.pending = None;
                    if cfg.bug == Some(Bug::AbortResetsStore)
                        && let Some(slot) = self.store.get_mut(usize::from(key))
                    {
                        *slot = 0;
                    }
                }
                ctx.announce(Note::Decided { p, txn, commit: false });
            }
            Msg::Apply { key, value } => {
                if let Some(slot) = self.store.get_mut(usize::from(key)) {
                    *slot = value;
                }
                self.unapplied = self.unapplied.saturating_sub(1);
            }
            Msg::Read { from, key } => {
                let v = self.store.get(usize::from(key)).copied().unwrap_or(0);
                ctx.send(from, Msg::Value(v));
            }
            _ => {}
        }
    }
}

impl Client {
    /// Write the value of the current round to its key.
    fn write(&self, ctx: &mut Ctx<Cfg>) {
        let from = ctx.me();
        let (key, value) = (self.key, self.round + 1);
        let op = KvOp::Put(u64::from(key), u64::from(value));
        ctx.announce(Note::Client(Entry::Invoke { process: from.0, op }));
        ctx.send(COORDINATOR, Msg::Write { from, key, value });
    }

    pub(crate) fn handle(&mut self, cfg: &Cfg, msg: &Msg, ctx: &mut Ctx<Cfg>) {
        match *msg {
            Msg::Go => self.write(ctx),
            Msg::Result(committed) => {
                let last = ctx.choose_bool("read from last participant");
                let i = if last { cfg.participants - 1 } else { 0 };
                self.phase = Phase::Reading { committed };
                let (from, key) = (ctx.me(), self.key);
                let process = from.0;
                ctx.announce(Note::Client(if committed {
                    Entry::Return {
                        process,
                        ret: KvRet::Ok,
                    }
                } else {
                    Entry::Fail { process }
                }));
                let op = KvOp::Get(u64::from(key));
                ctx.announce(Note::Client(Entry::Invoke { process, op }));
                ctx.send(cfg.participant_id(i), Msg::Read { from, key });
            }
            Msg::Value(got) => {
                if let Phase::Reading { committed } = self.phase {
                    ctx.announce(Note::ReadBack {
                        key: self.key,
                        wrote: self.round + 1,
                        committed,
                        got,
                    });
                    let ret = KvRet::Value((got != 0).then_some(u64::from(got)));
                    let process = ctx.me().0;
                    ctx.announce(Note::Client(Entry::Return { process, ret }));
                }
                self.round += 1;
                self.phase = Phase::Writing;
                if self.round < cfg.transactions {
                    self.write(ctx);
                } else {
                    ctx.halt();
                }
            }
            _ => {}
        }
    }
}
