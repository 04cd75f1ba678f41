//! Symmetry reduction on the shipped models (ARCHITECTURE.md,
//! "Symmetry"): twophase-packed's orbit counts against an independent counter (a
//! BFS of the TLA+ actions on its own representation, canonicalized by
//! brute force over all permutations of the resource managers), DFS and
//! SES agreeing up to 12 resource managers, and every seeded bug of every
//! model with a declared group still found, its counterexample replaying
//! without symmetry.

use crate::common;

use common::{bfs, program};
use mcheck_checker::ProgramExt;
use mcheck_checker::search::{HybridParams, dfs, ses};
use mcheck_checker::testing::Causal;
use mcheck_checker::{Config, Model, Outcome, Params, Strategy, check_model};
use mcheck_models::chain::Chain;
use mcheck_models::lostupdate::LostUpdate;
use mcheck_models::multipaxos::MultiPaxos;
use mcheck_models::paxos;
use mcheck_models::twopc::TwoPc;
use mcheck_models::twophase_packed::TwoPhasePacked;
use std::collections::{HashSet, VecDeque};
use std::hash::Hash;

/// A TwoPhase state in the test's own terms: each RM's (state, in
/// tmPrepared, Prepared sent) with states 0 working, 1 prepared, 2
/// committed, 3 aborted; the TM's state (0 init, 1 committed, 2 aborted).
/// Commit and Abort messages exist exactly when the TM decided, so they
/// are not kept apart.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
struct Tp {
    rms: Vec<(u8, bool, bool)>,
    tm: u8,
}

fn successors(s: &Tp) -> Vec<Tp> {
    let mut out = Vec::new();
    let mut push = |f: &dyn Fn(&mut Tp)| {
        let mut t = s.clone();
        f(&mut t);
        out.push(t);
    };
    if s.tm == 0 {
        if s.rms.iter().all(|r| r.1) {
            push(&|t| t.tm = 1);
        }
        push(&|t| t.tm = 2);
    }
    for i in 0..s.rms.len() {
        let (st, _, sent) = s.rms[i];
        if s.tm == 0 && sent {
            push(&|t| t.rms[i].1 = true);
        }
        if st == 0 {
            push(&|t| t.rms[i] = (1, t.rms[i].1, true));
            push(&|t| t.rms[i].0 = 3);
        }
        if s.tm == 1 {
            push(&|t| t.rms[i].0 = 2);
        }
        if s.tm == 2 {
            push(&|t| t.rms[i].0 = 3);
        }
    }
    out
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for at in 0..=p.len() {
            let mut q = p.clone();
            q.insert(at, n - 1);
            out.push(q);
        }
    }
    out
}

/// Reachable states and orbits of a transition system written in the
/// test's own terms: a BFS from `s0` by `successors`, each state's orbit
/// named by the smallest of its images `permute(s, p)` under every
/// permutation `p` of `n` interchangeable members (member `j` of the image
/// is member `p[j]` of `s`).
fn orbit_count<S: Clone + Ord + Hash>(
    s0: S,
    n: usize,
    successors: impl Fn(&S) -> Vec<S>,
    permute: impl Fn(&S, &[usize]) -> S,
) -> (usize, usize) {
    let perms = permutations(n);
    let mut seen = HashSet::from([s0.clone()]);
    let mut todo = VecDeque::from([s0]);
    while let Some(s) = todo.pop_front() {
        for t in successors(&s) {
            if seen.insert(t.clone()) {
                todo.push_back(t);
            }
        }
    }
    let canon: HashSet<S> = seen
        .iter()
        .map(|s| perms.iter().map(|p| permute(s, p)).min().unwrap())
        .collect();
    (seen.len(), canon.len())
}

/// Reachable states and orbits of TwoPhase with `n` RMs.
fn orbits(n: usize) -> (usize, usize) {
    let s0 = Tp {
        rms: vec![(0, false, false); n],
        tm: 0,
    };
    orbit_count(s0, n, successors, |s, p| Tp {
        rms: p.iter().map(|&i| s.rms[i]).collect(),
        tm: s.tm,
    })
}

/// A lostupdate state in the test's own terms: the server's counter and
/// FIFO inbox (client index, `None` for a read or `Some((old, new))` for a
/// compare-and-swap), and per client its increments left, whether it
/// halted, and its FIFO inbox (`Go` as `None`, a counter value as
/// `Some(Ok(v))`, a swap's outcome as `Some(Err(ok))`).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
struct Lu {
    value: u16,
    server: Vec<(usize, Option<(u16, u16)>)>,
    clients: Vec<Cl>,
}

type ClientMsg = Option<Result<u16, bool>>;

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
struct Cl {
    left: u8,
    halted: bool,
    inbox: Vec<ClientMsg>,
}

