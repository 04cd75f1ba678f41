//! Symmetry (ARCHITECTURE.md, "Symmetry"): the nodes from 2 on are
//! interchangeable acceptors. Node 0 leads ballot 1 from the start and
//! node 1 is the one the timer makes take over (ballot `b` belongs to node
//! `(b - 1) % nodes`, and only ballots 1 and 2 are ever used), so those two
//! are fixed; the others only accept and promise. The default (3 nodes)
//! has a single such node: the group matters from `nodes=4` on.

use super::{Bug, Cfg, Machine, Msg};
use mcheck_checker::machine::{MachineId, Renamed};

/// The interchangeable nodes, one group (empty below 4 nodes).
pub(crate) fn groups(cfg: &Cfg) -> Vec<Vec<MachineId>> {
    vec![(2..cfg.nodes as u32).map(MachineId).collect()]
}

/// Rename every node index and mask `value` holds by `f` (nodes are the
/// machines `0..nodes`, so a node's index is its id).
pub(crate) fn rename(cfg: &Cfg, value: Renamed<'_, Cfg>, f: &dyn Fn(MachineId) -> MachineId) {
    let index = |n: u8| f(MachineId(u32::from(n))).0 as u8;
    let mask = |m: u8| {
        (0..cfg.nodes)
            .filter(|&n| m >> n & 1 == 1)
            .map(|n| 1u8 << index(n))
            .sum::<u8>()
    };
    match value {
        Renamed::Machine(Machine::Node(n)) => {
            n.leader = index(n.leader);
            n.promises = mask(n.promises);
            if cfg.bug != Some(Bug::LearnerCountsDuplicates) {
                // A count under that bug, a set of acceptors otherwise.
                for v in &mut n.votes {
                    v.2 = mask(v.2);
                }
            }
        }
        Renamed::Machine(_) => {}
        Renamed::Msg(Msg::Promise { from, .. } | Msg::Accepted { from, .. }) => *from = index(*from),
        Renamed::Msg(_) | Renamed::Monitor(_) => {}
    }
}
