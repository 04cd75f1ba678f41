//! `Config::exact_bound`: with the cache keyed by (program state, explorer
//! state), SES at delay bound d misses no violation that an execution with
//! at most d delays reaches. Checked against an oracle written here, a
//! plain recursive enumeration of every execution with at most 3 delays,
//! with no cache, on 1,000 random acyclic systems with planted violations
//! and four explorers, one system in five also on 2 threads
//! (ARCHITECTURE.md, "Guarantees and the cache key" and "Testing").

use mcheck_checker::explorers::{AnyExplorer, builtin};
use mcheck_checker::search::ses;
use mcheck_checker::testing::{Causal, RandomProgram};
use mcheck_checker::{ActorId, Config, Enabled, Explorer, Program, SearchError};

/// The largest delay bound checked.
const MAX_D: u32 = 3;

/// The explorer of system `seed`: causal (boxed, as a model's own explorer
/// is), rr, rtc or prr, in turn.
fn explorer_for(seed: u64) -> AnyExplorer {
    match seed % 4 {
        0 => AnyExplorer::custom(Causal::default()),
        1 => builtin("rr").expect("rr is built in"),
        2 => builtin("rtc").expect("rtc is built in"),
        _ => builtin("prr").expect("prr is built in"),
    }
}

/// The oracle: the fewest delays of an execution from `state` (the
/// explorer being `explorer`) that violates, if one has at most `budget`
/// delays. Every execution is enumerated: at a state, the composed
/// explorer offers its choices in order (the current actor's alternatives,
/// then a delay to the explorer's next actor), and the k-th choice costs k
/// delays; the successor's explorer is the explorer after `step`, at
/// alternative 0. No cache: the system is acyclic.
fn fewest_delays<E: Explorer>(p: &RandomProgram, state: u32, explorer: &E, budget: u32) -> Option<u32> {
    let mut en: Vec<Enabled> = Vec::new();
    p.enabled(&state, &mut en);
    let ids: Vec<ActorId> = en.iter().map(|e| e.actor).collect();
    let total: u32 = en.iter().map(|e| e.alternatives).sum();
    let mut e = explorer.clone();
    let mut alt = 0;
    let mut best: Option<u32> = None;
    for k in 0..total.min(budget + 1) {
        if k > 0 {
            let actor = e.next(&ids);
            let i = ids.binary_search(&actor).expect("the explorer chose an enabled actor");
            if alt + 1 < en[i].alternatives {
                alt += 1;
            } else {
                alt = 0;
                e.delay(&ids);
            }
        }
        let actor = e.next(&ids);
        let mut s = state;
        let mut events = Vec::new();
        let found = match p.execute(&mut s, actor, alt, &mut events) {
            Err(_) => Some(k),
            Ok(()) => {
                let mut child = e.clone();
                child.step(&events);
                fewest_delays(p, s, &child, budget - k).map(|m| m + k)
            }
        };
        best = match (best, found) {
            (Some(b), Some(f)) => Some(b.min(f)),
            (b, f) => b.or(f),
        };
    }
    best
}

/// SES on `p` with `explorer` at bound `d` on `threads`, keyed as `exact`
/// says.
fn ses_at(
    p: &RandomProgram,
    explorer: &AnyExplorer,
    d: u32,
    exact: bool,
    seed: u64,
    threads: usize,
) -> mcheck_checker::Report {
    let config = Config::default()
        .max_delays(d)
        .exact_bound(exact)
        .seed(seed)
        .threads(threads)
        .max_memory(1 << 30);
    ses(p, explorer.clone(), &config).expect("a sound, keyable explorer")
}

