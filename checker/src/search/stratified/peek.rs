//! Successor fingerprints computed ahead, so that the cache look-ups of a
//! frame's successors and of the next frontier entries overlap their
//! misses (ARCHITECTURE.md, "The optimised search"). Nothing here inserts or counts: the
//! successors are still taken, looked up and explored in the search's order.

use super::{Search, enabled_set};
use crate::cache::{StateCache, fingerprint};
use crate::program::{ActorId, Event, Program};
use crate::search::order::ChoiceOrder;
use crate::watch::Watching;

/// How many work items the search takes at a time: it prepares their
/// retirement checks together and prefetches the cache slots of the
/// successors the next ones reach first (16 was no faster, TwoPhase
/// rms=9, SES rr and rtc).
pub(super) const PREFETCH_AHEAD: usize = 8;

/// How many successors of a frame ahead of the one being taken the search
/// prefetches the cache slot (all of a TwoPhase state's). Further than
/// the frontier's: the loop over a frame's cached successors
/// ([`take_cached`](Search::take_cached)) takes one in a fraction of a
/// miss's time (DFS rms=9: 5.47-5.63 s at 8, 5.30-5.42 s at 16).
pub(super) const SUCCESSOR_AHEAD: usize = 16;

/// The most successors of one frame whose fingerprints are computed ahead.
const MAX_PEEK: u32 = 64;

impl<P: Program, O: ChoiceOrder, const W: bool> Search<'_, P, O, W> {
    /// Computes the fingerprints of the successors that frame `k` (just
    /// pushed) will reach in this stratum, in order, and prefetches the
    /// look-ups of the first few. A frame that takes one choice only
    /// computes nothing.
    pub(super) fn peek_successors(&mut self, k: usize) {
        let peek_start = self.peek.len() as u32;
        let frame = &mut self.stack[k];
        frame.peek_start = peek_start;
        frame.peek_base = frame.next;
        let frame = &self.stack[k];
        let set = enabled_set(&self.en, &self.ids, frame.en);
        let remaining = frame.total - frame.next;
        if !self.on.peek || remaining < 2 || frame.cost + frame.order().advance_cost(&set) > self.bound {
            return;
        }
        let Some(state) = frame.state.as_ref() else {
            return;
        };
        let mut order = frame.order().clone();
        let mut cost = frame.cost;
        let mut cur = frame.cur;
        // Read once: the loop writes `events` and `peek`, which the
        // compiler cannot tell apart from these.
        let (bound, exact, symmetry) = (self.bound, self.config.exact_bound, self.config.symmetry);
        let n = remaining.min(MAX_PEEK);
        self.peek.reserve(n as usize);
        for k in 0..n {
            let keyed = exact.then_some(&order);
            let work = (&mut self.events, &mut self.scratch_state);
            let fp = successor_fp(self.program, work, state, cur, keyed, symmetry);
            self.peek.push(fp);
            if (k as usize) < SUCCESSOR_AHEAD {
                self.cache.prefetch(fp);
            }
            if k + 1 == remaining {
                break;
            }
            let step = order.advance_cost(&set);
            if cost + step > bound {
                break;
            }
            cost += step;
            order.advance_from(cur, &set);
            cur = order.current(&set);
        }
        self.stack[k].peek_len = self.peek.len() as u32 - peek_start;
    }

    /// The fingerprint of choice `index` of frame `k` if it was computed
    /// when the frame was pushed (0: not), prefetching the look-up of a
    /// later one.
    #[inline(always)]
    pub(super) fn peeked(&self, k: usize, index: u32) -> u64 {
        let top = &self.stack[k];
        let j = index - top.peek_base;
        if j >= top.peek_len {
            return 0;
        }
        let p = (top.peek_start + j) as usize;
        if j + (SUCCESSOR_AHEAD as u32) < top.peek_len {
            self.cache.prefetch(self.peek[p + SUCCESSOR_AHEAD]);
        }
        self.peek[p]
    }

    /// The cache key of the successor of `state` by `choice`, the current
    /// choice of `order` (0 if it violates), computed to prefetch its
    /// look-up.
    #[inline(always)]
    pub(super) fn successor_fp(&mut self, state: &P::State, choice: (ActorId, u32), order: &O) -> u64 {
        let keyed = self.config.exact_bound.then_some(order);
        successor_fp(
            self.program,
            (&mut self.events, &mut self.scratch_state),
            state,
            choice,
            keyed,
            self.config.symmetry,
        )
    }

    /// The fingerprint the cache stores for `s`: its own, or with symmetry
    /// its orbit's (ARCHITECTURE.md, "Symmetry").
    #[inline(always)]
    pub(super) fn fp(&self, s: &P::State) -> u64 {
        self.program.fingerprint(s, self.config.symmetry)
    }

    /// The cache key of the successor a deferred entry reaches first when
    /// resumed (0 without a cache): its look-up is prefetched when the
    /// entry comes up.
    #[inline(always)]
    pub(super) fn first_fp(&mut self, state: &P::State, choice: (ActorId, u32), order: &O) -> u64 {
        if self.config.use_cache {
            self.successor_fp(state, choice, order)
        } else {
            0
        }
    }

    /// The cache key of a state of fingerprint `fp` whose order is
    /// `order`: `fp` itself, or with `exact_bound` the fingerprint of `fp`
    /// and the order's state (ARCHITECTURE.md, "Guarantees and the cache key").
    #[inline]
    pub(super) fn key(&self, fp: u64, order: &O) -> u64 {
        if self.config.exact_bound { key_of(fp, order) } else { fp }
    }
}

/// The cache key of a state of fingerprint `fp` with order `order` (keyed
/// by both: `exact_bound`).
#[inline]
pub(in crate::search) fn key_of<O: ChoiceOrder>(fp: u64, order: &O) -> u64 {
    fingerprint(&(fp, order.state_hash().unwrap_or(0)))
}

/// The cache key of the successor of `state` by `(actor, alt)`, 0 if the
/// transition violates: its fingerprint, with `exact_bound` (`order`: the
/// order at `state`) keyed with its order. Inlined into each caller (as a
/// call, with its state copy and events on its own frame, it cost 5% of
/// SES's instructions on TwoPhase: ARCHITECTURE.md, "Performance design").
#[inline(always)]
pub(super) fn successor_fp<P: Program, O: ChoiceOrder, const W: bool>(
    program: Watching<'_, P, W>,
    (events, scratch): (&mut Vec<Event>, &mut Option<P::State>),
    state: &P::State,
    (actor, alt): (ActorId, u32),
    order: Option<&O>,
    symmetry: bool,
) -> u64 {
    // A state that owns heap memory (a machine model's queues) is made in
    // `scratch`, a copy of the last one's parent: `clone_from` reuses that
    // memory where a fresh clone would allocate and free it
    // (ARCHITECTURE.md, "Performance design"). A flat state
    // is copied on the stack, as before.
    let mut fresh;
    let c = if std::mem::needs_drop::<P::State>() {
        match scratch {
            Some(c) => {
                c.clone_from(state);
                c
            }
            None => scratch.insert(state.clone()),
        }
    } else {
        fresh = state.clone();
        &mut fresh
    };
    events.clear();
    match program.execute(c, actor, alt, events) {
        Ok(()) => match order {
            None => program.fingerprint(c, symmetry),
            Some(o) => key_of(program.fingerprint(c, symmetry), &o.child(actor, events)),
        },
        Err(_) => 0,
    }
}
