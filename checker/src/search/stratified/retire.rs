//! Retiring frontier entries whose remaining work is only look-ups, and
//! passing kept entries through the strata whose choice is a look-up.

use super::frame::{offer, offer_at};
use super::peek::successor_fp;
use super::{Entry, Search, Span, enabled_set};
use crate::cache::StateCache;
use crate::program::{ActorId, Program};
use crate::search::error::SearchError;
use crate::search::order::{ChoiceOrder, EnabledSet};

/// What retired entries still owe one stratum's statistics (in an
/// [`Owed`], the change from the stratum before).
///
/// An entry is *retired* when it is resumed and every successor its
/// remaining choices reach (the stratum's choice and the later ones) is
/// already cached: resuming it would only look each one up (found), one
/// choice per stratum, and defer it again, changing nothing but the
/// counts. Its work is done at once (the successors computed and looked
/// up, without the step's split, move or deferral: the step is counted
/// as taken); the later strata it would have visited get its
/// transition, deferral and frontier slot here, so every
/// complete stratum's counts are those of the plain search, and so are
/// the states, their order and every counterexample: the cache only
/// grows, so a successor found now is found then. (The stratum where a
/// search stops early, at a violation or a budget, counts only the work
/// done before it stopped, without what retired entries owe it.) (On TwoPhase most
/// deferrals are of such entries; keeping them cost a frontier entry
/// written and read, an enabled set and explorer moves per stratum.)
#[derive(Clone, Copy, Default, Debug)]
pub(super) struct Retired {
    pub(super) transitions: u64,
    pub(super) deferrals: u64,
    pub(super) frontier: u64,
}

impl Retired {
    /// Adds what `other` owes (wrapping: [`Owed`] holds differences).
    fn add(&mut self, other: &Retired) {
        self.transitions = self.transitions.wrapping_add(other.transitions);
        self.deferrals = self.deferrals.wrapping_add(other.deferrals);
        self.frontier = self.frontier.wrapping_add(other.frontier);
    }

    /// Subtracts what `other` owes (wrapping).
    fn sub(&mut self, other: &Retired) {
        self.transitions = self.transitions.wrapping_sub(other.transitions);
        self.deferrals = self.deferrals.wrapping_sub(other.deferrals);
        self.frontier = self.frontier.wrapping_sub(other.frontier);
    }
}

/// What retired entries owe each stratum, by bound, kept as differences:
/// stratum `k` is owed the (wrapping) sum of `diffs[..=k]`. A retirement
/// owes a run of strata one count each, which so costs two additions per
/// count rather than one per stratum (the loop over the strata was 2% of
/// SES rr's instructions on TwoPhase).
#[derive(Clone, Default, Debug)]
pub(super) struct Owed {
    diffs: Vec<Retired>,
}

impl Owed {
    /// Owes each stratum of `from..to` one of `count` (none if `to ==
    /// from`), growing the differences to stratum `to` as needed.
    #[inline(always)]
    fn run(&mut self, from: usize, to: usize, count: fn(&mut Retired) -> &mut u64) {
        if self.diffs.len() <= to {
            self.diffs.resize(to + 1, Retired::default());
        }
        let d = count(&mut self.diffs[from]);
        *d = d.wrapping_add(1);
        let d = count(&mut self.diffs[to]);
        *d = d.wrapping_sub(1);
    }

    /// What stratum `k` is owed.
    pub(super) fn at(&self, k: usize) -> Retired {
        let mut owed = Retired::default();
        for d in self.diffs.iter().take(k + 1) {
            owed.add(d);
        }
        owed
    }

    /// What the last stratum owed anything is owed.
    pub(super) fn last(&self) -> Retired {
        self.at(self.diffs.len().saturating_sub(1))
    }

    /// Whether a stratum after `k` is owed anything.
    pub(super) fn after(&self, k: usize) -> bool {
        let mut owed = self.at(k);
        self.diffs.iter().skip(k + 1).any(|d| {
            owed.add(d);
            owed.transitions | owed.deferrals | owed.frontier != 0
        })
    }

