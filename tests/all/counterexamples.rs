//! Counterexamples people can use: Mermaid and DOT renderings, shrinking
//! through the CLI, and the nondeterminism check of replay.

use crate::common::{Scratch, mcheck, stderr, stdout};

/// The path of file `name` in `scratch`, as an argument.
fn temp(scratch: &Scratch, name: &str) -> String {
    scratch.file(name).to_str().unwrap().to_string()
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
    let scratch = Scratch::new("cex");
    let file = temp(&scratch, "rs.json");
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
        e.contains("'svg'") && e.contains("[possible values: text, mermaid, dot, json, html]"),
        "{e}"
    );
}

/// A saved file with `field` set to `value` (JSON), written next to it
/// (in `scratch`) as `name`.
fn edited(scratch: &Scratch, file: &str, name: &str, edit: impl Fn(&mut serde_json::Value)) -> String {
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    edit(&mut v);
    let out = temp(scratch, name);
    std::fs::write(&out, v.to_string()).unwrap();
    out
}

#[test]
fn an_edited_file_is_blamed_on_the_edit_and_unknown_versions_are_rejected() {
    let scratch = Scratch::new("cex");
    let file = temp(&scratch, "lu.json");
    let o = mcheck(&["run", "lostupdate", "--bug", "1", "-q", "--save", &file]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // The expected message edited: the trail still matches, the violation
    // does not; the edit is named, the model is not blamed.
    let f = edited(&scratch, &file, "lu-message.json", |v| {
        v["expected"]["message"] = "something else".into()
    });
    let o = mcheck(&["replay", &f]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("the message differs") && e.contains("edited"), "{e}");
    assert!(!e.contains("nondeterministic"), "{e}");
    // The trace is still shown.
    assert!(stdout(&o).contains("!! monitor in counter"), "{}", stdout(&o));
    // The trail removed and the path emptied: a different outcome, still
    // checked against the expectation.
    let f = edited(&scratch, &file, "lu-path.json", |v| {
        v["trail"] = serde_json::json!([]);
        v["path"] = serde_json::json!([]);
    });
    let o = mcheck(&["replay", &f]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("without the expected violation") && e.contains("edited"),
        "{e}"
    );
    // The trail removed only: still replays.
    let f = edited(&scratch, &file, "lu-notrail.json", |v| {
        v["trail"] = serde_json::json!([])
    });
    assert_eq!(mcheck(&["replay", &f]).status.code(), Some(1));
    // An unknown version is refused, in one line.
    let f = edited(&scratch, &file, "lu-v3.json", |v| v["version"] = 3.into());
    let o = mcheck(&["replay", &f]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("version 3") && e.contains("not supported"), "{e}");
}
