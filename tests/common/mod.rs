//! Helpers shared by the deep-table and scaling tests.

use serde_json::Value;
use std::process::{Command, Output};

/// `mcheck ARGS`.
pub fn mcheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcheck"))
        .args(args)
        .output()
        .expect("mcheck runs")
}

/// `mcheck ARGS` as JSON (stderr shown when it is not).
pub fn json(args: &[&str]) -> Value {
    let o = mcheck(args);
    let out = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(&out).unwrap_or_else(|e| {
        panic!(
            "{args:?}: {:?}, not JSON ({e}): {out}\n{}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// The oracle of a mean execution length: `mcheck run` of 100 random walks
/// (seed 0, one thread) of the bug-free `model` at `set`.
pub fn mean_walk(model: &str, set: &str) -> f64 {
    let walk = json(&[
        "run",
        model,
        "--set",
        set,
        "-s",
        "rs",
        "--max-schedules",
        "100",
        "-j",
        "1",
        "--json",
        "-q",
    ]);
    walk["steps"].as_f64().unwrap() / walk["schedules"].as_f64().unwrap()
}