    /// Moves what the strata from `b` on are owed to stratum `b`, the
    /// last (a stratum run without a bound takes it all).
    pub(super) fn lift(&mut self, b: usize) {
        // One pass: `sum` is what stratum k is owed; `owed` adds it up
        // from `b` on, as the difference from what stratum `b - 1` is owed.
        let (mut sum, mut below, mut owed) = (Retired::default(), Retired::default(), Retired::default());
        for (k, d) in self.diffs.iter().enumerate() {
            sum.add(d);
            if k < b {
                below = sum;
            } else {
                owed.add(&sum);
            }
        }
        owed.sub(&below);
        self.diffs.resize(b, Retired::default());
        self.diffs.push(owed);
    }

    /// Adds what `other` owes (a parallel worker's, merged).
    pub(super) fn add(&mut self, other: &Owed) {
        if self.diffs.len() < other.diffs.len() {
            self.diffs.resize(other.diffs.len(), Retired::default());
        }
        for (m, r) in self.diffs.iter_mut().zip(&other.diffs) {
            m.add(r);
        }
    }
}

/// A resumed entry's retirement check, prepared a few entries before its
/// turn ([`run_work`](Search::run_work)): the successors of its choices
/// after its first computed and their look-ups prefetched, so that their
/// misses overlap the work on the entries before it. Only the look-ups
/// wait for the entry's turn, so the cache they see is the plain
/// search's.
#[derive(Clone, Copy, Default)]
pub(super) struct Ahead {
    /// Prepared: its turn checks these look-ups and tries nothing else.
    pub(super) prepared: bool,
    /// No successor violates and the choices are as many as it has left.
    sound: bool,
    /// Its successors' fingerprints in `ahead_fps` (start, length).
    fps: (u32, u32),
    /// Its choices in `ahead_choices` (start, length), its first first.
    choices: (u32, u32),
    /// Its enabled set, left loaded for its turn (below the stack's sets,
    /// freed with the batch's) and its count of choices.
    pub(super) en: Option<(Span, u32)>,
}

