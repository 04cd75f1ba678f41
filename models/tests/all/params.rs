//! Every model's parameters and seeded bugs: the bug table maps each
//! variant to its `--bug` number and spec both ways, the defaults are the
//! ones documented, and `effective_params` reports what `build` runs with
//! (idempotent, within range, the same program).

use mcheck_checker::model::SeededBug;
use mcheck_checker::{Model, ParamSpec, Params, Program};
use mcheck_models::{chain, lostupdate, multipaxos, paxos, twopc, twophase, twophase_packed};

/// The table of `B` against `model.info().bugs`: ids 1..=n in order,
/// distinct names, and `from_id`/`id`/`spec` inverse to each other.
fn check_table<B: SeededBug, M: Model>(model: &M, n: u32) {
    let info = model.info();
    let specs = B::specs();
    assert_eq!(specs.len(), n as usize, "{}", info.name);
    let shown: Vec<(u32, &str, &str)> = info.bugs.iter().map(|b| (b.id, b.name, b.description)).collect();
    let table: Vec<(u32, &str, &str)> = specs.iter().map(|b| (b.id, b.name, b.description)).collect();
    assert_eq!(shown, table, "{}", info.name);
    for (i, (bug, spec)) in B::TABLE.iter().enumerate() {
        assert_eq!(spec.id, i as u32 + 1, "{}: ids in order from 1", info.name);
        assert_eq!(B::from_id(spec.id), Some(*bug), "{}", info.name);
        assert_eq!(bug.id(), spec.id, "{}", info.name);
        assert_eq!(bug.spec().name, spec.name, "{}", info.name);
        assert_eq!(B::from_build(Some(spec.id)), Some(*bug), "{}", info.name);
        let same_name = specs.iter().filter(|s| s.name == spec.name).count();
        assert_eq!(same_name, 1, "{}: bug name {} twice", info.name, spec.name);
    }
    assert_eq!(B::from_id(0), None);
    assert_eq!(B::from_id(n + 1), None);
    assert_eq!(B::from_build(None), None);
}

#[test]
fn every_bug_table_maps_both_ways() {
    check_table::<chain::Bug, _>(&chain::Chain, 10);
    check_table::<lostupdate::Bug, _>(&lostupdate::LostUpdate, 2);
    check_table::<multipaxos::Bug, _>(&multipaxos::MultiPaxos, 3);
    check_table::<paxos::Bug, _>(&paxos::Paxos, 4);
    check_table::<twopc::Bug, _>(&twopc::TwoPc, 6);
    check_table::<twophase::Bug, _>(&twophase::TwoPhase, 1);
    check_table::<twophase::Bug, _>(&twophase_packed::TwoPhasePacked, 1);
    assert_eq!(chain::Bug::StaleDoubleFailure.id(), 5);
    assert_eq!(chain::Bug::from_id(7), Some(chain::Bug::PruneOnLastSeq));
    assert_eq!(twopc::Bug::ReadBeforeApply.spec().name, "read-before-apply");
}

#[test]
#[should_panic(expected = "seeded bug 11 was not checked; valid bugs: 1 to 10")]
fn an_unchecked_bug_number_is_a_caller_bug() {
    chain::Bug::from_build(Some(11));
}

/// Defaults as `(name, value)` pairs.
fn defaults(specs: &[ParamSpec]) -> Vec<(&str, u64)> {
    specs.iter().map(|p| (p.name, p.default)).collect()
}

#[test]
fn defaults_are_the_documented_ones_and_configurations_follow_them() {
    assert_eq!(
        defaults(&chain::PARAMS),
        [
            ("servers", 3),
            ("failures", 1),
            ("heartbeats", 1),
            ("clients", 1),
            ("keys", 2)
        ]
    );
    let c = chain::Cfg::default();
    assert_eq!(
        (c.servers, c.failures, c.heartbeats, c.clients, c.keys, c.bug),
        (3, 1, 1, 1, 2, None)
    );
    assert_eq!(defaults(&lostupdate::PARAMS), [("clients", 3), ("increments", 3)]);
    let c = lostupdate::Cfg::default();
    assert_eq!((c.clients, c.increments, c.bug), (3, 3, None));
    assert_eq!(
        defaults(&multipaxos::PARAMS),
        [("nodes", 3), ("updates", 2), ("noise", 0)]
    );
    let c = multipaxos::Cfg::default();
    assert_eq!((c.nodes, c.updates, c.noise, c.bug), (3, 2, 0, None));
    assert_eq!(
        defaults(&paxos::PARAMS),
        [
            ("acceptors", 3),
            ("proposers", 2),
            ("retries", 1),
            ("proposals", 1),
            ("noise", 0)
        ]
    );
    let c = paxos::Cfg::default();
    assert_eq!(
        (c.acceptors, c.proposers, c.retries, c.proposals, c.noise, c.bug),
        (3, 2, 1, 1, 0, None)
    );
    assert_eq!(
        defaults(&twopc::PARAMS),
        [("participants", 2), ("clients", 1), ("transactions", 2), ("noise", 0)]
    );
    let c = twopc::Cfg::default();
    assert_eq!(
        (c.participants, c.clients, c.transactions, c.noise, c.bug),
        (2, 1, 2, 0, None)
    );
    assert_eq!(defaults(&twophase::PARAMS), [("rms", 3)]);
    assert_eq!(defaults(&twophase_packed::PARAMS), [("rms", 3), ("rounds", 1)]);
    // What `mcheck list` shows is the same table.
    assert_eq!(defaults(&chain::Chain.info().params), defaults(&chain::PARAMS));
    assert_eq!(defaults(&twopc::TwoPc.info().params), defaults(&twopc::PARAMS));
}