/// On 1,000 random systems, for d = 0..=3: SES with `exact_bound` reports
/// a violation iff the oracle finds one within d delays; its
/// counterexample has exactly the fewest delays and replays. Without
/// `exact_bound` some systems miss one (the test can fail), and whatever
/// either finds is real.
#[test]
fn exact_bound_misses_no_violation_within_the_bound() {
    let (mut reachable, mut missed_without) = (0u32, 0u32);
    let mut by_fewest = [0u32; MAX_D as usize + 1];
    for seed in 0..1_000u64 {
        let p = RandomProgram::generate(seed, true, true);
        let explorer = explorer_for(seed);
        let prepared = mcheck_checker::explorer::prepare(&p, explorer.clone(), seed);
        let fewest = fewest_delays(&p, p.initial(), &prepared, MAX_D);
        if let Some(m) = fewest {
            by_fewest[m as usize] += 1;
        }
        for d in 0..=MAX_D {
            let within = fewest.is_some_and(|m| m <= d);
            reachable += u32::from(within);
            // One system in five also on 2 threads over the shared cache.
            let threads: &[usize] = if seed % 5 == 0 { &[1, 2] } else { &[1] };
            for &t in threads {
                let r = ses_at(&p, &explorer, d, true, seed, t);
                assert_eq!(
                    r.is_violation(),
                    within,
                    "seed {seed}, {} at d = {d} on {t} threads: the oracle's fewest delays are {fewest:?}",
                    explorer.name()
                );
                if within {
                    let schedule = r.schedule.as_ref().expect("a violation has a schedule");
                    assert_eq!(
                        Some(schedule.delays() as u32),
                        fewest,
                        "seed {seed} d {d}: {}",
                        schedule.to_text()
                    );
                    let ex = mcheck_checker::replay(&p, Some(explorer.clone()), schedule, false)
                        .unwrap_or_else(|e| panic!("seed {seed} d {d}: {e}"));
                    assert_eq!(ex.violation.as_ref(), r.violation.as_ref(), "seed {seed} d {d}");
                }
            }
            let plain = ses_at(&p, &explorer, d, false, seed, 1);
            if plain.is_violation() {
                assert!(
                    within,
                    "seed {seed} d {d}: the program-state cache found a violation the oracle did not"
                );
                let schedule = plain.schedule.as_ref().expect("a violation has a schedule");
                assert!(schedule.delays() as u32 <= d, "seed {seed} d {d}");
                let ex = mcheck_checker::replay(&p, Some(explorer.clone()), schedule, false)
                    .unwrap_or_else(|e| panic!("seed {seed} d {d}: {e}"));
                assert_eq!(ex.violation.as_ref(), plain.violation.as_ref(), "seed {seed} d {d}");
            } else {
                missed_without += u32::from(within);
            }
        }
    }
    // Not vacuous: violations at every delay count (pinned: the oracle's
    // figures on these systems), and the plain key misses some (22 pairs).
    assert_eq!(by_fewest, [51, 92, 81, 64], "systems by fewest delays to a violation");
    assert_eq!(
        reachable, 706,
        "(system, bound) pairs with a violation within the bound"
    );
    assert!(missed_without > 0, "the program-state cache missed nothing");
    eprintln!("without exact_bound, {missed_without} of {reachable} violations within the bound were missed");
}

/// An explorer that cannot hash its state: `exact_bound` with it is an
/// input error naming it.
#[derive(Clone, Debug, Default)]
struct Opaque(Causal);

impl Explorer for Opaque {
    fn name(&self) -> &str {
        "opaque"
    }
    fn init(&mut self, actors: &[mcheck_checker::ActorInfo]) {
        self.0.init(actors)
    }
    fn next(&self, enabled: &[ActorId]) -> ActorId {
        self.0.next(enabled)
    }
    fn step(&mut self, events: &[mcheck_checker::Event]) {
        self.0.step(events)
    }
    fn delay(&mut self, enabled: &[ActorId]) {
        self.0.delay(enabled)
    }
}

#[test]
fn exact_bound_needs_a_keyable_explorer() {
    let p = RandomProgram::generate(3, true, false);
    let config = Config::default().exact_bound(true);
    let err = ses(&p, Opaque::default(), &config).expect_err("opaque cannot be keyed");
    let SearchError::Input(message) = &err else {
        panic!("not an input error: {err:?}");
    };
    assert!(
        message.contains("opaque") && message.contains("state_hash"),
        "{message}"
    );
    // Without exact_bound it runs.
    let r = ses(&p, Opaque::default(), &Config::default()).expect("runs");
    assert!(r.is_verified());
}

/// Explorer state hashes: a clone hashes alike, a delay that reorders
/// changes the hash, and PRR's hash includes its generator (two PRRs with
/// the same empty queue and different seeds differ).
#[test]
fn state_hashes_tell_explorer_states_apart() {
    let p = RandomProgram::generate(5, false, false);
    let ids: Vec<ActorId> = (0..p.actors).map(ActorId).collect();
    for seed in 0..4u64 {
        let e = mcheck_checker::explorer::prepare(&p, explorer_for(seed), seed);
        let h = e.state_hash().expect("keyable");
        assert_eq!(e.clone().state_hash(), Some(h), "{}", e.name());
        let mut delayed = e.clone();
        delayed.delay(&ids);
        assert_ne!(delayed.state_hash(), Some(h), "{}", e.name());
    }
    let (a, b) = (
        mcheck_checker::explorers::ProbabilisticRoundRobin::new(1),
        mcheck_checker::explorers::ProbabilisticRoundRobin::new(2),
    );
    assert_eq!(a.order(), b.order());
    assert_ne!(a.state_hash(), b.state_hash());
}
