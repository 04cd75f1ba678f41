//! The `mcheck` binary and liveness: a liveness bug exits 1 with its lasso
//! printed and replaying; `--liveness off` and `--temperature` as documented.

use std::process::{Command, Output};

fn mcheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcheck"))
        .args(args)
        .output()
        .expect("mcheck runs")
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

#[test]
fn a_liveness_bug_exits_1_with_a_lasso_that_replays() {
    // (model, bug, step of the violation, hot monitor)
    for (model, bug, at, by) in [
        ("paxos", "4", 21, "progress"),
        ("lostupdate", "2", 23, "increments"),
        ("2pc", "6", 29, "in-doubt"),
    ] {
        let o = mcheck(&["run", model, "-s", "dfs", "--bug", bug]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let out = text(&o);
        let schedule = out
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with(&format!("mcheck2:{model}:")))
            .expect("the schedule is printed")
            .to_string();
        assert!(
            schedule.contains(&format!(":v=liveness:at={at}:by={by}:")),
            "{schedule}"
        );
        // A replay that reproduces the violation exits 1, as for every kind.
        let r = mcheck(&["replay", &schedule]);
        assert_eq!(r.status.code(), Some(1), "{}", text(&r));
        assert!(
            text(&r).contains(&format!("liveness in {by}: the execution ends with the monitor hot")),
            "{}",
            text(&r)
        );
        // Off: the same search verifies.
        let off = mcheck(&["run", model, "-s", "dfs", "--bug", bug, "--liveness", "off"]);
        assert_eq!(off.status.code(), Some(0), "{}", text(&off));
    }
}

#[test]
fn temperature_applies_to_sampling_only() {
    let o = mcheck(&["run", "paxos", "-s", "dfs", "--temperature", "5"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--temperature"), "{}", text(&o));
    let bad = mcheck(&["run", "paxos", "--liveness", "maybe"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad).contains("expected on or off"), "{}", text(&bad));
}
