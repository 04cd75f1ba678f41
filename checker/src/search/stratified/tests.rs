//! The search's shortcuts change nothing a user sees: retiring entries
//! (by walking the explorer, or for a trusted one by the enabled set) and
//! the fast path of resumed entries, each compared with the search without
//! it on random systems, with the cache keyed by the program state and by
//! (program state, explorer state) (`exact_bound`).

use super::*;
use crate::explorer::Explorer;
use crate::program::{ActorId, ActorInfo, Event};
use crate::search::order::Composed;
use crate::testing::{Causal, RandomProgram};

/// [`Causal`] (sound: it passes the contract check), trusted: a
/// retirement check takes the choices a state has left from its enabled
/// set rather than walking the explorer (`retire.rs`).
#[derive(Clone, Debug, Default)]
struct TrustedCausal(Causal);

impl Explorer for TrustedCausal {
    fn is_trusted(&self) -> bool {
        true
    }
    fn name(&self) -> &str {
        self.0.name()
    }
    fn init(&mut self, actors: &[ActorInfo]) {
        self.0.init(actors)
    }
    fn next(&self, enabled: &[ActorId]) -> ActorId {
        self.0.next(enabled)
    }
    fn step(&mut self, events: &[Event]) {
        self.0.step(events)
    }
    fn delay(&mut self, enabled: &[ActorId]) {
        self.0.delay(enabled)
    }
    fn state_hash(&self) -> Option<u64> {
        self.0.state_hash()
    }
}

/// What the search found with explorer `E`, with its shortcuts set as
/// given, how many entries retired, how many of them by a check prepared
/// ahead, how many deferrals took a fingerprint from a prepared check
/// that failed, and how many strata such entries passed through.
fn search<E: Explorer + Default>(
    program: &RandomProgram,
    retire: bool,
    fast_resume: bool,
    exact_bound: bool,
) -> (SearchResult, (u64, u64, u64, u64)) {
    let mut shortcuts = Shortcuts::ALL;
    shortcuts.retire = retire;
    shortcuts.fast_resume = fast_resume;
    let config = Config::default().exact_bound(exact_bound).shortcuts(shortcuts);
    let mut explorer = E::default();
    explorer.init(&program.actors(&program.initial()));
    let cache = crate::cache::AnyCache::Local(FingerprintSet::new(cache_budget(&config)));
    let mut s = Search::new(
        crate::watch::Watching::<_, false>::new(crate::watch::Watched::bare(program)),
        &config,
        cache,
        Report::new("ses", Some("causal"), 0, 1),
    );
    let stop = s
        .explore(Composed::new(explorer), |s, work| s.run_work(work))
        .expect("a sound explorer");
    let retired = (s.retirements, s.retired_ahead, s.checked_fps, s.passed);
    (s.finish(stop), retired)
}

type Counts = Vec<(u32, u64, u64, u64, u64)>;

fn counts(r: &Report) -> Counts {
    r.strata
        .iter()
        .map(|s| (s.bound, s.new_states, s.transitions, s.deferrals, s.frontier))
        .collect()
}

/// Asserts that `b` (a search with a shortcut) agrees with `a` (without):
/// every stratum's counts, the totals, the outcome and the counterexample;
/// where a violation stopped them, the last stratum counts only the work
/// done, which a shortcut may make smaller.
fn assert_same(a: &SearchResult, b: &SearchResult, seed: u64) {
    let (ra, rb) = (&a.report, &b.report);
    let (ca, cb) = (counts(ra), counts(rb));
    assert_eq!(ca.len(), cb.len(), "seed {seed}");
    assert_eq!((ra.states, &ra.outcome), (rb.states, &rb.outcome), "seed {seed}");
    if a.violation.is_none() {
        assert_eq!(ca, cb, "seed {seed}");
        assert_eq!(
            (ra.transitions, ra.deferrals, ra.peak_frontier),
            (rb.transitions, rb.deferrals, rb.peak_frontier),
            "seed {seed}"
        );
    } else {
        let last = ca.len() - 1;
        assert_eq!(ca[..last], cb[..last], "seed {seed}");
        let ((_, na, ta, da, _), (_, nb, tb, db, _)) = (ca[last], cb[last]);
        assert!(
            na == nb && tb <= ta && db <= da,
            "seed {seed}: {:?} {:?}",
            ca[last],
            cb[last]
        );
    }
    assert_eq!(
        a.violation.as_ref().map(|v| (&v.found, &v.advances)),
        b.violation.as_ref().map(|v| (&v.found, &v.advances)),
        "seed {seed}"
    );
}

