//! Pushing a state's frame: its enabled set, the deadlock check of a
//! terminal state, and the run-time soundness check of the explorer.

use super::{Frame, Search, Span, Stop, enabled_set};
use crate::explorer::enabled_mask;
use crate::program::{ActorId, Program};
use crate::search::error::SearchError;
use crate::search::order::{ChoiceOrder, EnabledSet};

/// How a deferred entry resumes: its next choice, the actors already
/// offered and the fingerprint of its first successor (0: unknown).
#[derive(Clone, Copy)]
pub(super) struct Resumed {
    pub(super) next: u32,
    pub(super) offered: u64,
    pub(super) fp: u64,
}

impl<P: Program, O: ChoiceOrder, const W: bool> Search<'_, P, O, W> {
    /// Appends the enabled set of `state` to `en`/`ids`; returns where it
    /// is, with its mask if the order reads it, and its number of choices.
    #[inline]
    pub(super) fn load_enabled(&mut self, state: &P::State) -> (Span, u32) {
        self.program.enabled(state, &mut self.scratch);
        debug_assert!(
            self.scratch.iter().all(|e| e.alternatives >= 1),
            "mcheck: Program::enabled listed an actor with 0 alternatives"
        );
        let en_start = self.en.len();
        self.en.extend_from_slice(&self.scratch);
        // One pass for the ids, the choices and the mask (bit `id & 63`
        // per actor: no mask if the last id, the largest, is 64 or more).
        let (mut total, mut mask) = (0, 0u64);
        self.ids.extend(self.scratch.iter().map(|e| {
            total += e.alternatives.max(1);
            mask |= 1 << (e.actor.0 & 63);
            e.actor
        }));
        let narrow = self.scratch.last().is_none_or(|e| e.actor.0 < 64);
        self.scratch.clear();
        let span = Span {
            start: en_start as u32,
            len: (self.en.len() - en_start) as u32,
            mask: (O::READS_MASK && narrow).then_some(mask),
        };
        debug_assert_eq!(span.mask, enabled_mask(&self.ids[en_start..]).filter(|_| O::READS_MASK));
        (span, total)
    }

    /// Frees the enabled sets loaded from `start` on (the last ones
    /// [`load_enabled`](Self::load_enabled) appended).
    #[inline(always)]
    pub(super) fn free_enabled(&mut self, start: usize) {
        self.en.truncate(start);
        self.ids.truncate(start);
    }

    /// The enabled set at `span`.
    #[inline(always)]
    pub(super) fn set(&self, span: Span) -> EnabledSet<'_> {
        enabled_set(&self.en, &self.ids, span)
    }

    /// Pushes a frame for `state` with `order`, `cost` paid so far, at
    /// `depth`, with path node `node`, resuming a deferred entry's `resume`
    /// (`None`: a new state), its enabled set already loaded (`en`: where
    /// it is and its number of choices; `None`: load it now). A terminal state gets no
    /// frame: a deadlock violates if deadlocks are checked.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn push_frame(
        &mut self,
        state: P::State,
        order: O,
        cost: u32,
        depth: u32,
        node: u32,
        resume: Option<Resumed>,
        en: Option<(Span, u32)>,
    ) -> Result<Option<Stop>, SearchError> {
        let (en, total) = en.unwrap_or_else(|| self.load_enabled(&state));
        // Built in place: a frame is large.
        self.stack.push(Frame {
            state: Some(state),
            order: Some(order),
            next: resume.map_or(0, |r| r.next),
            cur: (ActorId(0), 0),
            total,
            cost,
            depth,
            node,
            en,
            peek_start: 0,
            peek_base: 0,
            peek_len: 0,
            offered: 0,
        });
        let top = self.stack.len() - 1;
        if total == 0 {
            // Terminal: the frame stays only to name the path.
            let frame = self.stack.pop().expect("just pushed");
            return self.terminal(frame, top);
        }
        let frame = &self.stack[top];
        let set = self.set(en);
        // A fresh frame offers its first actor; a deferred one resumes one
        // move on, paid by this stratum (the entry holds the order and
        // cost after the move).
        let cur = frame.order().current(&set);
        let offered = match resume {
            None => offer(0, cur.0, &set, frame.order())?,
            Some(r) => offer_at(r.offered, cur, &set, frame.order())?,
        };
        let frame = &mut self.stack[top];
        frame.cur = cur;
        frame.offered = offered;
        if self.config.use_cache {
            self.peek_successors(top);
            if let Some(fp) = resume
                .map(|r| r.fp)
                .filter(|&fp| fp != 0 && self.stack[top].peek_len == 0)
            {
                // The deferred frame's first successor, computed at deferral.
                self.peek.push(fp);
                self.stack[top].peek_len = 1;
            }
        }
        Ok(None)
    }

    /// A terminal state (its frame `frame`, popped from position `top`):
    /// a deadlock violates if deadlocks are checked.
    fn terminal(&mut self, frame: Frame<P::State, O>, top: usize) -> Result<Option<Stop>, SearchError> {
        if !self.config.deadlock {
            return Ok(None);
        }
        let Some(v) = frame.state.as_ref().and_then(|s| self.program.deadlock(s)) else {
            return Ok(None);
        };
        // The violating "step" is the state reached after `depth` steps:
        // its path is the frame's.
        let depth = frame.depth;
        self.stack.push(Frame {
            state: None,
            next: 1,
            ..frame
        });
        let path = self.materialize(top)?;
        self.stack.pop();
        Ok(Some(self.violate(v, depth as usize, path)))
    }
}

