//! The client and the fault injector.

use super::{Bug, Cfg, Msg, Note};
use mcheck_checker::lin::{Entry, LogOp, LogRet};
use mcheck_checker::machine::{Ctx, MachineId};
use serde::{Deserialize, Serialize};

/// Attempts the client makes per command (the first and one retry).
pub const ATTEMPTS: u8 = 2;

/// The client: submits commands `1..=requests`, then `reads` reads of the
/// log, one operation at a time, to the server it believes leads, and
/// tries the next server on a redirect or when its timer fires, at most
/// `ATTEMPTS` attempts per operation; then it gives the operation up and
/// goes on with the next one.
///
/// Its history (ARCHITECTURE.md, "Linearizability") is checked against a
/// log: operation `k` is process `k` (so a given-up operation stays pending
/// without blocking the next), invoked when first sent; a command returns
/// its position (the commands committed before it), a read the commands.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Client {
    /// The operation it is submitting (from 1; above [`Cfg::ops`] when
    /// done).
    pub cmd: u8,
    /// The server it sent it to last.
    pub target: u8,
    /// Attempts made for `cmd` so far.
    pub attempts: u8,
}

impl Client {
    /// The client before its first command.
    pub fn new() -> Self {
        Client {
            cmd: 0,
            target: 0,
            attempts: 0,
        }
    }

    /// Whether `msg` can change nothing, now or later: the timer of a
    /// command it is done with (commands only go up).
    pub fn stale(&self, msg: &Msg) -> bool {
        matches!(*msg, Msg::ClientTimeout(cmd) if cmd < self.cmd)
    }

    /// Runs one message.
    pub fn handle(&mut self, cfg: &Cfg, msg: &Msg, ctx: &mut Ctx<Cfg>) {
        match *msg {
            Msg::Go => self.next_command(cfg, ctx),
            Msg::Ack { cmd, ref before } if cmd == self.cmd => {
                ctx.announce(Note::Acked(cmd));
                let ret = if cfg.is_command(cmd) {
                    LogRet::Index(before.len() as u64)
                } else {
                    LogRet::Entries(before.iter().map(|&c| u64::from(c)).collect())
                };
                ctx.announce(Note::Client(Entry::Return {
                    process: u32::from(cmd),
                    ret,
                }));
                self.next_command(cfg, ctx);
            }
            Msg::Redirect { cmd, from } if cmd == self.cmd && from == self.target => self.retry(cfg, ctx, false),
            Msg::ClientTimeout(cmd) if cmd == self.cmd => self.retry(cfg, ctx, true),
            Msg::Ack { .. } | Msg::Redirect { .. } | Msg::ClientTimeout(_) => {}
            _ => ctx.assert(false, || format!("client cannot handle {msg:?}")),
        }
    }

    /// Submits the next operation (if any) to the server it last used, with
    /// a timer, and records its invocation.
    fn next_command(&mut self, cfg: &Cfg, ctx: &mut Ctx<Cfg>) {
        self.cmd += 1;
        self.attempts = 0;
        if self.cmd <= cfg.ops() {
            let op = if cfg.is_command(self.cmd) {
                LogOp::Append(u64::from(self.cmd))
            } else {
                LogOp::Read
            };
            ctx.announce(Note::Client(Entry::Invoke {
                process: u32::from(self.cmd),
                op,
            }));
            self.submit(ctx);
            ctx.send(ctx.me(), Msg::ClientTimeout(self.cmd));
        } else {
            // Done: whom it used last no longer matters.
            self.target = 0;
        }
    }

    fn submit(&mut self, ctx: &mut Ctx<Cfg>) {
        self.attempts += 1;
        ctx.send(MachineId(u32::from(self.target)), Msg::Request(self.cmd));
    }

    /// Tries the next server; `timer`: the timer fired (re-arm it, or give
    /// the command up when the attempts are used up).
    fn retry(&mut self, cfg: &Cfg, ctx: &mut Ctx<Cfg>, timer: bool) {
        if self.attempts >= ATTEMPTS {
            if timer {
                self.next_command(cfg, ctx);
            }
            return;
        }
        self.target = (self.target + 1) % cfg.servers;
        self.submit(ctx);
        if timer && !cfg.has(Bug::RetryWithoutTimer) {
            ctx.send(ctx.me(), Msg::ClientTimeout(self.cmd));
        }
    }
}

impl Default for Client {
    fn default() -> Self {
        Client::new()
    }
}

/// The fault injector: up to `crashes` times, crashes a server of its
/// choice (it restarts at once with its persistent state) or stops.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Injector {
    /// Crashes left.
    pub left: u8,
}

impl Injector {
    /// Runs one message (its own `Go`).
    pub fn handle(&mut self, cfg: &Cfg, msg: &Msg, ctx: &mut Ctx<Cfg>) {
        if *msg != Msg::Go {
            ctx.assert(false, || format!("injector cannot handle {msg:?}"));
            return;
        }
        let pick = ctx.choose(u32::from(cfg.servers) + 1, "crash");
        if pick == u32::from(cfg.servers) || self.left == 0 {
            // Stopping gives up the crashes left: the same state as after
            // a last crash that changed nothing.
            self.left = 0;
            ctx.halt();
            return;
        }
        ctx.send(MachineId(pick), Msg::Crash);
        self.left -= 1;
        if self.left == 0 {
            ctx.halt();
        } else {
            ctx.send(ctx.me(), Msg::Go);
        }
    }
}
