//! `twophase` (the readable TwoPhase) against TLC's state counts, an
//! independent BFS of the TLA+ actions, and `twophase-packed`: both models
//! walked side by side state by state, and every search strategy giving
//! both the same report, correct and with the seeded bug. The packing's own
//! tests are in `twophase_packed.rs`.

use crate::common;
use mcheck_checker::search::Strategy;
use mcheck_checker::{ActorId, Config, Event, Model, Outcome, Params, Program, ProgramExt, Report, StepTrace};
use mcheck_models::twophase::{Message, RmState, TmState, TwoPhase, TwoPhaseSpec, TwoPhaseState};
use mcheck_models::twophase_packed::{PackedProgram, TwoPhasePacked};
use std::collections::{BTreeSet, HashSet, VecDeque};

fn params<M: Model>(model: &M, rms: usize) -> Params {
    let info = model.info();
    Params::resolve(info.name, &info.params, &[("rms".into(), rms.to_string())]).unwrap()
}

fn readable(rms: usize, bug: Option<u32>) -> TwoPhaseSpec {
    TwoPhase.build(&params(&TwoPhase, rms), bug)
}

fn packed(rms: usize, bug: Option<u32>) -> PackedProgram {
    TwoPhasePacked.build(&params(&TwoPhasePacked, rms), bug)
}

/// The TLA+ specification written out directly with sets and strings,
/// independently of both models and of the `Program` trait.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Spec {
    rm_state: Vec<&'static str>,
    tm_state: &'static str,
    tm_prepared: BTreeSet<usize>,
    msgs: BTreeSet<(&'static str, usize)>,
}

/// The successors of `s`; with `early_commit` (the seeded bug), TMCommit
/// once `tmPrepared` is not empty.
fn spec_successors(s: &Spec, early_commit: bool) -> Vec<Spec> {
    let n = s.rm_state.len();
    let mut out = Vec::new();
    // TMCommit
    let ready = if early_commit {
        !s.tm_prepared.is_empty()
    } else {
        s.tm_prepared.len() == n
    };
    if s.tm_state == "init" && ready {
        let mut t = s.clone();
        t.tm_state = "committed";
        t.msgs.insert(("Commit", 0));
        out.push(t);
    }
    // TMAbort
    if s.tm_state == "init" {
        let mut t = s.clone();
        t.tm_state = "aborted";
        t.msgs.insert(("Abort", 0));
        out.push(t);
    }
    for rm in 0..n {
        // TMRcvPrepared(rm)
        if s.tm_state == "init" && s.msgs.contains(&("Prepared", rm)) {
            let mut t = s.clone();
            t.tm_prepared.insert(rm);
            out.push(t);
        }
        // RMPrepare(rm)
        if s.rm_state[rm] == "working" {
            let mut t = s.clone();
            t.rm_state[rm] = "prepared";
            t.msgs.insert(("Prepared", rm));
            out.push(t);
        }
        // RMChooseToAbort(rm)
        if s.rm_state[rm] == "working" {
            let mut t = s.clone();
            t.rm_state[rm] = "aborted";
            out.push(t);
        }
        // RMRcvCommitMsg(rm)
        if s.msgs.contains(&("Commit", 0)) {
            let mut t = s.clone();
            t.rm_state[rm] = "committed";
            out.push(t);
        }
        // RMRcvAbortMsg(rm)
        if s.msgs.contains(&("Abort", 0)) {
            let mut t = s.clone();
            t.rm_state[rm] = "aborted";
            out.push(t);
        }
    }
    out
}

fn tc_consistent(s: &Spec) -> bool {
    !(s.rm_state.contains(&"committed") && s.rm_state.contains(&"aborted"))
}

