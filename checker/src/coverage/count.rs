//! Coverage during a search: [`Covered`] watches a run ([`Watch`]) and
//! either counts what the program says each step exercises (at the
//! transitions an exhaustive search tells it of, or at every step a
//! sampling search executes), or ends an execution in a state where a
//! reachability property holds, as a marked violation ([`reached`]).

use super::reach::{reached, reached_property};
use super::report::{CountedOver, Entry};
use crate::program::{ActorId, Program, ProgramExt, Violation};
use crate::program::{Hit, How};
use crate::watch::Watch;
use hashbrown::HashMap;
use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Shards of the counters: threads spread over them so that parallel
/// searches rarely wait on one another.
const SHARDS: usize = 16;

type Map<K, V> = HashMap<K, V, ahash::RandomState>;

/// A map with fixed hash keys (nothing here depends on the run's order,
/// but the project's maps are reproducible).
fn map<K, V>() -> Map<K, V> {
    HashMap::with_hasher(ahash::RandomState::with_seeds(5, 6, 7, 8))
}

/// A hit as a count's key: static names by address (cheap to hash: the
/// same name at two addresses is merged in [`Covered::entries`]), others
/// by value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Static(usize, usize, usize, usize, How),
    Owned(Hit),
}

impl Key {
    fn of(hit: &Hit) -> Key {
        match (&hit.actor, &hit.item) {
            (Cow::Borrowed(a), Cow::Borrowed(i)) => {
                Key::Static(a.as_ptr() as usize, a.len(), i.as_ptr() as usize, i.len(), hit.how)
            }
            _ => Key::Owned(hit.clone()),
        }
    }
}

/// One thread's counts and its scratch list of hits.
struct Tally {
    counts: Map<Key, (Hit, u64)>,
    hits: Vec<Hit>,
}

/// The watch that counts a program's steps, or checks its states for a
/// reachability property.
///
/// Exhaustive searches count **distinct transitions**: each transition
/// the search takes, once ([`Watch::transition`]: the search tells it,
/// whatever executes it again: the look-ahead, retirement's probes), and
/// the monitor states of each state it counts ([`Watch::state`]).
/// Sampling searches count **every step of every execution**
/// ([`Watch::before`]), and the monitor states after each
/// ([`Watch::after`]).
pub struct Covered<'p, P: Program> {
    program: &'p P,
    /// What the counts are over; `None`: nothing is counted.
    over: Option<CountedOver>,
    /// The reachability property sought (its index and name), if any.
    property: Option<(usize, &'static str)>,
    tallies: Vec<Mutex<Tally>>,
}

impl<P: Program> std::fmt::Debug for Covered<'_, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Covered")
            .field("over", &self.over)
            .field("property", &self.property.map(|p| p.1))
            .finish_non_exhaustive()
    }
}

