//! Symmetry reduction for machine models (ARCHITECTURE.md, "Symmetry"):
//! the canonical fingerprint of a [`World`] under permutations of the
//! groups of interchangeable machines a model declares
//! ([`MachineModel::symmetry`]), computed once here for every model.
//!
//! A permutation π of a group's ids acts on a world by moving machine i's
//! slot to π(i) and renaming every id the state holds
//! ([`MachineModel::rename`]: other machines' fields, messages queued or in
//! flight, the monitors, the pending choice), and re-sorting the queues by
//! receiver (each receiver's FIFO order kept) and the unordered multiset.
//!
//! **Canonical form.** Each grouped machine gets a *key*: the fingerprint of
//! its slot, its FIFO inbox, its unordered messages, its FIFO duplicates and
//! the pending choice if it is its own, all renamed by the *collapse* map
//! that sends every member of a group to the group's first id. The collapse
//! forgets which member of a group an id names, so a machine's key is the
//! same in every state of the orbit. The candidate permutations give the
//! i-th smallest key of a group the group's i-th id; machines with equal
//! keys (ties) can go either way, so the candidates are every order of each
//! class of tied machines. The canonical fingerprint is the smallest
//! fingerprint of the world renamed by a candidate.
//!
//! **Exact.** If t = σ(s) then t's keys are s's (the collapse absorbs σ),
//! so t's candidates are s's composed with σ⁻¹ and rename t to exactly the
//! worlds s's candidates rename s to: the same minimum. Two worlds in
//! different orbits rename to different worlds, so they differ unless their
//! fingerprints collide. The candidates grow as the product of the
//! factorials of the tie classes; above [`MAX_CANDIDATES`] only the first
//! is taken, which stays sound (a canonical form of *some* state of the
//! orbit) but may keep more than one state per orbit. The shipped models'
//! groups (at most 5 machines) never reach it.

use super::world::{InFlight, Net, Slot, World};
use super::{MachineId, MachineModel, Renamed};
use crate::cache::fingerprint;
use std::cmp::Ordering;

/// The most candidate permutations tried per state (7!: more tied
/// machines than that fall back to the first candidate).
pub const MAX_CANDIDATES: usize = 5040;

/// The canonical fingerprint of `s` under `groups` (see the module docs),
/// `None` when `groups` has no group of two machines or more.
pub(crate) fn canonical_fingerprint<M: MachineModel>(
    model: &M,
    groups: &[Vec<MachineId>],
    s: &World<M>,
) -> Option<u64> {
    canonical(model, groups, s).map(|(fp, _)| fp)
}

/// [`canonical_fingerprint`] and whether it is exact: every candidate was
/// tried (false beyond [`MAX_CANDIDATES`], where two states of one orbit
/// may get different values).
pub(crate) fn canonical<M: MachineModel>(model: &M, groups: &[Vec<MachineId>], s: &World<M>) -> Option<(u64, bool)> {
    let n = s.slots.len();
    let groups: Vec<&[MachineId]> = groups
        .iter()
        .map(|g| &g[..g.iter().take_while(|id| (id.0 as usize) < n).count()])
        .filter(|g| g.len() > 1)
        .collect();
    if groups.is_empty() {
        return None;
    }
    let mut collapse: Vec<u32> = (0..n as u32).collect();
    for g in &groups {
        for id in g.iter() {
            collapse[id.0 as usize] = g[0].0;
        }
    }
    // Each group's members sorted by key, and their tie classes.
    let mut sorted: Vec<Vec<(u64, MachineId)>> = Vec::with_capacity(groups.len());
    for g in &groups {
        let mut keyed: Vec<(u64, MachineId)> = g.iter().map(|&id| (key(model, s, id, &collapse), id)).collect();
        keyed.sort_unstable();
        sorted.push(keyed);
    }
    let mut best = u64::MAX;
    let mut tried = 0usize;
    let mut exact = true;
    // The candidates in a fixed order: each tie class's members permuted
    // in lexicographic order, the classes as the digits of a counter.
    let mut order: Vec<Vec<MachineId>> = sorted.iter().map(|k| k.iter().map(|&(_, id)| id).collect()).collect();
    loop {
        let mut map: Vec<u32> = (0..n as u32).collect();
        for (g, members) in groups.iter().zip(&order) {
            for (slot, id) in g.iter().zip(members) {
                map[id.0 as usize] = slot.0;
            }
        }
        best = best.min(fingerprint(&renamed(model, s, &map)));
        tried += 1;
        if !next_candidate(&sorted, &mut order) {
            break;
        }
        if tried >= MAX_CANDIDATES {
            exact = false;
            break;
        }
    }
    Some((best, exact))
}

/// Moves `order` to the next candidate: the next permutation of the first
/// tie class that has one (classes before it reset to sorted order).
/// False after the last.
fn next_candidate(sorted: &[Vec<(u64, MachineId)>], order: &mut [Vec<MachineId>]) -> bool {
    for (keys, members) in sorted.iter().zip(order.iter_mut()) {
        let mut lo = 0;
        while lo < keys.len() {
            let hi = lo + keys[lo..].iter().take_while(|k| k.0 == keys[lo].0).count();
            if next_permutation(&mut members[lo..hi]) {
                return true;
            }
            // `next_permutation` wrapped the class around to sorted order.
            lo = hi;
        }
    }
    false
}