/// (distinct states, transitions, transitions to a state that violates
/// `TCConsistent`) of the written-out specification, not exploring past a
/// violation.
fn spec_bfs(n: usize, early_commit: bool) -> (u64, u64, u64) {
    let init = Spec {
        rm_state: vec!["working"; n],
        tm_state: "init",
        tm_prepared: BTreeSet::new(),
        msgs: BTreeSet::new(),
    };
    let mut seen = HashSet::from([init.clone()]);
    let mut queue = VecDeque::from([init]);
    let (mut transitions, mut violations) = (0, 0);
    while let Some(s) = queue.pop_front() {
        for t in spec_successors(&s, early_commit) {
            transitions += 1;
            if !tc_consistent(&t) {
                violations += 1;
            } else if seen.insert(t.clone()) {
                queue.push_back(t);
            }
        }
    }
    (seen.len() as u64, transitions, violations)
}

/// Pinned (rms, TLC's distinct states, transitions = successors generated,
/// self-loops included; TLC's "states generated" also counts the initial
/// state). rms=9, measured in release (docs/performance.md): 10,340,352
/// states and 123,558,401 transitions.
const COUNTS: [(usize, u64, u64); 5] = [
    (1, 12, 19),
    (2, 56, 153),
    (3, 288, 1_145),
    (4, 1_568, 8_257),
    (5, 8_832, 58_145),
];

#[test]
fn both_models_and_an_independent_bfs_of_the_spec_give_tlcs_counts() {
    for (rms, states, transitions) in COUNTS {
        assert_eq!(spec_bfs(rms, false), (states, transitions, 0), "rms={rms}");
        assert_eq!(common::bfs(&readable(rms, None)), (states, transitions), "rms={rms}");
        assert_eq!(common::bfs(&packed(rms, None)), (states, transitions), "rms={rms}");
    }
}

/// Walks both models side by side from their initial states: every
/// reachable pair of states is the same state (the packed one unpacked),
/// with the same actors, enabled actors and alternatives, and each step
/// gives both the same events, trace, and violation or successor. Returns
/// the states and transitions, and the violations found.
fn lockstep(rms: usize, bug: Option<u32>) -> (u64, u64, u64) {
    let (r, p) = (readable(rms, bug), packed(rms, bug));
    let start = (r.initial(), p.initial());
    let mut seen = HashSet::from([start.0.clone()]);
    let mut todo = VecDeque::from([start]);
    let (mut transitions, mut violations) = (0, 0);
    let (mut en_r, mut en_p, mut ev_r, mut ev_p) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    while let Some((s, t)) = todo.pop_front() {
        assert_eq!(p.unpack(&t), s);
        assert_eq!(r.actors(&s), p.actors(&t));
        en_r.clear();
        en_p.clear();
        r.enabled(&s, &mut en_r);
        p.enabled(&t, &mut en_p);
        assert_eq!(en_r, en_p, "{s}");
        for e in &en_r {
            for alt in 0..e.alternatives {
                let (mut s2, mut t2) = (s.clone(), t);
                ev_r.clear();
                ev_p.clear();
                let (mut trace_r, mut trace_p) = (StepTrace::default(), StepTrace::default());
                let result = r.execute_traced(&mut s2, e.actor, alt, &mut ev_r, &mut trace_r);
                let result_p = p.execute_traced(&mut t2, e.actor, alt, &mut ev_p, &mut trace_p);
                let what = format!("{s} {e:?} {alt}");
                assert_eq!((&result, &ev_r, &trace_r), (&result_p, &ev_p, &trace_p), "{what}");
                transitions += 1;
                if result.is_err() {
                    violations += 1;
                } else if seen.insert(s2.clone()) {
                    todo.push_back((s2, t2));
                }
            }
        }
    }
    (seen.len() as u64, transitions, violations)
}

#[test]
fn the_readable_and_packed_models_take_the_same_steps() {
    for rms in 1..=5 {
        assert_eq!(lockstep(rms, None), spec_bfs(rms, false), "rms={rms}");
        assert_eq!(lockstep(rms, Some(1)), spec_bfs(rms, true), "rms={rms} with the bug");
    }
    // One RM cannot be committed and aborted at once: the bug is harmless.
    assert_eq!(lockstep(1, Some(1)).2, 0);
    assert!(lockstep(2, Some(1)).2 > 0);
}

