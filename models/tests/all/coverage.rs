//! Coverage and reachability properties of every shipped model: which
//! handlers run (each declared one, none dead), their counts against a BFS
//! oracle that classifies steps by their traces (no coverage code), and
//! every reachability property reached with a schedule that replays to it.
//!
//! The searches run through the registry, as the CLI's do: its instances of
//! the coverage search are compiled once for the workspace, not again for
//! this test (eight models, each program wrapped three ways).

use crate::common;

use mcheck_checker::ProgramExt;
use mcheck_checker::coverage::{CountedOver, Coverage, How, Status, reached_property};
use mcheck_checker::search::Strategy;
use mcheck_checker::{Config, Enabled, Model, Outcome, Params, Program, StepTrace};
use mcheck_models::{chain, lostupdate, multipaxos, paxos, raft, twopc, twophase, twophase_packed};
use mcheck_registry::Registry;
use std::collections::{BTreeMap, HashSet, VecDeque};

fn params<M: Model>(model: &M, set: &[(&str, &str)]) -> Params {
    let info = model.info();
    let overrides: Vec<(String, String)> = set.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Params::resolve(info.name, &info.params, &overrides).unwrap()
}

/// SES with RTC and the coverage section; checks what every model must
/// show: verified, every declared handler ran, every property reached
/// with a schedule that replays to it. The coverage, for more checks.
fn covered<M: Model>(model: &M, set: &[(&str, &str)], handlers: usize, properties: &[&str]) -> Coverage {
    let p = params(model, set);
    let config = Config::default();
    let name = model.info().name;
    let registry = Registry::builtin();
    let dynamic = registry.model(name).unwrap();
    let instance = dynamic.resolve(&p.as_overrides(), None).unwrap();
    let r = dynamic
        .check_coverage(&instance, &Strategy::Ses, "rtc", &config, false)
        .unwrap()
        .report;
    assert_eq!(r.outcome, Outcome::Verified, "{name}: {:?}", r.notes);
    let c = r.coverage.unwrap();
    assert_eq!(c.counted_over, CountedOver::DistinctTransitions);
    let declared: Vec<String> = c
        .entries
        .iter()
        .filter(|e| e.declared)
        .map(|e| format!("{} {}", e.actor, e.item))
        .collect();
    assert_eq!(declared.len(), handlers, "{name}: {declared:?}");
    let dead: Vec<String> = c.dead().map(|e| format!("{} {}", e.actor, e.item)).collect();
    assert!(dead.is_empty(), "{name}: handlers that never ran: {dead:?}");
    let names: Vec<&str> = c.properties.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, properties, "{name}");
    for prop in &c.properties {
        assert_eq!(prop.status, Status::Reached, "{name}: {}", prop.name);
        let schedule = prop.schedule.as_ref().unwrap();
        assert_eq!(schedule.model, name);
        assert_eq!(schedule.explorer.as_deref(), Some("rtc"));
        let ex = dynamic.replay(schedule, false).unwrap();
        let found = ex.violation.unwrap();
        assert_eq!(reached_property(&found.violation), Some(prop.name.as_str()), "{name}");
        assert_eq!(Some(found.step + 1), prop.steps, "{name}: {}", prop.name);
        // The text form replays to it too.
        let text = mcheck_checker::Schedule::parse(&schedule.to_text()).unwrap();
        let ex = dynamic.replay(&text, false).unwrap();
        assert_eq!(ex.violation.map(|f| f.step), Some(found.step));
    }
    c
}

/// The oracle: a BFS over full states that classifies every transition by
/// its actor's kind and the head of its trace's `handled` text, the way a
/// person reads a trace. Steps per (kind, item).
fn oracle<P: Program>(p: &P, kind_of: impl Fn(&P, &P::State, u32) -> String) -> BTreeMap<(String, String), u64> {
    let s0 = p.initial();
    let mut seen = HashSet::from([s0.clone()]);
    let mut todo = VecDeque::from([s0]);
    let mut counts = BTreeMap::new();
    let (mut en, mut ev) = (Vec::<Enabled>::new(), Vec::new());
    while let Some(s) = todo.pop_front() {
        en.clear();
        p.enabled(&s, &mut en);
        for e in &en {
            for alt in 0..e.alternatives {
                let mut t = s.clone();
                ev.clear();
                let mut trace = StepTrace::default();
                p.execute_traced(&mut t, e.actor, alt, &mut ev, &mut trace).unwrap();
                let handled = trace.handled.unwrap_or_default();
                let item = handled.split(['(', '{', ' ']).next().unwrap_or("").to_string();
                *counts.entry((kind_of(p, &s, e.actor.0), item)).or_insert(0) += 1;
                if seen.insert(t.clone()) {
                    todo.push_back(t);
                }
            }
        }
    }
    counts
}

/// Steps per (actor, item) in the coverage: every way a step uses a
/// message (a duplicate is also a delivery; deferrals and monitor states
/// are not steps).
fn steps(c: &Coverage) -> BTreeMap<(String, String), u64> {
    let mut m = BTreeMap::new();
    for e in &c.entries {
        if matches!(e.how, How::Deferred | How::Visited | How::Duplicated) {
            continue;
        }
        *m.entry((e.actor.clone(), e.item.clone())).or_insert(0) += e.count;
    }
    m
}

