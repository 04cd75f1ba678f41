//! The two monitors of the chain model.
//!
//! * **Update propagation** ([`propagation`]): the invariant checked over
//!   the whole world after every step; its parts ([`check_history`],
//!   [`check_pair`], [`check_links`]) are pure functions so that tests can
//!   feed them bad data directly.
//! * **Query consistency** ([`QueryMonitor`]): fed by announcements.
//! * **Liveness** ([`owed`]): what the system still owes in a world (a
//!   client's answer, a repair), the monitor's temperature.

use super::{Cfg, Client, Machine, Msg, Server, Upd};
use mcheck_checker::machine::{MachineId, World};
use serde::{Deserialize, Serialize};
use std::fmt::{self, Display};

/// A server's name (`server3`) in a violation's message: formatted only
/// into an error, never on the invariant's passing path (which runs after
/// every step; formatting the names there was a third of the instructions
/// of a chain search).
#[derive(Clone, Copy)]
struct ServerName(MachineId);

impl Display for ServerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "server{}", self.0.0)
    }
}

/// The update-propagation invariant over `world` (see the module docs of
/// [`super`]): every live server's history is sorted; every live server of
/// the master's chain with work across a link to a removed server has a
/// repair queued; every live client waiting on a removed head or tail has
/// a notification queued; and every settled link satisfies
/// [`check_pair`].
pub(crate) fn propagation(cfg: &Cfg, world: &World<Cfg>) -> Result<(), String> {
    let name = ServerName;
    let master = match world.machine(cfg.master_id()) {
        Machine::Master(m) => &m.chain,
        _ => return Ok(()),
    };
    let halted = |id: MachineId| world.slots()[id.0 as usize].halted;
    for (id, m) in world.live() {
        let server = match m {
            Machine::Client(c) => {
                check_client(world, id, c, master)?;
                continue;
            }
            Machine::Server(s) => s,
            _ => continue,
        };
        check_history(name(id), &server.hist)?;
        let inbox = world.inbox(id);
        if master.contains(&id) {
            let removed = |x: Option<MachineId>| x.filter(|x| !master.contains(x)).map(name);
            let queued = |f: fn(&Msg) -> bool| inbox.iter().any(|(_, m)| f(m));
            let succ_fix = queued(|m| matches!(m, Msg::NewSucc(_) | Msg::BecomeTail));
            let succ_work = !server.sent.is_empty() || queued(|m| matches!(m, Msg::Query { .. }));
            check_links(name(id), "successor", removed(server.succ), succ_fix || !succ_work)?;
            let pred_fix = queued(|m| matches!(m, Msg::NewPred(_) | Msg::BecomeHead));
            let pred_work = queued(|m| matches!(m, Msg::Update { .. }));
            check_links(name(id), "predecessor", removed(server.pred), pred_fix || !pred_work)?;
        }
        let Some(b) = server.succ else { continue };
        if !server.linked || halted(b) {
            continue;
        }
        let Machine::Server(succ) = world.machine(b) else {
            continue;
        };
        if succ.pred != Some(id) {
            continue;
        }
        check_link(world, (id, server), (b, succ))?;
    }
    Ok(())
}

/// The liveness monitors' temperature (ARCHITECTURE.md, "Liveness"):
/// `Some((monitor, what is owed))` while something is owed in `world`.
///
/// * `answered`: a live client has an operation without its answer (a
///   client halts after its last answer; clients never crash).
/// * `repaired`: a crashed (halted) server is still in the master's chain
///   (the ping round has not removed it yet), or a live server of the
///   master's chain links to a server the master removed, or waits for its
///   new successor's `LastSeq` (the link is not settled).
///
/// Both are owed under every budget: the injector crashes at most
/// `servers - 1` servers, each crash report starts a ping round, and a
/// repair needs no retry, so a correct chain always pays them.
pub(crate) fn owed(cfg: &Cfg, world: &World<Cfg>) -> Option<Owed> {
    let Machine::Master(master) = world.machine(cfg.master_id()) else {
        return None;
    };
    let chain = &master.chain;
    let halted = |id: MachineId| world.slots()[id.0 as usize].halted;
    if let Some(dead) = chain.iter().find(|&&s| halted(s)) {
        return Some(Owed::Crashed(dead.0));
    }
    for (id, m) in world.live() {
        match m {
            Machine::Server(s) if chain.contains(&id) => {
                if let Some(x) = [s.pred, s.succ].into_iter().flatten().find(|x| !chain.contains(x)) {
                    return Some(Owed::StaleLink(id.0, x.0));
                }
                if !s.linked {
                    return Some(Owed::Unlinked(id.0));
                }
            }
            Machine::Client(c) => return Some(Owed::Answer(id.0, c.op)),
            _ => {}
        }
    }
    None
}

