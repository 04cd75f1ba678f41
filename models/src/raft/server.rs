//! A Raft server: persistent state (term, vote, log), volatile state (role,
//! commit index, the leader's next and match indexes, the candidate's
//! votes) and its handlers.

use super::{Append, Bug, Cfg, Entry, Msg, Note};
use mcheck_checker::machine::{Ctx, MachineId};
use serde::{Deserialize, Serialize};

/// Where a server stands in its current term (volatile: lost on a crash).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Role {
    /// Follows whoever leads its term.
    Follower,
    /// Asked for votes in its term.
    Candidate {
        /// Servers (a bit mask) that granted their vote, itself included.
        votes: u8,
    },
    /// Leads its term.
    Leader {
        /// Per server, the index of the next entry to send it (from 1).
        next: Vec<u8>,
        /// Per server, the highest index known to be replicated on it.
        matched: Vec<u8>,
    },
}

/// A server.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Server {
    /// Its index (and machine id).
    pub id: u8,
    /// Persistent: the latest term it has seen.
    pub term: u8,
    /// Persistent: whom it voted for in `term`.
    pub voted_for: Option<u8>,
    /// Persistent: its log; entry `i` (from 1) is `log[i - 1]`.
    pub log: Vec<Entry>,
    /// Volatile: its role.
    pub role: Role,
    /// Volatile: the highest index it knows to be committed (entries up to
    /// it are applied when it advances).
    pub commit: u8,
}

impl Server {
    /// Server `id` at start-up: every server is in term 1 and server 0 is
    /// its leader (the others voted for it).
    pub fn new(cfg: &Cfg, id: u8) -> Self {
        let role = if id == 0 {
            Role::Leader {
                next: vec![1; cfg.servers as usize],
                matched: vec![0; cfg.servers as usize],
            }
        } else {
            Role::Follower
        };
        Server {
            id,
            term: 1,
            voted_for: Some(0),
            log: Vec::new(),
            role,
            commit: 0,
        }
    }

    /// Index of the last entry (0 when the log is empty).
    pub fn last_index(&self) -> u8 {
        self.log.len() as u8
    }

    /// Term of the last entry (0 when the log is empty).
    pub fn last_term(&self) -> u8 {
        self.log.last().map_or(0, |e| e.term)
    }

    /// Term of entry `index` (0 for index 0).
    fn term_at(&self, index: u8) -> u8 {
        if index == 0 {
            0
        } else {
            self.log[index as usize - 1].term
        }
    }

    fn others(&self, cfg: &Cfg) -> impl Iterator<Item = u8> + use<> {
        let me = self.id;
        (0..cfg.servers).filter(move |&s| s != me)
    }

    /// Whether `msg` can change nothing here, now or later (terms only
    /// grow, a server leads or stands for election in a term only after it
    /// started that election, and a leader's match index only grows and
    /// stays below its next index): a vote or an append reply of an
    /// earlier term, a refused vote or one it already counted of its own
    /// term, a vote of its own term when it no longer stands, an append
    /// reply of its own term to a follower, a success its leader already
    /// counted.
    pub fn stale(&self, cfg: &Cfg, msg: &Msg) -> bool {
        match *msg {
            Msg::Vote { term, from, granted } => {
                term < self.term
                    || term == self.term
                        && (!granted
                            || match self.role {
                                Role::Candidate { votes } => votes & (1 << from) != 0,
                                _ => true,
                            })
            }
            Msg::AppendReply {
                term,
                from,
                success,
                index,
            } => {
                term < self.term
                    || term == self.term
                        && match &self.role {
                            Role::Leader { matched, .. } => {
                                // (The buggy leader re-reads its own log on
                                // every success: never stale there.)
                                success && index <= matched[from as usize] && cfg.bug != Some(Bug::MatchFromNextIndex)
                            }
                            _ => self.role == Role::Follower,
                        }
            }
            _ => false,
        }
    }

    /// Runs one message.
    pub fn handle(&mut self, cfg: &Cfg, msg: &Msg, ctx: &mut Ctx<Cfg>) {
        match msg {
            Msg::Timeout { left } => self.timeout(cfg, *left, ctx),
            Msg::Crash => self.crash(cfg),
            Msg::RequestVote {
                term,
                from,
                last_index,
                last_term,
            } => self.request_vote(cfg, *term, *from, (*last_index, *last_term), ctx),
            Msg::Vote { term, from, granted } => self.vote(cfg, *term, *from, *granted, ctx),
            Msg::Append(a) => self.append(cfg, a, ctx),
            Msg::AppendReply {
                term,
                from,
                success,
                index,
            } => self.append_reply(cfg, *term, *from, *success, *index, ctx),
            Msg::Request(cmd) => self.request(cfg, *cmd, ctx),
            _ => ctx.assert(false, || format!("server cannot handle {msg:?}")),
        }
    }

    /// Adopts a higher term seen in a message: a new term, no vote in it
    /// yet, and back to follower.
    fn see_term(&mut self, term: u8) {
        if term > self.term {
            self.term = term;
            self.voted_for = None;
            self.role = Role::Follower;
        }
    }