fn machine_kind<P: Program>(p: &P, s: &P::State, actor: u32) -> String {
    p.actors(s)
        .into_iter()
        .find(|a| a.id.0 == actor)
        .unwrap()
        .kind
        .to_string()
}

#[test]
fn twopc_handlers_and_properties() {
    let c = covered(
        &twopc::TwoPc,
        &[],
        14,
        &["transaction-committed", "transaction-aborted", "read-back-done"],
    );
    let p = common::program(&twopc::TwoPc, &[], None);
    assert_eq!(steps(&c), oracle(&p, machine_kind));
    // Pinned: SES-RTC at the defaults (82,782 states).
    let count = |actor: &str, item: &str, how: How| {
        c.entries
            .iter()
            .find(|e| e.actor == actor && e.item == item && e.how == how)
            .map(|e| e.count)
    };
    assert_eq!(count("coordinator", "Vote", How::Handled), Some(29824));
    assert_eq!(count("participant", "Commit", How::Handled), Some(2752));
    assert_eq!(count("participant", "Read", How::Deferred), Some(1070));
    assert_eq!(count("client", "Go", How::Handled), Some(1));
    assert_eq!(count("atomicity", "nothing decided", How::Visited), Some(296));
    // Monitor states are counted once per distinct state: the atomicity
    // monitor's add up to the reachable states of the BFS.
    let visited: u64 = c
        .entries
        .iter()
        .filter(|e| e.actor == "atomicity" && e.how == How::Visited)
        .map(|e| e.count)
        .sum();
    assert_eq!(visited, common::bfs(&p).0);
}

#[test]
fn twophase_packed_actions_and_properties() {
    let model = twophase_packed::TwoPhasePacked;
    let c = covered(&model, &[], 17, &["all-committed", "all-aborted"]);
    let p = common::program(&model, &[], None);
    assert_eq!(common::bfs(&p).0, 288);
    let by_name = |p: &twophase_packed::PackedProgram, s: &twophase_packed::PackedState, a: u32| {
        p.actor_name(s, mcheck_checker::ActorId(a))
    };
    // The oracle reads the action's name (`TMRcvPrepared`) off the trace;
    // the coverage names the action with its argument (`TMRcvPrepared(rm2)`).
    let expected = oracle(&p, by_name);
    let mut got: BTreeMap<(String, String), u64> = BTreeMap::new();
    for ((a, i), n) in steps(&c) {
        *got.entry((a, i.split('(').next().unwrap().to_string())).or_insert(0) += n;
    }
    assert_eq!(got, expected);
    // TLC's figure: 288 states, 1 TMCommit transition (from the state where
    // every RM is prepared).
    assert_eq!(got[&("tm".to_string(), "TMCommit".to_string())], 1);
}

/// twophase names its steps as twophase-packed does and declares no
/// properties: the same counts.
#[test]
fn twophase_actions_as_twophase_packed_counts_them() {
    let readable = covered(&twophase::TwoPhase, &[], 0, &[]);
    let packed = covered(
        &twophase_packed::TwoPhasePacked,
        &[],
        17,
        &["all-committed", "all-aborted"],
    );
    assert_eq!(steps(&readable), steps(&packed));
}

#[test]
fn lostupdate_handlers_and_properties() {
    let c = covered(
        &lostupdate::LostUpdate,
        &[],
        5,
        &["all-clients-done", "counter-at-total"],
    );
    let p = common::program(&lostupdate::LostUpdate, &[], None);
    assert_eq!(steps(&c), oracle(&p, machine_kind));
}

#[test]
fn paxos_handlers_and_properties() {
    let c = covered(&paxos::Paxos, &[], 7, &["value-chosen", "competing-ballots"]);
    let p = common::program(&paxos::Paxos, &[], None);
    assert_eq!(steps(&c), oracle(&p, machine_kind));
}

#[test]
fn multipaxos_handlers_and_properties() {
    covered(
        &multipaxos::MultiPaxos,
        &[],
        9,
        &["value-chosen", "every-update-chosen"],
    );
}

#[test]
fn chain_handlers_and_properties() {
    covered(&chain::Chain, &[], 22, &["update-then-query-done", "chain-repaired"]);
}

#[test]
fn raft_handlers_and_properties() {
    // FIFO network without crashes: the crash handlers are not declared.
    covered(
        &raft::Raft,
        &[("crashes", "0"), ("network", "0")],
        10,
        &["entry-committed", "command-acked", "new-leader-elected"],
    );
    // Crashes and the full network, one request, no election.
    let c = covered(
        &raft::Raft,
        &[("elections", "0")],
        9,
        &["entry-committed", "command-acked"],
    );
    assert!(
        c.entries
            .iter()
            .any(|e| e.item == "Append" && e.how == How::Dropped && e.count > 0)
    );
}
