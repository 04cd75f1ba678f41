//! Taking one choice of a state, written once: the look-up, the split of
//! the state into the successor's copy and the copy kept for later
//! choices, the execution (recording a violation), the deferral and the
//! successor's frame. Two callers: [`run_stack`](Search::run_stack) for a
//! state on the stack, and the fast path of [`resume`](Search::resume)
//! for a deferred entry that takes its one choice of the stratum without
//! a stack frame. Before it, [`run_stack`](Search::run_stack) lets
//! [`take_cached`](Search::take_cached) take a frame's choices whose
//! successors are cached (the step's `Present` case, in a tight loop) and
//! hands the step the look-up that loop made.

use super::frame::{Resumed, no_order, offer_at};
use super::peek::PREFETCH_AHEAD;
use super::{Ahead, Away, Entry, Frame, NONE, RawViolation, Search, Span, Stop, enabled_set};
use crate::cache::{Insert, StateCache};
use crate::program::{ActorId, Program, Violation};
use crate::report::Found;
use crate::search::error::SearchError;
use crate::search::order::ChoiceOrder;

/// The state whose choice a step takes, and where it is held.
enum Held<S, O> {
    /// In the stack frame at this index.
    Frame(usize),
    /// A resumed entry, not on the stack: its state and order (moved out
    /// when used), path node, offered actors, enabled set's start (`None`:
    /// the set its prepared retirement check loaded, freed with its
    /// batch; a flag of its own, which the release tests more cheaply
    /// than `checked.en`: 0.7% of SES rtc's instructions) and that check.
    Entry {
        state: Option<S>,
        order: Option<O>,
        node: u32,
        offered: u64,
        en_start: Option<usize>,
        checked: Ahead,
    },
}

/// The choice a step takes.
#[derive(Clone, Copy)]
struct Choice {
    /// The actor and alternative.
    cur: (ActorId, u32),
    /// Its index among the state's choices.
    index: u32,
    /// Whether it is the state's last choice.
    last: bool,
    /// Whether the move to the next choice goes to the next stratum.
    defer: bool,
    /// What that move costs.
    step_cost: u32,
    /// The cost paid so far at the state.
    cost: u32,
    /// The state's depth.
    depth: u32,
    /// The successor's fingerprint, if known (0: not).
    peeked: u64,
    /// The look-up of `peeked` already made, if any.
    found: Option<Insert>,
    /// The state's enabled set.
    en: Span,
}