fn lu_successors(s: &Lu) -> Vec<Lu> {
    let mut out = Vec::new();
    if let Some(&(c, req)) = s.server.first() {
        let mut t = s.clone();
        t.server.remove(0);
        let reply = match req {
            None => Ok(t.value),
            Some((old, new)) => {
                let ok = t.value == old;
                if ok {
                    t.value = new;
                }
                Err(ok)
            }
        };
        t.clients[c].inbox.push(Some(reply));
        out.push(t);
    }
    for c in 0..s.clients.len() {
        let Some(&m) = s.clients[c].inbox.first() else {
            continue;
        };
        let mut t = s.clone();
        t.clients[c].inbox.remove(0);
        match m {
            None => t.server.push((c, None)),
            Some(Ok(v)) => t.server.push((c, Some((v, v + 1)))),
            Some(Err(ok)) => {
                t.clients[c].left -= u8::from(ok);
                if t.clients[c].left == 0 {
                    t.clients[c].halted = true;
                } else {
                    t.server.push((c, None));
                }
            }
        }
        out.push(t);
    }
    out
}

/// Reachable states and orbits of lostupdate with `n` clients making
/// `k` increments each.
fn lu_orbits(n: usize, k: u8) -> (usize, usize) {
    let client = Cl {
        left: k,
        halted: false,
        inbox: vec![None],
    };
    let s0 = Lu {
        value: 0,
        server: vec![],
        clients: vec![client; n],
    };
    orbit_count(s0, n, lu_successors, |s, p| {
        // Client p[j] of `s` is client j of the image.
        let mut to = vec![0; p.len()];
        for (j, &i) in p.iter().enumerate() {
            to[i] = j;
        }
        Lu {
            value: s.value,
            server: s.server.iter().map(|&(c, r)| (to[c], r)).collect(),
            clients: p.iter().map(|&i| s.clients[i].clone()).collect(),
        }
    })
}

fn on() -> Config {
    Config::default().symmetry(true).max_memory(1 << 30)
}

#[test]
fn twophase_orbits_match_an_independent_brute_force_count() {
    // (rms, reachable states (TLC), orbits)
    for (n, states, orbit_count) in [(3, 288, 80), (4, 1_568, 166), (5, 8_832, 314), (6, 50_816, 553)] {
        assert_eq!(orbits(n), (states, orbit_count), "oracle rms={n}");
        let p = program(&TwoPhasePacked, &[("rms", &n.to_string())], None);
        assert_eq!(bfs(&p).0, states as u64, "rms={n}");
        let d = dfs(&p, &on()).unwrap();
        let s = ses(&p, Causal::default(), &on()).unwrap();
        for r in [&d, &s] {
            assert_eq!(r.outcome, Outcome::Verified, "rms={n}");
            assert!(r.symmetry);
            assert_eq!(r.states, orbit_count as u64, "rms={n} {}", r.strategy);
        }
    }
}

#[test]
fn twophase_dfs_and_ses_agree_up_to_twelve_rms() {
    // Orbits of rms = 7..12, as the searches count them (equal to the
    // brute-force count above for 3..6).
    let mut last = 553;
    for n in 7..=12 {
        let p = program(&TwoPhasePacked, &[("rms", &n.to_string())], None);
        let d = dfs(&p, &on()).unwrap();
        let s = ses(&p, Causal::default(), &on()).unwrap();
        assert_eq!(
            (d.outcome, s.outcome),
            (Outcome::Verified, Outcome::Verified),
            "rms={n}"
        );
        assert_eq!(d.states, s.states, "rms={n}");
        assert!(d.states > last, "rms={n}");
        last = d.states;
    }
}

/// Every seeded bug of `model` is found by SES with symmetry (with the
/// test explorer) and by DFS, liveness checking on (for the liveness
/// bugs), and its counterexample replays (check_model replays it on the
/// program without symmetry).
fn assert_bugs_found<M: Model>(model: &M, set: &[(&str, &str)]) {
    let bugs: Vec<u32> = model.info().bugs.iter().map(|b| b.id).collect();
    assert_found(model, set, &bugs, &[Strategy::Ses, Strategy::Dfs]);
}

/// Each of `bugs` is found by each of `strategies` with symmetry on,
/// where `set` gives `model` a declared group, and its counterexample
/// replays without symmetry.
fn assert_found<M: Model>(model: &M, set: &[(&str, &str)], bugs: &[u32], strategies: &[Strategy]) {
    let info = model.info();
    let overrides: Vec<(String, String)> = set.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let params = Params::resolve(info.name, &info.params, &overrides).unwrap();
    assert!(
        !model.build(&params, None).symmetry_groups().is_empty(),
        "{}",
        info.name
    );
    for &bug in bugs {
        for strategy in strategies {
            let config = on().liveness(true);
            let r = check_model(model, &params, Some(bug), strategy, Causal::default(), &config).unwrap();
            assert_eq!(r.outcome, Outcome::Violation, "{} bug {bug} {strategy:?}", info.name);
            assert!(r.schedule.is_some());
        }
    }
}

