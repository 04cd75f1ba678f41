//! Delaying explorers (paper §2): a deterministic scheduler that names one
//! actor to run, and a `delay` operation that deviates from it.
//!
//! An explorer D = (D, next, step, delay, d0) orders the executions of a
//! program: the execution with zero delays is the one the explorer would
//! run by itself, and each delay moves the search to the explorer's next
//! preference. Strategies bound the number of delays, not the number of
//! steps, so a good explorer finds bugs with few delays.

use crate::program::{ActorId, ActorInfo, Event, Program};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fmt::Debug;

/// A delaying explorer.
///
/// # Soundness contract
///
/// At any explorer state and for any non-empty set `enabled` of k actors
/// (sorted by id), `next(enabled)` after 0, 1, ..., k-1 consecutive calls
/// of `delay(enabled)` returns each enabled actor exactly once, and further
/// delays cycle through them again in the same order. This must hold after
/// any sequence of `step` calls, not only at the initial state. It is what
/// makes stratified search complete: with |choices(s)| - 1 delays every
/// choice of a state is reached. [`check_contract`] tests it; every search
/// also checks it cheaply at run time and stops with an error naming the
/// explorer, never with a false `verified`.
///
/// # Determinism
///
/// An explorer is a value: `next` is a pure function of the explorer's
/// state and its argument, and `step` and `delay` change only that state.
/// Randomized explorers carry their own seeded generator (see
/// [`Explorer::seed`]); never a global, a thread-local or an `Arc`, so that
/// a clone taken anywhere in the search continues exactly as the original
/// would.
///
/// # Cost
///
/// Explorers are cloned once per explored state by exhaustive search and
/// stored inline in every frontier entry: keep them small (a short inline
/// list of actor ids).
///
/// # Example
///
/// An explorer that runs the newest actor (the highest id) first; each
/// delay moves to the next older one, and a step starts over.
///
/// ```
/// use mcheck_checker::explorer::check_contract;
/// use mcheck_checker::testing::RandomProgram;
/// use mcheck_checker::{run, ActorId, ActorInfo, Config, Event, Explorer, Strategy};
///
/// #[derive(Clone, Debug, Default)]
/// struct NewestFirst { delays: usize }
///
/// impl Explorer for NewestFirst {
///     fn name(&self) -> &str { "newest-first" }
///     fn is_randomized(&self) -> bool { false }
///     fn init(&mut self, _actors: &[ActorInfo]) { self.delays = 0 }
///     fn next(&self, enabled: &[ActorId]) -> ActorId {
///         enabled[enabled.len() - 1 - self.delays % enabled.len()]
///     }
///     fn step(&mut self, _events: &[Event]) { self.delays = 0 }
///     fn delay(&mut self, _enabled: &[ActorId]) { self.delays += 1 }
/// }
///
/// check_contract(|_| NewestFirst::default(), 0, 100).unwrap();
/// let program = RandomProgram::generate(3, false, true);
/// let report = run(&program, NewestFirst::default(), &Strategy::Ses, &Config::default()).unwrap();
/// assert_eq!(report.is_violation(), program.oracle().violation_reachable);
/// ```
pub trait Explorer: Clone + Send + Sync + Debug {
    /// The explorer's name as the CLI knows it (`"rr"`, `"rtc"`, ...).
    fn name(&self) -> &str;

    /// Seed the explorer's own generator, if it has one. Called before
    /// [`Explorer::init`]; deterministic explorers ignore it.
    fn seed(&mut self, _seed: u64) {}

    /// Whether the explorer's choices depend on its seed. A deterministic
    /// explorer (`false`) makes every zero-delay execution the same, so
    /// stratified sampling runs bound 0 once instead of `c1` times. The
    /// default, `true`, is always safe.
    fn is_randomized(&self) -> bool {
        true
    }

    /// Learn the actors of the initial state (d0 depends on them).
    fn init(&mut self, actors: &[ActorInfo]);

    /// The actor to run now: one of `enabled` (non-empty, sorted by id).
    fn next(&self, enabled: &[ActorId]) -> ActorId;

    /// Observe what the last transition did.
    fn step(&mut self, events: &[Event]);