impl<S, O: ChoiceOrder> Frame<S, O> {
    /// Moves past the current choice `cur` to the next, paying
    /// `step_cost`, with the run-time soundness check; `set`: the frame's
    /// enabled set.
    #[inline(always)]
    pub(super) fn move_on(&mut self, step_cost: u32, set: &EnabledSet<'_>) -> Result<(), SearchError> {
        let order = self.order.as_mut().ok_or_else(no_order)?;
        order.advance_from(self.cur, set);
        self.cost += step_cost;
        self.cur = order.current(set);
        self.offered = offer_at(self.offered, self.cur, set, order)?;
        Ok(())
    }
}

/// The run-time soundness check at a choice `cur` reached by a move:
/// alternative 0 starts another actor's block, which must be a fresh
/// actor.
#[inline]
pub(in crate::search) fn offer_at<O: ChoiceOrder>(
    offered: u64,
    (actor, alt): (ActorId, u32),
    set: &EnabledSet<'_>,
    order: &O,
) -> Result<u64, SearchError> {
    if alt > 0 {
        Ok(offered)
    } else {
        offer(offered, actor, set, order)
    }
}

/// The run-time soundness check: a newly offered actor must be enabled
/// and not offered before at this state. `offered` has a bit per actor
/// offered: bit `id` when the enabled set has a mask (every id below
/// 64; a test of two bits), else bit `i` for the `i`-th enabled actor
/// (a binary search; the first 64). A state's set has a mask or not
/// whenever it is loaded, so one state always uses one of the two.
/// Skipped for a trusted order ([`ChoiceOrder::is_trusted`]) unless debug
/// assertions are on; skipped, it still keeps the bits of a set with a
/// mask (retirement reads them: `retire.rs`).
#[inline(always)]
pub(in crate::search) fn offer<O: ChoiceOrder>(
    offered: u64,
    actor: ActorId,
    set: &EnabledSet<'_>,
    order: &O,
) -> Result<u64, SearchError> {
    if !cfg!(debug_assertions) && order.is_trusted() {
        return Ok(match set.mask {
            Some(_) if O::READS_MASK => offered | 1u64.checked_shl(actor.0).unwrap_or(0),
            _ => offered,
        });
    }
    let bit = match set.mask {
        Some(mask) => {
            let bit = 1u64.checked_shl(actor.0).unwrap_or(0);
            (mask & bit != 0).then_some(bit)
        }
        None => match set.ids.binary_search(&actor) {
            Ok(i) => Some(1u64.checked_shl(i as u32).unwrap_or(0)),
            Err(_) => None,
        },
    };
    match bit {
        Some(bit) if offered & bit == 0 => Ok(offered | bit),
        _ => Err(unsound(order, actor, set, bit.is_some())),
    }
}

/// The error of an order that failed the run-time soundness check by
/// offering `actor`: not enabled in `set`, or (`twice`) offered before.
/// Out of line, so that the check inlines into the search's loops.
#[cold]
#[inline(never)]
fn unsound<O: ChoiceOrder>(order: &O, actor: ActorId, set: &EnabledSet<'_>, twice: bool) -> SearchError {
    let message = if twice {
        format!(
            "it offered actor {actor} twice at one state before offering every enabled actor (enabled: {:?})",
            set.ids
        )
    } else {
        format!("it chose actor {actor}, which is not enabled (enabled: {:?})", set.ids)
    };
    SearchError::UnsoundExplorer {
        explorer: order.name().to_string(),
        message,
    }
}

/// A state whose order was given away took a choice.
#[cold]
pub(super) fn no_order() -> SearchError {
    SearchError::Internal("a live state without its order".into())
}
