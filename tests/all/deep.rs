//! `mcheck table --deep` end to end on a filtered tiny run: the JSON shape,
//! and cells that agree with `mcheck run` of the same technique, seeds and
//! parameters.

use crate::common::{json, mcheck, mean_walk};
use serde_json::Value;

/// The deep table's techniques: (column, strategy, explorer (only for
/// the strategies that follow one), randomized).
const COLUMNS: [(&str, &str, &str, bool); 12] = [
    ("RS", "rs", "", true),
    ("IRS", "irs", "", true),
    ("PCT", "pct", "", true),
    ("POS", "pos", "", true),
    ("PCTCP", "pctcp", "", true),
    ("SURW", "surw", "", true),
    ("SS-RR", "ss", "rr", true),
    ("SS-RTC", "ss", "rtc", true),
    ("SS-PRR", "ss", "prr", true),
    ("Hybrid", "hybrid", "rtc", true),
    ("SES-RTC", "ses", "rtc", false),
    ("Portfolio", "portfolio", "rtc", true),
];

#[test]
fn deep_table_json_has_the_budget_the_mean_and_a_cell_per_technique() {
    let v = json(&[
        "table",
        "--deep",
        "--models",
        "lostupdate",
        "--bugs",
        "1",
        "--runs",
        "2",
        "--budget-s",
        "60",
        "--max-schedules",
        "300",
        "-j",
        "2",
        "--json",
        "-q",
    ]);
    assert_eq!(v["deep"], true);
    assert_eq!(v["budget_s"], 60.0);
    assert_eq!(v["max_schedules"], 300);
    assert_eq!(v["runs"], 2);
    assert_eq!(v["min_mean_steps"], 300.0);
    assert_eq!(v["interrupted"], false);
    let names: Vec<&str> = COLUMNS.iter().map(|c| c.0).collect();
    assert_eq!(v["columns"], serde_json::json!(names));
    // One row; at most the mean pass and 11 x 2 + 1 runs of 60 s on 2
    // threads: 60 + 23 * 60 / 2 rounded up.
    assert_eq!(v["worst_case_s"], 60.0 + 690.0);
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 1, "{v}");
    let row = &rows[0];
    assert_eq!(
        (row["model"].as_str(), row["bug"].as_u64()),
        (Some("lostupdate"), Some(1))
    );
    assert_eq!(row["name"], "blind-write");
    let params = row["params"].as_str().expect("params");
    let mean = mean_walk("lostupdate", params);
    assert_eq!(row["mean_steps"].as_f64(), Some(mean), "{row}");
    assert_eq!(row["deep"], mean >= 300.0, "{row}");
    assert_cells_agree_with_run(row, "lostupdate", "1", "300");
}

/// Every cell of `row` (a row of `table --deep` or `table --noise` of
/// `model`'s bug `bug`, two seeds, `max_schedules` per seed, a budget no
/// run reaches) agrees with `mcheck run` of the same technique, seeds
/// and parameters: outcome, count and executed steps per seed, and the
/// medians where every seed or none found the bug.
pub(crate) fn assert_cells_agree_with_run(row: &Value, model: &str, bug: &str, max_schedules: &str) {
    let params = row["params"].as_str().expect("params");
    let cells = row["cells"].as_object().expect("cells");
    assert_eq!(cells.len(), COLUMNS.len(), "{row}");
    for (name, strategy, explorer, randomized) in COLUMNS {
        let cell = &cells[name];
        let runs = if randomized { 2 } else { 1 };
        assert_eq!(cell["runs"], runs, "{name}: {cell}");
        assert_eq!(cell["error"], Value::Null, "{name}: {cell}");
        // The oracle: `mcheck run` of the technique with each seed, its
        // outcome, count and executed steps (sampling: steps; exhaustive:
        // transitions).
        let seeds: Vec<(bool, u64, u64)> = (0..runs)
            .map(|seed| {
                let seed = seed.to_string();
                let mut args = vec![
                    "run", model, "--bug", bug, "--set", params, "-s", strategy, "--seed", &seed, "-j", "1", "--json",
                    "-q",
                ];
                if !explorer.is_empty() {
                    args.extend(["-e", explorer]);
                }
                if randomized {
                    args.extend(["--max-schedules", max_schedules]);
                }
                let r = json(&args);
                let unit = if randomized { "schedules" } else { "states" };
                let [count, steps, transitions] = [unit, "steps", "transitions"].map(|k| r[k].as_u64().unwrap());
                // The portfolio executes both: its samplers' steps and its
                // SES member's transitions.
                let steps = match strategy {
                    "portfolio" => steps + transitions,
                    _ => steps.max(transitions),
                };
                (r["outcome"] == "violation", count, steps)
            })
            .collect();
        for (seed, &(found, count, steps)) in seeds.iter().enumerate() {
            let run = &cell["seeds"][seed];
            assert_eq!(run["seed"], seed, "{name}: {cell}");
            assert_eq!(run["found"], found, "{name}: {cell}");
            assert_eq!(run["count"], count, "{name}: {cell}");
            assert_eq!(run["steps"], steps, "{name}: {cell}");
        }
        let found = seeds.iter().filter(|s| s.0).count();
        assert_eq!(cell["found_runs"], found, "{name}: {cell}");
        // When every seed finds the bug the medians are the ordinary ones
        // (of two, their mean); when none does, they are not reached (IRS
        // here: its depth cut falls short of these executions).
        let mean = |k: usize| seeds.iter().map(|s| [s.1, s.2][k] as f64).sum::<f64>() / runs as f64;
        for (k, cost) in ["count", "steps"].into_iter().enumerate() {
            let median = &cell[cost]["median"];
            if found == runs {
                assert_eq!(median.as_f64(), Some(mean(k)), "{name} {cost}: {cell}");
            } else if found == 0 {
                assert_eq!(*median, Value::Null, "{name} {cost}: {cell}");
            }
        }
        if found == runs || found == 0 {
            assert_eq!(cell["found"], found > 0, "{name}: {cell}");
        }
    }
}

#[test]
fn deep_table_markdown_states_its_budget_and_rejects_a_state_cap() {
    let o = mcheck(&[
        "table",
        "--deep",
        "--models",
        "lostupdate",
        "--bugs",
        "1",
        "--runs",
        "1",
        "--budget-s",
        "5",
        "--max-schedules",
        "50",
        "-j",
        "1",
        "-q",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.starts_with("Budget per cell and seed: 5 s and 50 schedules (SES-RTC: 5 s only); medians over 1 seed."),
        "{out}"
    );
    assert!(
        out.contains("| model | bug | parameters | mean steps | RS | IRS | PCT | POS | PCTCP | SURW | SS-RR |"),
        "{out}"
    );
    assert!(out.contains("| lostupdate | 1 blind-write | "), "{out}");
    let o = mcheck(&["table", "--deep", "--max-states", "10"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--max-states does not apply to --deep"), "{err}");
}
