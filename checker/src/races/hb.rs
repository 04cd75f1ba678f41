//! The happens-before order of an execution and its races
//! (ARCHITECTURE.md, "Races").
//!
//! Messages are matched with the steps that take them: per receiver, the
//! oldest pending message with the same text (a message the network
//! duplicated stays pending; one it dropped is taken but not received). A
//! message taken without a matching send was queued by the program's
//! set-up. Vector clocks: a step's clock joins its actor's previous step,
//! the step that created the actor (for its first step) and the step that
//! sent the message it receives, then ticks its actor's entry.

use super::Message;
use super::variant::{Action, Ran, receipt};
use crate::program::{ActorId, StateView};

/// Suffix of the machine runtime's text for a message sent to a halted
/// machine (never delivered, so not a message here).
const TO_HALTED: &str = "(dropped: receiver halted)";

/// Vector clocks, one per step.
#[derive(Clone, Debug, Default)]
pub(super) struct Clocks {
    pub actors: Vec<ActorId>,
    pub clocks: Vec<Vec<u32>>,
}

impl Clocks {
    /// Step `a` happens before step `b` (a strict order).
    pub fn before(&self, a: usize, b: usize) -> bool {
        let x = self.actors[a].0 as usize;
        a < b && self.clocks[a][x] <= self.clocks[b][x]
    }
}

/// Whether each step continues a handler suspended at a choice.
pub(super) fn resumed(steps: &[Ran], views: &[StateView]) -> Vec<bool> {
    steps
        .iter()
        .enumerate()
        .map(|(i, r)| {
            views
                .get(i)
                .and_then(|v| v.actors.get(r.trace.actor.0 as usize))
                .is_some_and(|a| a.choosing)
        })
        .collect()
}

/// Every message of the execution, with the steps that sent and took it.
pub(super) fn messages(steps: &[Ran], views: &[StateView], resumed: &[bool]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    for (i, r) in steps.iter().enumerate() {
        let t = &r.trace;
        if let Some(rc) = receipt(t, resumed[i]) {
            let hit = out.iter().position(|m| {
                m.to == t.actor && m.text == rc.text && m.received_at.is_none() && m.dropped_at.is_none()
            });
            let id = hit.unwrap_or_else(|| {
                out.push(Message {
                    from: None,
                    from_name: "set-up".into(),
                    to: t.actor,
                    to_name: t.actor_name.clone(),
                    text: rc.text.clone(),
                    sent_at: None,
                    received_at: None,
                    dropped_at: None,
                    duplicated_at: Vec::new(),
                    unordered: false,
                });
                out.len() - 1
            });
            let m = &mut out[id];
            m.unordered = views
                .get(i)
                .and_then(|v| v.actors.get(t.actor.0 as usize))
                .is_some_and(|a| a.unordered.contains(&rc.text) && !a.inbox.contains(&rc.text));
            match rc.action {
                Action::Deliver => m.received_at = Some(i),
                Action::Drop => m.dropped_at = Some(i),
                Action::Duplicate => m.duplicated_at.push(i),
            }
        }
        let sent = t.sent.iter().filter(|(_, text)| !text.ends_with(TO_HALTED));
        for (&to, (to_name, text)) in r.sent_to.iter().zip(sent) {
            out.push(Message {
                from: Some(t.actor),
                from_name: t.actor_name.clone(),
                to,
                to_name: to_name.clone(),
                text: text.clone(),
                sent_at: Some(i),
                received_at: None,
                dropped_at: None,
                duplicated_at: Vec::new(),
                unordered: false,
            });
        }
    }
    out
}

/// The vector clocks of `steps`, given the messages they received.
pub(super) fn clocks(steps: &[Ran], messages: &[Message]) -> Clocks {
    let width = steps
        .iter()
        .flat_map(|r| std::iter::once(r.trace.actor).chain(r.created.iter().copied()))
        .map(|a| a.0 as usize + 1)
        .max()
        .unwrap_or(0);
    let mut received: Vec<Option<usize>> = vec![None; steps.len()];
    for m in messages {
        if let (Some(s), Some(r)) = (m.sent_at, m.received_at) {
            received[r] = Some(s);
        }
        for &d in &m.duplicated_at {
            received[d] = m.sent_at;
        }
    }
    let mut last: Vec<Option<usize>> = vec![None; width];
    let mut created_by: Vec<Option<usize>> = vec![None; width];
    let mut out = Clocks::default();
    for (i, r) in steps.iter().enumerate() {
        let x = r.trace.actor.0 as usize;
        let mut clock = vec![0u32; width];
        let earlier = [
            last[x],
            last[x].is_none().then_some(created_by[x]).flatten(),
            received[i],
        ];
        for e in earlier.into_iter().flatten() {
            for (c, o) in clock.iter_mut().zip(&out.clocks[e]) {
                *c = (*c).max(*o);
            }
        }
        clock[x] += 1;
        for c in &r.created {
            created_by[c.0 as usize] = Some(i);
        }
        last[x] = Some(i);
        out.actors.push(r.trace.actor);
        out.clocks.push(clock);
    }
    out
}

/// The races among `messages` (see ARCHITECTURE.md, "Races"): two messages to
/// the same actor, the first received, the second received later or still
/// in flight when the execution ends, with different texts, such that the
/// second could have been received first. FIFO messages race when they come
/// from different senders and neither send happens before the other; when
/// either is unordered, they race unless the first one's receipt happens
/// before the second one's send. Ordered by the second receipt (in flight
/// last), then the first.
/// A message sent by the violating step `stop` never had a chance to be
/// received, so it races with nothing.
pub(super) fn races(messages: &[Message], hb: &Clocks, stop: Option<usize>) -> Vec<(usize, usize, bool)> {
    let in_flight =
        |m: &Message| m.received_at.is_none() && m.dropped_at.is_none() && m.sent_at.is_some() && m.sent_at != stop;
    let mut taken: Vec<usize> = (0..messages.len())
        .filter(|&m| messages[m].received_at.is_some() || in_flight(&messages[m]))
        .collect();
    taken.sort_by_key(|&m| messages[m].received_at.unwrap_or(usize::MAX));
    let mut out = Vec::new();
    for (j, &b) in taken.iter().enumerate() {
        for &a in &taken[..j] {
            let (x, y) = (&messages[a], &messages[b]);
            let Some(rx) = x.received_at else { continue };
            if x.to != y.to || x.text == y.text {
                continue;
            }
            let unordered = x.unordered || y.unordered;
            let race = if unordered {
                y.sent_at.is_none_or(|sy| !hb.before(rx, sy))
            } else {
                match (x.sent_at, y.sent_at) {
                    (Some(sx), Some(sy)) => x.from != y.from && !hb.before(sx, sy) && !hb.before(sy, sx),
                    _ => false,
                }
            };
            if race {
                out.push((a, b, unordered));
            }
        }
    }
    out
}
