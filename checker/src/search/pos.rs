//! POS, partial order sampling (Yuan, Yang, Gu, *Partial Order Aware
//! Concurrency Sampling*, CAV 2018), as a baseline; and the bookkeeping of
//! messages in flight that POS and PCTCP (`super::pctcp`) share.
//!
//! # The algorithm
//!
//! Every pending event gets a random priority when it appears; at each step
//! the enabled event with the highest priority runs; after it ran, every
//! pending event that *races* with it gets a fresh random priority, and the
//! events it made pending get priorities of their own. Resampling only the
//! racing events is what makes the sampler partial-order aware: an event
//! that does not race with what ran keeps its priority, so the order of
//! independent events is not redrawn at every step.
//!
//! # The published guarantee
//!
//! The paper proves a lower bound on the probability with which POS samples
//! each partial order (Mazurkiewicz trace) of a program, which depends on
//! the races among the events of the partial order and not on how many
//! interleavings of independent events it has (this states the shape of
//! the theorem; its formula is in the paper). A uniform random walk has no
//! such bound: it samples a partial order with a probability that shrinks
//! with the number of its interleavings of independent events. The proof
//! assumes that the scheduler knows, for every pending event, which others
//! it races with. What mcheck checks instead: on a small program the hit
//! rate equals the probability computed by enumerating POS's random
//! choices (`checker/tests/all/pos_pctcp.rs`).
//!
//! # mcheck's adaptation (what it assumes)
//!
//! mcheck's scheduler sees only the enabled actors and the events of each
//! step (`Sent`, `Created`, `Halted`; see [`Event`]); it never looks inside
//! a state. So:
//!
//! * An *event* is the delivery of a message: the pending events of a
//!   machine are the messages the driver saw sent to it and not yet
//!   delivered ([`Inboxes`]), and its step delivers the oldest (FIFO
//!   delivery). A message gets its priority when it is sent.
//! * Two deliveries *race* when they deliver to the same machine messages
//!   from different senders: their order at the receiver is what the
//!   schedule decides. After a machine delivered a message from `s`, its
//!   pending messages from senders other than `s` get fresh priorities.
//! * A step whose message the driver did not see sent (the messages of the
//!   model's setup, and every step of a plain [`Program`] that reports no
//!   `Sent` events) is an event of its actor with the actor's own priority,
//!   and is assumed to race with every other such step, and with every
//!   message pending at its actor: after it, all of these get fresh
//!   priorities. For a plain program this makes POS pick uniformly among
//!   the enabled actors at every step: the conservative fallback when
//!   nothing tells which steps commute.
//! * The alternatives of a step (a data choice, or the network's delivery
//!   alternatives: another candidate message, a drop, a duplicate) are
//!   drawn uniformly, as in PCT.
//!
//! The bookkeeping is exact for machines with FIFO delivery that neither
//! defer nor ignore-and-keep messages; a deferred message, an unordered,
//! dropped or duplicated delivery, or a handler suspended at a choice
//! (recognised when its step reported nothing and it is then the only
//! enabled actor with several alternatives) can make the driver attribute a
//! step to another message. The priorities are then still random and every
//! schedule is still a choice path that replays exactly; only the paper's
//! bound no longer applies as stated.

use super::error::SearchError;
use super::exec::Driver;
use super::walk::walk_until_found;
use crate::config::Config;
use crate::program::{ActorId, Enabled, Event, Program};
use crate::report::Report;
use crate::watch::Watched;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::VecDeque;

/// A message the driver saw sent and not yet delivered, with the value the
/// strategy attaches to it (POS: its priority; PCTCP: its chain).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct InFlight {
    /// The sender.
    pub(super) from: ActorId,
    /// The strategy's value.
    pub(super) tag: u64,
}

/// What a step delivers, as far as the driver can tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Delivery {
    /// A message the driver saw sent.
    Message(InFlight),
    /// A message it did not see sent (setup, or a plain program's step).
    Untracked,
    /// The rest of a handler suspended at a choice: no new message.
    Continuation,
}