fn resolve<M: Model>(model: &M, set: &[(&str, u64)]) -> Params {
    let info = model.info();
    let overrides: Vec<(String, String)> = set.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Params::resolve(info.name, &info.params, &overrides).unwrap()
}

/// For each of `settings` and each bug (and none): the effective
/// parameters are idempotent, within their ranges, and build the same
/// program as the parameters given.
fn check_effective<M: Model>(model: &M, settings: &[&[(&str, u64)]]) {
    let info = model.info();
    let bugs = std::iter::once(None).chain(info.bugs.iter().map(|b| Some(b.id)));
    for bug in bugs {
        for set in settings {
            let given = resolve(model, set);
            let used = model.effective_params(&given, bug);
            let what = format!("{} {set:?} bug {bug:?}", info.name);
            assert_eq!(model.effective_params(&used, bug), used, "{what}: not idempotent");
            for spec in &info.params {
                let v = used.get(spec.name);
                assert!((spec.min..=spec.max).contains(&v), "{what}: {}={v}", spec.name);
            }
            let (a, b) = (model.build(&given, bug), model.build(&used, bug));
            assert_eq!(a.initial(), b.initial(), "{what}");
        }
    }
}

#[test]
fn effective_parameters_build_the_same_program() {
    check_effective(
        &chain::Chain,
        &[
            &[],
            &[("servers", 2)],
            &[("servers", 2), ("failures", 3)],
            &[("servers", 4), ("failures", 3)],
        ],
    );
    check_effective(&lostupdate::LostUpdate, &[&[], &[("clients", 2)]]);
    check_effective(&multipaxos::MultiPaxos, &[&[], &[("nodes", 2)]]);
    check_effective(&paxos::Paxos, &[&[], &[("acceptors", 5)]]);
    check_effective(&twopc::TwoPc, &[&[], &[("participants", 1)]]);
    check_effective(&twophase::TwoPhase, &[&[], &[("rms", 14)]]);
    check_effective(
        &twophase_packed::TwoPhasePacked,
        &[&[], &[("rms", 5)], &[("rounds", 7)], &[("rms", 14), ("rounds", 7)]],
    );
}

#[test]
fn only_chain_adjusts_its_parameters() {
    let same = |given: &Params, used: Params| assert_eq!(*given, used);
    let p = resolve(&paxos::Paxos, &[]);
    same(&p, paxos::Paxos.effective_params(&p, Some(1)));
    let p = resolve(&twopc::TwoPc, &[]);
    same(&p, twopc::TwoPc.effective_params(&p, Some(4)));
    let p = resolve(&multipaxos::MultiPaxos, &[]);
    same(&p, multipaxos::MultiPaxos.effective_params(&p, Some(2)));
    let p = resolve(&twophase::TwoPhase, &[("rms", 14)]);
    same(&p, twophase::TwoPhase.effective_params(&p, Some(1)));
}

/// Parameters set, bug, and the servers and failures used.
type Used = (&'static [(&'static str, u64)], Option<u32>, (u64, u64));

/// Chain: bug 7 needs four
/// servers, bug 5 two crashes (and three servers), and failures are
/// clamped to the servers given minus one.
#[test]
fn chain_reports_the_servers_and_failures_it_runs() {
    let cases: [Used; 8] = [
        (&[], None, (3, 1)),
        (&[], Some(7), (4, 1)),
        (&[], Some(5), (3, 2)),
        (&[("servers", 2)], Some(5), (3, 2)),
        (&[("servers", 2), ("failures", 3)], None, (2, 1)),
        (&[("servers", 2), ("failures", 3)], Some(7), (4, 1)),
        (&[("servers", 4), ("failures", 3)], Some(5), (4, 3)),
        (&[("failures", 0)], Some(6), (3, 0)),
    ];
    for (set, bug, (servers, failures)) in cases {
        let used = chain::Chain.effective_params(&resolve(&chain::Chain, set), bug);
        assert_eq!(
            (used.get("servers"), used.get("failures")),
            (servers, failures),
            "{set:?} bug {bug:?}"
        );
        assert_eq!(used.get("keys"), 2);
        let cfg = chain::Chain.build(&resolve(&chain::Chain, set), bug).0;
        assert_eq!(
            (cfg.servers as u64, cfg.failures as u64),
            (servers, failures),
            "{set:?} bug {bug:?}"
        );
    }
}

/// twophase-packed runs one round above 13 resource managers (their state leaves
/// no bits for the round counter), and as many as asked below.
#[test]
fn twophase_packed_runs_one_round_above_13_rms() {
    for (rms, rounds, used) in [(3, 60, 60), (13, 60, 60), (14, 60, 1), (14, 1, 1)] {
        let given = resolve(&twophase_packed::TwoPhasePacked, &[("rms", rms), ("rounds", rounds)]);
        let p = twophase_packed::TwoPhasePacked.effective_params(&given, None);
        assert_eq!(
            (p.get("rms"), p.get("rounds")),
            (rms, used),
            "rms={rms} rounds={rounds}"
        );
    }
}
