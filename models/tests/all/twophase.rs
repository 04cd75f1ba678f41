//! TwoPhase against TLC's state counts, an independent BFS of the TLA+
//! actions, a plain BFS over the `Program`, and the seeded bug.

use mcheck_checker::search::{dfs, ses};
use mcheck_checker::testing::Causal;
use mcheck_checker::ProgramExt;
use mcheck_checker::{ActorId, Config, Enabled, Event, Model, Outcome, Params, Program, StepTrace, ViolationKind};
use mcheck_models::twophase::{TwoPhase, TwoPhaseProgram, MAX_RMS};
use std::collections::{BTreeSet, HashSet, VecDeque};

fn quiet() -> Config {
    Config {
        max_memory: 1 << 30,
        ..Config::default()
    }
}

fn build(rms: u64, bug: Option<u32>) -> TwoPhaseProgram {
    let params = Params::resolve("twophase", &TwoPhase.info().params, &[("rms".into(), rms.to_string())]).unwrap();
    TwoPhase.build(&params, bug)
}

/// The TLA+ specification written out directly with sets and strings,
/// independently of the packed state and of the `Program` trait.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Spec {
    rm_state: Vec<&'static str>,
    tm_state: &'static str,
    tm_prepared: BTreeSet<usize>,
    msgs: BTreeSet<(&'static str, usize)>,
}