/// `strategy` with `explorer` on `twophase` and on `twophase-packed` with
/// `rms` RMs and `bug` (through the registry, as the CLI runs them).
fn both(rms: usize, bug: Option<u32>, strategy: &Strategy, explorer: &str, config: &Config) -> [Report; 2] {
    let readable = common::check(&TwoPhase, &params(&TwoPhase, rms), bug, strategy, explorer, config);
    let p = params(&TwoPhasePacked, rms);
    [
        readable,
        common::check(&TwoPhasePacked, &p, bug, strategy, explorer, config),
    ]
}

/// What two runs on the two models must share: every count and the
/// counterexample (its path; the schedules name their models).
fn figures(r: &Report) -> impl PartialEq + std::fmt::Debug + use<> {
    let schedule = r
        .schedule
        .as_ref()
        .map(|s| (s.path.clone(), s.expected.clone(), s.expected_step));
    let strata: Vec<_> = r
        .strata
        .iter()
        .map(|s| (s.bound, s.new_states, s.transitions))
        .collect();
    let counts = (
        r.states,
        r.transitions,
        r.deferrals,
        r.schedules,
        r.steps,
        r.bound_reached,
    );
    (r.outcome, counts, strata, r.violation.clone(), schedule)
}

#[test]
fn every_strategy_gives_both_models_the_same_report() {
    let config = Config::default().max_memory(1 << 30);
    // Sampling: a few short walks (the specification never ends).
    let sampled = config.clone().max_schedules(20).max_steps(200);
    let exhaustive = [Strategy::Dfs, Strategy::Ses, Strategy::Pb];
    for rms in 3..=5 {
        for bug in [None, Some(1)] {
            for explorer in ["rr", "rtc", "prr"] {
                for strategy in &exhaustive {
                    let [r, p] = both(rms, bug, strategy, explorer, &config);
                    let what = format!("rms={rms} bug={bug:?} {} {explorer}", strategy.name());
                    assert_eq!(figures(&r), figures(&p), "{what}");
                    let want = [Outcome::Verified, Outcome::Violation][usize::from(bug.is_some())];
                    assert_eq!(r.outcome, want, "{what}");
                }
                for strategy in [Strategy::Rs, Strategy::Pos] {
                    let [r, p] = both(rms, bug, &strategy, explorer, &sampled);
                    let what = format!("rms={rms} bug={bug:?} {} {explorer}", strategy.name());
                    assert_eq!(figures(&r), figures(&p), "{what}");
                }
            }
        }
        // TLC's counts, and the orbits with symmetry (the packed model's
        // are checked against a brute-force count in `symmetry.rs`).
        let (_, states, transitions) = COUNTS[rms - 1];
        let [r, _] = both(rms, None, &Strategy::Dfs, "rr", &config);
        assert_eq!((r.states, r.transitions), (states, transitions));
        let symmetry = config.clone().symmetry(true);
        let [r, p] = both(rms, None, &Strategy::Ses, "rtc", &symmetry);
        assert_eq!(figures(&r), figures(&p), "rms={rms} with symmetry");
        assert_eq!(r.states, [80, 166, 314][rms - 3], "rms={rms} with symmetry");
    }
}

#[test]
fn the_bug_is_found_by_dfs_at_the_pinned_step() {
    // (rms, states, violating step): every RM but the last prepares, the
    // TM receives each Prepared and commits, the last RM aborts, then rm1
    // receives Commit.
    for (rms, states, step) in [(2, 23, 4), (3, 73, 6), (5, 1_037, 10)] {
        let [r, p] = both(rms, Some(1), &Strategy::Dfs, "rr", &Config::default());
        assert_eq!(figures(&r), figures(&p), "rms={rms}");
        assert_eq!(r.states, states, "rms={rms}");
        let found = r.violation.unwrap();
        assert_eq!(found.step, step, "rms={rms}");
        assert_eq!(
            found.violation.message,
            format!("TCConsistent violated: rm1 committed while rm{rms} aborted")
        );
    }
}