    /// The election timer fired: a follower or candidate starts an election
    /// in the next term (a leader lets it pass); with `left` timeouts left
    /// in the budget, it arms the timer of a server of its choice (itself
    /// included).
    fn timeout(&mut self, cfg: &Cfg, left: u8, ctx: &mut Ctx<Cfg>) {
        if left > 0 {
            let next = ctx.choose(u32::from(cfg.servers), "next timer");
            ctx.send(MachineId(next), Msg::Timeout { left: left - 1 });
        }
        if matches!(self.role, Role::Leader { .. }) {
            return;
        }
        self.term += 1;
        self.voted_for = Some(self.id);
        self.role = Role::Candidate { votes: 1 << self.id };
        for s in self.others(cfg) {
            ctx.send(
                MachineId(u32::from(s)),
                Msg::RequestVote {
                    term: self.term,
                    from: self.id,
                    last_index: self.last_index(),
                    last_term: self.last_term(),
                },
            );
        }
        self.count_votes(cfg, ctx);
    }

    /// Crash and restart: the persistent state survives, the volatile state
    /// is reset.
    fn crash(&mut self, cfg: &Cfg) {
        self.role = Role::Follower;
        self.commit = 0;
        if cfg.bug == Some(Bug::VolatileVote) {
            self.voted_for = None;
        }
    }

    fn request_vote(&mut self, cfg: &Cfg, term: u8, from: u8, last: (u8, u8), ctx: &mut Ctx<Cfg>) {
        self.see_term(term);
        let (last_index, last_term) = last;
        let up_to_date = cfg.bug == Some(Bug::VoteWithoutLogCheck)
            || (last_term, last_index) >= (self.last_term(), self.last_index());
        let granted = term == self.term && self.voted_for.is_none_or(|v| v == from) && up_to_date;
        if granted {
            self.voted_for = Some(from);
        }
        ctx.send(
            MachineId(u32::from(from)),
            Msg::Vote {
                term: self.term,
                from: self.id,
                granted,
            },
        );
    }

    fn vote(&mut self, cfg: &Cfg, term: u8, from: u8, granted: bool, ctx: &mut Ctx<Cfg>) {
        self.see_term(term);
        if let Role::Candidate { votes } = &mut self.role
            && granted
            && term == self.term
        {
            *votes |= 1 << from;
            self.count_votes(cfg, ctx);
        }
    }

    /// A candidate with votes from a majority becomes leader and sends every
    /// other server an `Append` with no entries (its heartbeat).
    fn count_votes(&mut self, cfg: &Cfg, ctx: &mut Ctx<Cfg>) {
        let Role::Candidate { votes } = self.role else {
            return;
        };
        if votes.count_ones() < cfg.majority() {
            return;
        }
        let mut matched = vec![0; cfg.servers as usize];
        matched[self.id as usize] = self.last_index();
        self.role = Role::Leader {
            next: vec![self.last_index() + 1; cfg.servers as usize],
            matched,
        };
        ctx.announce(Note::Leader {
            term: self.term,
            id: self.id,
        });
        self.broadcast(cfg, ctx);
    }

    /// The leader sends every other server an `Append`.
    pub fn broadcast(&self, cfg: &Cfg, ctx: &mut Ctx<Cfg>) {
        for s in self.others(cfg) {
            self.send_append(s, ctx);
        }
    }

    /// The leader sends server `to` what [`Server::append_for`] says.
    fn send_append(&self, to: u8, ctx: &mut Ctx<Cfg>) {
        if let Some(msg) = self.append_for(to) {
            ctx.send(MachineId(u32::from(to)), msg);
        }
    }

    /// The `Append` a leader owes server `to`: the entries from its next
    /// index on (`None` unless it leads).
    pub fn append_for(&self, to: u8) -> Option<Msg> {
        let Role::Leader { next, .. } = &self.role else {
            return None;
        };
        let prev_index = next[to as usize] - 1;
        Some(Msg::Append(Append {
            term: self.term,
            from: self.id,
            prev_index,
            prev_term: self.term_at(prev_index),
            entries: self.log[prev_index as usize..].to_vec(),
            commit: self.commit,
        }))
    }

    /// A leader's `Append`: accepted when its term is current and the log
    /// holds its previous entry; then only entries that conflict are
    /// replaced (an `Append` may be stale or duplicated).
    fn append(&mut self, cfg: &Cfg, a: &Append, ctx: &mut Ctx<Cfg>) {
        self.see_term(a.term);
        let Append {
            term,
            from,
            prev_index,
            prev_term,
            ref entries,
            commit,
        } = *a;
        let to = MachineId(u32::from(from));
        if term < self.term {
            ctx.send(to, self.append_reply_msg(false, prev_index));
            return;
        }
        if matches!(self.role, Role::Candidate { .. }) {
            self.role = Role::Follower;
        }
        if prev_index > self.last_index() || self.term_at(prev_index) != prev_term {
            ctx.send(to, self.append_reply_msg(false, prev_index));
            return;
        }
        if cfg.bug == Some(Bug::TruncateOnEveryAppend) {
            self.log.truncate(prev_index as usize);
        }
        for (k, e) in entries.iter().enumerate() {
            let at = prev_index as usize + k;
            if at < self.log.len() && self.log[at].term != e.term {
                self.log.truncate(at);
            }
            if at >= self.log.len() {
                self.log.push(*e);
            }
        }
        let last_new = prev_index + entries.len() as u8;
        self.advance_commit(commit.min(last_new), ctx);
        ctx.send(to, self.append_reply_msg(true, last_new));
    }

