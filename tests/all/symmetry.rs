//! `--symmetry` on the command line (ARCHITECTURE.md, "Symmetry"): it
//! applies to dfs, ses, pb and hybrid only, reports orbits, `mcheck list`
//! names the declared groups, and a model without one is an error.

use crate::common::{mcheck, text};

#[test]
fn twophase_with_symmetry_counts_orbits_on_every_exhaustive_strategy() {
    for strategy in ["dfs", "ses", "pb"] {
        let o = mcheck(&[
            "run",
            "twophase",
            "--set",
            "rms=5",
            "--symmetry",
            "-s",
            strategy,
            "-q",
            "--json",
        ]);
        assert!(o.status.success(), "{strategy}: {}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["outcome"], "verified", "{strategy}");
        assert_eq!(v["states"], 314, "{strategy}");
        assert_eq!(v["symmetry"], true, "{strategy}");
    }
    let o = mcheck(&["run", "twophase", "--set", "rms=5", "-s", "dfs", "-q", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["states"].as_u64(), v["symmetry"].as_bool()),
        (Some(8_832), Some(false))
    );
}

#[test]
fn symmetry_is_an_error_where_it_does_not_apply() {
    let o = mcheck(&["run", "twophase", "--symmetry", "-s", "ss", "-q"]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("--symmetry does not apply to --strategy ss"),
        "{}",
        text(&o)
    );
    let o = mcheck(&["run", "paxos", "--symmetry", "-s", "dfs", "-q"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("declares no symmetry"), "{}", text(&o));
}

#[test]
fn list_names_the_declared_groups() {
    let o = mcheck(&["list"]);
    let t = text(&o);
    assert!(
        t.contains("--symmetry   interchangeable: rm1..rm3 (the resource managers)"),
        "{t}"
    );
    assert!(
        t.contains("--symmetry   interchangeable: participant2, participant3"),
        "{t}"
    );
    assert!(
        t.contains("--symmetry   interchangeable: client1, client2, client3"),
        "{t}"
    );
    // Paxos declares no group (its module doc says why): its block of the
    // list has no --symmetry line.
    let paxos = t.split("\n  paxos ").nth(1).expect("paxos listed");
    let paxos = paxos.split("\n  multipaxos ").next().unwrap();
    assert!(!paxos.contains("--symmetry"), "{paxos}");
}

#[test]
fn lostupdate_and_twopc_bugs_exit_1_with_symmetry() {
    for (model, bug) in [("lostupdate", "1"), ("lostupdate", "2"), ("2pc", "6")] {
        let o = mcheck(&["run", model, "--bug", bug, "--symmetry", "-q"]);
        assert_eq!(o.status.code(), Some(1), "{model} {bug}: {}", text(&o));
    }
}
