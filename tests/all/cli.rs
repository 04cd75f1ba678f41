//! End-to-end tests of the `mcheck` binary: exit codes, JSON, save/replay,
//! errors for people.

use crate::common::{Scratch, mcheck, stderr, stdout};

use serde_json::Value;
use std::process::{Command, Output};

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(o)))
}

#[test]
fn violation_exits_1_with_trace_and_schedule() {
    let o = mcheck(&[
        "run",
        "lostupdate",
        "--bug",
        "1",
        "--explorer",
        "rtc",
        "--strategy",
        "ses",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("VIOLATION at step"), "{out}");
    assert!(out.contains("Trace:"), "{out}");
    assert!(out.contains("mcheck2:lostupdate:"), "{out}");
}

#[test]
fn json_violation_save_and_replay() {
    let scratch = Scratch::new("cli");
    let dir = scratch.dir();
    let file = dir.join("cex.json");
    let file = file.to_str().unwrap();
    let o = mcheck(&[
        "run",
        "lostupdate",
        "--bug",
        "1",
        "-s",
        "ses",
        "--json",
        "--save",
        file,
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["outcome"], "violation");
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["model"], "lostupdate");
    assert_eq!(v["bug"], 1);
    assert_eq!(v["strategy"], "ses");
    assert_eq!(v["explorer"], "rtc");
    for field in [
        "params",
        "seed",
        "threads",
        "bounded_by",
        "violation",
        "schedule",
        "states",
        "transitions",
        "deferrals",
        "schedules",
        "steps",
        "truncated",
        "max_delays",
        "strata",
        "cache_full",
        "peak_memory_mb",
        "elapsed_s",
    ] {
        assert!(v.get(field).is_some(), "missing {field} in {v}");
    }
    let text = v["schedule"].as_str().unwrap().to_string();
    // The saved file replays (exit 1: the violation is reproduced) ...
    let r = mcheck(&["replay", file]);
    assert_eq!(r.status.code(), Some(1), "{}{}", stdout(&r), stderr(&r));
    assert!(stdout(&r).contains("!! "), "{}", stdout(&r));
    // ... and so does the text form alone.
    let r = mcheck(&["replay", &text]);
    assert_eq!(r.status.code(), Some(1), "{}{}", stdout(&r), stderr(&r));
    let r = mcheck(&["replay", &text, "--format", "json"]);
    assert_eq!(r.status.code(), Some(1));
    assert!(json(&r)["violation"].is_object());
}

/// `mcheck run`'s default strategy is the portfolio: the header says so,
/// the report names the member that found the bug, and its schedule
/// replays; without the bug it verifies with the states SES alone counts.
#[test]
fn the_default_strategy_is_the_portfolio() {
    let o = mcheck(&["run", "lostupdate", "--bug", "1", "-q"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    let head = "mcheck: lostupdate bug 1 (blind-write) [clients=3,increments=3], portfolio with rtc, seed 0";
    assert!(out.starts_with(head), "{out}");
    assert!(out.contains("found by: "), "{out}");
    let v = json(&mcheck(&["run", "lostupdate", "--bug", "1", "--json", "-q"]));
    assert_eq!(v["strategy"], "portfolio");
    assert!(v["found_by"].is_string(), "{v}");
    let r = mcheck(&["replay", v["schedule"].as_str().expect("a schedule")]);
    assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
    let set = ["--set", "clients=2,increments=1", "--json", "-q"];
    let verified = json(&mcheck(&[&["run", "lostupdate"][..], &set].concat()));
    let ses = json(&mcheck(&[&["run", "lostupdate", "-s", "ses"][..], &set].concat()));
    assert_eq!(
        (&verified["outcome"], &verified["states"]),
        (&"verified".into(), &ses["states"])
    );
}

/// `chain --bug 7` has a violation 3 delays deep that the program-state
/// cache prunes at bound 3; `--exact-bound` finds it, and the report says
/// which guarantee each run gives.
#[test]
fn exact_bound_finds_what_the_program_state_cache_prunes() {
    let base = ["run", "chain", "--bug", "7", "-s", "ses", "--max-delays", "3", "-q"];
    let o = mcheck(&base);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("outcome: bounded (stopped at --max-delays with work left)"),
        "{out}"
    );
    assert!(
        out.contains(
            "executions pruned by the program-state cache may hide a violation within 3 delays (use --exact-bound)"
        ),
        "{out}"
    );
    let v = json(&mcheck(&[&base[..], &["--json"]].concat()));
    assert_eq!(
        (&v["cache_key"], &v["bounded_by"]),
        (&"program_state".into(), &"max_delays".into())
    );

    let o = mcheck(&[&base[..], &["--exact-bound", "--json"]].concat());
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let v = json(&o);
    assert_eq!(v["cache_key"], "program_and_explorer_state");
    let schedule = v["schedule"].as_str().expect("a schedule").to_string();
    // Three delays: at steps 14, 1 and 7 after the previous one.
    assert!(schedule.contains(":d=14.1.7:"), "{schedule}");
    let r = mcheck(&["replay", &schedule]);
    assert_eq!(r.status.code(), Some(1), "{}{}", stdout(&r), stderr(&r));

    // A bound reached with the exact key says so.
    let o = mcheck(&[
        "run",
        "chain",
        "--bug",
        "7",
        "-s",
        "ses",
        "--max-delays",
        "2",
        "--exact-bound",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("guarantee: no execution with at most 2 delays violates anything (--exact-bound)"),
        "{}",
        stdout(&o)
    );
}

/// `-s hybrid`: chain's bug 7 after an SES phase of 2,000 states (SES
/// alone with rtc needs 16,941), the same report on 1 and 2 threads, and a
/// saved counterexample that replays.
#[test]
fn hybrid_finds_chain_bug_7_and_its_counterexample_replays() {
    let scratch = Scratch::new("cli-hybrid");
    let dir = scratch.dir();
    let file = dir.join("cex.json");
    let file = file.to_str().unwrap();
    let base = [
        "run",
        "chain",
        "--bug",
        "7",
        "-s",
        "hybrid",
        "-e",
        "rtc",
        "--max-states",
        "2000",
        "--json",
        "-q",
    ];
    let o = mcheck(&[&base[..], &["-j", "1", "--save", file]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!((&v["strategy"], &v["outcome"]), (&"hybrid".into(), &"violation".into()));
    // 193 samples with SS's default, the mixed placement (its near twins);
    // the paper's uniform placement (`--placement uniform`) needs 850.
    assert_eq!((&v["states"], &v["schedules"]), (&2000.into(), &193.into()));
    let two = json(&mcheck(&[&base[..], &["-j", "2"]].concat()));
    assert_eq!((&two["schedule"], &two["steps"]), (&v["schedule"], &v["steps"]));
    let r = mcheck(&["replay", file]);
    assert_eq!(r.status.code(), Some(1), "{}{}", stdout(&r), stderr(&r));
    assert!(stdout(&r).contains("!! monitor in propagation"), "{}", stdout(&r));
}

#[test]
fn correct_version_is_verified() {
    let o = mcheck(&["run", "lostupdate", "--json", "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["outcome"], "verified");
    assert!(v["states"].as_u64().unwrap() >= 10_000);
    let o = mcheck(&["run", "lostupdate", "--strategy", "dfs", "--json", "-q"]);
    assert_eq!(json(&o)["outcome"], "verified");
}

#[test]
fn list_markdown_is_the_models_page() {
    let o = mcheck(&["list", "--markdown"]);
    assert_eq!(o.status.code(), Some(0));
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/models.md")).unwrap();
    let text = stdout(&o);
    assert!(text.starts_with("# The shipped models\n"), "{text}");
    assert!(
        page.starts_with(&text),
        "docs/models.md is not `mcheck list --markdown` followed by its figures"
    );
    let o = mcheck(&["list", "--measure"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--markdown"), "{}", stderr(&o));
}

#[test]
fn list_json_lists_models_explorers_strategies() {
    let o = mcheck(&["list", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v = json(&o);
    let models = v["models"].as_array().unwrap();
    let lu = models
        .iter()
        .find(|m| m["name"] == "lostupdate")
        .expect("lostupdate listed");
    let bug = &lu["bugs"][0];
    assert_eq!(bug["id"], 1);
    assert!(bug["name"].is_string() && bug["description"].as_str().unwrap().len() > 40);
    assert!(
        lu["params"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["name"].is_string() && p["default"].is_u64())
    );
    let names = |k: &str| -> Vec<String> {
        v[k].as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names("explorers")[..3], ["rr", "rtc", "prr"]);
    assert!(names("strategies").contains(&"ses".to_string()));
    assert!(names("strategies").contains(&"dfs".to_string()));
}

/// Bad input found by mcheck: one line naming the bad value and the valid
/// ones, exit 2, nothing on stdout.
#[test]
fn bad_input_is_one_line_and_exit_2() {
    let cases: &[(&[&str], &[&str])] = &[
        (&["run", "nosuch"], &["\"nosuch\"", "lostupdate"]),
        (&["run", "lostupdate", "-e", "zz"], &["\"zz\"", "rr", "rtc", "prr"]),
        (&["run", "lostupdate", "--bug", "99"], &["99", "valid bugs"]),
        (&["run", "lostupdate", "--bug", "x"], &["\"x\""]),
        (
            &["run", "lostupdate", "--set", "nosuch=1"],
            &["\"nosuch\"", "valid parameters"],
        ),
        (&["run", "lostupdate", "--set", "clients"], &["KEY=VALUE"]),
        (&["replay", "mcheck1:lostupdate:garbage"], &["garbage"]),
        (
            &["replay", "mcheck1:nosuch:p=-:bug=-:e=rtc:seed=0:max-steps=9:d="],
            &["\"nosuch\""],
        ),
        (&["replay", "/no/such/file"], &["/no/such/file"]),
    ];
    for (args, needles) in cases {
        let o = mcheck(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: not one line: {err}");
        assert!(err.starts_with("mcheck: "), "{args:?}: {err}");
        assert_eq!(stdout(&o), "", "{args:?}");
        for n in *needles {
            assert!(err.contains(n), "{args:?}: {err:?} lacks {n:?}");
        }
    }
}

/// Bad arguments found by clap: clap's message in full (what is wrong, its
/// tip or suggestion, the command's usage), exit 2.
#[test]
fn clap_messages_are_shown_in_full() {
    let cases: &[(&[&str], &[&str])] = &[
        // The names of the missing arguments and the subcommand's usage.
        (
            &["run"],
            &["required arguments were not provided", "<MODEL>", "Usage: mcheck run"],
        ),
        // clap's tip survives.
        (
            &["run", "lostupdate", "--seed", "-1"],
            &["'-1'", "tip:", "-- -1", "Usage: mcheck run"],
        ),
        (
            &["run", "lostupdate", "-s", "se"],
            &[
                "'se'",
                "possible values: ses, ss, dfs, pb, rs, irs, pct, pos, pctcp, surw, portfolio, hybrid",
                "similar value exists: 'ses'",
            ],
        ),
        (
            &["run", "lostupdate", "--stratgy", "ses"],
            &[
                "'--stratgy'",
                "similar argument exists: '--strategy'",
                "Usage: mcheck run",
            ],
        ),
        (
            &["run", "lostupdate", "--max-steps", "0"],
            &["'0'", "--max-steps", "1..=100000000"],
        ),
        (&["run", "lostupdate", "-j", "0"], &["'0'", "--threads", "1..=4096"]),
        (
            &["run", "lostupdate", "--shard", "3/2"],
            &["'3/2'", "--shard", "0 <= K < N"],
        ),
        (
            &["run", "lostupdate", "--time-limit", "0"],
            &["'0'", "--time-limit", "above 0"],
        ),
        (
            &["run", "lostupdate", "--c1", "0.5"],
            &["'0.5'", "--c1", "from 1 to 1e12"],
        ),
        (
            &["run", "lostupdate", "--pct-depth", "0"],
            &["'0'", "--pct-depth", "1..=1000"],
        ),
        (
            &["replay", "x", "--format", "svg"],
            &["'svg'", "possible values: text, mermaid, dot, json"],
        ),
        (&["frobnicate"], &["'frobnicate'", "Usage: mcheck <COMMAND>"]),
        (&["run", "lostupdate", "--frob"], &["'--frob'", "Usage: mcheck run"]),
        (
            &[],
            &["Usage: mcheck <COMMAND>", "list", "run", "replay", "table", "shrink"],
        ),
    ];
    for (args, needles) in cases {
        let o = mcheck(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.trim_end().lines().count() > 1, "{args:?}: cut short: {err}");
        for n in *needles {
            assert!(err.contains(n), "{args:?}: {err:?} lacks {n:?}");
        }
    }
}

/// `--help` lists the values of `--strategy`, `--format` and the built-in
/// explorers, shows the defaults of `--c1` and `--c2`, and documents the
/// exit statuses, interrupted included.
#[test]
fn help_lists_values_defaults_and_exit_statuses() {
    let help = |args: &[&str]| {
        let o = mcheck(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        stdout(&o)
    };
    let run = help(&["run", "-h"]);
    for n in [
        "[possible values: ses, ss, dfs, pb, rs, irs, pct, pos, pctcp, surw, portfolio, hybrid]",
        "rr, rtc, prr, or one of the model's own",
        "--c1 <X>",
        "[default: 100]",
        "[default: 2]",
    ] {
        assert!(run.contains(n), "run -h lacks {n:?}: {run}");
    }
    let run_long = help(&["run", "--help"]);
    // One line per strategy (clap aligns the descriptions).
    for (name, what) in [
        ("pct", "PCT: random"),
        ("pos", "POS: partial"),
        ("pctcp", "PCTCP: PCT"),
        ("surw", "SURW: selectively"),
        ("hybrid", "ses until a state budget"),
        ("portfolio", "ses (half of the steps)"),
    ] {
        let line = |l: &str| l.trim_start().starts_with(&format!("- {name}:")) && l.contains(what);
        assert!(run_long.lines().any(line), "{name}: {run_long}");
    }
    let replay = help(&["replay", "-h"]);
    assert!(
        replay.contains("[possible values: text, mermaid, dot, json, html]"),
        "{replay}"
    );
    let top = help(&["--help"]);
    assert!(top.contains("130 interrupted"), "{top}");
}

/// Each flag that does not apply to the chosen strategy is rejected before
/// the search, naming the strategies it applies to; the same flags pass
/// where they apply.
#[test]
fn inapplicable_flags_are_rejected_naming_their_strategies() {
    let exhaustive = "it applies to ses, dfs, pb, hybrid, portfolio";
    let sampling = "it applies to ss, rs, irs, pct, pos, pctcp, surw";
    let cases: &[(&str, &[&str], &str)] = &[
        ("ses", &["--shard", "0/2"], sampling),
        ("dfs", &["--shard", "1/2"], sampling),
        ("pb", &["--shard", "0/3"], sampling),
        (
            "dfs",
            &["--max-delays", "1"],
            "it applies to ses, pb, ss, irs, hybrid, portfolio",
        ),
        (
            "rs",
            &["--max-delays", "1"],
            "it applies to ses, pb, ss, irs, hybrid, portfolio",
        ),
        (
            "pct",
            &["--max-delays", "1"],
            "it applies to ses, pb, ss, irs, hybrid, portfolio",
        ),
        ("ss", &["--max-states", "10"], exhaustive),
        ("rs", &["--cache-mb", "8"], exhaustive),
        ("irs", &["--max-memory-mb", "64"], exhaustive),
        (
            "ses",
            &["--max-schedules", "10"],
            "it applies to ss, rs, irs, pct, pos, pctcp, surw, hybrid, portfolio",
        ),
        ("dfs", &["-e", "prr"], "it applies to ses, ss, hybrid, portfolio"),
        (
            "pb",
            &["--seed", "3"],
            "it applies to ses, ss, rs, irs, pct, pos, pctcp, surw, hybrid, portfolio",
        ),
        ("ses", &["--c1", "10"], "it applies to ss, hybrid"),
        ("rs", &["--placement", "uniform"], "it applies to ss, hybrid"),
        ("rs", &["--pct-depth", "2"], "it applies to pct, pctcp"),
        ("ses", &["--irs-step", "3"], "it applies to irs"),
        ("ss", &["--exact-bound"], "it applies to ses, pb"),
        ("dfs", &["--exact-bound"], "it applies to ses, pb"),
        ("ss", &["--plain"], "it applies to ses, dfs, pb, portfolio"),
    ];
    for (strategy, flag, applies) in cases {
        // A model whose search would not end: the check comes first.
        let mut args = vec!["run", "twophase-packed", "--set", "rms=12", "-s", strategy];
        args.extend_from_slice(flag);
        let start = std::time::Instant::now();
        let o = mcheck(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(start.elapsed().as_secs_f64() < 2.0, "{args:?}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        let flag_name = flag[0].trim_start_matches('-');
        assert!(err.contains(flag_name), "{args:?}: {err}");
        assert!(err.contains(&format!("--strategy {strategy}")), "{args:?}: {err}");
        assert!(err.contains(applies), "{args:?}: {err} lacks {applies:?}");
    }
    // Where they apply they are honoured.
    let o = mcheck(&[
        "run",
        "lostupdate",
        "-s",
        "rs",
        "--shard",
        "1/2",
        "-j",
        "3",
        "--max-schedules",
        "50",
        "--seed",
        "4",
        "--json",
        "-q",
    ]);
    let v = json(&o);
    assert_eq!(
        (v["shard"].as_str(), v["threads"].as_u64(), v["seed"].as_u64()),
        (Some("1/2"), Some(3), Some(4))
    );
    assert_eq!(v["bounded_by"], "schedules");
    let o = mcheck(&[
        "run",
        "lostupdate",
        "-s",
        "pb",
        "--max-delays",
        "1",
        "--max-states",
        "100000",
        "--json",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(json(&o)["max_delays"].as_u64().unwrap() <= 1);
}

/// `run` and `table` share one validation: the same bad value gets the
/// same message, at once (`table -j 10000` used to run forever).
#[test]
fn table_validates_like_run() {
    for (run_flag, table_flag, value) in [
        ("-j", "-j", "10000"),
        ("--time-limit", "--budget-s", "0"),
        ("--max-states", "--max-states", "0"),
    ] {
        let start = std::time::Instant::now();
        let r = mcheck(&["run", "lostupdate", run_flag, value]);
        let t = mcheck(&["table", table_flag, value]);
        assert!(start.elapsed().as_secs_f64() < 2.0);
        assert_eq!(
            (r.status.code(), t.status.code()),
            (Some(2), Some(2)),
            "{}{}",
            stderr(&r),
            stderr(&t)
        );
        let reason = |o: &Output| {
            stderr(o)
                .lines()
                .next()
                .unwrap_or("")
                .split("': ")
                .nth(1)
                .map(str::to_string)
        };
        assert!(reason(&r).is_some(), "{}", stderr(&r));
        assert_eq!(reason(&r), reason(&t), "{}{}", stderr(&r), stderr(&t));
    }
}

/// `--save` into a missing directory is refused before the search (which
/// here would not end), exit 2, nothing on stdout.
#[test]
fn save_path_is_checked_before_the_search() {
    let start = std::time::Instant::now();
    let o = mcheck(&[
        "run",
        "twophase-packed",
        "--set",
        "rms=12",
        "-s",
        "dfs",
        "--save",
        "/no/such/dir/cex.json",
    ]);
    assert!(start.elapsed().as_secs_f64() < 2.0);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("--save") && err.contains("\"/no/such/dir\" does not exist"),
        "{err}"
    );
    assert_eq!(stdout(&o), "");
    // A directory is no file either.
    let dir = std::env::temp_dir();
    let o = mcheck(&["run", "lostupdate", "--save", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is a directory"), "{}", stderr(&o));
}

/// A write that fails after the search (the disk is full) still prints the
/// whole report and keeps the search's exit status, with a warning last.
#[cfg(target_os = "linux")]
#[test]
fn failed_save_after_the_search_keeps_the_report() {
    let o = mcheck(&["run", "lostupdate", "--bug", "1", "-q", "--save", "/dev/full"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    for n in [
        "VIOLATION at step",
        "Trace:",
        "mcheck2:lostupdate:",
        "outcome: violation",
    ] {
        assert!(out.contains(n), "{out} lacks {n:?}");
    }
    assert!(!out.contains("Saved to"), "{out}");
    let err = stderr(&o);
    assert!(
        err.starts_with("mcheck: warning: could not write --save file \"/dev/full\""),
        "{err}"
    );
}

/// Counts read as English: "1 delay", "2 steps".
#[test]
fn shrink_note_counts_in_english() {
    let o = mcheck(&["run", "lostupdate", "--bug", "1", "--shrink", "--json", "-q"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let notes = json(&o)["notes"].to_string();
    assert!(notes.contains("shrunk the counterexample from 1 delay and "), "{notes}");
    let words: Vec<&str> = notes.split(|c: char| !c.is_alphanumeric()).collect();
    for w in words.windows(2) {
        assert!(!(w[0] == "1" && w[1].ends_with('s')), "{notes}");
    }
}

/// Every strategy stops within a second of `--time-limit` and still reports.
#[test]
fn time_limit_holds_for_every_strategy() {
    for s in [
        "ses",
        "dfs",
        "pb",
        "rs",
        "irs",
        "pct",
        "pos",
        "pctcp",
        "surw",
        "hybrid",
        "portfolio",
    ] {
        let start = std::time::Instant::now();
        let o = mcheck(&[
            "run",
            "lostupdate",
            "--set",
            "clients=6",
            "--set",
            "increments=5",
            "-s",
            s,
            "--time-limit",
            "0.3",
            "--json",
            "-q",
        ]);
        let wall = start.elapsed().as_secs_f64();
        assert_eq!(o.status.code(), Some(0), "{s}: {}", stderr(&o));
        let v = json(&o);
        assert_eq!(v["outcome"], "bounded", "{s}");
        assert_eq!(v["bounded_by"], "time", "{s}");
        assert!(
            v["states"].as_u64().unwrap() + v["schedules"].as_u64().unwrap() > 0,
            "{s}"
        );
        assert!(wall < 1.3, "{s} took {wall:.2}s for a 0.3 s limit");
    }
}

#[test]
fn state_and_schedule_budgets_stop_with_a_report() {
    let o = mcheck(&[
        "run",
        "lostupdate",
        "--set",
        "clients=5",
        "--max-states",
        "20000",
        "--json",
        "-q",
    ]);
    let v = json(&o);
    assert_eq!(
        (v["outcome"].as_str(), v["bounded_by"].as_str()),
        (Some("bounded"), Some("states"))
    );
    let states = v["states"].as_u64().unwrap();
    assert!((20_000..30_000).contains(&states), "{states}");
    let o = mcheck(&[
        "run",
        "lostupdate",
        "-s",
        "rs",
        "--max-schedules",
        "123",
        "--json",
        "-q",
    ]);
    let v = json(&o);
    assert_eq!(
        (v["outcome"].as_str(), v["bounded_by"].as_str()),
        (Some("bounded"), Some("schedules"))
    );
    assert_eq!(v["schedules"], 123);
}

#[test]
fn memory_budget_names_what_filled_it() {
    let o = mcheck(&[
        "run",
        "lostupdate",
        "--set",
        "clients=6",
        "--set",
        "increments=5",
        "--max-memory-mb",
        "64",
        "--json",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(
        (v["outcome"].as_str(), v["bounded_by"].as_str()),
        (Some("bounded"), Some("memory"))
    );
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("memory budget of 64 MiB") && notes.contains("frontier"),
        "{notes}"
    );
    assert!(v["peak_memory_mb"].as_f64().unwrap() < 100.0);
}

/// Send `signal` (INT, TERM) to process `pid` with kill(1).
#[cfg(unix)]
fn kill(signal: &str, pid: u32) {
    let ok = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(ok.success());
}

/// A search that does not end within the test: twophase-packed with 12 resource
/// managers, by DFS.
#[cfg(unix)]
const ENDLESS: &[&str] = &["run", "twophase-packed", "--set", "rms=12", "--strategy", "dfs"];

/// SIGINT and SIGTERM stop the search; the header was printed before (it
/// is read here while the search runs), the report so far after, and the
/// exit status is 130 (documented in --help), never 0.
#[cfg(unix)]
#[test]
fn sigint_and_sigterm_print_the_report_and_exit_130() {
    use std::io::{BufRead, BufReader, Read};
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    for signal in ["INT", "TERM"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcheck"))
            .args(ENDLESS)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("mcheck starts");
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut header = String::new();
        out.read_line(&mut header).expect("a header line");
        assert_eq!(header, "mcheck: twophase-packed [rms=12,rounds=1], dfs\n", "{signal}");
        assert_eq!(
            child.try_wait().expect("wait"),
            None,
            "{signal}: ended before the signal"
        );
        std::thread::sleep(Duration::from_millis(300));
        let sent = Instant::now();
        kill(signal, child.id());
        let mut rest = String::new();
        out.read_to_string(&mut rest).expect("the report");
        let status = child.wait().expect("mcheck ends");
        assert!(
            sent.elapsed() < Duration::from_secs(3),
            "{signal}: took {:?}",
            sent.elapsed()
        );
        let mut err = String::new();
        child.stderr.take().expect("stderr").read_to_string(&mut err).unwrap();
        assert_eq!(status.code(), Some(130), "{signal}: {rest}{err}");
        assert!(
            rest.contains("\noutcome: bounded (interrupted)\nchecked: safety\nstates "),
            "{signal}: {rest}"
        );
        assert!(err.contains("interrupted; finishing the report"), "{signal}: {err}");
    }
    // --json: the report so far as JSON, with bounded_by interrupted.
    let child = Command::new(env!("CARGO_BIN_EXE_mcheck"))
        .args(ENDLESS)
        .arg("--json")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mcheck starts");
    std::thread::sleep(Duration::from_millis(1000));
    kill("TERM", child.id());
    let o = child.wait_with_output().expect("mcheck ends");
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let r = json(&o);
    assert_eq!(
        (r["outcome"].as_str(), r["bounded_by"].as_str()),
        (Some("bounded"), Some("interrupted"))
    );
    assert!(r["states"].as_u64().unwrap() > 1000, "{r}");
}

/// An interrupted `table` prints the rows it finished (streamed as they
/// were done), its legend and ratios, and exits 130.
#[cfg(unix)]
#[test]
fn interrupted_table_prints_its_rows_and_exits_130() {
    use std::io::{BufRead, BufReader, Read};
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcheck"))
        .args(["table", "--budget-s", "0.2", "--runs", "1", "-q"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mcheck starts");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut seen = String::new();
    // The heading and the first row arrive while the table runs.
    while seen.lines().count() < 3 {
        assert!(out.read_line(&mut seen).expect("a line") > 0, "ended early: {seen}");
    }
    assert!(seen.starts_with("| model | bug | PB |"), "{seen}");
    kill("INT", child.id());
    out.read_to_string(&mut seen).expect("the rest");
    let status = child.wait().expect("mcheck ends");
    assert_eq!(status.code(), Some(130), "{seen}");
    let rows = seen.lines().skip(2).take_while(|l| l.starts_with("| ")).count();
    assert!(rows >= 1, "{seen}");
    let done = if rows == 1 {
        "1 row done".to_string()
    } else {
        format!("{rows} rows done")
    };
    assert!(seen.contains(&format!("Interrupted: {done}")), "{seen}");
    assert!(seen.contains("| best SES vs PB (states) |"), "{seen}");
    // --json: the rows done, and whether the table was interrupted.
    let child = Command::new(env!("CARGO_BIN_EXE_mcheck"))
        .args(["table", "--budget-s", "0.2", "--runs", "1", "-q", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mcheck starts");
    std::thread::sleep(std::time::Duration::from_millis(500));
    kill("TERM", child.id());
    let o = child.wait_with_output().expect("mcheck ends");
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["interrupted"], true, "{v}");
    let columns = v["columns"].as_array().expect("columns").len();
    for row in v["rows"].as_array().expect("rows") {
        assert_eq!(row["cells"].as_object().expect("cells").len(), columns, "{row}");
    }
}

/// A reader that goes away (`mcheck list | head -1`) ends every command
/// quietly: killed by SIGPIPE as Unix tools are (a shell shows 141), no
/// panic, no exit 101, nothing on stderr. The pipe's read end is closed
/// before mcheck starts, so its first write meets a closed pipe.
#[cfg(unix)]
#[test]
fn closed_stdout_ends_every_command_quietly() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let schedule = json(&mcheck(&["run", "lostupdate", "--bug", "1", "--json", "-q"]))["schedule"]
        .as_str()
        .expect("a schedule")
        .to_string();
    let table = [
        "table",
        "--models",
        "lostupdate",
        "--bugs",
        "1",
        "--budget-s",
        "0.2",
        "--runs",
        "1",
        "-q",
    ];
    let mut cases: Vec<Vec<&str>> = vec![
        vec!["list"],
        vec!["list", "--json"],
        vec!["list", "--markdown"],
        vec!["--help"],
        vec!["run", "lostupdate", "--bug", "1"],
        vec!["run", "lostupdate", "--bug", "1", "--json", "-q"],
        vec!["run", "lostupdate", "-s", "rs", "--max-schedules", "50"],
        vec!["shrink", &schedule],
        vec!["shrink", &schedule, "--json"],
        table.to_vec(),
        [&table[..], &["--json"]].concat(),
    ];
    for format in ["text", "mermaid", "dot", "json"] {
        cases.push(vec!["replay", &schedule, "--format", format]);
    }
    for args in &cases {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let o = Command::new(env!("CARGO_BIN_EXE_mcheck"))
            .args(args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .expect("mcheck runs");
        assert_eq!(o.status.signal(), Some(13), "{args:?}: {:?} {}", o.status, stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?}");
    }
}

/// `--plain` runs the plain stratified search (ARCHITECTURE.md,
/// "The plain search"), and says so: the optimised search's figures in every
/// stratum, its outcome and its counterexample (a stratum a violation
/// stopped counts only the work done: the strata before it); on one
/// thread only.
#[test]
fn plain_gives_the_figures_and_counterexample_of_the_optimised_search() {
    let strata = |v: &Value| -> Vec<[Value; 5]> {
        let strata = v["strata"].as_array().expect("strata");
        let figures = ["bound", "new_states", "transitions", "deferrals", "frontier"];
        strata.iter().map(|s| figures.map(|k| s[k].clone())).collect()
    };
    for strategy in ["ses", "dfs", "pb"] {
        for model in [&["twophase"][..], &["lostupdate", "--bug", "1"]] {
            let args = [&["run"][..], model, &["-s", strategy, "--json"]].concat();
            let (fast, plain) = (mcheck(&args), mcheck(&[&args[..], &["--plain"]].concat()));
            assert_eq!(fast.status.code(), plain.status.code(), "{args:?}: {}", stderr(&plain));
            let (fast, plain) = (json(&fast), json(&plain));
            for key in ["outcome", "states", "violation", "schedule"] {
                assert_eq!(fast[key], plain[key], "{args:?}: {key}");
            }
            let (f, p) = (strata(&fast), strata(&plain));
            let complete = f.len() - usize::from(!fast["violation"].is_null());
            assert_eq!((f.len(), &f[..complete]), (p.len(), &p[..complete]), "{args:?}");
            let notes = plain["notes"].to_string();
            assert!(notes.contains("plain stratified search"), "{args:?}: {notes}");
        }
    }
    let o = mcheck(&["run", "twophase", "-s", "ses", "-j", "2", "--plain"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("runs on one thread"), "{}", stderr(&o));
}
