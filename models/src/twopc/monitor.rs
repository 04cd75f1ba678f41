//! The monitors of two-phase commit: atomicity, read-your-writes and the
//! clients' history (safety), and what is owed (liveness).

use super::{Cfg, Machine, Note, Phase};
use mcheck_checker::lin::{KvMap, Tracker};
use mcheck_checker::machine::{MonitorError, Slot, World};
use serde::{Deserialize, Serialize};

/// The atomicity monitor: per transaction (index `txn - 1`), which
/// participants committed and which aborted or voted no (bit masks). Each
/// list ends at the last transaction with a bit set in it (so equal
/// observations give equal monitors), and stays as short as the workload.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Monitor {
    pub(super) commits: Vec<u8>,
    pub(super) aborts: Vec<u8>,
    pub(super) history: Tracker<KvMap>,
}

impl Monitor {
    /// Observe `note`: a violation of atomicity, read-your-writes or
    /// linearizability is an error.
    pub(super) fn observe(&mut self, note: &Note) -> Result<(), MonitorError> {
        let mon = self;
        let txn = match *note {
            Note::Client(ref entry) => {
                return mon.history.record(entry).map_err(MonitorError::linearizability);
            }
            Note::VotedNo { p, txn } => record(&mut mon.aborts, p, txn),
            Note::Decided { p, txn, commit } => record(if commit { &mut mon.commits } else { &mut mon.aborts }, p, txn),
            Note::ReadBack {
                key,
                wrote,
                committed,
                got,
            } => {
                if committed && got != wrote {
                    return Err(MonitorError::new(
                        "read-your-writes",
                        format!("client of key {key} read {got} after its write of {wrote} committed"),
                    ));
                }
                if !committed && got == wrote {
                    return Err(MonitorError::new(
                        "read-your-writes",
                        format!("client of key {key} read {got} back although that write aborted"),
                    ));
                }
                return Ok(());
            }
        };
        // Only the transaction just recorded can have become inconsistent.
        let Some(t) = txn else {
            return Ok(());
        };
        let mask = |masks: &[u8]| masks.get(t).copied().unwrap_or(0);
        let (c, a) = (mask(&mon.commits), mask(&mon.aborts));
        if c != 0 && a != 0 {
            return Err(MonitorError::new(
                "atomicity",
                format!(
                    "transaction {} committed by participant(s) {} but aborted or voted against by participant(s) {} (participant indices, from 0)",
                    t + 1,
                    members(c),
                    members(a)
                ),
            ));
        }
        Ok(())
    }
}

/// The liveness monitors (`answered`, `in-doubt`, see the module docs):
/// the first machine that `world` still owes something, with its index.
fn owing(world: &World<Cfg>) -> Option<(usize, &Machine)> {
    let owes = |s: &&Slot<Machine>| match &s.machine {
        Machine::Client(_) => !s.halted,
        Machine::Participant(p) => p.pending.is_some(),
        _ => false,
    };
    let (i, s) = world.slots().iter().enumerate().find(|(_, s)| owes(s))?;
    Some((i, &s.machine))
}

/// Whether `world` owes anything (see [`owing`]).
pub(super) fn hot(world: &World<Cfg>) -> bool {
    owing(world).is_some()
}

/// What `world` owes first, in words (see [`owing`]).
pub(super) fn owed(world: &World<Cfg>) -> Option<MonitorError> {
    match owing(world)? {
        (i, Machine::Client(c)) => Some(MonitorError::new(
            "answered",
            format!(
                "client{i} waits for the {} of its write {} of key {}",
                match c.phase {
                    Phase::Writing => "result",
                    Phase::Reading { .. } => "read-back",
                },
                c.round + 1,
                c.key
            ),
        )),
        (i, Machine::Participant(p)) => p.pending.map(|(txn, ..)| {
            MonitorError::new(
                "in-doubt",
                format!(
                    "participant {} voted yes on transaction {txn} and waits for its decision",
                    i - 2
                ),
            )
        }),
        _ => None,
    }
}

/// The participant indices whose bits are set in `mask`, as `0, 2`.
fn members(mask: u8) -> String {
    let ids: Vec<String> = (0..8).filter(|p| mask & (1 << p) != 0).map(|p| p.to_string()).collect();
    ids.join(", ")
}

/// Set participant `p`'s bit for transaction `txn` (ids from 1); the
/// index recorded, if `txn` is a transaction id.
fn record(masks: &mut Vec<u8>, p: u8, txn: u8) -> Option<usize> {
    let i = usize::from(txn).checked_sub(1)?;
    if masks.len() <= i {
        masks.resize(i + 1, 0);
    }
    masks[i] |= 1 << p;
    Some(i)
}