/// Retiring entries changes nothing a user sees: every stratum's counts,
/// the totals, the outcome and the counterexample are those of the search
/// that keeps every entry, whether the check walks the explorer or (the
/// same explorer trusted, without `exact_bound`) reads the enabled set.
#[test]
fn retiring_entries_keeps_every_count() {
    let (mut systems_with_retirements, mut retirements) = (0, 0);
    for exact in [false, true] {
        let (mut systems, mut count, mut ahead, mut reused, mut passed) = (0, 0, 0, 0, 0);
        for seed in 0..400u64 {
            let program = RandomProgram::generate(seed, false, seed % 2 == 0);
            let (kept, _) = search::<Causal>(&program, false, true, exact);
            let (retiring, retired) = search::<Causal>(&program, true, true, exact);
            assert_same(&kept, &retiring, seed);
            let (trusted, by_set) = search::<TrustedCausal>(&program, true, true, exact);
            assert_same(&kept, &trusted, seed);
            // A walked order's entries retire at their turn, a trusted
            // one's mostly by checks prepared ahead (never with
            // `exact_bound`); only a prepared check's fingerprints are
            // reused, and only an entry whose prepared check failed passes
            // strata through. Where none did, the same entries retire.
            assert_eq!((retired.1, retired.2, retired.3), (0, 0, 0), "seed {seed}");
            if by_set.3 == 0 {
                assert_eq!(retired.0, by_set.0, "seed {seed}");
            }
            systems += u64::from(retired.0 > 0);
            count += retired.0;
            ahead += by_set.1;
            reused += by_set.2;
            passed += by_set.3;
        }
        // Not vacuous with either key.
        assert!(
            systems > 100 && count > 2_000,
            "exact {exact}: {systems} systems, {count} retirements"
        );
        assert!(
            if exact { ahead == 0 } else { ahead * 4 > count * 3 },
            "exact {exact}: {ahead} of {count} retirements prepared ahead"
        );
        // Not vacuous: entries whose prepared check failed were kept, with
        // their check's enabled set and next fingerprint.
        assert!(
            if exact { reused == 0 } else { reused > 5_000 },
            "exact {exact}: {reused} fingerprints reused"
        );
        // Not vacuous: kept entries passed strata through.
        assert!(
            if exact { passed == 0 } else { passed > 1_000 },
            "exact {exact}: {passed} strata passed through"
        );
        systems_with_retirements += systems;
        retirements += count;
    }
    // Not vacuous: most systems retire entries.
    assert!(
        systems_with_retirements > 200,
        "{systems_with_retirements} systems retired entries"
    );
    assert!(retirements > 5_000, "{retirements} retirements");
}

/// The fast path of a resumed entry is the general path without a stack
/// frame: with retirement off (which only the fast path does), the two
/// agree to the last count, violation and path on every system.
#[test]
fn fast_resume_matches_the_general_path() {
    let mut deferred = 0;
    for (seed, exact) in (0..400u64).flat_map(|s| [(s, false), (s, true)]) {
        let program = RandomProgram::generate(seed, seed % 3 == 0, seed % 2 == 0);
        let (general, _) = search::<Causal>(&program, false, false, exact);
        let (fast, _) = search::<Causal>(&program, false, true, exact);
        assert_eq!(counts(&general.report), counts(&fast.report), "seed {seed}");
        assert_eq!(
            (general.report.transitions, general.report.deferrals),
            (fast.report.transitions, fast.report.deferrals),
            "seed {seed}"
        );
        assert_same(&general, &fast, seed);
        deferred += general.report.deferrals;
    }
    // Not vacuous: entries were resumed (every deferral is).
    assert!(deferred > 10_000, "{deferred} deferrals");
}