fn spec_successors(s: &Spec) -> Vec<Spec> {
    let n = s.rm_state.len();
    let mut out = Vec::new();
    // TMCommit
    if s.tm_state == "init" && s.tm_prepared.len() == n {
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

/// (distinct states, transitions) of the written-out specification.
fn spec_bfs(n: usize) -> (u64, u64) {
    let init = Spec {
        rm_state: vec!["working"; n],
        tm_state: "init",
        tm_prepared: BTreeSet::new(),
        msgs: BTreeSet::new(),
    };
    let mut seen = HashSet::from([init.clone()]);
    let mut queue = VecDeque::from([init]);
    let mut transitions = 0;
    while let Some(s) = queue.pop_front() {
        assert!(tc_consistent(&s), "{s:?}");
        for t in spec_successors(&s) {
            transitions += 1;
            if seen.insert(t.clone()) {
                queue.push_back(t);
            }
        }
    }
    (seen.len() as u64, transitions)
}

/// (distinct states, transitions) of a plain BFS over the `Program`.
fn program_bfs(p: &TwoPhaseProgram) -> (u64, u64) {
    let init = p.initial();
    let mut seen = HashSet::from([init]);
    let mut queue = VecDeque::from([init]);
    let (mut enabled, mut events) = (Vec::<Enabled>::new(), Vec::new());
    let mut transitions = 0;
    while let Some(s) = queue.pop_front() {
        enabled.clear();
        p.enabled(&s, &mut enabled);
        for w in enabled.windows(2) {
            assert!(w[0].actor < w[1].actor);
        }
        for e in &enabled {
            assert!(e.alternatives >= 1);
            for alt in 0..e.alternatives {
                let mut t = s;
                events.clear();
                p.execute(&mut t, e.actor, alt, &mut events).unwrap();
                transitions += 1;
                if seen.insert(t) {
                    queue.push_back(t);
                }
            }
        }
    }
    (seen.len() as u64, transitions)
}

/// Pinned (rms, TLC's distinct states, transitions = successors generated,
/// self-loops included; TLC's "states generated" also counts the initial
/// state). Measured once in release, not here: rms=9 gives 10,340,352
/// states and 123,558,401 transitions, docs/performance.md's figures's figures.
const COUNTS: [(u64, u64, u64); 5] = [
    (1, 12, 19),
    (2, 56, 153),
    (3, 288, 1_145),
    (4, 1_568, 8_257),
    (5, 8_832, 58_145),
];

#[test]
fn independent_bfs_of_the_spec_gives_the_pinned_counts() {
    for (rms, states, transitions) in COUNTS {
        assert_eq!(spec_bfs(rms as usize), (states, transitions), "rms={rms}");
        assert_eq!(program_bfs(&build(rms, None)), (states, transitions), "rms={rms}");
    }
}

#[test]
fn dfs_and_ses_verify_with_tlc_counts() {
    for (rms, states, transitions) in COUNTS {
        let p = build(rms, None);
        let r = dfs(&p, &quiet()).unwrap();
        assert_eq!(r.outcome, Outcome::Verified, "rms={rms}");
        assert_eq!((r.states, r.transitions), (states, transitions), "dfs rms={rms}");
        let r = ses(&p, Causal::default(), &quiet()).unwrap();
        assert_eq!(r.outcome, Outcome::Verified, "rms={rms}");
        assert_eq!((r.states, r.transitions), (states, transitions), "ses rms={rms}");
    }
}

#[test]
fn bug_tm_commit_early_is_found_by_dfs_and_ses_but_not_at_delay_zero() {
    // (rms, dfs: states, violating step; ses: violating step)
    for (rms, dfs_states, dfs_step, ses_step) in [(2, 23, 4, 4), (3, 73, 6, 5), (5, 1_037, 10, 5)] {
        let p = build(rms, Some(1));
        let r = dfs(&p, &quiet()).unwrap();
        assert_eq!(r.outcome, Outcome::Violation, "rms={rms}");
        assert_eq!(r.states, dfs_states, "rms={rms}");
        let found = r.violation.unwrap();
        // DFS: every RM but the last prepares, the TM receives each Prepared
        // and commits, the last RM aborts, then rm1 receives Commit.
        assert_eq!(found.step, dfs_step, "rms={rms}");
        assert_eq!(found.violation.kind, ViolationKind::Assertion);
        assert_eq!(found.violation.machine, None);
        assert_eq!(
            found.violation.message,
            format!("TCConsistent violated: rm1 committed while rm{rms} aborted")
        );
        assert!(
            found.violation.message.starts_with("TCConsistent violated"),
            "{}",
            found.violation
        );

        let zero = Config {
            max_delays: Some(0),
            ..quiet()
        };
        let r = ses(&p, Causal::default(), &zero).unwrap();
        assert_eq!(r.outcome, Outcome::Bounded, "rms={rms}: found at delay 0");

        let r = ses(&p, Causal::default(), &quiet()).unwrap();
        assert_eq!(r.outcome, Outcome::Violation, "rms={rms}");
        // One delay lets an RM prepare before the TM aborts; two more are
        // needed because an RM that can receive Commit stays enabled (and
        // first in the causal order) forever.
        assert_eq!(r.bound_reached, 3, "rms={rms}");
        let found = r.violation.unwrap();
        assert_eq!(found.step, ses_step, "rms={rms}");
        assert_eq!(found.violation.kind, ViolationKind::Assertion);
        assert!(
            found.violation.message.starts_with("TCConsistent violated"),
            "{}",
            found.violation
        );
    }
    // One RM cannot be committed and aborted at once: the bug is harmless.
    let r = dfs(&build(1, Some(1)), &quiet()).unwrap();
    assert_eq!(r.outcome, Outcome::Verified);
}

#[test]
fn actors_alternatives_and_traces() {
    let p = build(3, None);
    let s0 = p.initial();
    let names: Vec<String> = p.actors(&s0).into_iter().map(|a| a.name).collect();
    assert_eq!(names, ["tm", "rm1", "rm2", "rm3"]);
    let mut enabled = Vec::new();
    p.enabled(&s0, &mut enabled);
    let alts: Vec<(u32, u32)> = enabled.iter().map(|e| (e.actor.0, e.alternatives)).collect();
    // TM: TMAbort only; each RM: RMPrepare, RMChooseToAbort.
    assert_eq!(alts, [(0, 1), (1, 2), (2, 2), (3, 2)]);

    let mut s = s0;
    let mut events = Vec::new();
    let mut trace = StepTrace::default();
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

    // TM now: TMRcvPrepared(rm2), TMAbort.
    enabled.clear();
    p.enabled(&s, &mut enabled);
    assert_eq!(enabled[0].alternatives, 2);
    let mut trace = StepTrace::default();
    events.clear();
    p.execute_traced(&mut s, ActorId(0), 0, &mut events, &mut trace)
        .unwrap();
    assert_eq!(trace.handled.as_deref(), Some("TMRcvPrepared(rm2)"));
    assert_eq!(p.tm_prepared(&s), 0b010);
    // Again: a transition to the same state, as in TLA+.
    let before = s;
    p.execute(&mut s, ActorId(0), 0, &mut events).unwrap();
    assert_eq!(s, before);
    // rm1 has two alternatives: a third is outside the contract, reported.
    let err = p.execute(&mut s, ActorId(1), 2, &mut events).unwrap_err();
    assert_eq!(err.kind, ViolationKind::Panic);
    assert_eq!(err.machine.as_deref(), Some("rm1"));
}

#[test]
fn largest_size_fits_the_packing() {
    // All RMs prepare, the TM collects every Prepared and commits, every RM
    // receives Commit: every field at its top bit.
    let n = MAX_RMS;
    let p = TwoPhaseProgram::new(n, None);
    let mut s = p.initial();
    let mut events = Vec::new();
    for r in 1..=n as u32 {
        p.execute(&mut s, ActorId(r), 0, &mut events).unwrap();
    }
    for i in 0..n as u32 {
        // Alternative i is TMRcvPrepared(rm i+1): every Prepared is in msgs.
        p.execute(&mut s, ActorId(0), i, &mut events).unwrap();
    }
    // Now TMRcvPrepared(r) x n, TMCommit, TMAbort: TMCommit is alternative n.
    let mut enabled = Vec::new();
    p.enabled(&s, &mut enabled);
    assert_eq!(enabled[0].alternatives, n as u32 + 2);
    p.execute(&mut s, ActorId(0), n as u32, &mut events).unwrap();
    for r in 1..=n as u32 {
        // RMRcvCommitMsg is the only alternative of a prepared RM.
        p.execute(&mut s, ActorId(r), 0, &mut events).unwrap();
    }
    assert_eq!(p.prepared_msgs(&s), (1 << n) - 1);
    assert_eq!(p.tm_prepared(&s), (1 << n) - 1);
    assert!(p.commit_msg(&s) && !p.abort_msg(&s));
    assert!((0..n).all(|i| p.rm_state(&s, i) == mcheck_models::twophase::RmState::Committed));
}

#[test]
fn tc_consistent_is_checked_exactly() {
    // Every assignment of RM states for 4 RMs (hand-packed states) against
    // the spec's predicate.
    use mcheck_models::twophase::{RmState, TwoPhaseState};
    let p = build(4, None);
    let mut violations = 0;
    for code in 0u64..256 {
        let s = TwoPhaseState(code);
        let states: Vec<RmState> = (0..4).map(|i| p.rm_state(&s, i)).collect();
        let bad = states.contains(&RmState::Committed) && states.contains(&RmState::Aborted);
        match p.check(&s) {
            Ok(()) => assert!(!bad, "{states:?}"),
            Err(v) => {
                assert!(bad, "{states:?}");
                let c = states.iter().position(|x| *x == RmState::Committed).unwrap() + 1;
                let a = states.iter().position(|x| *x == RmState::Aborted).unwrap() + 1;
                assert_eq!(
                    v.message,
                    format!("TCConsistent violated: rm{c} committed while rm{a} aborted")
                );
                violations += 1;
            }
        }
    }
    // 4^4 minus those without a committed RM (3^4) minus those without an
    // aborted one (3^4) plus those with neither (2^4).
    assert_eq!(violations, 256 - 81 - 81 + 16);
}
