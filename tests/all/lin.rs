//! Linearizability end to end (ARCHITECTURE.md, "Linearizability"): each seeded bug that
//! only clients can see exits 1 with a `linearizability` violation whose
//! text is the timeline, and its schedule replays; 2pc stays verified with
//! the check on.

use crate::common::{mcheck, stdout};

/// (model, bug, the culprit line of the timeline, states to find it with
/// the default strategy and explorer).
const BUGS: [(&str, &str, &str, &str); 3] = [
    ("chain", "8", "p5 Get(0) returns Value(None)   <-", "states 177 "),
    ("chain", "9", "p5 Get(1) returns Value(None)   <-", "states 16122 "),
    ("2pc", "5", "p4 Get(0) returns Value(None)   <-", "states 1191 "),
];

#[test]
fn each_new_bug_is_a_linearizability_violation_with_a_timeline_that_replays() {
    for (model, bug, culprit, states) in BUGS {
        let o = mcheck(&["run", model, "--bug", bug, "-s", "ses", "-q"]);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(1), "{model} {bug}: {out}");
        assert!(
            out.contains("VIOLATION at step")
                && out.contains(": linearizability in linearizability: history not linearizable"),
            "{model} {bug}: {out}"
        );
        assert!(out.contains(culprit), "{model} {bug}: {out}");
        assert!(out.contains("longest linearizable prefix"), "{model} {bug}: {out}");
        assert!(out.contains(states), "{model} {bug}: {out}");
        let schedule = out
            .split_whitespace()
            .find(|w| w.starts_with("mcheck2:"))
            .unwrap_or_else(|| panic!("{model} {bug}: no schedule in {out}"));
        assert!(schedule.contains(":v=linearizability:"), "{schedule}");
        let r = mcheck(&["replay", schedule]);
        let again = stdout(&r);
        assert_eq!(r.status.code(), Some(1), "{model} {bug}: {again}");
        assert!(again.contains("!! linearizability in linearizability"), "{again}");
        assert!(again.contains(culprit), "{again}");
    }
}

#[test]
fn two_phase_commit_stays_verified_with_the_check_on() {
    let o = mcheck(&["run", "2pc", "-q"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("outcome: verified") && out.contains("states 82782 "),
        "{out}"
    );
}

#[test]
fn the_new_bugs_are_listed_with_their_explanations() {
    let out = stdout(&mcheck(&["list"]));
    for name in ["early-update-done", "client-trusts-stale-done", "abort-resets-store"] {
        assert!(out.contains(name), "{name} missing from mcheck list: {out}");
    }
}
