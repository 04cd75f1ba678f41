//! The plain search's own tests: strata worked by hand and a violation's
//! path.

use super::*;
use crate::report::Outcome;
use crate::search::order::Natural;
use crate::testing::RandomProgram;

/// Two actors, A (0) and B (1), that each take one step: states 0
/// (neither ran), 1 (A ran), 2 (B ran), 3 (both).
fn diamond() -> RandomProgram {
    RandomProgram {
        states: 4,
        actors: 2,
        succ: vec![
            vec![vec![1], vec![2]],
            vec![vec![], vec![3]],
            vec![vec![3], vec![]],
            vec![vec![], vec![]],
        ],
        bad: FixedHashSet::with_hasher(FIXED_HASHER),
        seen: None,
    }
}

/// (bound, new states, transitions, deferrals, frontier) per stratum.
fn strata(r: &Report) -> Vec<(u32, u64, u64, u64, u64)> {
    let s = r.strata.iter();
    s.map(|s| (s.bound, s.new_states, s.transitions, s.deferrals, s.frontier))
        .collect()
}

/// Worked by hand. Every move costing one: bound 0 takes A at 0
/// (deferring 0 at B), then B at 1, reaching 3 (terminal): 3 states,
/// 2 transitions, 1 deferral. Bound 1 resumes 0 at B, reaching 2,
/// whose A reaches 3 again: 1 state, 2 transitions. Every move free
/// (DFS): the same 4 states and 4 transitions in one stratum.
#[test]
fn the_diamond_strata_are_the_ones_worked_by_hand() {
    let config = Config::default();
    let search = |order| {
        run(
            Watched::bare(&diamond()),
            order,
            &config,
            Report::new("test", None, 0, 1),
        )
        .unwrap()
    };
    let charged = search(Natural::charging());
    assert_eq!(strata(&charged.report), vec![(0, 3, 2, 1, 1), (1, 1, 2, 0, 0)]);
    let free = search(Natural::default());
    assert_eq!(strata(&free.report), vec![(0, 4, 4, 0, 0)]);
    for r in [&charged.report, &free.report] {
        assert_eq!((r.states, r.transitions, r.outcome), (4, 4, Outcome::Verified));
    }
}

/// A violation's path names the choices that were not their state's
/// first: B at 1 is choice 0 there, A at 2 needs the move past A at 0.
#[test]
fn a_violation_path_lists_the_moves_to_the_next_choice() {
    let config = Config::default();
    for (bad, step, path) in [((1, 1, 0), 1, vec![]), ((2, 0, 0), 1, vec![(0, 1)])] {
        let mut program = diamond();
        program.bad.insert(bad);
        let r = run(
            Watched::bare(&program),
            Natural::charging(),
            &config,
            Report::new("test", None, 0, 1),
        )
        .unwrap();
        let v = r.violation.expect("a violation");
        assert_eq!((v.found.step, v.advances), (step, path), "{bad:?}");
    }
}