/// What [`owed`] found, by machine id: decided without formatting, said in
/// words by its `Display`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Owed {
    /// `repaired`: the server crashed and is still in the master's chain.
    Crashed(u32),
    /// `repaired`: the server links to the other, which the master removed.
    StaleLink(u32, u32),
    /// `repaired`: the server waits for its new successor's `LastSeq`.
    Unlinked(u32),
    /// `answered`: the client waits for the answer to its operation.
    Answer(u32, u8),
}

impl Owed {
    /// The monitor that is owed it.
    pub(crate) fn monitor(self) -> &'static str {
        match self {
            Owed::Answer(..) => "answered",
            _ => "repaired",
        }
    }
}

impl std::fmt::Display for Owed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Owed::Crashed(s) => write!(f, "server{s} crashed and is still in the master's chain"),
            Owed::StaleLink(s, x) => write!(f, "server{s} still links to server{x}, which the master removed"),
            Owed::Unlinked(s) => write!(f, "server{s} waits for its new successor's LastSeq"),
            Owed::Answer(c, op) => write!(f, "client{c} waits for the answer to its operation {op}"),
        }
    }
}

/// A live client does not wait on a head (for an update) or tail (for a
/// query) that the master removed unless a notification is queued for it.
fn check_client(world: &World<Cfg>, id: MachineId, c: &Client, master: &[MachineId]) -> Result<(), String> {
    let (target, side) = if c.op.is_multiple_of(2) {
        (c.head, "head")
    } else {
        (c.tail, "tail")
    };
    let told = world
        .inbox(id)
        .iter()
        .any(|(_, m)| matches!(m, Msg::NewHead(_) | Msg::NewTail(_)));
    if !master.contains(&target) && !told {
        return Err(format!(
            "client{} waits on its {side} server{}, which the master removed from the chain, and no notification is on its way",
            id.0, target.0
        ));
    }
    Ok(())
}

/// [`check_pair`] for the settled link `a -> b`, with the forwards and
/// acknowledgements in flight read from the queues.
fn check_link(
    world: &World<Cfg>,
    (a, pred): (MachineId, &Server),
    (b, succ): (MachineId, &Server),
) -> Result<(), String> {
    let in_flight: Vec<u8> = world
        .inbox(b)
        .iter()
        .filter_map(|(_, m)| match m {
            Msg::Fwd { from, upd } if *from == a => Some(upd.seq),
            _ => None,
        })
        .collect();
    let acks: Vec<u8> = world
        .inbox(a)
        .iter()
        .filter_map(|(_, m)| match m {
            Msg::Ack(s) => Some(*s),
            _ => None,
        })
        .collect();
    check_pair(&Pair {
        pred_name: &ServerName(a),
        succ_name: &ServerName(b),
        pred_hist: &pred.hist,
        pred_sent: &pred.sent,
        succ_hist: &succ.hist,
        succ_sent: &succ.sent,
        in_flight: &in_flight,
        acks_queued: &acks,
    })
}

/// Every history is strictly sorted by sequence number (no duplicate, no
/// reordering).
pub(crate) fn check_history(name: impl Display, hist: &[Upd]) -> Result<(), String> {
    for w in hist.windows(2) {
        if w[0].seq >= w[1].seq {
            return Err(format!(
                "{name}'s history is not sorted by sequence number: seq {} then seq {}",
                w[0].seq, w[1].seq
            ));
        }
    }
    Ok(())
}

/// What the invariant knows about one settled link `pred -> succ`.
pub(crate) struct Pair<'a> {
    /// The predecessor's display name.
    pub pred_name: &'a dyn Display,
    /// The successor's display name.
    pub succ_name: &'a dyn Display,
    /// The predecessor's history.
    pub pred_hist: &'a [Upd],
    /// The predecessor's `sent` list.
    pub pred_sent: &'a [Upd],
    /// The successor's history.
    pub succ_hist: &'a [Upd],
    /// The successor's `sent` list.
    pub succ_sent: &'a [Upd],
    /// Sequence numbers of the updates forwarded by `pred` that are queued
    /// at `succ`.
    pub in_flight: &'a [u8],
    /// Sequence numbers of the acknowledgements queued at `pred`.
    pub acks_queued: &'a [u8],
}