impl<'a, P: Program, O: ChoiceOrder, const W: bool> Search<'a, P, O, W> {
    /// Resumes deferred work items in order (at the current bound) until
    /// they are done or the search stops. They are taken
    /// [`PREFETCH_AHEAD`] at a time: the slots of the successors the next
    /// ones reach first are prefetched, and the retirement checks of
    /// these are prepared ([`prepare_retire`](Self::prepare_retire))
    /// before the first of them is resumed.
    pub(in crate::search) fn run_work(
        &mut self,
        work: &mut Vec<Entry<P::State, O>>,
    ) -> Result<Option<Stop>, SearchError> {
        self.work_len = work.len() as u64;
        let mut stop = None;
        let mut entries = work.drain(..);
        'work: loop {
            // The batch: the next items, checked where they lie.
            let batch = entries.as_slice().len().min(PREFETCH_AHEAD);
            if batch == 0 {
                break;
            }
            for next in entries.as_slice()[batch..].iter().take(PREFETCH_AHEAD) {
                self.cache.prefetch(next.fp);
            }
            self.ahead.clear();
            self.ahead_fps.clear();
            self.ahead_choices.clear();
            // The checks' enabled sets go from here on; the stack is empty.
            let en_base = self.en.len();
            for entry in &entries.as_slice()[..batch] {
                let ahead = self.prepare_retire(entry);
                self.ahead.push(ahead);
            }
            for j in 0..batch {
                let Some(entry) = entries.next() else {
                    break;
                };
                self.work_len -= 1;
                stop = self.resume(entry, self.ahead[j])?;
                // Most items push no frame (a call that finds the stack
                // empty cost 1% of SES rr's instructions).
                if stop.is_none() && !self.stack.is_empty() {
                    stop = self.run_stack()?;
                }
                if stop.is_some() {
                    if self.keep_rest {
                        self.rest.extend(entries);
                    }
                    break 'work;
                }
            }
            self.free_enabled(en_base);
        }
        self.work_len = 0;
        Ok(stop)
    }

    /// Takes the choices of the frames on the stack until it is empty or
    /// the search stops.
    pub(super) fn run_stack(&mut self) -> Result<Option<Stop>, SearchError> {
        while let Some(k) = self.stack.len().checked_sub(1) {
            let top = &self.stack[k];
            if top.state.is_none() {
                let (start, peek_start) = (top.en.start as usize, top.peek_start as usize);
                self.free_enabled(start);
                self.peek.truncate(peek_start);
                self.stack.pop();
                continue;
            }
            let found = self.take_cached(k)?;
            if found.is_none() {
                if let Some(stop) = self.budgets_due() {
                    return Ok(Some(stop));
                }
                if self.stack[k].state.is_none() {
                    continue;
                }
            }
            let top = &self.stack[k];
            let index = top.next;
            let peeked = self.peeked(k, index);
            let top = &mut self.stack[k];
            top.next += 1;
            let en = top.en;
            let last = top.next == top.total;
            let (cur, cost, depth) = (top.cur, top.cost, top.depth);
            let top = &self.stack[k];
            debug_assert_eq!(cur, top.order().current(&self.set(en)));
            let step_cost = if last {
                0
            } else {
                top.order().advance_cost(&self.set(en))
            };
            let choice = Choice {
                cur,
                index,
                last,
                defer: !last && cost + step_cost > self.bound,
                step_cost,
                cost,
                depth,
                peeked,
                found,
                en,
            };
            if let Some(stop) = self.step(&mut Held::Frame(k), choice)? {
                return Ok(Some(stop));
            }
        }
        Ok(None)
    }

    /// Resumes a deferred entry. The common case, where the entry takes
    /// its one choice of this stratum and the move after it needs another
    /// stratum (always in SES, where every frame's cost is the bound), is
    /// the fast path: the [`step`](Self::step) without a stack frame. Every
    /// other case pushes the entry's frame for [`run_stack`](Self::run_stack).
    fn resume(&mut self, e: Entry<P::State, O>, ahead: Ahead) -> Result<Option<Stop>, SearchError> {
        if e.cost > self.bound {
            // It passes through: its choice of this stratum was found
            // cached, and counted, when it was deferred (`pass_cached`).
            self.frontier.push(e);
            return Ok(None);
        }
        if ahead.prepared && self.retire_prepared(&e.state, ahead) {
            return Ok(self.retired_now());
        }
        // A failed check's enabled set is still loaded, below the stack's.
        let (en, total) = match ahead.en {
            Some(loaded) => loaded,
            None => self.load_enabled(&e.state),
        };
        let index = e.next;
        let (last, step_cost, defer) = self.resumed_move(&e, en, total);
        if !self.on.fast_resume || total <= index || !(last || defer) {
            // The frame frees its set when it is popped: its own.
            let (en, total) = match ahead.en {
                Some(_) => self.load_enabled(&e.state),
                None => (en, total),
            };
            let resume = Resumed {
                next: e.next,
                offered: e.offered,
                fp: e.fp,
            };
            return self.push_frame(
                e.state,
                e.order,
                e.cost,
                e.depth,
                e.node,
                Some(resume),
                Some((en, total)),
            );
        }
        let set = self.set(en);
        let cur = e.order.current(&set);
        let offered = offer_at(e.offered, cur, &set, &e.order)?;
        if defer && !ahead.prepared && e.fp != 0 && !self.report.cache_full && self.cache.contains(e.fp) {
            // Its choice of this stratum is cached: if every later one
            // is too, the entry retires here.
            let retire = (e.depth, total - index, en);
            if self.try_retire(&e.state, &e.order, cur, e.offered, retire) {
                self.free_enabled(en.start as usize);
                return Ok(self.retired_now());
            }
        }
        let mut held = Held::Entry {
            state: Some(e.state),
            order: Some(e.order),
            node: e.node,
            offered,
            en_start: ahead.en.is_none().then_some(en.start as usize),
            checked: ahead,
        };
        let choice = Choice {
            cur,
            index,
            last,
            defer,
            step_cost,
            cost: e.cost,
            depth: e.depth,
            peeked: e.fp,
            // A check is prepared only when this choice's successor is
            // cached (and the cache only grows): no second look-up.
            found: ahead.prepared.then_some(Insert::Present),
            en,
        };
        self.step(&mut held, choice)
    }

    /// A resumed entry's move after its choice of this stratum: whether
    /// that choice is its last, what the move costs, and whether it
    /// needs another stratum (the entry is deferred again).
    #[inline(always)]
    pub(super) fn resumed_move(&self, e: &Entry<P::State, O>, en: Span, total: u32) -> (bool, u32, bool) {
        let last = e.next + 1 == total;
        let step_cost = if last { 0 } else { e.order.advance_cost(&self.set(en)) };
        (last, step_cost, !last && e.cost + step_cost > self.bound)
    }

    /// Counts a retired entry's step of this stratum as taken (its
    /// transition and its deferral), then the budgets, when due.
    fn retired_now(&mut self) -> Option<Stop> {
        self.report.transitions += 1;
        self.stratum.transitions += 1;
        self.report.deferrals += 1;
        self.stratum.deferrals += 1;
        self.budgets_due()
    }

    /// Takes choice `c` of the state `held`: looks its successor up (before
    /// executing it when its fingerprint is known: a cached one is not
    /// executed again), executes it, defers the state one move on when the
    /// move costs more than the bound allows, and pushes the successor's
    /// frame if it is new. Then the budgets, when due.
    #[inline(always)]
    fn step(&mut self, held: &mut Held<P::State, O>, c: Choice) -> Result<Option<Stop>, SearchError> {
        let (actor, alt) = c.cur;
        let child_depth = c.depth + 1;
        let within = (child_depth as usize) < self.config.max_steps;
        let looked_up = match c.found {
            Some(found) => Some(found),
            None => (c.peeked != 0 && within).then(|| self.cache.insert(c.peeked)),
        };
        let skip = looked_up == Some(Insert::Present);
        if let Some(s) = state_slot(&mut self.stack, held).as_ref() {
            self.program.count_transition(s, actor, alt);
        }
        let (mut child, kept) = split(state_slot(&mut self.stack, held), c.last, c.defer, skip)?;
        self.report.transitions += 1;
        self.stratum.transitions += 1;
        if let Some(s) = child.as_mut() {
            self.events.clear();
            if let Err(v) = self.program.execute(s, actor, alt, &mut self.events) {
                let node = self.node_of(held)?;
                let node = self.child_node(node, c.depth, c.index)?;
                self.release(held);
                return Ok(Some(self.violate(v, c.depth as usize, node)));
            }
        }
        // A successor not looked up yet: its fingerprint now and its
        // look-up prefetched, made after the deferral below so that a miss
        // overlaps that work.
        let child_fp = match (&child, looked_up) {
            (Some(s), None) if self.config.use_cache && within => {
                let fp = self.fp(s);
                let fp = if self.config.exact_bound {
                    // The key of the successor is with its order: the
                    // explorer after the step, at alternative 0.
                    let order = order_slot(&mut self.stack, held).as_ref().ok_or_else(no_order)?;
                    let child_order = order.child(actor, &self.events);
                    self.key(fp, &child_order)
                } else {
                    fp
                };
                self.cache.prefetch(fp);
                fp
            }
            _ => 0,
        };
        // The order of a successor that is new: the explorer steps only
        // into a successor that is explored.
        let deferred_order = match kept {
            Some(state) => {
                let order = order_slot(&mut self.stack, held).take().ok_or_else(no_order)?;
                // Before the move, and before the events are reused.
                let child_order = child.is_some().then(|| order.child(actor, &self.events));
                self.defer(held, state, order, &c)?;
                Some(child_order)
            }
            None => None,
        };
        let successor = self.classify(looked_up, child.as_ref(), c.peeked, child_fp, child_depth);
        let fresh = matches!(successor, Successor::New | Successor::Again | Successor::Away(_));
        let child_order = match deferred_order {
            Some(order) => order.filter(|_| fresh),
            None if c.last => {
                let order = order_slot(&mut self.stack, held).take().ok_or_else(no_order)?;
                fresh.then(|| order.into_child(actor, &self.events))
            }
            None => {
                let Held::Frame(k) = *held else {
                    return Err(SearchError::Internal("a resumed entry kept its state".into()));
                };
                let child_order = fresh.then(|| self.stack[k].order().child(actor, &self.events));
                let set = enabled_set(&self.en, &self.ids, c.en);
                debug_assert_eq!(self.stack[k].cur, c.cur);
                self.stack[k].move_on(c.step_cost, &set)?;
                child_order
            }
        };
        self.release(held);
        match (successor, child_order, child) {
            (Successor::Cut, ..) => self.cut = true,
            (Successor::Away(key), Some(order), Some(state)) => {
                // Sent with the path that reaches it (the owner's
                // counterexample below it replays that path): the path
                // node of the state whose choice it is, and the choice's
                // index, which the owner adds (a node here for each state
                // sent, most of them cached there, was more nodes than
                // the single search's whole arena).
                let node = self.node_of(held)?;
                self.away.push(Away {
                    state,
                    order,
                    key,
                    cost: c.cost,
                    depth: child_depth,
                    node,
                    index: c.index,
                });
            }
            (successor, Some(order), Some(child)) => {
                let node = match held {
                    Held::Frame(_) => NONE,
                    Held::Entry { node, .. } => self.child_node(*node, c.depth, c.index)?,
                };
                if successor == Successor::New {
                    self.program.count_state(&child);
                    self.report.states += 1;
                    self.stratum.new_states += 1;
                    if self.report.states >= self.exact_states {
                        // The budgets are checked after this step.
                        self.next_check = 0;
                    }
                } else {
                    self.revisits += 1;
                }
                if let Some(stop) = self.push_frame(child, order, c.cost, child_depth, node, None, None)? {
                    return Ok(Some(stop));
                }
            }
            _ => {}
        }
        Ok(self.budgets_due())
    }

    /// Defers `state` (whose choice `c` was just taken) one move on, with
    /// `order` at that choice: a frontier entry for the next stratum.
    #[inline(always)]
    fn defer(
        &mut self,
        held: &Held<P::State, O>,
        state: P::State,
        mut order: O,
        c: &Choice,
    ) -> Result<(), SearchError> {
        let set = self.set(c.en);
        order.advance_from(c.cur, &set);
        let next_choice = order.current(&set);
        let (offered, checked) = match held {
            Held::Frame(k) => (self.stack[*k].offered, Ahead::default()),
            Held::Entry { offered, checked, .. } => (*offered, *checked),
        };
        let fp = match self.checked_fp(checked, next_choice) {
            Some(fp) => {
                self.checked_fps += 1;
                fp
            }
            None => self.first_fp(&state, next_choice, &order),
        };
        self.report.deferrals += 1;
        self.stratum.deferrals += 1;
        if self.report.cache_full && !self.deferred.insert(self.key(self.fp(&state), &order)) {
            // The cache is full: another entry of this state waits in the
            // next frontier, and its frame will take all the state's
            // choices (ARCHITECTURE.md, "Passing through").
            return Ok(());
        }
        let node = self.node_of(held)?;
        let mut e = Entry {
            state,
            order,
            next: c.index + 1,
            cost: c.cost + c.step_cost,
            depth: c.depth,
            node,
            offered,
            fp,
        };
        if self.on.pass && checked.prepared && c.step_cost == 1 && !self.keep_rest {
            self.pass_cached(&mut e, checked)?;
        }
        self.frontier.push(e);
        Ok(())
    }

    /// The path node of the state `held`.
    #[inline]
    fn node_of(&mut self, held: &Held<P::State, O>) -> Result<u32, SearchError> {
        match held {
            Held::Frame(k) => self.materialize(*k),
            Held::Entry { node, .. } => Ok(*node),
        }
    }

    /// Frees a resumed entry's enabled set once its step is done (a
    /// frame's goes when it is popped, a prepared check's with its batch).
    #[inline]
    fn release(&mut self, held: &Held<P::State, O>) {
        if let Held::Entry {
            en_start: Some(en_start),
            ..
        } = held
        {
            self.free_enabled(*en_start);
        }
    }

    /// Records the violation `v` at `step`, reached by `advances`.
    pub(super) fn violate(&mut self, v: Violation, step: usize, node: u32) -> Stop {
        let (advances, before) = self.arena.expand_here(node);
        self.violation = Some(RawViolation {
            found: Found { violation: v, step },
            advances,
            before,
        });
        Stop::Violation
    }

    /// What a successor is to the search: `looked_up` is the result of a
    /// look-up made before it was executed (of `peeked`, its fingerprint),
    /// else `child` is the executed successor (`None` only after a
    /// `Present` look-up), with its fingerprint `child_fp` if computed (0:
    /// not).
    #[inline(always)]
    fn classify(
        &mut self,
        looked_up: Option<Insert>,
        child: Option<&P::State>,
        peeked: u64,
        child_fp: u64,
        child_depth: u32,
    ) -> Successor {
        let (inserted, key) = match (looked_up, child) {
            (Some(Insert::New), c) => {
                debug_assert!(
                    c.is_some_and(|c| self.config.exact_bound || self.fp(c) == peeked),
                    "mcheck bug: a transition is not deterministic"
                );
                (Insert::New, peeked)
            }
            (Some(found), _) => (found, peeked),
            (None, None) => (Insert::Present, 0),
            (None, Some(c)) => {
                if child_depth as usize >= self.config.max_steps {
                    // Cut: not cached, so that a shorter path may explore it.
                    self.program.enabled(c, &mut self.scratch);
                    let cut = !self.scratch.is_empty();
                    self.scratch.clear();
                    if cut {
                        return Successor::Cut;
                    }
                }
                if !self.config.use_cache {
                    // Without a cache every visit is counted as a state.
                    return Successor::New;
                }
                let key = if child_fp != 0 { child_fp } else { self.fp(c) };
                (self.cache.insert(key), key)
            }
        };
        match inserted {
            Insert::New => Successor::New,
            Insert::Present => Successor::Known,
            Insert::Full => {
                self.report.cache_full = true;
                Successor::Again
            }
            Insert::Elsewhere => Successor::Away(key),
        }
    }
}