    /// Deviate from the default: after this, `next(enabled)` returns another
    /// actor (the next one in the explorer's order of preference).
    fn delay(&mut self, enabled: &[ActorId]);

    /// [`next`](Self::next), given also `mask`, the enabled set as
    /// [`enabled_mask`] gives it, which the search computes once per
    /// state: an explorer that reads the enabled set as a set (the built-in
    /// ones) need not rebuild it on every call. It must return what
    /// `next(enabled)` returns ([`check_contract`] compares them); the
    /// default calls `next`.
    #[inline]
    fn next_masked(&self, enabled: &[ActorId], mask: Option<u64>) -> ActorId {
        let _ = mask;
        self.next(enabled)
    }

    /// [`delay`](Self::delay), given also `mask` as
    /// [`next_masked`](Self::next_masked) is. It must do what
    /// `delay(enabled)` does; the default calls `delay`.
    #[inline]
    fn delay_masked(&mut self, enabled: &[ActorId], mask: Option<u64>) {
        let _ = mask;
        self.delay(enabled)
    }

    /// Whether the explorer is sound by construction: at every state its
    /// `next` and `delay` offer each enabled actor once before any twice
    /// (the built-in explorers, whose contract tests check it). In release
    /// builds the exhaustive search then skips the run-time soundness
    /// check of its moves and retires a deferred state by the choices it
    /// has left without walking the explorer through them (ARCHITECTURE.md,
    /// "Retirement"); builds with debug assertions, the tests
    /// among them, still check and walk. A custom explorer leaves it
    /// `false` (the default): its mistakes are then reported as
    /// `SearchError::UnsoundExplorer`. A method rather than a constant,
    /// so that [`AnyExplorer`](crate::AnyExplorer) answers for the
    /// explorer it holds and the search runs as fast on it as on the
    /// explorer's own type.
    #[inline]
    fn is_trusted(&self) -> bool {
        false
    }

    /// A hash of the explorer's whole state (its generator included), with
    /// the project's fixed hasher ([`crate::cache::fingerprint`]), so that
    /// values are reproducible: two explorers with equal states must return
    /// equal hashes. With `Config::exact_bound` the exhaustive search keys
    /// its cache by (program state, explorer state) through this hash
    /// (ARCHITECTURE.md, "Guarantees and the cache key"). `None` (the default): the explorer cannot be
    /// keyed, and `exact_bound` with it is an input error naming it. An
    /// explorer returns `None` for all of its states or for none.
    fn state_hash(&self) -> Option<u64> {
        None
    }
}

/// The enabled actors `enabled` (sorted by id) as a bitmask, bit i for
/// actor i, or `None` if an id is 64 or more (only the last, the largest,
/// needs checking).
#[inline]
pub fn enabled_mask(enabled: &[ActorId]) -> Option<u64> {
    if enabled.last().is_some_and(|a| a.0 >= 64) {
        return None;
    }
    Some(enabled.iter().fold(0u64, |mask, a| mask | 1 << a.0))
}

/// `explorer` seeded with `seed` and initialised with the actors of
/// `program`'s initial state: ready to drive an execution from it.
pub fn prepare<P: Program, E: Explorer>(program: &P, mut explorer: E, seed: u64) -> E {
    explorer.seed(seed);
    explorer.init(&program.actors(&program.initial()));
    explorer
}

