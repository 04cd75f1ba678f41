//! `mcheck merge`: the shards of a sampling run, run as local processes,
//! merge into the unsharded run's report (ARCHITECTURE.md, "Determinism and sharding").

use crate::common::{Scratch, json, mcheck};
use serde_json::Value;

/// What must be equal between the merged and the unsharded report.
fn essence(v: &Value) -> Value {
    let strata: Vec<Value> = v["strata"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| serde_json::json!([s["bound"], s["schedules"], s["transitions"]]))
        .collect();
    serde_json::json!({
        "outcome": v["outcome"], "violation": v["violation"], "schedule": v["schedule"],
        "schedules": v["schedules"], "steps": v["steps"], "transitions": v["transitions"], "truncated": v["truncated"],
        "longest": v["longest"], "max_delays": v["max_delays"], "strata": strata,
        "model": v["model"], "bug": v["bug"], "params": v["params"], "seed": v["seed"],
    })
}

fn run_shards(base: &[&str], n: u32, dir: &std::path::Path) -> Vec<String> {
    (0..n)
        .map(|k| {
            let shard = format!("{k}/{n}");
            let mut args = base.to_vec();
            args.extend(["--shard", &shard]);
            let v = json(&args);
            assert_eq!(v["shard"], shard.as_str());
            let path = dir.join(format!("shard{k}.json"));
            std::fs::write(&path, v.to_string()).unwrap();
            path.to_string_lossy().into_owned()
        })
        .collect()
}

fn merged(files: &[String]) -> (Value, i32) {
    let args: Vec<&str> = std::iter::once("merge")
        .chain(files.iter().map(String::as_str))
        .collect();
    let o = mcheck(&args);
    let out = String::from_utf8_lossy(&o.stdout);
    let v = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {out} {}", String::from_utf8_lossy(&o.stderr)));
    (v, o.status.code().unwrap())
}

#[test]
fn three_shards_of_a_buggy_model_merge_into_the_unsharded_report() {
    let scratch = Scratch::new("merge");
    let dir = scratch.dir();
    for (model, bug, seed) in [("lostupdate", "1", "3"), ("2pc", "1", "0")] {
        let base = [
            "run",
            model,
            "--bug",
            bug,
            "-s",
            "ss",
            "--seed",
            seed,
            "--max-schedules",
            "200000",
            "--json",
            "-q",
        ];
        let whole = json(&base);
        assert_eq!(whole["outcome"], "violation", "{model} bug {bug}: {whole}");
        let files = run_shards(&base, 3, dir);
        // Given in any order.
        let reversed: Vec<String> = files.iter().rev().cloned().collect();
        let (v, code) = merged(&reversed);
        assert_eq!(code, 1, "a merged violation exits 1");
        assert_eq!(essence(&v), essence(&whole), "{model} bug {bug}");
        assert!(
            whole["schedules"].as_u64().unwrap() > 1,
            "the bug is not found by the first sample"
        );
    }
}

#[test]
fn a_missing_duplicated_or_foreign_shard_is_an_error_naming_it() {
    let scratch = Scratch::new("merge-err");
    let dir = scratch.dir();
    let base = [
        "run",
        "lostupdate",
        "--bug",
        "1",
        "-s",
        "ss",
        "--max-schedules",
        "300",
        "--json",
        "-q",
    ];
    let files = run_shards(&base, 3, dir);
    let err = |files: &[&str]| {
        let args: Vec<&str> = std::iter::once("merge").chain(files.iter().copied()).collect();
        let o = mcheck(&args);
        assert_eq!(o.status.code(), Some(2));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let e = err(&[&files[0], &files[2]]);
    assert!(e.contains("shard 1/3 is missing"), "{e}");
    let e = err(&[&files[0], &files[1], &files[1], &files[2]]);
    assert!(e.contains("shard 1/3 is given twice"), "{e}");
    let other = json(&[
        "run",
        "lostupdate",
        "--bug",
        "1",
        "-s",
        "ss",
        "--seed",
        "9",
        "--max-schedules",
        "300",
        "--shard",
        "1/3",
        "--json",
        "-q",
    ]);
    let path = dir.join("other.json");
    std::fs::write(&path, other.to_string()).unwrap();
    let e = err(&[&files[0], path.to_str().unwrap(), &files[2]]);
    assert!(e.contains("their seed differ"), "{e}");
}