/// Chain's group is its clients, so symmetry matters from two clients
/// (where the correct model is linearizable since its head recognises a
/// resent update). Bugs 1 to 9 are found there by SES and DFS; bug 10, a
/// liveness bug, would need the whole state space for an exhaustive
/// verdict (millions of orbits), and hybrid finds an execution that ends
/// hot.
#[test]
fn chain_bugs_are_found_with_symmetry_at_two_clients() {
    let set = [("clients", "2")];
    assert_found(
        &Chain,
        &set,
        &[1, 2, 3, 4, 5, 6, 7, 8, 9],
        &[Strategy::Ses, Strategy::Dfs],
    );
    assert_found(&Chain, &set, &[10], &[Strategy::Hybrid(HybridParams::default())]);
}

/// Multipaxos's group is nodes 2 and up, so it needs four nodes: bugs 1
/// and 3 are found there by SES and hybrid. Bug 2 (a learner that counts
/// one acceptor twice) cannot happen at four nodes: the client
/// retransmits once, so the leader counts itself at most twice, one short
/// of a majority of four (ARCHITECTURE.md, "Symmetry").
#[test]
fn multipaxos_bugs_are_found_with_symmetry_at_four_nodes() {
    let strategies = [Strategy::Ses, Strategy::Hybrid(HybridParams::default())];
    assert_found(&MultiPaxos, &[("nodes", "4")], &[1, 3], &strategies);
}

#[test]
fn twophase_bug_is_found_with_symmetry() {
    assert_bugs_found(&TwoPhasePacked, &[("rms", "3")]);
}

#[test]
fn twopc_bugs_are_found_with_symmetry() {
    assert_bugs_found(&TwoPc, &[("participants", "2")]);
}

#[test]
fn twopc_states_with_and_without_symmetry() {
    // (participants, states without, states with symmetry), one transaction
    for (n, plain, reduced) in [(2, 3_812, 1_981), (3, 57_388, 29_336)] {
        let p = program(&TwoPc, &[("participants", &n.to_string()), ("transactions", "1")], None);
        let off = dfs(&p, &Config::default()).unwrap();
        let d = dfs(&p, &on()).unwrap();
        let s = ses(&p, Causal::default(), &on()).unwrap();
        assert_eq!(
            (off.outcome, d.outcome, s.outcome),
            (Outcome::Verified, Outcome::Verified, Outcome::Verified)
        );
        assert_eq!(
            (off.states, d.states, s.states),
            (plain, reduced, reduced),
            "participants={n}"
        );
    }
    // The default configuration (2 participants, 1 client, 2 transactions).
    let p = program(&TwoPc, &[], None);
    let off = dfs(&p, &Config::default()).unwrap();
    let s = ses(&p, Causal::default(), &on()).unwrap();
    assert_eq!((off.outcome, s.outcome), (Outcome::Verified, Outcome::Verified));
    assert_eq!((off.states, s.states), (82_782, 41_972));
}

#[test]
fn lostupdate_orbits_match_an_independent_brute_force_count() {
    // (clients, increments, reachable states, orbits); the default is 3, 3.
    for (n, k, states, orbit_count) in [
        (2, 2, 212, 109),
        (3, 2, 7_272, 1_286),
        (3, 3, 39_104, 6_699),
        (4, 1, 8_424, 485),
    ] {
        assert_eq!(
            lu_orbits(n, k),
            (states, orbit_count),
            "oracle clients={n} increments={k}"
        );
        let p = program(
            &LostUpdate,
            &[("clients", &n.to_string()), ("increments", &k.to_string())],
            None,
        );
        assert_eq!(bfs(&p).0, states as u64, "clients={n} increments={k}");
        let d = dfs(&p, &on()).unwrap();
        let s = ses(&p, Causal::default(), &on()).unwrap();
        for r in [&d, &s] {
            assert_eq!(r.outcome, Outcome::Verified, "clients={n}");
            assert!(r.symmetry);
            assert_eq!(
                r.states, orbit_count as u64,
                "clients={n} increments={k} {}",
                r.strategy
            );
        }
    }
}

#[test]
fn lostupdate_bugs_are_found_with_symmetry() {
    assert_bugs_found(&LostUpdate, &[]);
}

#[test]
fn paxos_declares_no_group_its_quorums_are_not_symmetric() {
    // The quorum of every ballot a default run can use: a permutation of
    // the acceptors that kept the contract would map each to itself.
    let cfg = paxos::Cfg::default();
    let ballots: Vec<paxos::Ballot> = (1..=cfg.retries + 1)
        .flat_map(|round| (0..cfg.proposers).map(move |pid| paxos::Ballot { round, pid }))
        .collect();
    let n = usize::from(cfg.acceptors);
    let moved = |p: &[usize], q: u8| (0..n).filter(|&a| q >> a & 1 == 1).map(|a| 1u8 << p[a]).sum::<u8>();
    let keeping: Vec<Vec<usize>> = permutations(n)
        .into_iter()
        .filter(|p| ballots.iter().all(|&b| moved(p, cfg.quorum(b)) == cfg.quorum(b)))
        .collect();
    assert_eq!(keeping, [(0..n).collect::<Vec<_>>()], "only the identity");
    assert!(program(&paxos::Paxos, &[], None).symmetry_groups().is_empty());
}