    fn append_reply_msg(&self, success: bool, index: u8) -> Msg {
        Msg::AppendReply {
            term: self.term,
            from: self.id,
            success,
            index,
        }
    }

    /// The leader handles a follower's answer to an `Append`: on success
    /// `index` is the last index the request covered, on failure the
    /// `prev_index` that did not match (the leader backs up and resends).
    fn append_reply(&mut self, cfg: &Cfg, term: u8, from: u8, success: bool, index: u8, ctx: &mut Ctx<Cfg>) {
        self.see_term(term);
        let last = self.last_index();
        let Role::Leader { next, matched } = &mut self.role else {
            return;
        };
        if term != self.term {
            return;
        }
        let f = from as usize;
        if !success {
            next[f] = next[f].min(index).max(matched[f] + 1);
            self.send_append(from, ctx);
            return;
        }
        if cfg.bug == Some(Bug::MatchFromNextIndex) {
            next[f] = last + 1;
            matched[f] = next[f] - 1;
        } else {
            matched[f] = matched[f].max(index);
            next[f] = next[f].max(index + 1);
        }
        self.leader_commit(cfg, ctx);
    }

    /// The leader commits the highest index replicated on a majority whose
    /// entry is of its own term (entries of earlier terms are committed with
    /// it, never by counting their own replicas), then sends every follower
    /// an `Append` carrying the new commit index.
    fn leader_commit(&mut self, cfg: &Cfg, ctx: &mut Ctx<Cfg>) {
        let Role::Leader { matched, .. } = &self.role else {
            return;
        };
        let ok = (self.commit + 1..=self.last_index()).rev().find(|&n| {
            let own_term = cfg.bug == Some(Bug::Figure8Commit) || self.term_at(n) == self.term;
            own_term && matched.iter().filter(|&&m| m >= n).count() as u32 >= cfg.majority()
        });
        if let Some(n) = ok {
            let from = self.commit;
            self.advance_commit(n, ctx);
            for i in from..n {
                let e = self.log[i as usize];
                ctx.announce(Note::Committed {
                    index: i + 1,
                    entry: e,
                    by: self.id,
                    term: self.term,
                });
                ctx.send(cfg.client(), self.ack(cfg, i));
            }
            // Tell the followers at once, as etcd's leader does after it
            // commits (`bcastAppend`): otherwise they learn the new commit
            // index only with the next request's `Append`.
            self.broadcast(cfg, ctx);
        }
    }

    /// The acknowledgement of the operation at position `i` (from 0) of the
    /// log: it carries the commands before it.
    fn ack(&self, cfg: &Cfg, i: u8) -> Msg {
        let log = &self.log[..i as usize];
        Msg::Ack {
            cmd: self.log[i as usize].cmd,
            before: log.iter().map(|e| e.cmd).filter(|&c| cfg.is_command(c)).collect(),
        }
    }

    /// Raises the commit index to `to` (if higher) and applies the entries.
    fn advance_commit(&mut self, to: u8, ctx: &mut Ctx<Cfg>) {
        while self.commit < to {
            self.commit += 1;
            ctx.announce(Note::Applied {
                server: self.id,
                index: self.commit,
                cmd: self.log[self.commit as usize - 1].cmd,
            });
        }
    }

    /// A client's operation (a command or a read, both go through the log,
    /// so that a read is linearizable): the leader appends it (once) and
    /// sends every other server what it lacks (an operation it already
    /// holds is only acknowledged again if committed); any other server
    /// redirects the client.
    fn request(&mut self, cfg: &Cfg, cmd: u8, ctx: &mut Ctx<Cfg>) {
        let Role::Leader { matched, .. } = &mut self.role else {
            ctx.send(cfg.client(), Msg::Redirect { cmd, from: self.id });
            return;
        };
        // The buggy leader keeps no client session: it never looks.
        let held = (!cfg.has(Bug::RetryAppendedTwice))
            .then(|| self.log.iter().position(|e| e.cmd == cmd))
            .flatten();
        match held {
            Some(i) if (i as u8) < self.commit => ctx.send(cfg.client(), self.ack(cfg, i as u8)),
            Some(_) => {}
            None => {
                self.log.push(Entry { term: self.term, cmd });
                matched[self.id as usize] = self.log.len() as u8;
                self.broadcast(cfg, ctx);
                self.leader_commit(cfg, ctx);
            }
        }
    }
}
