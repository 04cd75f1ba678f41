//! The chain-replication model: exact state counts, every bug found by
//! every explorer with pinned counts and replayed, none without a delay by
//! RTC, and the custom explorer first on the double failure.

use crate::common;
use common::bfs;

use mcheck_checker::explorers::builtin;
use mcheck_checker::search;
use mcheck_checker::{Config, Explorer, Model, Outcome, Report, Schedule};
use mcheck_models::chain::{Chain, ChainExplorer};

fn program(set: &[(&str, &str)], bug: Option<u32>) -> <Chain as Model>::Program {
    common::program(&Chain, set, bug)
}

fn custom() -> ChainExplorer {
    match Chain.explorer("chain-custom") {
        Some(_) => ChainExplorer::new(),
        None => panic!("the model does not offer chain-custom"),
    }
}

/// SES with the named explorer (built-in or "chain-custom").
fn ses(p: &<Chain as Model>::Program, name: &str, config: &Config) -> Report {
    if name == "chain-custom" {
        search::ses(p, custom(), config).unwrap()
    } else {
        search::ses(p, builtin(name).unwrap(), config).unwrap()
    }
}

fn replay_same(p: &<Chain as Model>::Program, name: &str, r: &Report) {
    let found = r.violation.clone().unwrap();
    let mut schedule = r.schedule.clone().unwrap();
    schedule.model = "chain".into();
    let again = Schedule::from_text(&schedule.to_text()).unwrap();
    let ex = if name == "chain-custom" {
        mcheck_checker::replay(p, Some(custom()), &again, false).unwrap()
    } else {
        mcheck_checker::replay(p, Some(builtin(name).unwrap()), &again, false).unwrap()
    };
    let v = ex.violation.unwrap();
    assert!(v.violation.same_bug(&found.violation), "{name}: {:?}", v.violation);
    assert_eq!(v.step, found.step, "{name}");
}

#[test]
fn exact_state_counts() {
    for (set, states, transitions) in [
        (vec![("keys", "1"), ("heartbeats", "0")], 1689, 3783),
        (vec![("keys", "1"), ("servers", "2")], 4373, 11231),
        (vec![("keys", "1")], 58324, 167902),
    ] {
        let p = program(&set, None);
        let r = search::dfs(&p, &Config::default()).unwrap();
        assert_eq!(r.outcome, Outcome::Verified, "{set:?}");
        assert_eq!(bfs(&p), (states, transitions), "{set:?}");
        assert_eq!((r.states, r.transitions), (states, transitions), "{set:?}");
    }
}

#[test]
fn every_explorer_covers_a_small_state_space() {
    let p = program(&[("keys", "1"), ("heartbeats", "0")], None);
    for name in ["rr", "rtc", "prr", "chain-custom"] {
        let r = ses(&p, name, &Config::default());
        assert_eq!(r.outcome, Outcome::Verified, "{name}");
        assert_eq!((r.states, r.transitions), (1689, 3783), "{name}");
        assert!(r.strata.len() > 3, "{name}: only {} strata", r.strata.len());
    }
}

/// Per bug: (states, delays) to find it with SES rr, rtc, prr, chain-custom,
/// in the default configuration (bugs 5 and 7 raise failures / servers).
/// (bug, violation kind, machine, per explorer (states, delays)).
type Row = (u32, &'static str, &'static str, [(u64, u32); 4]);

const FOUND: [Row; 9] = [
    (1, "Monitor", "query", [(4679, 3), (3017, 3), (4471, 3), (1222, 2)]),
    (2, "Monitor", "propagation", [(888, 2), (854, 2), (1081, 2), (191, 1)]),
    (3, "Monitor", "propagation", [(6213, 3), (3374, 3), (1928, 2), (192, 1)]),
    (4, "UnhandledEvent", "client5", [(341, 1), (156, 1), (280, 1), (132, 1)]),
    (5, "Monitor", "propagation", [(173, 1), (135, 1), (234, 1), (27, 0)]),
    (6, "Monitor", "propagation", [(98, 1), (159, 1), (129, 1), (26, 0)]),
    (
        7,
        "Monitor",
        "propagation",
        [(1966, 2), (16826, 4), (12515, 4), (4966, 3)],
    ),
    // Visible only to clients: their history is not linearizable.
    (
        8,
        "Linearizability",
        "linearizability",
        [(118, 1), (177, 1), (12, 0), (96, 1)],
    ),
    (
        9,
        "Linearizability",
        "linearizability",
        [(4826, 3), (16122, 5), (4612, 3), (6910, 4)],
    ),
];

