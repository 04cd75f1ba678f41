//! Choice orders: how the stratified search enumerates the choices of a
//! state, and what moving to the next choice costs.
//!
//! One search loop serves SES, DFS and PB; they differ only in the order:
//!
//! * [`Composed`] (SES): the explorer's order, where every move to the next
//!   choice is one delay. This is the composed delay rule (ARCHITECTURE.md, "The composed delay rule"),
//!   implemented here once: the next alternative of the current actor
//!   first ("false before true"), and only after its last alternative
//!   `Explorer::delay`, to the next actor's alternative 0.
//! * [`Natural`] (DFS): actors in id order, each with its alternatives; all
//!   moves are free, so there is a single stratum.
//! * [`Preemptive`] (PB): the actor that ran last first, then the others in
//!   id order; moving off the last actor while it is enabled costs one
//!   preemption, everything else is free.

use crate::cache::fingerprint;
use crate::explorer::{Explorer, enabled_mask};
use crate::program::{ActorId, Enabled, Event};
use serde::{Deserialize, Serialize};

/// A state's enabled set as an order reads it: the enabled actors with
/// their alternatives and their ids (the same actors, sorted by id), and
/// the ids as a bitmask ([`enabled_mask`]), computed once per state
/// rather than by the explorer on every call (it was two fifths of the
/// built-in explorers' instructions, which were a quarter of SES's).
#[derive(Clone, Copy, Debug)]
pub struct EnabledSet<'a> {
    /// The enabled actors with their alternatives.
    pub en: &'a [Enabled],
    /// Their ids.
    pub ids: &'a [ActorId],
    /// `enabled_mask(ids)`; `None` also where the order does not read it
    /// ([`ChoiceOrder::READS_MASK`]), which explorers treat as "compute it".
    pub mask: Option<u64>,
}

impl<'a> EnabledSet<'a> {
    /// The set `en` with its ids `ids` (the same actors); computes the mask.
    #[inline]
    pub fn new(en: &'a [Enabled], ids: &'a [ActorId]) -> Self {
        EnabledSet {
            en,
            ids,
            mask: enabled_mask(ids),
        }
    }
}