/// What a successor is to the search.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Successor {
    /// In the cache: not explored again.
    Known,
    /// Not in the cache, and now it is (or no cache): explored and counted.
    New,
    /// Not in the cache, which is full: explored again, not counted as a
    /// state.
    Again,
    /// Cut at the step bound: not explored.
    Cut,
    /// Another worker's (a distributed search's), with its key: sent
    /// there, not explored here.
    Away(u64),
}

/// Where the state of `held` is.
#[inline(always)]
fn state_slot<'s, S, O>(stack: &'s mut [Frame<S, O>], held: &'s mut Held<S, O>) -> &'s mut Option<S> {
    match held {
        Held::Frame(k) => &mut stack[*k].state,
        Held::Entry { state, .. } => state,
    }
}

/// Where the order of `held` is.
#[inline(always)]
fn order_slot<'s, S, O>(stack: &'s mut [Frame<S, O>], held: &'s mut Held<S, O>) -> &'s mut Option<O> {
    match held {
        Held::Frame(k) => &mut stack[*k].order,
        Held::Entry { order, .. } => order,
    }
}

/// Splits the state in `slot` into the successor's copy (`None` when the
/// successor is known to be cached: it is not executed) and the copy kept
/// for a deferral. The last choice and a deferral take the state out of
/// its slot; any other choice leaves it there for the next.
#[inline(always)]
fn split<S: Clone>(
    slot: &mut Option<S>,
    last: bool,
    defer: bool,
    skip: bool,
) -> Result<(Option<S>, Option<S>), SearchError> {
    if !(last || defer) {
        return Ok(if skip { (None, None) } else { (slot.clone(), None) });
    }
    let s = slot
        .take()
        .ok_or_else(|| SearchError::Internal("a choice of a state already given away".into()))?;
    Ok(match (defer, skip) {
        (false, true) => (None, None),
        (false, false) => (Some(s), None),
        (true, true) => (None, Some(s)),
        (true, false) => (Some(s.clone()), Some(s)),
    })
}
