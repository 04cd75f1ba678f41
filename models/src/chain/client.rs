//! A client: for each key, an update at the head, then a query at the tail.

use super::{Bug, Cfg, Msg, Note};
use mcheck_checker::lin::{Entry, KvOp, KvRet};
use mcheck_checker::machine::{Ctx, MachineId};
use serde::{Deserialize, Serialize};

/// A client (see the module docs of [`super`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Client {
    /// Its value (written to every key).
    pub val: u8,
    /// The head it knows.
    pub head: MachineId,
    /// The tail it knows.
    pub tail: MachineId,
    /// The current operation: `2k` updates key `k`, `2k + 1` queries it.
    pub op: u8,
}

impl Client {
    /// Whether the current operation is an update (else a query).
    fn updating(&self) -> bool {
        self.op.is_multiple_of(2)
    }

    pub(crate) fn handle(&mut self, cfg: &Cfg, msg: &Msg, ctx: &mut Ctx<Cfg>) {
        match *msg {
            Msg::Go => self.invoke(ctx),
            Msg::UpdDone(o) | Msg::Answer { op: o, .. } => {
                let trusted = cfg.has(Bug::ClientTrustsStaleDone) && self.updating() && matches!(msg, Msg::UpdDone(_));
                if o == self.op || trusted {
                    let ret = match *msg {
                        Msg::Answer { val, .. } => KvRet::Value((val != 0).then_some(u64::from(val))),
                        _ => KvRet::Ok,
                    };
                    let process = ctx.me().0;
                    ctx.announce(Note::Client(Entry::Return { process, ret }));
                    self.op += 1;
                    if self.op == 2 * cfg.keys {
                        ctx.halt();
                    } else {
                        self.invoke(ctx);
                    }
                }
            }
            Msg::NewHead(h) => {
                self.head = h;
                if self.updating() {
                    self.request(ctx);
                }
            }
            Msg::NewTail(t) => {
                self.tail = t;
                if !self.updating() {
                    self.request(ctx);
                }
            }
            _ => ctx.assert(false, || format!("client cannot handle {msg:?}")),
        }
    }

    /// Record the current operation in the history and send it.
    fn invoke(&self, ctx: &mut Ctx<Cfg>) {
        let key = u64::from(self.op / 2);
        let op = if self.updating() {
            KvOp::Put(key, u64::from(self.val))
        } else {
            KvOp::Get(key)
        };
        let process = ctx.me().0;
        ctx.announce(Note::Client(Entry::Invoke { process, op }));
        self.request(ctx);
    }

    /// Send the current operation: an update to the head or a query to the
    /// tail.
    fn request(&self, ctx: &mut Ctx<Cfg>) {
        let (client, op, key) = (ctx.me(), self.op, self.op / 2);
        if self.updating() {
            ctx.send(
                self.head,
                Msg::Update {
                    client,
                    op,
                    key,
                    val: self.val,
                },
            );
        } else {
            ctx.send(self.tail, Msg::Query { client, op, key });
        }
    }
}
