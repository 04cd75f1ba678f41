//! The soundness contract of every built-in explorer, on random enabled
//! sets after random event sequences, and their exact orders.

use mcheck_checker::explorer::check_contract;
use mcheck_checker::explorers::{AnyExplorer, BUILTIN, ProbabilisticRoundRobin, RoundRobin, RunToCompletion, builtin};
use mcheck_checker::testing::Causal;
use mcheck_checker::{ActorId, ActorInfo, Event, Explorer};

const ROUNDS: usize = 3000;

#[test]
fn round_robin_keeps_the_contract() {
    check_contract(|_| RoundRobin::new(), 1, ROUNDS).unwrap();
}

#[test]
fn run_to_completion_keeps_the_contract() {
    check_contract(|_| RunToCompletion::new(), 2, ROUNDS).unwrap();
}

#[test]
fn probabilistic_round_robin_keeps_the_contract() {
    check_contract(ProbabilisticRoundRobin::new, 3, ROUNDS).unwrap();
}

#[test]
fn every_builtin_through_the_enum_keeps_the_contract() {
    for spec in BUILTIN {
        check_contract(
            |s| {
                let mut e = builtin(spec.name).unwrap();
                e.seed(s);
                e
            },
            4,
            500,
        )
        .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
    }
}

/// `AnyExplorer` answers `is_trusted` as the explorer it holds: the
/// built-ins are trusted (so that the search skips their run-time check in
/// release builds, as on their own types), a model's own explorer only if
/// it says so, boxed or not.
#[test]
fn the_enum_is_trusted_as_the_explorer_it_holds() {
    // `Causal` is sound (the contract check passes it) but does not say so.
    for spec in BUILTIN {
        assert!(builtin(spec.name).unwrap().is_trusted(), "{}", spec.name);
    }
    assert!(AnyExplorer::custom(RunToCompletion::new()).is_trusted());
    assert!(!Causal::default().is_trusted());
    assert!(!AnyExplorer::custom(Causal::default()).is_trusted());
}

/// The checker itself must be able to fail: an explorer that always names
/// the lowest enabled actor breaks the contract as soon as two are enabled.
#[test]
fn the_contract_check_catches_an_unsound_explorer() {
    #[derive(Clone, Debug)]
    struct Lowest;
    impl Explorer for Lowest {
        fn name(&self) -> &str {
            "lowest"
        }
        fn init(&mut self, _: &[ActorInfo]) {}
        fn next(&self, enabled: &[ActorId]) -> ActorId {
            enabled[0]
        }
        fn step(&mut self, _: &[Event]) {}
        fn delay(&mut self, _: &[ActorId]) {}
    }
    let err = check_contract(|_| Lowest, 5, 100).unwrap_err();
    assert!(err.contains("offered twice"), "{err}");
}

/// And it checks the masked methods against the plain ones: here
/// `next_masked` names the highest enabled actor where `next` (round
/// robin's) names another.
#[test]
fn the_contract_check_catches_a_masked_next_that_disagrees() {
    #[derive(Clone, Debug)]
    struct Masked(RoundRobin);
    impl Explorer for Masked {
        fn name(&self) -> &str {
            "masked"
        }
        fn init(&mut self, actors: &[ActorInfo]) {
            self.0.init(actors)
        }
        fn next(&self, enabled: &[ActorId]) -> ActorId {
            self.0.next(enabled)
        }
        fn next_masked(&self, enabled: &[ActorId], _mask: Option<u64>) -> ActorId {
            enabled[enabled.len() - 1]
        }
        fn step(&mut self, events: &[Event]) {
            self.0.step(events)
        }
        fn delay(&mut self, enabled: &[ActorId]) {
            self.0.delay(enabled)
        }
    }
    let err = check_contract(|_| Masked(RoundRobin::new()), 6, 100).unwrap_err();
    assert!(err.contains("next_masked returned"), "{err}");
}

fn infos(n: u32) -> Vec<ActorInfo> {
    (0..n)
        .map(|i| ActorInfo {
            id: ActorId(i),
            kind: "m",
            name: format!("m{i}"),
        })
        .collect()
}

fn ids(v: &[u32]) -> Vec<ActorId> {
    v.iter().map(|&i| ActorId(i)).collect()
}

#[test]
fn round_robin_order_is_creation_order_and_delay_rotates() {
    let mut e = RoundRobin::new();
    e.init(&infos(3));
    let all = ids(&[0, 1, 2]);
    assert_eq!(e.next(&all), ActorId(0));
    e.step(&[Event::Sent {
        from: ActorId(0),
        to: ActorId(2),
    }]);
    assert_eq!(e.next(&all), ActorId(0), "RR ignores messages");
    e.delay(&all);
    assert_eq!(e.order(), &ids(&[1, 2, 0])[..]);
    e.step(&[
        Event::Created(ActorInfo {
            id: ActorId(3),
            kind: "m",
            name: "m3".into(),
        }),
        Event::Halted(ActorId(1)),
    ]);
    assert_eq!(e.order(), &ids(&[2, 0, 3])[..]);
}

