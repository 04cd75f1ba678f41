//! Counting coverage during a search: [`Counted`] wraps a program and
//! counts, at every step the search executes, what the program says the
//! step exercises (ARCHITECTURE.md §6, "Coverage and reachability").

use super::key::{Hit, How};
use super::keyed::Keyed;
use super::report::{CountedOver, Entry};
use crate::cache::{fingerprint, FingerprintSet, Insert};
use crate::program::{ActorId, ActorInfo, Enabled, Event, Hot, Program, StateView, StepTrace, Violation};
use hashbrown::HashMap;
use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Shards of the counters: threads (and transition keys) spread over them
/// so that parallel searches rarely wait on one another.
const SHARDS: usize = 16;

type Map<K, V> = HashMap<K, V, ahash::RandomState>;

/// A map with fixed hash keys (nothing here depends on the run's order,
/// but the project's maps are reproducible).
fn map<K, V>() -> Map<K, V> {
    HashMap::with_hasher(ahash::RandomState::with_seeds(5, 6, 7, 8))
}

/// How many transition keys each tally remembers (see [`Tally`]).
const RECENT: usize = 8;

/// A hit as a count's key: static names by address (cheap to hash: the
/// same name at two addresses is merged in [`Counted::entries`]), others
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

/// One thread's counts, its scratch list of hits, and the transition keys
/// it met last (a search executes a transition twice in a row, its
/// look-ahead and its step: the second needs no look-up in the shared
/// set).
struct Tally {
    counts: Map<Key, (Hit, u64)>,
    hits: Vec<Hit>,
    recent: [u64; RECENT],
    next: usize,
}

impl Tally {
    /// Whether transition `key` was met by this tally lately, and
    /// remember it.
    fn met(&mut self, key: u64) -> bool {
        if self.recent.contains(&key) {
            return true;
        }
        self.recent[self.next] = key;
        self.next = (self.next + 1) % RECENT;
        false
    }
}

/// A program whose executed steps are counted. A search runs it exactly
/// as the program; replay (`execute_traced`) is not counted.
///
/// Exhaustive searches count **distinct transitions**: a step (state,
/// actor, alternative) is counted the first time it is executed, whatever
/// executes it again (the look-ahead, a later stratum, another thread).
/// Sampling searches count **every step of every execution**.
pub struct Counted<'p, P: Program> {
    program: &'p P,
    over: CountedOver,
    /// The keys of the transitions counted, sharded by their low bits
    /// (the table places a key by its high bits).
    seen: Vec<Mutex<FingerprintSet>>,
    tallies: Vec<Mutex<Tally>>,
}

impl<P: Program> std::fmt::Debug for Counted<'_, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counted")
            .field("over", &self.over)
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

impl<'p, P: Program> Counted<'p, P> {
    /// Count the steps of `program`, over distinct transitions or over
    /// every step of every execution (`over`).
    pub fn new(program: &'p P, over: CountedOver) -> Self {
        Counted {
            program,
            over,
            seen: (0..SHARDS).map(|_| Mutex::new(FingerprintSet::new(None))).collect(),
            tallies: (0..SHARDS)
                .map(|_| {
                    Mutex::new(Tally {
                        counts: map(),
                        hits: Vec::new(),
                        recent: [0; RECENT],
                        next: 0,
                    })
                })
                .collect(),
        }
    }

    /// The shard of the set of transitions counted that holds `key`.
    fn seen(&self, key: u64) -> &Mutex<FingerprintSet> {
        &self.seen[key as usize % SHARDS]
    }

    /// The counts: every entry hit, and every declared one
    /// ([`Program::coverage_space`]) with its count, zero included; sorted
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

    /// What the counts are over.
    pub fn over(&self) -> CountedOver {
        self.over
    }
}

