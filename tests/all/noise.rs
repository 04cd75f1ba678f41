//! `mcheck table --noise` end to end on one row at one size: the JSON
//! shape, cells that agree with `mcheck run` of the same technique, seeds
//! and parameters, the Markdown's sections, and its errors.

use crate::common::{json, mcheck, mean_walk};
use crate::deep::assert_cells_agree_with_run;

#[test]
fn noise_table_json_has_a_row_per_size_and_cells_that_agree_with_run() {
    let v = json(&[
        "table",
        "--noise",
        "--models",
        "paxos",
        "--bugs",
        "2",
        "--sizes",
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
    assert_eq!((v["noise"].as_bool(), v["deep"].as_bool()), (Some(true), Some(false)));
    assert_eq!(v["sizes"], serde_json::json!([1]));
    assert_eq!((v["budget_s"].as_f64(), v["runs"].as_u64()), (Some(60.0), Some(2)));
    // One row; at most the mean pass and 11 x 2 + 1 runs of 60 s on 2
    // threads.
    assert_eq!(v["worst_case_s"], 60.0 + 690.0);
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 1, "{v}");
    let row = &rows[0];
    assert_eq!((row["model"].as_str(), row["bug"].as_u64()), (Some("paxos"), Some(2)));
    assert_eq!(row["name"], "accept-below-promise");
    let params = row["params"].as_str().expect("params");
    assert_eq!(params, "acceptors=3,noise=1,proposals=1,proposers=2,retries=1");
    assert_eq!(row["mean_steps"].as_f64(), Some(mean_walk("paxos", params)), "{row}");
    assert_cells_agree_with_run(row, "paxos", "2", "300");
    // Deterministic figures: SES-RTC's states and steps to the bug.
    let ses = &row["cells"]["SES-RTC"];
    let figures = [&ses["count"]["median"], &ses["steps"]["median"], &ses["found_runs"]].map(|v| v.as_f64());
    assert_eq!(figures, [Some(110.0), Some(111.0), Some(1.0)], "{ses}");
}

#[test]
fn noise_table_markdown_has_the_sizes_the_races_and_the_tests() {
    let o = mcheck(&[
        "table",
        "--noise",
        "--models",
        "paxos",
        "--sizes",
        "0,1",
        "--runs",
        "2",
        "--budget-s",
        "30",
        "--max-schedules",
        "50",
        "-j",
        "2",
        "-q",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.starts_with("Budget per cell and seed: 30 s and 50 schedules (SES-RTC: 30 s only); medians over 2 seeds. At most 24 runs a row on 2 threads side by side: at most 12.5 min for 2 rows."),
        "{out}"
    );
    assert!(
        out.contains("| model | bug | parameters | mean steps | RS | IRS | PCT |"),
        "{out}"
    );
    for size in [0, 1] {
        let line =
            format!("| paxos | 2 accept-below-promise | acceptors=3,noise={size},proposals=1,proposers=2,retries=1 | ");
        assert_eq!(out.matches(&line).count(), 3, "{line}: {out}");
        assert!(out.contains(&format!("| paxos | 2 (noise={size}) | ")), "{out}");
    }
    assert!(
        out.contains("The rows' races:\n\n* raft bug 2 (requests=1,elections=1): "),
        "{out}"
    );
    assert!(out.contains("CASSANDRA-6023"), "{out}");
    assert!(
        out.contains("The best delaying technique (SS and SES-RTC) against the best of RS, IRS, PCT, POS, PCTCP, SURW"),
        "{out}"
    );
}

#[test]
fn noise_table_errors_name_the_bad_value_and_the_valid_ones() {
    for (args, want) in [
        (
            &["--sizes", "200"][..],
            "--sizes takes whole numbers from 0 to 128, not \"200\"",
        ),
        (
            &["--models", "lostupdate"][..],
            "no model \"lostupdate\"; its rows: raft bug 2, paxos bug 2",
        ),
        (
            &["--models", "paxos", "--bugs", "9"][..],
            "no row of the noise benchmark matches --models and --bugs",
        ),
        (&["--max-states", "10"][..], "--max-states does not apply to --noise"),
        (&["--deep"][..], "--deep"),
    ] {
        let mut all = vec!["table", "--noise"];
        all.extend(args);
        let o = mcheck(&all);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    let o = mcheck(&["table", "--sizes", "1"]);
    assert_eq!(o.status.code(), Some(2));
}
