//! The race report on the shipped models: for every seeded bug of
//! lostupdate, 2pc and paxos, the counterexample SES with RTC finds has a
//! race whose flip removes the violation (pinned counts), the report is
//! deterministic, and its cost is small next to the search's.

use crate::common::mcheck;
use mcheck::search::Strategy;
use mcheck::{Config, Registry};
use std::time::Instant;

/// (model, overrides, bug, races, races the violation depends on).
const CASES: [(&str, &str, u32, usize, usize); 8] = [
    ("lostupdate", "clients=2,increments=1", 1, 3, 1),
    ("2pc", "", 1, 3, 2),
    ("2pc", "", 2, 10, 4),
    ("2pc", "", 3, 3, 2),
    ("2pc", "", 4, 2, 1),
    ("paxos", "", 1, 7, 4),
    ("paxos", "", 2, 6, 3),
    ("paxos", "", 3, 14, 5),
];

#[test]
fn every_seeded_bug_has_a_race_whose_flip_removes_it() {
    let registry = Registry::builtin();
    let mut search_time = 0.0;
    let mut explain_time = 0.0;
    let mut got = Vec::new();
    for (name, set, bug, _, _) in CASES {
        let model = registry.model(name).unwrap();
        let overrides: Vec<(String, String)> = set
            .split(',')
            .filter(|kv| !kv.is_empty())
            .map(|kv| {
                let (k, v) = kv.split_once('=').unwrap();
                (k.to_string(), v.to_string())
            })
            .collect();
        let instance = model.resolve(&overrides, Some(bug)).unwrap();
        let t = Instant::now();
        let checked = model
            .check(&instance, &Strategy::Ses, "rtc", &Config::default(), true)
            .unwrap();
        search_time += t.elapsed().as_secs_f64();
        let schedule = checked.report.schedule.expect("the bug is found");
        // The check's one replay, explained.
        let counterexample = checked.counterexample.expect("a counterexample");
        let e = counterexample.explanation.expect("explained").unwrap();
        let responsible: Vec<_> = e.responsible().collect();
        assert!(!responsible.is_empty(), "{name} bug {bug}:\n{}", e.report());
        // A race the violation depends on: its variant has no violation of
        // that bug, and the receipts it names are real steps of the trace.
        for (_, r) in &responsible {
            assert!(!r.variant.violates);
            let (x, y) = e.pair(r);
            assert_eq!(x.to, y.to);
            assert_eq!(
                e.trace[x.received_at.unwrap()].handled.as_deref(),
                Some(x.text.as_str())
            );
            if let Some(at) = y.received_at {
                assert_eq!(e.trace[at].handled.as_deref(), Some(y.text.as_str()));
            }
        }
        // Deterministic, and the same explained from a replay of the
        // schedule alone.
        let t = Instant::now();
        let again = model.counterexample(&schedule).unwrap().explanation.unwrap().unwrap();
        explain_time += t.elapsed().as_secs_f64();
        assert_eq!(again.report(), e.report());
        got.push((name, set, bug, e.races.len(), responsible.len()));
    }
    assert_eq!(got, CASES);
    eprintln!("search {search_time:.3}s, race reports {explain_time:.3}s");
}

#[test]
fn replay_races_through_the_cli() {
    let o = mcheck(&[
        "run",
        "lostupdate",
        "--bug",
        "1",
        "--set",
        "clients=2,increments=1",
        "-s",
        "ses",
        "--json",
        "-q",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let schedule = v["schedule"].as_str().unwrap();
    let o = mcheck(&["replay", schedule, "--races"]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    let report = &out[out.find("Happens-before").expect("the race report")..];
    assert!(
        report.contains("     4  server0        [2 1 1] receives Read { from: #2 } from client2 (sent at step 1)"),
        "{report}"
    );
    assert!(report.ends_with(
        "The violation depends on 1 of 3 races (flipping one removes it):\n  race 2: server0 received Read { from: #2 } from client2 (sent at step 1) at step 4 before Write { from: #1, new: 1 } from client1 (sent at step 3) at step 6\n"
    ), "{report}");
    let o = mcheck(&["replay", schedule, "--races", "--format", "dot"]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("--races applies to --format text, not dot"), "{e}");
}