/// The messages in flight to each actor, as the step events show them:
/// FIFO per receiver, forgotten when the receiver halts.
#[derive(Debug, Default)]
pub(super) struct Inboxes {
    queues: Vec<VecDeque<InFlight>>,
    /// The actor whose last step reported no events (it may be suspended
    /// at a choice).
    quiet: Option<ActorId>,
}

impl Inboxes {
    /// The messages pending at `actor`, oldest first.
    pub(super) fn queue(&mut self, actor: ActorId) -> &mut VecDeque<InFlight> {
        let i = actor.0 as usize;
        if self.queues.len() <= i {
            self.queues.resize_with(i + 1, VecDeque::new);
        }
        &mut self.queues[i]
    }

    /// The message `actor`'s next step delivers, if the driver saw it sent.
    pub(super) fn head(&self, actor: ActorId) -> Option<InFlight> {
        self.queues.get(actor.0 as usize).and_then(|q| q.front().copied())
    }

    /// Whether the step of the only enabled actor of `en` continues a
    /// handler suspended at a choice.
    pub(super) fn continuing(&self, en: &[Enabled]) -> bool {
        matches!(en, [e] if e.alternatives > 1 && self.quiet == Some(e.actor))
    }

    /// `actor` is about to step at a state with `en` enabled: what it
    /// delivers (taken out of its queue).
    pub(super) fn take(&mut self, actor: ActorId, en: &[Enabled]) -> Delivery {
        if self.continuing(en) {
            return Delivery::Continuation;
        }
        match self.queue(actor).pop_front() {
            Some(m) => Delivery::Message(m),
            None => Delivery::Untracked,
        }
    }

    /// Record the step of `actor` that reported `events`: each message sent
    /// is queued at its receiver with the tag `tag(receiver)` gives (called
    /// in the order of the events); a halted actor's messages are dropped.
    pub(super) fn observe(&mut self, actor: ActorId, events: &[Event], mut tag: impl FnMut(ActorId) -> u64) {
        self.quiet = events.is_empty().then_some(actor);
        for e in events {
            match e {
                Event::Sent { from, to } => {
                    let m = InFlight {
                        from: *from,
                        tag: tag(*to),
                    };
                    self.queue(*to).push_back(m);
                }
                Event::Halted(id) => self.queue(*id).clear(),
                Event::Created(_) | Event::Custom { .. } => {}
            }
        }
    }
}

/// The POS scheduler of one execution.
#[derive(Debug)]
pub(super) struct PosDriver {
    rng: Xoshiro256PlusPlus,
    inboxes: Inboxes,
    /// The priority of each actor's next untracked step (by actor id),
    /// drawn when first needed.
    own: Vec<Option<u64>>,
    /// What the step being taken delivers.
    taking: Delivery,
}

impl PosDriver {
    pub(super) fn new(seed: u64) -> Self {
        PosDriver {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            inboxes: Inboxes::default(),
            own: Vec::new(),
            taking: Delivery::Untracked,
        }
    }

    /// The priority of `actor`'s pending event.
    fn priority(&mut self, actor: ActorId) -> u64 {
        if let Some(m) = self.inboxes.head(actor) {
            return m.tag;
        }
        let i = actor.0 as usize;
        if self.own.len() <= i {
            self.own.resize(i + 1, None);
        }
        let rng = &mut self.rng;
        *self.own[i].get_or_insert_with(|| rng.random())
    }
}

impl Driver for PosDriver {
    fn choose(&mut self, _step: usize, en: &[Enabled], _ids: &[ActorId]) -> Result<Option<(ActorId, u32)>, String> {
        // Highest priority; ties (which 64-bit draws make rare) to the
        // lowest id.
        let mut best = (en[0].actor, self.priority(en[0].actor), en[0].alternatives);
        for e in &en[1..] {
            let p = self.priority(e.actor);
            if p > best.1 {
                best = (e.actor, p, e.alternatives);
            }
        }
        let (actor, _, alternatives) = best;
        self.taking = self.inboxes.take(actor, en);
        Ok(Some((actor, self.rng.random_range(0..alternatives))))
    }

