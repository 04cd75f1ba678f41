//! Symmetry (ARCHITECTURE.md, "Symmetry"): the clients are
//! interchangeable. They differ only by their id and their value, and the
//! value is part of a client's state, so it moves with the client under a
//! permutation; no server, the master or a monitor treats one client id
//! differently from another. The servers are not a group: their ids fix
//! the chain's order (head, middle, tail), and the injector's choice
//! indexes them.

use super::{Cfg, Machine, Msg};
use mcheck_checker::lin::{Entry, KvMap, Tracker};
use mcheck_checker::machine::{MachineId, Renamed};

/// The clients' ids, one group.
pub(crate) fn groups(cfg: &Cfg) -> Vec<Vec<MachineId>> {
    let first = cfg.servers as u32 + 2;
    vec![(first..first + cfg.clients as u32).map(MachineId).collect()]
}

/// Rename every id `value` holds by `f`.
pub(crate) fn rename(value: Renamed<'_, Cfg>, f: &dyn Fn(MachineId) -> MachineId) {
    let raw = |c: &mut u32| *c = f(MachineId(*c)).0;
    match value {
        Renamed::Machine(Machine::Server(s)) => {
            s.pred = s.pred.map(f);
            s.succ = s.succ.map(f);
            for u in s.hist.iter_mut().chain(s.sent.iter_mut()) {
                raw(&mut u.client);
            }
        }
        Renamed::Machine(Machine::Master(m)) => {
            for id in m.chain.iter_mut().chain(m.ponged.iter_mut()) {
                *id = f(*id);
            }
            // The master notifies the clients one message per receiver:
            // their order is not part of the protocol.
            m.clients = m.clients.iter().map(|&c| f(c)).collect();
            m.clients.sort_unstable();
        }
        Renamed::Machine(Machine::Client(c)) => {
            c.head = f(c.head);
            c.tail = f(c.tail);
        }
        Renamed::Machine(Machine::Injector(i)) => {
            for id in &mut i.crashed {
                *id = f(*id);
            }
        }
        Renamed::Machine(Machine::Timer) => {}
        Renamed::Msg(m) => match m {
            Msg::Update { client, .. } | Msg::Query { client, .. } => *client = f(*client),
            Msg::Fwd { from, upd } => {
                *from = f(*from);
                raw(&mut upd.client);
            }
            Msg::LastSeq { from, .. } => *from = f(*from),
            Msg::Pong(x) | Msg::NewSucc(x) | Msg::NewPred(x) | Msg::NewHead(x) | Msg::NewTail(x) => *x = f(*x),
            _ => {}
        },
        Renamed::Monitor((_, history)) => *history = renamed_history(history, f),
    }
}

/// The tracker of the history with every process (a client's id)
/// renamed: the renamed history recorded again, so that the open
/// operations and configurations come out exactly as a run of the renamed
/// world would have recorded them.
fn renamed_history(t: &Tracker<KvMap>, f: &dyn Fn(MachineId) -> MachineId) -> Tracker<KvMap> {
    let p = |process: u32| f(MachineId(process)).0;
    let mut out = Tracker::default();
    for e in t.history().entries() {
        let e = match e {
            Entry::Invoke { process, op } => Entry::Invoke {
                process: p(*process),
                op: *op,
            },
            Entry::Return { process, ret } => Entry::Return {
                process: p(*process),
                ret: *ret,
            },
            Entry::Fail { process } => Entry::Fail { process: p(*process) },
        };
        // The history was linearizable when recorded: so is its renaming.
        if out.record(&e).is_err() {
            return t.clone();
        }
    }
    out
}