/// An order over the choices of a state. Positioned at one choice; the
/// search reads it with `current`, moves with `advance`, and derives the
/// order of a successor with `child`.
pub trait ChoiceOrder: Clone + Send + Sync {
    /// Whether the order is the engine's own and sound by construction
    /// (every enabled choice once per state): the search then skips the
    /// run-time soundness check in release builds (8-10% of DFS's time on
    /// TwoPhase); builds with debug assertions, the tests among them, still
    /// check it. An order built from an [`Explorer`] is trusted when the
    /// explorer is ([`Explorer::is_trusted`]: the built-in ones). Every
    /// order of one search answers alike (a successor's order is trusted
    /// when its parent's is).
    #[inline]
    fn is_trusted(&self) -> bool {
        false
    }
    /// Whether the order reads [`EnabledSet::mask`]. When it does not, the
    /// stratified search leaves the mask `None` rather than compute it for
    /// every state (the engine's `Natural` and `Preemptive` orders never
    /// read it).
    const READS_MASK: bool = true;
    /// The name used in error messages (the explorer's).
    fn name(&self) -> &str;
    /// The current choice at a state whose enabled set is `set`: actor and
    /// alternative.
    fn current(&self, set: &EnabledSet<'_>) -> (ActorId, u32);
    /// What moving to the next choice costs (delays or preemptions).
    fn advance_cost(&self, set: &EnabledSet<'_>) -> u32;
    /// Move to the next choice.
    fn advance(&mut self, set: &EnabledSet<'_>);

    /// [`advance`](Self::advance), given `cur`, which must be what
    /// [`current`](Self::current) returns now (the search keeps it, so that
    /// an order need not find it again).
    #[inline]
    fn advance_from(&mut self, cur: (ActorId, u32), set: &EnabledSet<'_>) {
        let _ = cur;
        self.advance(set);
    }
    /// The order at the successor reached by the current choice, given the
    /// actor that ran and the events of the transition.
    fn child(&self, actor: ActorId, events: &[Event]) -> Self;

    /// [`child`](Self::child) of an order that is no longer needed (the
    /// last choice of its state), which may reuse it.
    #[inline]
    fn into_child(self, actor: ActorId, events: &[Event]) -> Self {
        self.child(actor, events)
    }

    /// A hash of the order's whole state with the fixed hasher (equal
    /// orders, equal hashes), which `Config::exact_bound` adds to the cache
    /// key; `None`: the order cannot be keyed (see
    /// [`Explorer::state_hash`]).
    fn state_hash(&self) -> Option<u64>;
}

/// The alternatives of `actor` in `en` (sorted by actor id).
#[inline]
pub(crate) fn alternatives_of(en: &[Enabled], ids: &[ActorId], actor: ActorId) -> u32 {
    match ids.binary_search(&actor) {
        Ok(i) => en[i].alternatives,
        Err(_) => 1,
    }
}

/// Moves an order at alternative `alt` of the actor at position `pos`
/// (which has `alternatives`) to the next choice: the actor's next
/// alternative, or alternative 0 of the next position.
#[inline]
fn next_alternative(pos: &mut u32, alt: &mut u32, alternatives: u32) {
    if *alt + 1 < alternatives {
        *alt += 1;
    } else {
        *alt = 0;
        *pos += 1;
    }
}

/// The composed explorer (ARCHITECTURE.md, "The composed delay rule"): an explorer plus the index of the
/// current actor's alternative.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Composed<E> {
    /// The explorer.
    pub explorer: E,
    /// The current alternative of the explorer's current actor.
    pub alt: u32,
}

impl<E: Explorer> Composed<E> {
    /// The composed explorer at a state where the explorer is `explorer`.
    pub fn new(explorer: E) -> Self {
        Composed { explorer, alt: 0 }
    }
}

impl<E: Explorer> ChoiceOrder for Composed<E> {
    #[inline]
    fn is_trusted(&self) -> bool {
        self.explorer.is_trusted()
    }
    fn name(&self) -> &str {
        self.explorer.name()
    }
    #[inline]
    fn current(&self, set: &EnabledSet<'_>) -> (ActorId, u32) {
        (self.explorer.next_masked(set.ids, set.mask), self.alt)
    }
    #[inline]
    fn advance_cost(&self, _set: &EnabledSet<'_>) -> u32 {
        1
    }
    #[inline]
    fn advance(&mut self, set: &EnabledSet<'_>) {
        let cur = self.current(set);
        self.advance_from(cur, set);
    }
    #[inline]
    fn advance_from(&mut self, cur: (ActorId, u32), set: &EnabledSet<'_>) {
        debug_assert_eq!(cur, self.current(set), "mcheck bug: a stale current choice");
        if self.alt + 1 < alternatives_of(set.en, set.ids, cur.0) {
            self.alt += 1;
        } else {
            self.alt = 0;
            self.explorer.delay_masked(set.ids, set.mask);
        }
    }
    #[inline]
    fn child(&self, _actor: ActorId, events: &[Event]) -> Self {
        let mut explorer = self.explorer.clone();
        explorer.step(events);
        Composed { explorer, alt: 0 }
    }
    #[inline]
    fn into_child(self, _actor: ActorId, events: &[Event]) -> Self {
        let mut explorer = self.explorer;
        explorer.step(events);
        Composed { explorer, alt: 0 }
    }
    fn state_hash(&self) -> Option<u64> {
        let h = self.explorer.state_hash()?;
        Some(fingerprint(&(h, self.alt)))
    }
}

/// Actors in id order, each with its alternatives. Every move is free
/// (DFS: a single stratum), or costs one with [`Natural::charging`] (the
/// strata that spread a parallel DFS over threads, see the `parallel`
/// module).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Natural {
    pos: u32,
    alt: u32,
    /// What a move costs: 0 or 1.
    cost: u32,
}

impl Natural {
    /// The order whose every move costs one.
    pub fn charging() -> Self {
        Natural {
            cost: 1,
            ..Natural::default()
        }
    }
}

impl ChoiceOrder for Natural {
    #[inline]
    fn is_trusted(&self) -> bool {
        true
    }
    const READS_MASK: bool = false;
    fn name(&self) -> &str {
        "natural order"
    }
    #[inline]
    fn current(&self, set: &EnabledSet<'_>) -> (ActorId, u32) {
        (set.en[self.pos as usize].actor, self.alt)
    }
    #[inline]
    fn advance_cost(&self, _set: &EnabledSet<'_>) -> u32 {
        self.cost
    }
    #[inline]
    fn advance(&mut self, set: &EnabledSet<'_>) {
        let alternatives = set.en[self.pos as usize].alternatives;
        next_alternative(&mut self.pos, &mut self.alt, alternatives);
    }
    #[inline]
    fn child(&self, _actor: ActorId, _events: &[Event]) -> Self {
        Natural {
            cost: self.cost,
            ..Natural::default()
        }
    }
    fn state_hash(&self) -> Option<u64> {
        Some(fingerprint(&(self.pos, self.alt)))
    }
}

/// Preemption order: the actor that ran last first (continuing it is free),
/// then the other actors in id order. Leaving the last actor while it is
/// enabled costs one preemption; data alternatives are free.
#[derive(Clone, Copy, Debug)]
pub struct Preemptive {
    last: Option<ActorId>,
    /// Position in the order [last (if enabled)] ++ (others by id).
    pos: u32,
    alt: u32,
}

impl Preemptive {
    /// The order at the initial state (no actor ran yet: nothing to preempt).
    pub fn initial() -> Self {
        Preemptive {
            last: None,
            pos: 0,
            alt: 0,
        }
    }

