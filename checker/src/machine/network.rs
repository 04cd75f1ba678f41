//! A machine's candidate messages and the network's alternatives for them
//! (ARCHITECTURE.md, "The network"): which message a step takes, drops or duplicates.

use super::delivery::{Action, Delivery};
use super::program::Machines;
use super::world::{MachineId, World};
use super::{MachineModel, Receive};

/// Where a candidate message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// Index in the FIFO buffer (`World::queue`).
    Fifo(usize),
    /// Index in the unordered multiset (`Net::flights`).
    Unordered(usize),
}

/// A message the machine may take next, and what it would do with it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Candidate {
    pub(crate) source: Source,
    pub(crate) receive: Receive,
    pub(crate) delivery: Delivery,
    /// Duplicates the network already made of it.
    pub(crate) duplicated: u8,
    /// Whether the execution's duplicate budget has room for one more.
    pub(crate) budget: bool,
}

impl Candidate {
    fn alternatives(&self) -> u32 {
        let used = if self.budget { self.duplicated } else { u8::MAX };
        self.delivery.alternatives(used)
    }
}

impl<M: MachineModel> Machines<M> {
    /// Visit `id`'s candidates in alternative order until `f` returns
    /// true: the FIFO candidate (its oldest FIFO message it does not defer)
    /// if any, then every distinct unordered message in flight to it that
    /// it does not defer, in the canonical order.
    pub(crate) fn candidates(&self, s: &World<M>, id: MachineId, mut f: impl FnMut(Candidate) -> bool) {
        let net = s.net.as_deref();
        let budget = self
            .0
            .duplicate_budget()
            .is_none_or(|b| net.map_or(0, |n| n.duplicates_made) < b);
        if let Some((i, receive)) = self.dequeuable(s, id) {
            let duplicated = match net {
                Some(n) if !n.fifo_dups.is_empty() => n.fifo_duplicated(id, (i - s.range(id).0) as u32),
                _ => 0,
            };
            let c = Candidate {
                source: Source::Fifo(i),
                receive,
                delivery: self.0.delivery(&s.queue[i].1),
                duplicated,
                budget,
            };
            if f(c) {
                return;
            }
        }
        let Some(net) = net else {
            return;
        };
        let machine = &s.slots[id.0 as usize].machine;
        let (lo, hi) = net.range(id);
        for (j, flight) in net.flights.iter().enumerate().take(hi).skip(lo) {
            let receive = self.0.receive(machine, &flight.msg);
            if receive == Receive::Defer {
                continue;
            }
            let c = Candidate {
                source: Source::Unordered(j),
                receive,
                delivery: self.0.delivery(&flight.msg),
                duplicated: flight.duplicated,
                budget,
            };
            if f(c) {
                return;
            }
        }
    }

    /// The number of alternatives of `id`'s next step (0: not enabled).
    pub(crate) fn alternatives(&self, s: &World<M>, id: MachineId) -> u32 {
        let mut n = 0;
        self.candidates(s, id, |c| {
            n += c.alternatives();
            false
        });
        n
    }

    /// The candidate and action of alternative `alt` of `id`'s step.
    pub(crate) fn pick(&self, s: &World<M>, id: MachineId, mut alt: u32) -> Option<(Candidate, Action)> {
        let mut found = None;
        self.candidates(s, id, |c| {
            let n = c.alternatives();
            if alt < n {
                found = Some((c, c.delivery.action(alt)));
                return true;
            }
            alt -= n;
            false
        });
        found
    }

    /// Apply the network's part of the step: take the candidate's message
    /// out of the network (deliver, drop) or keep it pending with one more
    /// duplicate made; return the message.
    pub(crate) fn take(&self, s: &mut World<M>, id: MachineId, c: Candidate, action: Action) -> M::Msg {
        if action == Action::Duplicate && self.0.duplicate_budget().is_some() {
            s.net_mut().duplicates_made += 1;
        }
        match (c.source, action) {
            (Source::Fifo(i), Action::Deliver | Action::Drop) => {
                if s.net.as_deref().is_some_and(|n| !n.fifo_dups.is_empty()) {
                    let pos = (i - s.range(id).0) as u32;
                    s.net_mut().fifo_removed(id, pos);
                    s.tidy_net();
                }
                s.queue.remove(i).1
            }
            (Source::Fifo(i), Action::Duplicate) => {
                let pos = (i - s.range(id).0) as u32;
                s.net_mut().fifo_duplicate(id, pos);
                s.queue[i].1.clone()
            }
            (Source::Unordered(j), Action::Deliver | Action::Drop) => {
                let msg = s.net_mut().take(j).0;
                s.tidy_net();
                msg
            }
            (Source::Unordered(j), Action::Duplicate) => {
                let net = s.net_mut();
                let (msg, duplicated) = net.take(j);
                net.insert(id, msg.clone(), duplicated + 1);
                msg
            }
        }
    }

    /// Put a message sent to a live machine `to` into the network, as its
    /// delivery says: its FIFO queue or the unordered multiset; an
    /// unordered message stale for `to` is taken out at once, as if
    /// delivered to no effect. Returns whether it was posted.
    pub(crate) fn post(&self, s: &mut World<M>, to: MachineId, msg: M::Msg) -> bool {
        let delivery = self.0.delivery(&msg);
        if !delivery.unordered {
            s.enqueue(to, msg);
        } else if self.0.stale(&s.slots[to.0 as usize].machine, &msg) {
            return false;
        } else {
            s.net_mut().insert(to, msg, 0);
        }
        true
    }

    /// Take out the unordered messages in flight to `id` that became stale
    /// for it (after a step changed its state), as if delivered to no
    /// effect.
    pub(crate) fn purge_stale(&self, s: &mut World<M>, id: MachineId) {
        let Some(net) = s.net.as_deref_mut() else {
            return;
        };
        let (lo, hi) = net.range(id);
        let machine = &s.slots[id.0 as usize].machine;
        let mut j = lo;
        let mut end = hi;
        while j < end {
            if self.0.stale(machine, &net.flights[j].msg) {
                net.flights.remove(j);
                end -= 1;
            } else {
                j += 1;
            }
        }
        if end < hi {
            s.tidy_net();
        }
    }

    /// The trace notes of the network's part of a step (after `take`).
    pub(crate) fn network_notes(&self, s: &World<M>, id: MachineId, c: Candidate, action: Action) -> Vec<String> {
        let mut notes = Vec::new();
        match action {
            Action::Deliver => {}
            Action::Drop => notes.push("dropped by the network".to_string()),
            Action::Duplicate => notes.push(format!(
                "duplicated by the network (stays pending; duplicate {} of at most {})",
                c.duplicated + 1,
                c.delivery.duplicates
            )),
        }
        if action != Action::Drop && matches!(c.source, Source::Unordered(_)) {
            let others = s.inbox(id).len() as u32 + s.unordered_to(id).iter().map(|f| f.count).sum::<u32>()
                - (action == Action::Duplicate) as u32;
            if others > 0 {
                notes.push(format!(
                    "taken out of order ({others} other message{} in flight to it)",
                    if others == 1 { "" } else { "s" }
                ));
            }
        }
        notes
    }
}