impl<P: Program, O: ChoiceOrder, const W: bool> Search<'_, P, O, W> {
    /// Prepares the retirement check of the work item `e` (see [`Ahead`]),
    /// for a trusted order without `exact_bound` whose item will take the
    /// resume's fast path, defer, and whose choice of this stratum is
    /// already cached (as in [`try_retire`](Self::try_retire), which its
    /// turn makes instead when it is not prepared).
    pub(super) fn prepare_retire(&mut self, e: &Entry<P::State, O>) -> Ahead {
        let none = Ahead::default();
        // An entry that passes through this stratum is not resumed.
        if e.cost > self.bound
            || !e.order.is_trusted()
            || self.config.exact_bound
            || !self.on.ahead
            || e.fp == 0
            || self.report.cache_full
            || e.depth as usize + 1 >= self.config.max_steps
            || !self.cache.contains(e.fp)
        {
            return none;
        }
        let (en, total) = self.load_enabled(&e.state);
        let (_, _, defer) = self.resumed_move(e, en, total);
        let mut ahead = none;
        if defer && total > e.next && en.mask.is_some() {
            let set = self.set(en);
            let cur = e.order.current(&set);
            // A trusted order's check (made in builds with debug
            // assertions) that would fail is left to the turn's.
            if offer_at(e.offered, cur, &set, &e.order).is_ok() {
                let mut fps = std::mem::take(&mut self.ahead_fps);
                let mut choices = std::mem::take(&mut self.ahead_choices);
                let (f0, c0) = (fps.len(), choices.len());
                let left = (cur, e.offered, total - e.next);
                // Trusted, without `exact_bound`, with a mask (tested above):
                // the choices are read off the set.
                let sound = self.successors_left(&e.state, &e.order, en, left, (&mut choices, &mut fps));
                ahead = Ahead {
                    prepared: true,
                    sound,
                    fps: (f0 as u32, (fps.len() - f0) as u32),
                    choices: (c0 as u32, (choices.len() - c0) as u32),
                    en: Some((en, total)),
                };
                self.ahead_fps = fps;
                self.ahead_choices = choices;
                return ahead;
            }
        }
        self.free_enabled(en.start as usize);
        ahead
    }

    /// The fingerprint of the successor of `choice` that the check `a`
    /// computed, if it did (a kept entry's next choice: not computed
    /// again for its deferral).
    #[inline]
    pub(super) fn checked_fp(&self, a: Ahead, choice: (ActorId, u32)) -> Option<u64> {
        if !a.prepared {
            return None;
        }
        let (c0, m) = (a.choices.0 as usize, a.choices.1 as usize);
        let (f0, n) = (a.fps.0 as usize, a.fps.1 as usize);
        // The successors are those of the choices after the first.
        let i = self.ahead_choices[c0 + 1..c0 + m].iter().position(|&c| c == choice)?;
        (i < n).then(|| self.ahead_fps[f0 + i])
    }

    /// At its turn, retires the work item of `state` whose check `a` was
    /// prepared, if every successor is cached; whether it was prepared
    /// at all is `a.prepared`. The caller counts its first choice's
    /// transition and its deferral in this stratum.
    pub(super) fn retire_prepared(&mut self, state: &P::State, a: Ahead) -> bool {
        // As `try_retire`'s doubts.
        if self.report.cache_full || !a.sound {
            return false;
        }
        let (f0, n) = (a.fps.0 as usize, a.fps.1 as usize);
        if !self.ahead_fps[f0..f0 + n].iter().all(|&f| self.cache.contains(f)) {
            return false;
        }
        let (c0, n) = (a.choices.0 as usize, a.choices.1 as usize);
        for &(actor, alt) in &self.ahead_choices[c0..c0 + n] {
            self.program.count_transition(state, actor, alt);
        }
        self.owe_retired(n as u32);
        self.retired_ahead += 1;
        true
    }

    /// Passes the kept entry `e` (its prepared check `checked` failed),
    /// being deferred at its next choice, on through the strata whose one
    /// choice reaches a successor that is cached now: each of them would
    /// resume it, find that successor cached (the cache only grows) and
    /// defer it again, one cost-1 move on. It is deferred at its first
    /// choice whose successor is not cached (or its last) instead, with
    /// that choice's cost, and each stratum it
    /// passes through is owed the transition and the deferral (its entry
    /// still goes through that stratum's frontier, where it keeps its
    /// place: [`resume`](Self::resume) moves an entry due after the bound
    /// to the next frontier as it is). So every stratum's counts and
    /// frontier, the states, their order and every counterexample are the
    /// plain search's. Only for a sound check (its successors all
    /// computed, none violating): ARCHITECTURE.md, "Passing through".
    #[inline(never)]
    pub(super) fn pass_cached(&mut self, e: &mut Entry<P::State, O>, checked: Ahead) -> Result<(), SearchError> {
        let Some((en, total)) = checked.en else {
            return Ok(());
        };
        if !checked.sound || self.report.cache_full {
            return Ok(());
        }
        let set = enabled_set(&self.en, &self.ids, en);
        let mut cur = e.order.current(&set);
        let (mut passed, mut computed) = (0, true);
        while e.next + 1 < total && e.order.advance_cost(&set) == 1 && self.cache.contains(e.fp) {
            // Stratum `e.cost` takes `cur` (counted now, as a retirement's
            // choices are) and defers the entry again.
            e.offered = offer_at(e.offered, cur, &set, &e.order)?;
            self.program.count_transition(&e.state, cur.0, cur.1);
            e.order.advance_from(cur, &set);
            cur = e.order.current(&set);
            e.next += 1;
            e.cost += 1;
            passed += 1;
            match self.checked_fp(checked, cur) {
                Some(fp) => e.fp = fp,
                None => {
                    computed = false;
                    break;
                }
            }
        }
        if !computed {
            e.fp = self.first_fp(&e.state, cur, &e.order);
        }
        if passed > 0 {
            self.owe_passed(passed);
        }
        Ok(())
    }

    /// Records `k` strata passed through by a kept entry deferred now:
    /// each of the next `k` is owed a transition and a deferral.
    fn owe_passed(&mut self, k: u32) {
        self.passed += u64::from(k);
        let b = self.bound as usize;
        let k = k as usize;
        let owed = &mut self.retired;
        owed.run(b + 1, b + k + 1, |o| &mut o.transitions);
        owed.run(b + 1, b + k + 1, |o| &mut o.deferrals);
    }

    /// Retires a resumed entry (see [`Retired`]) whose choice of this
    /// stratum, `first`, reaches a cached successor, if every successor
    /// its later choices reach is cached too: `remaining` counts its
    /// choices from `first` on. The later choices are those the order
    /// walks through, or for a trusted order without `exact_bound` those
    /// read off the enabled set ([`successors_left`](Self::successors_left)).
    /// Their look-ups are prefetched together, then made. Any doubt (a
    /// violating successor, the step bound, an explorer that the run-time
    /// check would reject) keeps the entry. In a parallel search a
    /// successor another worker has not inserted yet only keeps it too.
    /// The caller counts `first`'s transition and the entry's deferral in
    /// this stratum.
    pub(super) fn try_retire(
        &mut self,
        state: &P::State,
        order: &O,
        first: (ActorId, u32),
        offered: u64,
        (depth, remaining, span): (u32, u32, Span),
    ) -> bool {
        if !self.on.retire || depth as usize + 1 >= self.config.max_steps {
            return false;
        }
        let mut fps = std::mem::take(&mut self.retire_fps);
        let mut choices = std::mem::take(&mut self.retire_choices);
        fps.clear();
        choices.clear();
        let left = (first, offered, remaining);
        let sound = self.successors_left(state, order, span, left, (&mut choices, &mut fps));
        let all = sound && fps.iter().all(|&f| self.cache.contains(f));
        self.retire_fps = fps;
        if all {
            // Taken now: the strata they would have been taken in are
            // owed only their counts.
            for &(actor, alt) in &choices {
                self.program.count_transition(state, actor, alt);
            }
        }
        self.retire_choices = choices;
        if !all {
            return false;
        }
        self.owe_retired(remaining);
        true
    }

    /// A retirement check but for its look-ups: pushes onto `choices` the
    /// choices `state` (its enabled set at `en`) has left from `first` on,
    /// and onto `fps` the fingerprints of the successors of all but
    /// `first`, their slots prefetched. Whether the check is sound: the
    /// choices are the `remaining` ones, no successor violates, and no
    /// offer would fail the run-time soundness check. For a trusted order
    /// without `exact_bound` the choices are read off the set by
    /// [`left_by_set`] (no explorer moves: ARCHITECTURE.md,
    /// "Retirement"); for any other, the order walks through them, and with
    /// `exact_bound` each successor is keyed with the order after its
    /// step.
    fn successors_left(
        &mut self,
        state: &P::State,
        order: &O,
        en: Span,
        (first, offered, remaining): ((ActorId, u32), u64, u32),
        (choices, fps): (&mut Vec<(ActorId, u32)>, &mut Vec<u64>),
    ) -> bool {
        let set = enabled_set(&self.en, &self.ids, en);
        let (exact, symmetry) = (self.config.exact_bound, self.config.symmetry);
        if order.is_trusted() && !exact && en.mask.is_some() {
            let c0 = choices.len();
            // A sound order takes what is left in some order, and without
            // `exact_bound` the successors do not depend on it.
            left_by_set(&set, first, offered, choices);
            debug_assert_eq!(
                sorted(choices[c0..].to_vec()),
                sorted(walked(order, first, remaining, &set)),
                "mcheck bug: a trusted order's choices left"
            );
            if choices.len() - c0 != remaining as usize {
                return false;
            }
            for &c in &choices[c0 + 1..] {
                let work = (&mut self.events, &mut self.scratch_state);
                let f = successor_fp(self.program, work, state, c, None::<&O>, symmetry);
                if f == 0 {
                    return false;
                }
                self.cache.prefetch(f);
                fps.push(f);
            }
            return true;
        }
        let mut order = order.clone();
        let (mut cur, mut offered) = (first, offered);
        for k in 0..remaining {
            choices.push(cur);
            if cur.1 == 0 {
                match offer(offered, cur.0, &set, &order) {
                    Ok(o) => offered = o,
                    Err(_) => return false,
                }
            }
            if k + 1 == remaining {
                break;
            }
            order.advance_from(cur, &set);
            cur = order.current(&set);
            let keyed = exact.then_some(&order);
            let work = (&mut self.events, &mut self.scratch_state);
            let f = successor_fp(self.program, work, state, cur, keyed, symmetry);
            if f == 0 {
                return false;
            }
            self.cache.prefetch(f);
            fps.push(f);
        }
        true
    }

    /// Records a retirement: what the entry, its `remaining` choices
    /// taken now (the first of them in this stratum, by the caller),
    /// owes the later strata.
    fn owe_retired(&mut self, remaining: u32) {
        self.retirements += 1;
        // It would be in this stratum's frontier, then taken once in each
        // of the next `remaining - 1` strata, and deferred again in all
        // but the last.
        let b = self.bound as usize;
        let r = remaining as usize - 1;
        let owed = &mut self.retired;
        // Its frontier slot from this stratum to the last but one it is
        // taken in, its transition in each after this one, its deferral in
        // each but the last.
        owed.run(b, b + r.max(1), |o| &mut o.frontier);
        owed.run(b + 1, b + r + 1, |o| &mut o.transitions);
        if r > 0 {
            owed.run(b + 1, b + r, |o| &mut o.deferrals);
        }
    }
}

