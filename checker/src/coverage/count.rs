//! Counting coverage during a search: [`Counted`] wraps a program and
//! counts, at every step the search executes, what the program says the
//! step exercises (ARCHITECTURE.md §6, "Coverage and reachability").

use super::forward::forward_program;
use super::key::Hit;
use super::report::{CountedOver, Entry};
use crate::cache::fingerprint;
use crate::program::{ActorId, Event, Program, StepTrace, Violation};
use hashbrown::{HashMap, HashSet};
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

/// One thread's counts and its scratch list of hits.
struct Tally {
    counts: Map<Hit, u64>,
    hits: Vec<Hit>,
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
    seen: Vec<Mutex<HashSet<u64, ahash::RandomState>>>,
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
            seen: (0..SHARDS)
                .map(|_| Mutex::new(HashSet::with_hasher(ahash::RandomState::with_seeds(1, 3, 5, 7))))
                .collect(),
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

    /// True when the step is to be counted: always for sampling, the
    /// first time for exhaustive searches.
    fn first_time(&self, s: &P::State, actor: ActorId, alt: u32) -> bool {
        if self.over == CountedOver::Executions {
            return true;
        }
        let key = fingerprint(&(fingerprint(s), actor.0, alt));
        lock(&self.seen[(key >> 59) as usize % SHARDS]).insert(key)
    }

    /// The counts: every entry hit, and every declared one
    /// ([`Program::coverage_space`]) with its count, zero included; sorted
    /// by actor, item and how.
    pub fn entries(&self) -> Vec<Entry> {
        let mut all: Map<Hit, u64> = map();
        for t in &self.tallies {
            for (hit, n) in &lock(t).counts {
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
    type State = P::State;

    forward_program!();

    fn execute(&self, s: &mut P::State, actor: ActorId, alt: u32, events: &mut Vec<Event>) -> Result<(), Violation> {
        if !self.first_time(s, actor, alt) {
            return self.program.execute(s, actor, alt, events);
        }
        let mut tally = lock(&self.tallies[thread_shard()]);
        let mut hits = std::mem::take(&mut tally.hits);
        self.program.cover_step(s, actor, alt, &mut hits);
        let result = self.program.execute(s, actor, alt, events);
        if result.is_ok() {
            self.program.cover_state(s, &mut hits);
        }
        for hit in hits.drain(..) {
            match tally.counts.get_mut(&hit) {
                Some(n) => *n += 1,
                None => {
                    tally.counts.insert(hit, 1);
                }
            }
        }
        tally.hits = hits;
        result
    }

    fn execute_traced(
        &self,
        s: &mut P::State,
        actor: ActorId,
        alt: u32,
        events: &mut Vec<Event>,
        trace: &mut StepTrace,
    ) -> Result<(), Violation> {
        self.program.execute_traced(s, actor, alt, events, trace)
    }
}