#[test]
fn run_to_completion_follows_the_receiver() {
    let mut e = RunToCompletion::new();
    e.init(&infos(4));
    let all = ids(&[0, 1, 2, 3]);
    e.step(&[
        Event::Sent {
            from: ActorId(0),
            to: ActorId(2),
        },
        Event::Sent {
            from: ActorId(0),
            to: ActorId(3),
        },
    ]);
    // The last receiver first: it runs, then the earlier one.
    assert_eq!(e.order(), &ids(&[3, 2, 0, 1])[..]);
    assert_eq!(e.next(&all), ActorId(3));
    assert_eq!(e.next(&ids(&[0, 2])), ActorId(2));
    e.delay(&all);
    assert_eq!(e.order(), &ids(&[2, 0, 1, 3])[..]);
}

#[test]
fn probabilistic_round_robin_depends_only_on_its_seed() {
    let order = |seed: u64| {
        let mut e = ProbabilisticRoundRobin::new(0);
        e.seed(seed);
        e.init(&infos(6));
        e.step(&[Event::Created(ActorInfo {
            id: ActorId(6),
            kind: "m",
            name: "m6".into(),
        })]);
        e.order().iter().map(|a| a.0).collect::<Vec<_>>()
    };
    assert_eq!(order(7), order(7));
    // Pinned: any change of the random draws shows here.
    assert_eq!(order(7), vec![1, 3, 5, 0, 2, 6, 4]);
    let distinct: std::collections::HashSet<Vec<u32>> = (0..50).map(order).collect();
    assert!(
        distinct.len() > 40,
        "only {} distinct orders from 50 seeds",
        distinct.len()
    );
    // A clone continues exactly as the original.
    let mut a = ProbabilisticRoundRobin::new(11);
    a.init(&infos(3));
    let mut b = a.clone();
    let created = [Event::Created(ActorInfo {
        id: ActorId(3),
        kind: "m",
        name: "m3".into(),
    })];
    a.step(&created);
    b.step(&created);
    assert_eq!(a.order(), b.order());
}

/// PRR keeps its generator as a seed and a count of outputs drawn; the
/// oracle keeps a live generator, as PRR did before. Both insert every
/// actor at `random_range(0..=len)`, so the orders must agree on every
/// seed, through creations, halts, clones and re-seeding, and past the
/// queue's 15 inline actors.
#[test]
fn probabilistic_round_robin_draws_what_a_live_generator_draws() {
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;
    let created = |i: u32| {
        Event::Created(ActorInfo {
            id: ActorId(i),
            kind: "m",
            name: format!("m{i}"),
        })
    };
    let insert = |queue: &mut Vec<u32>, rng: &mut Xoshiro256PlusPlus, id: u32| {
        queue.retain(|&a| a != id);
        let at = rng.random_range(0..=queue.len());
        queue.insert(at, id);
    };
    for seed in 0..200u64 {
        let mut e = ProbabilisticRoundRobin::new(seed);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut queue = Vec::new();
        e.init(&infos(5));
        for i in 0..5 {
            insert(&mut queue, &mut rng, i);
        }
        for i in 5..24 {
            // A clone taken before the step continues as the original.
            let mut twin = e.clone();
            let events = [created(i), Event::Halted(ActorId(i % 3)), created(i % 3)];
            e.step(&events);
            twin.step(&events);
            insert(&mut queue, &mut rng, i);
            queue.retain(|&a| a != i % 3);
            insert(&mut queue, &mut rng, i % 3);
            let order: Vec<u32> = e.order().iter().map(|a| a.0).collect();
            assert_eq!(order, queue, "seed {seed}, after creating {i}");
            assert_eq!(twin.order(), e.order(), "seed {seed}: the clone");
            assert_eq!(twin.state_hash(), e.state_hash(), "seed {seed}: the clone's hash");
        }
        e.seed(seed + 1);
        e.init(&infos(4));
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed + 1);
        let mut queue = Vec::new();
        for i in 0..4 {
            insert(&mut queue, &mut rng, i);
        }
        let order: Vec<u32> = e.order().iter().map(|a| a.0).collect();
        assert_eq!(order, queue, "seed {seed}, re-seeded");
    }
}

#[test]
fn builtin_names_match_and_unknown_is_none() {
    let names: Vec<&str> = BUILTIN.iter().map(|s| s.name).collect();
    assert_eq!(names, ["rr", "rtc", "prr"]);
    for n in names {
        assert_eq!(builtin(n).unwrap().name(), n);
    }
    assert!(builtin("pct").is_none());
    assert!(matches!(builtin("rtc"), Some(AnyExplorer::Rtc(_))));
}

/// SES keeps one composed explorer per frontier entry: RR and RTC are two
/// words and the alternative index (PRR adds its seed and the count of
/// outputs drawn); the runtime enum holds PRR inline in 32 bytes. Pinned
/// so that a growth shows up here first.
#[test]
fn composed_explorers_stay_small() {
    use mcheck_checker::search::order::Composed;
    use std::mem::size_of;
    assert_eq!(size_of::<Composed<RoundRobin>>(), 24);
    assert_eq!(size_of::<Composed<RunToCompletion>>(), 24);
    assert_eq!(size_of::<Composed<ProbabilisticRoundRobin>>(), 40);
    assert_eq!(size_of::<AnyExplorer>(), 32);
}