/// The update-propagation invariant for one settled link (both servers
/// live, `pred.succ == succ`, `succ.pred == pred`, and `pred` has received
/// `succ`'s last sequence number since the link was made):
///
/// 1. the successor's history is a prefix of the predecessor's;
/// 2. every update of `pred.hist - succ.hist` is in `pred.sent` and on its
///    way to `succ` (a forward from `pred` queued at `succ`);
/// 3. every update of `pred.sent` is in `pred.hist`, and if the successor
///    already has it, its acknowledgement is still on the way: it is in
///    `succ.sent` (not yet acknowledged further down) or an
///    acknowledgement for it is queued at `pred`.
///
/// That is `sent = pred.hist - succ.hist`, up to acknowledgements in
/// flight.
pub(crate) fn check_pair(p: &Pair) -> Result<(), String> {
    let (a, b) = (p.pred_name, p.succ_name);
    if p.succ_hist.len() > p.pred_hist.len() || p.pred_hist[..p.succ_hist.len()] != *p.succ_hist {
        return Err(format!(
            "{b}'s history {:?} is not a prefix of its predecessor {a}'s history {:?}",
            seqs(p.succ_hist),
            seqs(p.pred_hist)
        ));
    }
    for u in &p.pred_hist[p.succ_hist.len()..] {
        if !p.pred_sent.contains(u) {
            return Err(format!(
                "update seq {} is in {a}'s history but neither in {b}'s history nor in {a}'s sent list {:?}",
                u.seq,
                seqs(p.pred_sent)
            ));
        }
        if !p.in_flight.contains(&u.seq) {
            return Err(format!(
                "update seq {} is in {a}'s sent list but {b} neither has it nor has it queued: it is lost",
                u.seq
            ));
        }
    }
    for u in p.pred_sent {
        if !p.pred_hist.contains(u) {
            return Err(format!(
                "{a}'s sent list holds seq {}, which is not in its history",
                u.seq
            ));
        }
        if p.succ_hist.contains(u) && !p.succ_sent.contains(u) && !p.acks_queued.contains(&u.seq) {
            return Err(format!(
                "{a}'s sent list holds seq {} which {b} has and acknowledged, but no acknowledgement is on its way",
                u.seq
            ));
        }
    }
    for u in p.succ_hist {
        if p.pred_hist.contains(u) && !p.pred_sent.contains(u) && p.succ_sent.contains(u) {
            return Err(format!(
                "{a} dropped seq {} from its sent list although {b} is still waiting for its acknowledgement",
                u.seq
            ));
        }
    }
    Ok(())
}

/// A live server in the master's chain that has work across a link (on the
/// successor side: unacknowledged updates or a queued query; on the
/// predecessor side: a queued client update) must not link to a server the
/// master has removed unless the repair (a reconfiguration message) is
/// queued for it: otherwise that work is lost. `dangling` names the removed
/// neighbour; `excused` says that a repair is queued or nothing is at stake.
pub(crate) fn check_links(
    name: impl Display,
    side: &str,
    dangling: Option<impl Display>,
    excused: bool,
) -> Result<(), String> {
    match dangling {
        Some(x) if !excused => Err(format!(
            "{name} has work for its {side} {x}, which the master removed from the chain, and no reconfiguration is on its way"
        )),
        _ => Ok(()),
    }
}

fn seqs(h: &[Upd]) -> Vec<u8> {
    h.iter().map(|u| u.seq).collect()
}

/// The query-consistency monitor: per key, the sequence number and value of
/// the last update the tail acknowledged; a query must return that value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct QueryMonitor {
    /// Per key: (sequence number, value) of the last acknowledged update;
    /// value 0 means none.
    last: Vec<(u8, u8)>,
}

impl QueryMonitor {
    /// The tail acknowledged update `seq` writing `val` to `key`.
    pub(crate) fn acked(&mut self, seq: u8, key: u8, val: u8) {
        let k = key as usize;
        if self.last.len() <= k {
            self.last.resize(k + 1, (0, 0));
        }
        if seq > self.last[k].0 {
            self.last[k] = (seq, val);
        }
    }

