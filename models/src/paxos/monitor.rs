//! The safety monitor of single-decree Paxos: `agreement` (at most one
//! value chosen) and `p2b` (a proposal above a chosen ballot carries the
//! chosen value).

use super::{Ballot, Note, Value};
use mcheck_checker::machine::MonitorError;
use serde::{Deserialize, Serialize};

/// The monitor: the proposals made, the acceptances per ballot and the
/// value chosen in the lowest ballot.
#[derive(Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Monitor {
    proposals: Vec<(Ballot, Value)>,
    votes: Vec<(Ballot, u8)>,
    chosen: Option<(Ballot, Value)>,
}

/// Not derived: `clone_from` keeps the vectors' memory, so that a search
/// making successors in one scratch state does not allocate them for each.
impl Clone for Monitor {
    fn clone(&self) -> Self {
        Monitor {
            proposals: self.proposals.clone(),
            votes: self.votes.clone(),
            chosen: self.chosen,
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.proposals.clone_from(&source.proposals);
        self.votes.clone_from(&source.votes);
        self.chosen = source.chosen;
    }
}

fn p2b(chosen: (Ballot, Value), proposal: (Ballot, Value)) -> Result<(), MonitorError> {
    let ((cb, cv), (pb, pv)) = (chosen, proposal);
    if pb > cb && pv != cv {
        return Err(MonitorError::new(
            "p2b",
            format!("{cv:?} was chosen in {cb:?} but the higher ballot {pb:?} proposes {pv:?}"),
        ));
    }
    Ok(())
}

impl Monitor {
    /// The value chosen in the lowest ballot so far, if any.
    pub fn chosen(&self) -> Option<(Ballot, Value)> {
        self.chosen
    }

    /// Whether two different ballots were proposed (a retry or a rival).
    pub fn competing(&self) -> bool {
        self.proposals.windows(2).any(|w| w[0].0 != w[1].0)
    }

    /// Observe `note`, with `majority` acceptors making a quorum.
    pub(super) fn observe(&mut self, majority: u32, note: &Note) -> Result<(), MonitorError> {
        let mon = self;
        let chosen = match note {
            Note::Proposed(b, v) => {
                if let Err(i) = mon.proposals.binary_search(&(*b, *v)) {
                    mon.proposals.insert(i, (*b, *v));
                }
                if let Some(c) = mon.chosen {
                    p2b(c, (*b, *v))?;
                }
                None
            }
            Note::Accepted(b, v, acc) => {
                let i = match mon.votes.binary_search_by_key(b, |(vb, _)| *vb) {
                    Ok(i) => i,
                    Err(i) => {
                        mon.votes.insert(i, (*b, 0));
                        i
                    }
                };
                let mask = &mut mon.votes[i].1;
                let before = mask.count_ones();
                *mask |= 1 << acc;
                (before < majority && mask.count_ones() >= majority).then_some((*b, *v))
            }
            Note::Decided(b, v) => Some((*b, *v)),
        };
        let Some((b, v)) = chosen else {
            return Ok(());
        };
        match mon.chosen {
            Some((cb, cv)) if cv != v => Err(MonitorError::new(
                "agreement",
                format!("{cv:?} was chosen in {cb:?} and {v:?} in {b:?}"),
            )),
            Some((cb, _)) if cb <= b => Ok(()),
            _ => {
                mon.chosen = Some((b, v));
                mon.proposals.iter().try_for_each(|p| p2b((b, v), *p))
            }
        }
    }
}
