//! Taking a frame's choices whose successors are already cached, in a
//! tight loop: the common case of an exhaustive search (on TwoPhase 11 of
//! every 12 transitions), where the step is a look-up, the counts and a
//! move of the order. Any other choice (a new successor, a deferral, a
//! violating or cut successor, one not peeked) goes to the general
//! [`step`](super::step), which this loop hands the look-up it made.

use super::peek::SUCCESSOR_AHEAD;
use super::{Search, enabled_set};
use crate::cache::{Insert, StateCache};
use crate::program::Program;
use crate::search::error::SearchError;
use crate::search::order::ChoiceOrder;

impl<P: Program, O: ChoiceOrder, const W: bool> Search<'_, P, O, W> {
    /// Takes the choices of frame `k` (whose state is live) while their
    /// successors were peeked, are cached and the move after them is free
    /// in this stratum: each is counted and the frame moves on, as the
    /// general step would with a cached successor. The last choice taken
    /// this way gives the state away. Stops when the budgets are due (the
    /// caller checks them, as after any step). Returns the look-up it made
    /// of the current choice's successor and did not act on (`New` or
    /// `Full`), for the general step.
    #[inline(always)]
    pub(super) fn take_cached(&mut self, k: usize) -> Result<Option<Insert>, SearchError> {
        let Search {
            stack,
            peek,
            en,
            ids,
            cache,
            program,
            report,
            stratum,
            config,
            bound,
            next_check,
            ..
        } = self;
        let top = &mut stack[k];
        if top.state.is_none() || top.depth as usize + 1 >= config.max_steps {
            // Successors at the step bound may be cut: the general step.
            return Ok(None);
        }
        let set = enabled_set(en, ids, top.en);
        let peeks = &peek[top.peek_start as usize..(top.peek_start + top.peek_len) as usize];
        loop {
            let j = (top.next - top.peek_base) as usize;
            let Some(&fp) = peeks.get(j) else {
                return Ok(None);
            };
            let last = top.next + 1 == top.total;
            let step_cost = if last { 0 } else { top.order().advance_cost(&set) };
            if fp == 0 || top.cost + step_cost > *bound {
                // A violating successor, or a deferral.
                return Ok(None);
            }
            if let Some(&ahead) = peeks.get(j + SUCCESSOR_AHEAD) {
                cache.prefetch(ahead);
            }
            let found = cache.insert(fp);
            if found != Insert::Present {
                return Ok(Some(found));
            }
            if let Some(state) = &top.state {
                program.count_transition(state, top.cur.0, top.cur.1);
            }
            report.transitions += 1;
            stratum.transitions += 1;
            top.next += 1;
            if last {
                top.state = None;
                top.order = None;
                return Ok(None);
            }
            top.move_on(step_cost, &set)?;
            if report.transitions >= *next_check {
                return Ok(None);
            }
        }
    }
}