/// The choices a state has left from `first` on (`first` itself first),
/// under a sound order that offered the actors in `offered` (bits of the
/// set's mask) before it: `first`'s actor's alternatives from `first` on,
/// then every alternative of each actor not offered yet.
fn left_by_set(set: &EnabledSet<'_>, (actor, alt): (ActorId, u32), offered: u64, out: &mut Vec<(ActorId, u32)>) {
    // One pass over the set, `first` pushed ahead of it (a search for
    // `first`'s actor first cost a mispredicted branch per check).
    let first = out.len();
    out.push((actor, alt));
    let mut alts = 1;
    // The set has a mask, so every id is below 64.
    let skip = offered | 1 << (actor.0 & 63);
    for e in set.en {
        if e.actor == actor {
            alts = e.alternatives;
            for j in alt + 1..alts {
                out.push((actor, j));
            }
        } else if skip >> (e.actor.0 & 63) & 1 == 0 {
            for j in 0..e.alternatives.max(1) {
                out.push((e.actor, j));
            }
        }
    }
    // An actor not in the set has one alternative.
    if alt >= alts {
        out.remove(first);
    }
}

/// The `remaining` choices `order` takes from `first` on (the check of
/// [`left_by_set`] in builds with debug assertions).
fn walked<O: ChoiceOrder>(
    order: &O,
    first: (ActorId, u32),
    remaining: u32,
    set: &EnabledSet<'_>,
) -> Vec<(ActorId, u32)> {
    let (mut order, mut cur) = (order.clone(), first);
    let mut out = vec![cur];
    for _ in 1..remaining {
        order.advance_from(cur, set);
        cur = order.current(set);
        out.push(cur);
    }
    out
}

/// `v` sorted.
fn sorted(mut v: Vec<(ActorId, u32)>) -> Vec<(ActorId, u32)> {
    v.sort_unstable();
    v
}