/// A small number per thread, for its counter shard.
fn thread_shard() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SHARD: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
    }
    SHARD.with(|s| *s)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<'p, P: Program> Covered<'p, P> {
    /// Count the steps of `program`, over distinct transitions or over
    /// every step of every execution (`over`).
    pub fn new(program: &'p P, over: CountedOver) -> Self {
        Covered {
            program,
            over: Some(over),
            property: None,
            tallies: (0..SHARDS)
                .map(|_| {
                    Mutex::new(Tally {
                        counts: map(),
                        hits: Vec::new(),
                    })
                })
                .collect(),
        }
    }

    /// `program`, counting nothing, whose executions end with the violation
    /// [`reached`] in a state where its reachability property number
    /// `property` holds: a search of it is a search for the property.
    /// `None` if the program has no such property.
    pub fn reaching(program: &'p P, property: usize) -> Option<Self> {
        let name = *program.sometimes().get(property)?;
        Some(Covered {
            program,
            over: None,
            property: Some((property, name)),
            tallies: Vec::new(),
        })
    }

    /// [`Covered::reaching`] the property whose violation
    /// `schedule_expects`, if it is one ([`reached_property`]): the
    /// program a property's schedule replays on.
    pub fn reaching_expected(program: &'p P, schedule_expects: Option<&Violation>) -> Option<Self> {
        let name = reached_property(schedule_expects?)?;
        let property = program.sometimes().iter().position(|n| *n == name)?;
        Covered::reaching(program, property)
    }

    /// `Err` ([`reached`]) when `s`, just reached by a step with `result`,
    /// satisfies the property sought. Inlined into the search's step; the
    /// property's test is not, so that a search without one pays a branch.
    #[inline(always)]
    fn check(&self, s: &P::State, result: Result<(), Violation>) -> Result<(), Violation> {
        match self.property {
            Some(_) if result.is_ok() => self.check_property(s),
            _ => result,
        }
    }

    /// [`Covered::check`] of a state reached without a violation.
    #[inline(never)]
    fn check_property(&self, s: &P::State) -> Result<(), Violation> {
        match self.property {
            Some((i, name)) if self.program.holds(s, i) => Err(reached(name)),
            _ => Ok(()),
        }
    }

    /// Counts what `name` pushes onto a list of hits, on this thread's
    /// counters.
    #[inline(never)]
    fn count(&self, name: impl FnOnce(&mut Vec<Hit>)) {
        let mut tally = lock(&self.tallies[thread_shard()]);
        let mut hits = std::mem::take(&mut tally.hits);
        name(&mut hits);
        for hit in hits.drain(..) {
            let key = Key::of(&hit);
            match tally.counts.get_mut(&key) {
                Some((_, n)) => *n += 1,
                None => {
                    tally.counts.insert(key, (hit, 1));
                }
            }
        }
        tally.hits = hits;
    }

    /// The counts: every entry hit, and every declared one
    /// ([`crate::Covers::coverage_space`]) with its count, zero included; sorted
    /// by actor, item and how.
    pub fn entries(&self) -> Vec<Entry> {
        let mut all: Map<Hit, u64> = map();
        for t in &self.tallies {
            for (hit, n) in lock(t).counts.values() {
                *all.entry(hit.clone()).or_insert(0) += n;
            }
        }
        let declared = self.program.coverage_space();
        for hit in &declared {
            all.entry(hit.clone()).or_insert(0);
        }
        let mut entries: Vec<Entry> = all
            .into_iter()
            .map(|(hit, count)| Entry {
                declared: declared.contains(&hit),
                actor: hit.actor.into_owned(),
                item: hit.item.into_owned(),
                how: hit.how,
                count,
            })
            .collect();
        entries.sort_by(|a, b| (&a.actor, &a.item, a.how).cmp(&(&b.actor, &b.item, b.how)));
        entries
    }

    /// What the counts are over (`None`: nothing is counted).
    pub fn over(&self) -> Option<CountedOver> {
        self.over
    }

    /// The name of the reachability property sought, if any.
    pub fn property(&self) -> Option<&'static str> {
        self.property.map(|(_, name)| name)
    }

    /// Whether the search tells the transitions to count.
    #[inline(always)]
    fn told(&self) -> bool {
        self.over == Some(CountedOver::DistinctTransitions)
    }

    /// Whether `execute` counts every step.
    #[inline(always)]
    fn every_step(&self) -> bool {
        self.over == Some(CountedOver::Executions)
    }
}

impl<P: Program> Watch<P::State> for Covered<'_, P> {
    #[inline]
    fn transition(&self, s: &P::State, actor: ActorId, alt: u32) {
        if self.told() {
            self.count(|hits| self.program.cover_step(s, actor, alt, hits));
        }
    }

    #[inline]
    fn state(&self, s: &P::State) {
        if self.told() {
            self.count(|hits| self.program.cover_state(s, hits));
        }
    }

    #[inline]
    fn before(&self, s: &P::State, actor: ActorId, alt: u32) {
        if self.every_step() {
            self.count(|hits| self.program.cover_step(s, actor, alt, hits));
        }
    }

    #[inline]
    fn after(&self, s: &P::State, result: Result<(), Violation>) -> Result<(), Violation> {
        if self.every_step() && result.is_ok() {
            self.count(|hits| self.program.cover_state(s, hits));
        }
        self.check(s, result)
    }
}