#[test]
fn actions_are_named_as_in_tla_and_traced() {
    let p = readable(3, None);
    let mut s = p.initial();
    let names: Vec<String> = p.actors(&s).into_iter().map(|a| a.name).collect();
    assert_eq!(names, ["tm", "rm1", "rm2", "rm3"]);
    let actions =
        |s: &TwoPhaseState, a: u32| -> Vec<String> { p.actions(s, ActorId(a)).iter().map(|a| a.to_string()).collect() };
    assert_eq!(actions(&s, 0), ["TMAbort"]);
    assert_eq!(actions(&s, 2), ["RMPrepare(rm2)", "RMChooseToAbort(rm2)"]);

    let (mut events, mut trace) = (Vec::new(), StepTrace::default());
    p.execute_traced(&mut s, ActorId(2), 0, &mut events, &mut trace)
        .unwrap();
    assert_eq!(trace.handled.as_deref(), Some("RMPrepare(rm2)"));
    assert_eq!(
        trace.state_before.as_deref(),
        Some("rm=[w,w,w] tm=init tmPrepared={} msgs={}")
    );
    assert_eq!(
        trace.state_after.as_deref(),
        Some("rm=[w,p,w] tm=init tmPrepared={} msgs={P2}")
    );
    assert_eq!(trace.sent, [("tm".to_string(), "Prepared(rm2)".to_string())]);
    assert_eq!(
        events,
        [Event::Sent {
            from: ActorId(2),
            to: ActorId(0)
        }]
    );
    assert_eq!(actions(&s, 0), ["TMRcvPrepared(rm2)", "TMAbort"]);

    // TMRcvPrepared(rm2), then again: a step to the same state, as in TLA+.
    p.execute(&mut s, ActorId(0), 0, &mut events).unwrap();
    let before = s.clone();
    p.execute(&mut s, ActorId(0), 0, &mut events).unwrap();
    assert_eq!(s, before);
    assert_eq!(
        s,
        TwoPhaseState {
            rm_state: vec![RmState::Working, RmState::Prepared, RmState::Working],
            tm_state: TmState::Init,
            tm_prepared: BTreeSet::from([1]),
            msgs: BTreeSet::from([Message::Prepared(1)]),
        }
    );

    // TMAbort: Abort to every RM, which each RM may now receive.
    let (mut events, mut trace) = (Vec::new(), StepTrace::default());
    p.execute_traced(&mut s, ActorId(0), 1, &mut events, &mut trace)
        .unwrap();
    let sent: Vec<(&str, &str)> = trace.sent.iter().map(|(a, m)| (a.as_str(), m.as_str())).collect();
    assert_eq!(sent, [("rm1", "Abort"), ("rm2", "Abort"), ("rm3", "Abort")]);
    assert_eq!(actions(&s, 0), Vec::<String>::new());
    assert_eq!(actions(&s, 2), ["RMRcvAbortMsg(rm2)"]);
}

#[test]
fn tc_consistent_names_the_first_committed_and_aborted_rms() {
    let p = readable(4, None);
    let mut s = p.initial();
    assert_eq!(p.tc_consistent(&s), Ok(()));
    s.rm_state = vec![
        RmState::Aborted,
        RmState::Committed,
        RmState::Prepared,
        RmState::Committed,
    ];
    let v = p.tc_consistent(&s).unwrap_err();
    assert_eq!(v.message, "TCConsistent violated: rm2 committed while rm1 aborted");
    s.rm_state[0] = RmState::Committed;
    assert_eq!(p.tc_consistent(&s), Ok(()));
}