    fn observe(&mut self, actor: ActorId, events: &[Event]) {
        let rng = &mut self.rng;
        let queue = self.inboxes.queue(actor);
        match self.taking {
            Delivery::Message(m) => {
                for x in queue.iter_mut().filter(|x| x.from != m.from) {
                    x.tag = rng.random();
                }
            }
            Delivery::Untracked => {
                for x in queue.iter_mut() {
                    x.tag = rng.random();
                }
                self.own.iter_mut().for_each(|p| *p = None);
            }
            Delivery::Continuation => {}
        }
        if let Some(p) = self.own.get_mut(actor.0 as usize) {
            // Its next untracked step is a new event.
            *p = None;
        }
        self.inboxes.observe(actor, events, |_| rng.random());
    }
}

/// POS (see the module docs): runs until a violation or a budget, one
/// execution per sample on the batch runner, each seeded from the run's
/// seed and the sample's index. The counterexample is a choice path.
pub fn pos<P: Program>(program: &P, config: &Config) -> Result<Report, SearchError> {
    pos_on(Watched::bare(program), config)
}

/// [`pos`] on a watched program.
pub(crate) fn pos_on<P: Program>(program: Watched<'_, P>, config: &Config) -> Result<Report, SearchError> {
    let report = Report::new("pos", None, config.seed, 1);
    walk_until_found(program, config, report, "pos", PosDriver::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(from: u32, to: u32) -> Event {
        Event::Sent {
            from: ActorId(from),
            to: ActorId(to),
        }
    }

    fn one(actor: u32, alternatives: u32) -> Vec<Enabled> {
        vec![Enabled {
            actor: ActorId(actor),
            alternatives,
        }]
    }

    /// Messages queue per receiver in the order of the events, a step takes
    /// the oldest, a halted actor's messages are forgotten, and a step with
    /// nothing seen sent is untracked.
    #[test]
    fn inboxes_follow_sends_deliveries_and_halts() {
        let mut b = Inboxes::default();
        let mut tags = 10..;
        b.observe(ActorId(0), &[sent(0, 2), sent(0, 1), sent(0, 2)], |_| {
            tags.next().unwrap()
        });
        let m = |from, tag| {
            Delivery::Message(InFlight {
                from: ActorId(from),
                tag,
            })
        };
        assert_eq!(b.head(ActorId(2)).map(|x| x.tag), Some(10));
        assert_eq!(b.take(ActorId(2), &one(2, 1)), m(0, 10));
        b.observe(ActorId(2), &[sent(2, 1)], |_| tags.next().unwrap());
        assert_eq!(b.take(ActorId(1), &one(1, 1)), m(0, 11));
        b.observe(ActorId(1), &[Event::Halted(ActorId(2))], |_| unreachable!());
        assert_eq!(b.head(ActorId(2)), None);
        assert_eq!(b.take(ActorId(1), &one(1, 1)), m(2, 13));
        b.observe(ActorId(1), &[sent(1, 3)], |_| tags.next().unwrap());
        assert_eq!(b.take(ActorId(0), &one(0, 1)), Delivery::Untracked);
    }

    /// A step that reported nothing, followed by a state where its actor
    /// alone is enabled with several alternatives, continues a handler
    /// suspended at a choice: no message is taken.
    #[test]
    fn a_suspended_handler_takes_no_message() {
        let mut b = Inboxes::default();
        b.observe(ActorId(0), &[sent(0, 1), sent(0, 1)], |to| u64::from(to.0));
        assert!(matches!(b.take(ActorId(1), &one(1, 1)), Delivery::Message(_)));
        b.observe(ActorId(1), &[], |_| unreachable!());
        assert!(b.continuing(&one(1, 3)));
        assert_eq!(b.take(ActorId(1), &one(1, 3)), Delivery::Continuation);
        assert!(b.head(ActorId(1)).is_some(), "the second message is still pending");
        // With one alternative it is a new step, which takes the message.
        assert!(!b.continuing(&one(1, 1)));
        assert!(matches!(b.take(ActorId(1), &one(1, 1)), Delivery::Message(_)));
    }
}