/// The next lexicographic permutation of `v`; false (and `v` sorted) after
/// the last.
fn next_permutation<T: Ord>(v: &mut [T]) -> bool {
    let Some(i) = (1..v.len()).rev().find(|&i| v[i - 1] < v[i]) else {
        v.reverse();
        return false;
    };
    let j = (i..v.len()).rev().find(|&j| v[j] > v[i - 1]).unwrap_or(i);
    v.swap(i - 1, j);
    v[i..].reverse();
    true
}

/// The key of machine `id` of `s`: its slot, FIFO inbox, unordered
/// messages, FIFO duplicates and pending choice, renamed by `collapse`.
fn key<M: MachineModel>(model: &M, s: &World<M>, id: MachineId, collapse: &[u32]) -> u64 {
    let f = by(collapse);
    let mut slot = s.slots[id.0 as usize].clone();
    model.rename(Renamed::Machine(&mut slot.machine), &f);
    let inbox: Vec<M::Msg> = s.inbox(id).iter().map(|(_, m)| msg(model, m, &f)).collect();
    let mut unordered: Vec<(u64, u8, u32)> = s
        .unordered_to(id)
        .iter()
        .map(|x| (fingerprint(&msg(model, &x.msg, &f)), x.duplicated, x.count))
        .collect();
    unordered.sort_unstable();
    let dups: Vec<(u32, u8)> = s.net.as_deref().map_or(Vec::new(), |n| {
        n.fifo_dups.iter().filter(|d| d.0 == id).map(|d| (d.1, d.2)).collect()
    });
    let pending = s
        .pending
        .as_ref()
        .filter(|p| p.machine == id)
        .map(|p| (msg(model, &p.msg, &f), &p.choices, p.n));
    fingerprint(&(slot, inbox, unordered, dups, pending))
}

/// The renaming by a table of ids (ids beyond it are unchanged).
fn by(table: &[u32]) -> impl Fn(MachineId) -> MachineId + '_ {
    move |id| MachineId(table.get(id.0 as usize).copied().unwrap_or(id.0))
}

fn msg<M: MachineModel>(model: &M, m: &M::Msg, f: &dyn Fn(MachineId) -> MachineId) -> M::Msg {
    let mut m = m.clone();
    model.rename(Renamed::Msg(&mut m), f);
    m
}

/// `s` with machine i moved to `map[i]` and every id renamed by `map`.
pub(crate) fn renamed<M: MachineModel>(model: &M, s: &World<M>, map: &[u32]) -> World<M> {
    let f = by(map);
    let mut slots: Vec<Option<Slot<M::Machine>>> = vec![None; s.slots.len()];
    for (i, slot) in s.slots.iter().enumerate() {
        let mut slot = slot.clone();
        model.rename(Renamed::Machine(&mut slot.machine), &f);
        slots[map[i] as usize] = Some(slot);
    }
    let mut queue: Vec<(MachineId, M::Msg)> = s.queue.iter().map(|(to, m)| (f(*to), msg(model, m, &f))).collect();
    // Stable: each receiver's FIFO order is kept.
    queue.sort_by_key(|(to, _)| *to);
    let mut monitor = s.monitor.clone();
    model.rename(Renamed::Monitor(&mut monitor), &f);
    let pending = s.pending.clone().map(|mut p| {
        p.machine = f(p.machine);
        model.rename(Renamed::Msg(&mut p.msg), &f);
        p
    });
    let net = s.live_net().map(|n| Box::new(renamed_net(model, n, &f)));
    World {
        slots: slots
            .into_iter()
            .map(|s| s.expect("a permutation fills every slot"))
            .collect(),
        queue,
        monitor,
        pending,
        net,
    }
}

fn renamed_net<M: MachineModel>(model: &M, n: &Net<M::Msg>, f: &dyn Fn(MachineId) -> MachineId) -> Net<M::Msg> {
    let mut flights: Vec<InFlight<M::Msg>> = n
        .flights
        .iter()
        .map(|x| {
            let m = msg(model, &x.msg, f);
            InFlight {
                to: f(x.to),
                fp: super::world::fingerprint(&m),
                msg: m,
                duplicated: x.duplicated,
                count: x.count,
            }
        })
        .collect();
    // The canonical multiset order of `Net::insert` (ties by text).
    flights.sort_by(|a, b| {
        (a.to, a.fp, a.duplicated)
            .cmp(&(b.to, b.fp, b.duplicated))
            .then_with(|| match a.msg == b.msg {
                true => Ordering::Equal,
                false => format!("{:?}", a.msg).cmp(&format!("{:?}", b.msg)),
            })
    });
    let mut fifo_dups: Vec<(MachineId, u32, u8)> = n.fifo_dups.iter().map(|&(to, p, d)| (f(to), p, d)).collect();
    fifo_dups.sort_unstable();
    Net {
        flights,
        fifo_dups,
        duplicates_made: n.duplicates_made,
    }
}