    /// A query of `key` returned `val`.
    pub(crate) fn answered(&self, key: u8, val: u8) -> Result<(), String> {
        let (seq, want) = self.last.get(key as usize).copied().unwrap_or((0, 0));
        if val != want {
            return Err(format!(
                "a query of key {key} returned {val}, but the last acknowledged update of key {key} (seq {seq}) wrote {want}"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(seq: u8) -> Upd {
        Upd {
            seq,
            key: 0,
            val: seq,
            client: 5,
            op: 0,
        }
    }

    fn pair<'a>(ph: &'a [Upd], ps: &'a [Upd], sh: &'a [Upd], ss: &'a [Upd], fl: &'a [u8], ak: &'a [u8]) -> Pair<'a> {
        Pair {
            pred_name: &"server0",
            succ_name: &"server1",
            pred_hist: ph,
            pred_sent: ps,
            succ_hist: sh,
            succ_sent: ss,
            in_flight: fl,
            acks_queued: ak,
        }
    }

    #[test]
    fn sorted_histories_pass_and_unsorted_fail() {
        assert!(check_history("s", &[u(1), u(2), u(4)]).is_ok());
        let e = check_history("s", &[u(1), u(3), u(3)]).unwrap_err();
        assert!(e.contains("seq 3 then seq 3"), "{e}");
        assert!(check_history("s", &[u(2), u(1)]).is_err());
    }

    #[test]
    fn good_pairs_pass() {
        // In flight: 2 forwarded, not yet received.
        assert!(check_pair(&pair(&[u(1), u(2)], &[u(2)], &[u(1)], &[], &[2], &[])).is_ok());
        // Received by the tail, acknowledgement queued.
        assert!(check_pair(&pair(&[u(1), u(2)], &[u(2)], &[u(1), u(2)], &[], &[], &[2])).is_ok());
        // Received by a middle server still waiting for its acknowledgement.
        assert!(check_pair(&pair(&[u(1)], &[u(1)], &[u(1)], &[u(1)], &[], &[])).is_ok());
        // Fully acknowledged.
        assert!(check_pair(&pair(&[u(1)], &[], &[u(1)], &[], &[], &[])).is_ok());
    }

    #[test]
    fn each_breach_of_a_pair_is_caught() {
        // Not a prefix.
        let e = check_pair(&pair(&[u(1), u(2)], &[u(2)], &[u(2)], &[], &[], &[])).unwrap_err();
        assert!(e.contains("not a prefix"), "{e}");
        // Missing from sent.
        let e = check_pair(&pair(&[u(1), u(2)], &[], &[u(1)], &[], &[2], &[])).unwrap_err();
        assert!(e.contains("nor in server0's sent list"), "{e}");
        // Lost: in sent but not in flight (not resent).
        let e = check_pair(&pair(&[u(1), u(2)], &[u(2)], &[u(1)], &[], &[], &[])).unwrap_err();
        assert!(e.contains("it is lost"), "{e}");
        // Sent entry not in history.
        let e = check_pair(&pair(&[u(1)], &[u(1), u(2)], &[], &[], &[1], &[])).unwrap_err();
        assert!(e.contains("not in its history"), "{e}");
        // Acknowledged but no acknowledgement travelling.
        let e = check_pair(&pair(&[u(1)], &[u(1)], &[u(1)], &[], &[], &[])).unwrap_err();
        assert!(e.contains("no acknowledgement is on its way"), "{e}");
        // Pruned too early (the wrong entry removed).
        let e = check_pair(&pair(&[u(1)], &[], &[u(1)], &[u(1)], &[], &[])).unwrap_err();
        assert!(e.contains("still waiting"), "{e}");
    }

    #[test]
    fn dangling_links_need_a_repair_on_the_way() {
        assert!(check_links("server0", "successor", None::<&str>, false).is_ok());
        assert!(check_links("server0", "successor", Some("server2"), true).is_ok());
        let e = check_links("server0", "successor", Some("server2"), false).unwrap_err();
        assert!(e.contains("removed from the chain"), "{e}");
    }

    #[test]
    fn the_query_monitor_catches_a_stale_answer() {
        let mut m = QueryMonitor::default();
        assert!(m.answered(0, 0).is_ok());
        m.acked(1, 0, 7);
        m.acked(3, 1, 9);
        assert!(m.answered(0, 7).is_ok());
        assert!(m.answered(1, 9).is_ok());
        // An older acknowledgement does not roll the key back.
        m.acked(2, 1, 4);
        assert!(m.answered(1, 9).is_ok());
        let e = m.answered(0, 0).unwrap_err();
        assert!(e.contains("returned 0"), "{e}");
        assert!(m.answered(1, 4).is_err());
    }
}