    /// Index into `en` of the actor at position `pos` of this order.
    #[inline]
    fn index(&self, ids: &[ActorId], pos: u32) -> usize {
        let pos = pos as usize;
        match self.last.map(|l| ids.binary_search(&l)) {
            Some(Ok(li)) => {
                if pos == 0 {
                    li
                } else if pos - 1 < li {
                    pos - 1
                } else {
                    pos
                }
            }
            _ => pos,
        }
    }
}

impl ChoiceOrder for Preemptive {
    #[inline]
    fn is_trusted(&self) -> bool {
        true
    }
    const READS_MASK: bool = false;
    fn name(&self) -> &str {
        "preemption order"
    }
    #[inline]
    fn current(&self, set: &EnabledSet<'_>) -> (ActorId, u32) {
        (set.en[self.index(set.ids, self.pos)].actor, self.alt)
    }
    #[inline]
    fn advance_cost(&self, set: &EnabledSet<'_>) -> u32 {
        let i = self.index(set.ids, self.pos);
        let leaving_actor = self.alt + 1 >= set.en[i].alternatives;
        let last_enabled = self.last.is_some_and(|l| set.ids.binary_search(&l).is_ok());
        u32::from(leaving_actor && self.pos == 0 && last_enabled)
    }
    #[inline]
    fn advance(&mut self, set: &EnabledSet<'_>) {
        let i = self.index(set.ids, self.pos);
        next_alternative(&mut self.pos, &mut self.alt, set.en[i].alternatives);
    }
    #[inline]
    fn child(&self, actor: ActorId, _events: &[Event]) -> Self {
        Preemptive {
            last: Some(actor),
            pos: 0,
            alt: 0,
        }
    }
    fn state_hash(&self) -> Option<u64> {
        Some(fingerprint(&(self.last, self.pos, self.alt)))
    }
}

/// SES's, DFS's and PB's orders as one type, for builds with debug
/// assertions (the tests'): the exhaustive searches run on it there
/// (`instance` in the `search` module), so that a program type gets one
/// instance of the search rather than one per strategy. Each call is the
/// variant's own; release builds use the orders themselves, which the
/// search's hot loops inline.
#[cfg(debug_assertions)]
#[derive(Clone, Debug)]
pub(crate) enum Orders<E> {
    Composed(Composed<E>),
    Natural(Natural),
    Preemptive(Preemptive),
}

#[cfg(debug_assertions)]
impl<E> From<Composed<E>> for Orders<E> {
    fn from(o: Composed<E>) -> Self {
        Orders::Composed(o)
    }
}

#[cfg(debug_assertions)]
impl<E> From<Natural> for Orders<E> {
    fn from(o: Natural) -> Self {
        Orders::Natural(o)
    }
}

#[cfg(debug_assertions)]
impl<E> From<Preemptive> for Orders<E> {
    fn from(o: Preemptive) -> Self {
        Orders::Preemptive(o)
    }
}

/// `$call` on the variant's order, bound to `$o`.
#[cfg(debug_assertions)]
macro_rules! each {
    ($self:expr, $o:ident => $call:expr) => {
        match $self {
            Orders::Composed($o) => $call,
            Orders::Natural($o) => $call,
            Orders::Preemptive($o) => $call,
        }
    };
}

#[cfg(debug_assertions)]
impl<E: Explorer> ChoiceOrder for Orders<E> {
    fn is_trusted(&self) -> bool {
        each!(self, o => o.is_trusted())
    }
    fn name(&self) -> &str {
        each!(self, o => o.name())
    }
    fn current(&self, set: &EnabledSet<'_>) -> (ActorId, u32) {
        each!(self, o => o.current(set))
    }
    fn advance_cost(&self, set: &EnabledSet<'_>) -> u32 {
        each!(self, o => o.advance_cost(set))
    }
    fn advance(&mut self, set: &EnabledSet<'_>) {
        each!(self, o => o.advance(set))
    }
    fn advance_from(&mut self, cur: (ActorId, u32), set: &EnabledSet<'_>) {
        each!(self, o => o.advance_from(cur, set))
    }
    fn child(&self, actor: ActorId, events: &[Event]) -> Self {
        each!(self, o => o.child(actor, events).into())
    }
    fn into_child(self, actor: ActorId, events: &[Event]) -> Self {
        each!(self, o => o.into_child(actor, events).into())
    }
    fn state_hash(&self) -> Option<u64> {
        each!(self, o => o.state_hash())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn en(spec: &[(u32, u32)]) -> (Vec<Enabled>, Vec<ActorId>) {
        let en: Vec<Enabled> = spec
            .iter()
            .map(|&(a, n)| Enabled {
                actor: ActorId(a),
                alternatives: n,
            })
            .collect();
        let ids = en.iter().map(|e| e.actor).collect();
        (en, ids)
    }

    fn walk<O: ChoiceOrder>(mut o: O, en: &[Enabled], ids: &[ActorId]) -> Vec<(u32, u32, u32)> {
        let set = EnabledSet::new(en, ids);
        let total: u32 = en.iter().map(|e| e.alternatives).sum();
        let mut out = Vec::new();
        for i in 0..total {
            let (a, alt) = o.current(&set);
            let cost = if i + 1 < total { o.advance_cost(&set) } else { 0 };
            out.push((a.0, alt, cost));
            if i + 1 < total {
                o.advance(&set);
            }
        }
        out
    }

    #[test]
    fn natural_order_lists_every_choice_for_free() {
        let (en, ids) = en(&[(0, 1), (2, 3), (5, 1)]);
        assert_eq!(
            walk(Natural::default(), &en, &ids),
            vec![(0, 0, 0), (2, 0, 0), (2, 1, 0), (2, 2, 0), (5, 0, 0)]
        );
        // Charging: the same choices, each move (not the last) costs one,
        // and so do the moves of a successor's order.
        let o = Natural::charging().child(ActorId(2), &[]);
        assert_eq!(
            walk(o, &en, &ids),
            vec![(0, 0, 1), (2, 0, 1), (2, 1, 1), (2, 2, 1), (5, 0, 0)]
        );
    }

    #[test]
    fn preemption_order_runs_last_actor_first_and_charges_once() {
        let (en, ids) = en(&[(0, 1), (2, 2), (5, 1)]);
        let o = Preemptive::initial().child(ActorId(2), &[]);
        // Actor 2 ran last: its two alternatives are free, leaving it costs 1,
        // then the others are free.
        assert_eq!(walk(o, &en, &ids), vec![(2, 0, 0), (2, 1, 1), (0, 0, 0), (5, 0, 0)]);
        // Actor 7 ran last but is not enabled: nothing is a preemption.
        let o = Preemptive::initial().child(ActorId(7), &[]);
        assert_eq!(walk(o, &en, &ids), vec![(0, 0, 0), (2, 0, 0), (2, 1, 0), (5, 0, 0)]);
    }
}
