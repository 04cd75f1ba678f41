//! Retiring frontier entries whose remaining work is only look-ups.

use super::frame::offer;
use super::peek::successor_fp;
use super::{enabled_set, Search, Span};
use crate::cache::StateCache;
use crate::program::{ActorId, Program};
use crate::search::order::{alternatives_of, ChoiceOrder, EnabledSet};

/// What retired entries still owe one stratum's statistics.
///
/// An entry is *retired* when it is deferred again and every successor
/// its remaining choices reach is already cached: resuming it would only
/// look each one up (found), one choice per stratum, and defer it again,
/// changing nothing but the counts. Its work is done at once (the
/// successors computed and looked up); the strata it would have visited
/// get its transition, deferral and frontier slot here, so every
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
    /// Adds what `other` owes (a parallel worker's, merged).
    pub(super) fn add(&mut self, other: &Retired) {
        self.transitions += other.transitions;
        self.deferrals += other.deferrals;
        self.frontier += other.frontier;
    }
}

/// Retiring is tried while at least 1 in `RETIRE_HIT_RATE` tries succeeds
/// (each failed try computed successors for nothing), and after that on
/// every `RETIRE_PROBE`th chance, to notice when it pays again.
const RETIRE_HIT_RATE: u64 = 2;
const RETIRE_PROBE: u64 = 16;

impl<P: Program, O: ChoiceOrder, C: StateCache> Search<'_, P, O, C> {
    /// Retires an entry about to be deferred again (see [`Retired`]) if
    /// every successor its `remaining` choices reach is cached: `first`
    /// is its next choice, `fp` that successor's fingerprint. The choices
    /// are those the order walks through, or for a trusted order without
    /// `exact_bound` those [`left_by_set`] reads off the enabled set (no
    /// explorer moves: ARCHITECTURE.md §3, "Retired entries"). Their
    /// look-ups are prefetched together, then made. Any doubt (a violating
    /// successor, the step bound, an explorer that the run-time check
    /// would reject) keeps the entry. In a parallel search a successor
    /// another worker has not inserted yet only keeps it too.
    pub(super) fn try_retire(
        &mut self,
        state: &P::State,
        order: &O,
        first: (ActorId, u32),
        fp: u64,
        offered: u64,
        (depth, remaining, span): (u32, u32, Span),
    ) -> bool {
        if !self.retire_on || fp == 0 || depth as usize + 1 >= self.config.max_steps {
            return false;
        }
        let (tries, hits, skipped) = &mut self.retire_stats;
        if *tries >= 64 && *hits * RETIRE_HIT_RATE < *tries {
            *skipped += 1;
            if *skipped % RETIRE_PROBE != 0 {
                return false;
            }
        }
        *tries += 1;
        self.cache.prefetch(fp);
        let mut fps = std::mem::take(&mut self.retire_fps);
        let mut choices = std::mem::take(&mut self.retire_choices);
        fps.clear();
        fps.push(fp);
        choices.clear();
        let Search {
            en,
            ids,
            program,
            events,
            cache,
            config,
            ..
        } = self;
        let set = enabled_set(en, ids, span);
        let (exact, symmetry) = (config.exact_bound, config.symmetry);
        let mut sound = true;
        if O::TRUSTED && !exact && set.mask.is_some() {
            // A sound order takes what is left in some order, and without
            // `exact_bound` the successors do not depend on it: no walk.
            left_by_set(&set, first, offered, &mut choices);
            debug_assert_eq!(
                sorted(choices.clone()),
                sorted(walked(order, first, remaining, &set)),
                "mcheck bug: a trusted order's choices left"
            );
            sound = choices.len() == remaining as usize;
            let rest = if sound { &choices[1..] } else { &[] };
            for &c in rest {
                let f = successor_fp(*program, events, state, c, None::<&O>, symmetry);
                if f == 0 {
                    sound = false;
                    break;
                }
                cache.prefetch(f);
                fps.push(f);
            }
        } else {
            let mut order = order.clone();
            let (mut cur, mut offered) = (first, offered);
            for k in 0..remaining {
                choices.push(cur);
                if cur.1 == 0 {
                    match offer(offered, cur.0, &set, &order) {
                        Ok(o) => offered = o,
                        Err(_) => {
                            sound = false;
                            break;
                        }
                    }
                }
                if k + 1 == remaining {
                    break;
                }
                order.advance_from(cur, &set);
                cur = order.current(&set);
                let f = successor_fp(*program, events, state, cur, exact.then_some(&order), symmetry);
                if f == 0 {
                    sound = false;
                    break;
                }
                cache.prefetch(f);
                fps.push(f);
            }
        }
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
        self.retire_stats.1 += 1;
        // Its deferral now is counted by the caller; it would be in this
        // stratum's frontier, then taken once in each of the next
        // `remaining` strata, and deferred again in all but the last.
        let bound = self.bound as usize;
        let r = remaining as usize;
        if self.retired.len() < bound + r + 1 {
            self.retired.resize(bound + r + 1, Retired::default());
        }
        self.retired[bound].frontier += 1;
        for j in 1..=r {
            let owed = &mut self.retired[bound + j];
            owed.transitions += 1;
            if j < r {
                owed.deferrals += 1;
                owed.frontier += 1;
            }
        }
        true
    }
}

/// The choices a state has left from `first` on (`first` itself first),
/// under a sound order that offered the actors in `offered` (bits of the
/// set's mask) before it: `first`'s actor's alternatives from `first` on,
/// then every alternative of each actor not offered yet.
fn left_by_set(set: &EnabledSet<'_>, (actor, alt): (ActorId, u32), offered: u64, out: &mut Vec<(ActorId, u32)>) {
    let alts = alternatives_of(set.en, set.ids, actor);
    out.extend((alt..alts).map(|j| (actor, j)));
    for e in set.en {
        if e.actor != actor && offered & 1u64.checked_shl(e.actor.0).unwrap_or(0) == 0 {
            out.extend((0..e.alternatives.max(1)).map(|j| (e.actor, j)));
        }
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