impl<P: Program> Program for Counted<'_, P> {
    type State = Keyed<P::State>;

    fn initial(&self) -> Self::State {
        Keyed::new(self.program.initial())
    }

    fn actors(&self, s: &Self::State) -> Vec<ActorInfo> {
        self.program.actors(&s.inner)
    }

    fn enabled(&self, s: &Self::State, out: &mut Vec<Enabled>) {
        self.program.enabled(&s.inner, out)
    }

    fn execute(&self, s: &mut Self::State, actor: ActorId, alt: u32, events: &mut Vec<Event>) -> Result<(), Violation> {
        let mut tally = lock(&self.tallies[thread_shard()]);
        // The transition: its source state (whose fingerprint the search
        // computed already, `Keyed`), actor and alternative.
        let key = match self.over {
            CountedOver::DistinctTransitions => {
                let key = fingerprint(&(s.fingerprint(), actor.0, alt));
                if tally.met(key) {
                    drop(tally);
                    return s.step(|inner| self.program.execute(inner, actor, alt, events));
                }
                // Its slot is fetched while the step runs; the look-up is
                // made after it (a miss each, in a set of every transition).
                lock(self.seen(key)).prefetch(key);
                Some(key)
            }
            CountedOver::Executions => None,
        };
        let mut hits = std::mem::take(&mut tally.hits);
        self.program.cover_step(&s.inner, actor, alt, &mut hits);
        let result = s.step(|inner| self.program.execute(inner, actor, alt, events));
        let first = key.is_none_or(|key| lock(self.seen(key)).insert(key) == Insert::New);
        if first {
            if result.is_ok() {
                self.program.cover_state(&s.inner, &mut hits);
            }
            for hit in hits.iter() {
                match tally.counts.get_mut(&Key::of(hit)) {
                    Some((_, n)) => *n += 1,
                    None => {
                        tally.counts.insert(Key::of(hit), (hit.clone(), 1));
                    }
                }
            }
        }
        hits.clear();
        tally.hits = hits;
        result
    }

    fn execute_traced(
        &self,
        s: &mut Self::State,
        actor: ActorId,
        alt: u32,
        events: &mut Vec<Event>,
        trace: &mut StepTrace,
    ) -> Result<(), Violation> {
        s.step(|inner| self.program.execute_traced(inner, actor, alt, events, trace))
    }

    fn deadlock(&self, s: &Self::State) -> Option<Violation> {
        self.program.deadlock(&s.inner)
    }

    fn actor_name(&self, s: &Self::State, actor: ActorId) -> String {
        self.program.actor_name(&s.inner, actor)
    }

    fn view(&self, s: &Self::State) -> Option<StateView> {
        self.program.view(&s.inner)
    }

    fn cover_step(&self, s: &Self::State, actor: ActorId, alt: u32, out: &mut Vec<Hit>) {
        self.program.cover_step(&s.inner, actor, alt, out)
    }

    fn cover_state(&self, s: &Self::State, out: &mut Vec<Hit>) {
        self.program.cover_state(&s.inner, out)
    }

    fn coverage_space(&self) -> Vec<Hit> {
        self.program.coverage_space()
    }

    fn sometimes(&self) -> Vec<&'static str> {
        self.program.sometimes()
    }

    fn holds(&self, s: &Self::State, property: usize) -> bool {
        self.program.holds(&s.inner, property)
    }

    fn hot(&self, s: &Self::State) -> Option<Hot> {
        self.program.hot(&s.inner)
    }

    fn has_liveness(&self) -> bool {
        self.program.has_liveness()
    }

    fn canonical_fingerprint(&self, s: &Self::State) -> Option<u64> {
        self.program.canonical_fingerprint(&s.inner)
    }

    fn check_symmetry(&self, s: &Self::State, seed: u64) -> Result<(), crate::orbits::SymmetryMismatch> {
        self.program.check_symmetry(&s.inner, seed)
    }

    fn symmetry_groups(&self) -> Vec<String> {
        self.program.symmetry_groups()
    }
}
