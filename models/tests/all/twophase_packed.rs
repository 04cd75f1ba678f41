//! `twophase-packed`'s own tests: the seeded bug under the test explorer,
//! an alternative outside the contract, the largest packing, and
//! `TCConsistent` on the bits. Its states against TLC's counts and against `twophase`, step
//! by step, are in `twophase.rs`.

use mcheck_checker::search::{dfs, ses};
use mcheck_checker::testing::Causal;
use mcheck_checker::{ActorId, Config, Model, Outcome, Params, Program, ViolationKind};
use mcheck_models::twophase::{Message, RmState, TmState};
use mcheck_models::twophase_packed::{MAX_RMS, PackedProgram, PackedState, TwoPhasePacked};

fn quiet() -> Config {
    Config::default().max_memory(1 << 30)
}

fn build(rms: u64, bug: Option<u32>) -> PackedProgram {
    let info = TwoPhasePacked.info();
    let params = Params::resolve(info.name, &info.params, &[("rms".into(), rms.to_string())]).unwrap();
    TwoPhasePacked.build(&params, bug)
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

        let zero = quiet().max_delays(0);
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

/// An alternative the state does not have (outside the `Program`
/// contract) is reported, not panicked on.
#[test]
fn an_alternative_that_is_not_enabled_is_reported() {
    let p = build(3, None);
    let mut s = p.initial();
    // rm1 has two alternatives: a third is outside the contract.
    let err = p.execute(&mut s, ActorId(1), 2, &mut Vec::new()).unwrap_err();
    assert_eq!(err.kind, ViolationKind::Panic);
    assert_eq!(err.machine.as_deref(), Some("rm1"));
}

#[test]
fn largest_size_fits_the_packing() {
    // All RMs prepare, the TM collects every Prepared and commits, every RM
    // receives Commit: every field at its top bit.
    let n = MAX_RMS;
    let p = PackedProgram::new(n, None);
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
    let s = p.unpack(&s);
    assert_eq!(s.rm_state, vec![RmState::Committed; n]);
    assert_eq!(s.tm_state, TmState::Committed);
    assert_eq!(s.tm_prepared, (0..n).collect());
    let mut msgs: Vec<Message> = (0..n).map(Message::Prepared).collect();
    msgs.push(Message::Commit);
    assert_eq!(s.msgs, msgs.into_iter().collect());
}

#[test]
fn tc_consistent_is_checked_exactly() {
    // Every assignment of RM states for 4 RMs (hand-packed states) against
    // the spec's predicate.
    let p = build(4, None);
    let mut violations = 0;
    for code in 0u64..256 {
        let s = PackedState(code);
        let states = p.unpack(&s).rm_state;
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
