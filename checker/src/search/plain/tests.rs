//! The plain search's own tests: strata worked by hand, a violation's
//! path, and the route that sends successors away.

use super::*;
use crate::cache::state_fingerprint;
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

/// A route that keeps the states whose key has the remainder `me` by
/// `peers` and collects the others.
struct Split<O> {
    me: u64,
    peers: u64,
    sent: Vec<Away<u32, O>>,
}

impl<O> Route<u32, O> for Split<O> {
    fn keep(&self, key: u64) -> bool {
        key % self.peers == self.me
    }
    fn send(&mut self, away: Away<u32, O>) {
        self.sent.push(away);
    }
}

/// The search of `program` from `order` with the route `route`.
fn routed<O: ChoiceOrder>(
    program: &RandomProgram,
    order: O,
    route: Split<O>,
) -> Plain<'static, RandomProgram, &RandomProgram, O, Split<O>> {
    let config = Config::default();
    let cache = cache_budget(&config);
    Plain::new(program, order, config, cache, route, Report::new("test", None, 0, 1))
}

/// The state and order that `away`'s path reaches from s0, as a replay of
/// the counterexample schedule would: at each depth the path names, the
/// order moves on that many times before its choice is taken.
fn rebuild<O: ChoiceOrder>(program: &RandomProgram, root: &O, away: &Away<u32, O>) -> (u32, O) {
    let (mut s, mut d) = (program.initial(), root.clone());
    let (mut en, mut events) = (Vec::new(), Vec::new());
    let path = away.path.to_vec();
    let mut moves = path.iter().peekable();
    for depth in 0..away.depth {
        en.clear();
        program.enabled(&s, &mut en);
        let ids: Vec<ActorId> = en.iter().map(|e| e.actor).collect();
        let set = EnabledSet::new(&en, &ids);
        if let Some(&(_, index)) = moves.next_if(|m| m.0 == depth) {
            (0..index).for_each(|_| d.advance(&set));
        }
        let (actor, alt) = d.current(&set);
        events.clear();
        program
            .execute(&mut s, actor, alt, &mut events)
            .expect("a path of the search");
        d = d.into_child(actor, &events);
    }
    (s, d)
}

/// A route that keeps s0 alone: each stratum sends the successors its
/// steps reach, with the cost, depth and path the diamond's strata worked
/// by hand give them (B at 0, in bound 1, is the move past A there).
#[test]
fn a_successor_the_route_does_not_keep_is_sent_with_its_path() {
    let program = diamond();
    let fp = |s: u32| state_fingerprint(&program, &s, false);
    let split = Split {
        me: fp(0) % u64::MAX,
        peers: u64::MAX,
        sent: Vec::new(),
    };
    let mut search = routed(&program, Natural::charging(), split);
    assert_eq!(search.start().unwrap(), None);
    search.close_stratum(0.0);
    let r = search.report();
    assert_eq!(
        (r.states, r.transitions, r.deferrals, search.pending()),
        (1, 1, 1, (0, 1))
    );
    let away = |s, cost, path: &[(u32, u32)]| Away {
        state: s,
        order: Natural::charging(),
        key: fp(s),
        cost,
        depth: 1,
        path: Path::from_pairs(path.to_vec()),
    };
    assert_eq!(std::mem::take(&mut search.route().sent), vec![away(1, 0, &[])]);
    search.open();
    assert_eq!(search.resume().unwrap(), None);
    assert_eq!(search.route().sent, vec![away(2, 1, &[(0, 1)])]);
    assert_eq!((search.report().states, search.pending()), (1, (0, 0)));
}

/// Two searches that each keep half the keys, their sent states accepted
/// by the other within the stratum (as distributed workers do), each the
/// state its path replays to, count together the states one search counts, on random systems
/// with every move costing one (strata) and every move free (one).
#[test]
fn two_routed_searches_count_the_states_of_one() {
    for seed in 0..40 {
        let program = RandomProgram::generate(seed, false, false);
        for order in [Natural::charging(), Natural::default()] {
            let one = run(
                Watched::bare(&program),
                order,
                &Config::default(),
                Report::new("test", None, 0, 1),
            )
            .unwrap();
            assert_eq!(one.report.outcome, Outcome::Verified, "system {seed}");
            let split = |me| Split {
                me,
                peers: 2,
                sent: Vec::new(),
            };
            let mut two = [routed(&program, order, split(0)), routed(&program, order, split(1))];
            for w in &mut two {
                assert_eq!(w.start().unwrap(), None);
            }
            loop {
                // Deliver until nothing is in flight, then the next stratum.
                loop {
                    let mut sent = Vec::new();
                    for (i, w) in two.iter_mut().enumerate() {
                        sent.extend(w.route().sent.drain(..).map(|a| (1 - i, a)));
                    }
                    if sent.is_empty() {
                        break;
                    }
                    for (to, away) in sent {
                        let w = &mut two[to];
                        let (s, d) = rebuild(&program, w.root(), &away);
                        assert_eq!((s, w.cache_key(&s, &d)), (away.state, away.key), "system {seed}");
                        if !w.cached(away.key) {
                            let (s, d) = (away.state, away.order);
                            assert_eq!(w.accept(s, d, away.cost, away.depth, away.path).unwrap(), None);
                        }
                    }
                }
                for w in &mut two {
                    w.close_stratum(0.0);
                }
                if two.iter().all(|w| w.pending() == (0, 0)) {
                    break;
                }
                for w in &mut two {
                    w.open();
                    assert_eq!(w.resume().unwrap(), None);
                }
            }
            let states: u64 = two.iter().map(|w| w.report().states).sum();
            assert_eq!(states, one.report.states, "system {seed}");
        }
    }
}
