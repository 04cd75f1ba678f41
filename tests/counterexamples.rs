//! Counterexamples people can use: Mermaid and DOT renderings, shrinking
//! through the CLI, and the nondeterminism check of replay.

use std::process::{Command, Output};

fn mcheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcheck"))
        .args(args)
        .output()
        .expect("mcheck runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temp(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("mcheck-cex-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name).to_str().unwrap().to_string()
}

/// The schedule text of a run.
fn schedule_of(args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.extend(["--json", "-q"]);
    let o = mcheck(&all);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["schedule"].as_str().unwrap().to_string()
}

#[test]
fn mermaid_has_participants_and_one_arrow_per_delivered_message() {
    let s = schedule_of(&["run", "lostupdate", "--bug", "1"]);
    let o = mcheck(&["replay", &s, "--format", "mermaid"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "sequenceDiagram");
    let participants: Vec<&str> = lines
        .iter()
        .filter(|l| l.trim_start().starts_with("participant "))
        .copied()
        .collect();
    assert_eq!(participants.len(), 4, "{out}");
    assert!(participants.iter().any(|p| p.ends_with(" as server0")));
    // Each step of the lost-update run handles one message; the three
    // initial `Go`s have no sender, so every other step is an arrow.
    let text = mcheck(&["replay", &s, "--format", "json"]);
    let trace: serde_json::Value = serde_json::from_slice(&text.stdout).unwrap();
    let steps = trace["steps"].as_array().unwrap().len();
    let arrows = lines.iter().filter(|l| l.contains("->>")).count();
    assert_eq!(arrows, steps - 3, "{out}");
    for l in lines.iter().filter(|l| l.contains("->>")) {
        let (lhs, _) = l.split_once(':').unwrap();
        let (from, to) = lhs.trim().split_once("->>").unwrap();
        assert!(from.starts_with('P') && to.starts_with('P'), "{l}");
        assert!(
            !l[lhs.len() + 1..].contains(';') || l.contains("#59;") || l.contains("#35;"),
            "{l}"
        );
    }
    assert!(lines.last().unwrap().contains("VIOLATION at step"), "{out}");
}

#[test]
fn dot_has_lanes_and_message_edges() {
    let s = schedule_of(&["run", "lostupdate", "--bug", "1"]);
    let o = mcheck(&["replay", &s, "--format", "dot"]);
    let out = stdout(&o);
    assert!(out.starts_with("digraph trace {"), "{out}");
    assert_eq!(out.matches("subgraph cluster_").count(), 4);
    assert!(out.matches("color=blue").count() > 10);
    assert!(out.trim_end().ends_with('}'));
    assert!(out.contains("violation [shape=octagon"));
}

#[test]
fn shrink_keeps_the_bug_and_never_grows() {
    // A random walk's counterexample is long and noisy; shrinking keeps the
    // same violation with no more steps and simpler choices.
    let file = temp("rs.json");
    let o = mcheck(&[
        "run",
        "lostupdate",
        "--bug",
        "1",
        "-s",
        "rs",
        "--seed",
        "3",
        "-q",
        "--save",
        &file,
    ]);
    assert_eq!(o.status.code(), Some(1));
    let o = mcheck(&["shrink", &file, "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let before = v["before"]["steps"].as_u64().unwrap();
    let after = v["after"]["steps"].as_u64().unwrap();
    assert!(after <= before);
    assert_eq!(v["violation"]["kind"], "monitor");
    let saved = v["saved"].as_str().unwrap();
    assert!(saved.ends_with("rs.shrunk.json"));
    let o = mcheck(&["replay", saved]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

/// clap rejects the format, listing the valid ones.
#[test]
fn unknown_format_lists_the_valid_ones() {
    let s = schedule_of(&["run", "lostupdate", "--bug", "1"]);
    let o = mcheck(&["replay", &s, "--format", "svg"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("'svg'") && e.contains("[possible values: text, mermaid, dot, json]"),
        "{e}"
    );
}