#[test]
fn every_bug_is_found_by_every_explorer_and_replays() {
    for (bug, kind, machine, counts) in FOUND {
        let p = program(&[], Some(bug));
        for (name, (states, delays)) in ["rr", "rtc", "prr", "chain-custom"].into_iter().zip(counts) {
            let r = ses(&p, name, &Config::default());
            let found = r
                .violation
                .clone()
                .unwrap_or_else(|| panic!("bug {bug} not found by {name}"));
            assert_eq!(format!("{:?}", found.violation.kind), kind, "bug {bug} {name}");
            assert_eq!(found.violation.machine.as_deref(), Some(machine), "bug {bug} {name}");
            assert_eq!((r.states, r.bound_reached), (states, delays), "bug {bug} {name}");
            replay_same(&p, name, &r);
        }
    }
}

#[test]
fn no_bug_is_found_without_a_delay_by_rtc() {
    let zero = Config::default().max_delays(0);
    for bug in 1..=9 {
        let p = program(&[], Some(bug));
        let r = ses(&p, "rtc", &zero);
        assert_eq!(r.outcome, Outcome::Bounded, "bug {bug}");
        assert!(r.violation.is_none(), "bug {bug}");
    }
}

#[test]
fn the_custom_explorer_finds_the_double_failure_first() {
    let p = program(&[], Some(5));
    let custom = ses(&p, "chain-custom", &Config::default());
    assert_eq!((custom.states, custom.bound_reached), (27, 0));
    for name in ["rr", "rtc", "prr"] {
        let r = ses(&p, name, &Config::default());
        assert!(r.violation.is_some(), "{name}");
        assert!(
            custom.states < r.states,
            "{name}: {} <= custom's {}",
            r.states,
            custom.states
        );
        assert!(r.bound_reached >= 1, "{name}");
    }
}

#[test]
fn the_model_offers_its_explorer() {
    let info = Chain.info();
    assert_eq!(info.explorers.len(), 1);
    assert_eq!(info.explorers[0].name, "chain-custom");
    assert_eq!(info.bugs.len(), 10);
    let e = Chain.explorer("chain-custom").unwrap();
    assert_eq!(e.name(), "chain-custom");
    assert!(Chain.explorer("rr").is_none());
    mcheck_checker::explorer::check_contract(|_| Chain.explorer("chain-custom").unwrap(), 3, 200).unwrap();
}

/// A machine's `clone_from` makes the source's copy, whatever the two
/// machines' kinds, and a server, the master and the injector keep their
/// vectors' memory when the source's fit (the `MachineModel` contract: the
/// search makes successors in one scratch state).
#[test]
fn a_machines_clone_from_copies_it_and_keeps_the_vectors() {
    use mcheck_checker::machine::MachineId;
    use mcheck_models::chain::{Client, Injector, Machine, Master, Server, Upd};
    let upd = |seq| Upd {
        seq,
        key: 0,
        val: 1,
        client: 9,
        op: 0,
    };
    let server = |n: u8| Server {
        pred: Some(MachineId(1)),
        succ: (n > 1).then_some(MachineId(2)),
        linked: n.is_multiple_of(2),
        hist: (1..=n).map(upd).collect(),
        sent: (1..n).map(upd).collect(),
        store: vec![n; 2],
        counter: n,
    };
    let master = |n: u32| Master {
        chain: (0..n).map(MachineId).collect(),
        crashed: 1,
        removed: 0,
        probing: n > 2,
        beats: 3,
        ponged: vec![MachineId(0)],
        clients: (7..7 + n).map(MachineId).collect(),
    };
    let machines = vec![
        Machine::Server(server(4)),
        Machine::Server(server(1)),
        Machine::Master(master(3)),
        Machine::Master(master(1)),
        Machine::Timer,
        Machine::Injector(Injector {
            left: 2,
            crashed: vec![MachineId(1), MachineId(2)],
        }),
        Machine::Injector(Injector {
            left: 0,
            crashed: Vec::new(),
        }),
        Machine::Client(Client {
            val: 1,
            head: MachineId(0),
            tail: MachineId(2),
            op: 3,
        }),
    ];
    for a in &machines {
        for b in &machines {
            let mut x = a.clone();
            assert_eq!(&x, a);
            x.clone_from(b);
            assert_eq!(&x, b);
        }
    }
    // The larger machine's vectors take the smaller one's copy in place.
    let (mut big, small) = (server(4), server(1));
    let hist = big.hist.as_ptr();
    big.clone_from(&small);
    assert_eq!((big.hist.as_ptr(), &big), (hist, &small));
    let (mut big, small) = (master(3), master(1));
    let chain = big.chain.as_ptr();
    big.clone_from(&small);
    assert_eq!((big.chain.as_ptr(), &big), (chain, &small));
}