/// Check the soundness contract of an explorer on random inputs.
///
/// `make(seed)` builds a fresh explorer (already seeded if it is
/// randomized). For each of `rounds` rounds: random initial actors of a
/// few kinds, then a random walk of up to 60 steps in which each step
/// (1) picks a random non-empty enabled set among the live actors and checks
/// that `next` after 0..k-1 delays offers each enabled actor once, and that
/// k more delays offer them again in the same order; (2) takes a random
/// number of delays; (3) feeds a random batch of events (sends between live
/// actors, creations, halts, custom callbacks) to `step`. Throughout, a
/// copy driven by [`Explorer::next_masked`] and [`Explorer::delay_masked`]
/// must answer as `next` and `delay` do.
///
/// Returns the first breach, described, or `Ok(())`.
///
/// ```
/// use mcheck_checker::explorer::check_contract;
/// use mcheck_checker::explorers::ProbabilisticRoundRobin;
///
/// check_contract(ProbabilisticRoundRobin::new, 0, 20).unwrap();
/// ```
pub fn check_contract<E: Explorer>(make: impl Fn(u64) -> E, seed: u64, rounds: usize) -> Result<(), String> {
    const KINDS: [&str; 4] = ["server", "client", "master", "timer"];
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    for round in 0..rounds {
        let mut e = make(rng.random());
        let n0 = rng.random_range(1..=6u32);
        let mut live: Vec<ActorId> = (0..n0).map(ActorId).collect();
        let mut next_id = n0;
        let actors: Vec<ActorInfo> = live
            .iter()
            .map(|&id| ActorInfo {
                id,
                kind: KINDS[rng.random_range(0..KINDS.len())],
                name: format!("a{}", id.0),
            })
            .collect();
        e.init(&actors);
        for step in 0..rng.random_range(1..60usize) {
            if live.is_empty() {
                break;
            }
            // (1) a random non-empty enabled set, sorted by id.
            let mut enabled: Vec<ActorId> = live.iter().copied().filter(|_| rng.random_bool(0.6)).collect();
            if enabled.is_empty() {
                enabled.push(live[rng.random_range(0..live.len())]);
            }
            let k = enabled.len();
            let mut probe = e.clone();
            let mut masked = e.clone();
            let mask = enabled_mask(&enabled);
            let mut order = Vec::with_capacity(k);
            for j in 0..2 * k {
                let a = probe.next(&enabled);
                let b = masked.next_masked(&enabled, mask);
                if a != b {
                    return Err(format!(
                        "round {round}, step {step}: next_masked returned {b} where next returned {a} (enabled {enabled:?}, after {j} delays)"
                    ));
                }
                if !enabled.contains(&a) {
                    return Err(format!(
                        "round {round}, step {step}: next returned {a}, which is not enabled ({enabled:?})"
                    ));
                }
                if j < k {
                    if order.contains(&a) {
                        return Err(format!(
                            "round {round}, step {step}: {a} offered twice within {k} choices ({order:?} then {a}) for enabled {enabled:?}"
                        ));
                    }
                    order.push(a);
                } else if order[j - k] != a {
                    return Err(format!(
                        "round {round}, step {step}: after {k} delays the order changed: first {order:?}, then {a} at position {}",
                        j - k
                    ));
                }
                probe.delay(&enabled);
                masked.delay_masked(&enabled, mask);
            }
            // (2) a random number of delays, as the search takes them.
            for _ in 0..rng.random_range(0..k) {
                e.delay(&enabled);
            }
            let runner = e.next(&enabled);
            // (3) random events.
            let mut events = Vec::new();
            for _ in 0..rng.random_range(0..4) {
                match rng.random_range(0..10) {
                    0..=4 => {
                        let to = live[rng.random_range(0..live.len())];
                        events.push(Event::Sent { from: runner, to });
                    }
                    5 | 6 => {
                        let id = ActorId(next_id);
                        next_id += 1;
                        live.push(id);
                        events.push(Event::Created(ActorInfo {
                            id,
                            kind: KINDS[rng.random_range(0..KINDS.len())],
                            name: format!("a{}", id.0),
                        }));
                    }
                    7 if live.len() > 1 => {
                        let i = rng.random_range(0..live.len());
                        let id = live.remove(i);
                        events.push(Event::Halted(id));
                    }
                    _ => events.push(Event::Custom {
                        actor: runner,
                        tag: "custom",
                        value: rng.random_range(0..3),
                    }),
                }
            }
            e.step(&events);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mask_has_a_bit_per_enabled_id_below_64() {
        let ids = |v: &[u32]| v.iter().map(|&i| ActorId(i)).collect::<Vec<_>>();
        assert_eq!(enabled_mask(&ids(&[0, 5, 63])), Some(1 | 1 << 5 | 1 << 63));
        assert_eq!(enabled_mask(&ids(&[])), Some(0));
        assert_eq!(enabled_mask(&ids(&[3, 64])), None);
        assert_eq!(enabled_mask(&ids(&[64, 65])), None);
    }
}
