//! `mcheck merge FILE...`: one report from the `--json` reports of the
//! shards of one sampling run (ARCHITECTURE.md, "Determinism and sharding").
//!
//! A shard `K/N` runs the samples with index `i mod N = K` and lists, per
//! round, the steps, longest execution and truncation of each sample it
//! counted. The unsharded run stops at the violating sample with the
//! lowest (round, index) and counts every sample before it; so the merge
//! takes that sample's counterexample and counts, over all shards, exactly
//! the samples of earlier rounds and those of its round up to its index.
//! Without a violation the rounds are summed as they are.

use serde_json::{Value, json};

/// The fields that must be equal in every shard's report of one run.
const SAME_RUN: &[&str] = &[
    "model",
    "bug",
    "params",
    "strategy",
    "explorer",
    "seed",
    "schema_version",
];

/// `mcheck merge FILE...`: print the merged report; exit status 1 when it
/// holds a violation, as `run` does.
pub fn merge_cmd(files: &[String]) -> Result<u8, String> {
    let texts = files
        .iter()
        .map(|f| {
            std::fs::read_to_string(f)
                .map(|t| (f.clone(), t))
                .map_err(|e| format!("cannot read shard report {f}: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let v = merge(&texts)?;
    println!("{}", serde_json::to_string_pretty(&v).expect("json"));
    Ok(u8::from(v["outcome"] == "violation"))
}

/// What the merge needs of one shard's report.
struct Shard {
    file: String,
    k: u64,
    n: u64,
    report: Value,
    /// Per round: (bound, samples as [steps, longest, truncated], elapsed).
    rounds: Vec<(u64, Vec<[u64; 3]>, f64)>,
}

/// Merge the reports in `files` (their text) into the report the unsharded
/// run gives; an error names the file and what is wrong.
pub fn merge(files: &[(String, String)]) -> Result<Value, String> {
    if files.is_empty() {
        return Err("merge needs the --json reports of the shards of one run (FILE...)".into());
    }
    let shards = files
        .iter()
        .map(|(file, text)| shard_of(file, text))
        .collect::<Result<Vec<_>, _>>()?;
    check_one_run(&shards)?;
    Ok(merged(&shards))
}

/// Parse one shard's report.
fn shard_of(file: &str, text: &str) -> Result<Shard, String> {
    let report: Value =
        serde_json::from_str(text).map_err(|e| format!("{file}: not a JSON report of `mcheck run --json`: {e}"))?;
    let spec = report["shard"].as_str().ok_or_else(|| {
        format!("{file}: not the report of a shard (no \"shard\" field; run each shard with --shard K/N --json)")
    })?;
    let (k, n) = crate::args::shard(spec).map_err(|e| format!("{file}: {e}"))?;
    let strata = report["strata"]
        .as_array()
        .ok_or_else(|| format!("{file}: the report has no \"strata\" list"))?;
    let mut rounds = Vec::new();
    for s in strata {
        let bound = s["bound"]
            .as_u64()
            .ok_or_else(|| format!("{file}: a stratum without a bound"))?;
        let samples = match s.get("samples") {
            None => Vec::new(),
            Some(v) => serde_json::from_value(v.clone())
                .map_err(|e| format!("{file}: round {bound} has a malformed \"samples\" list: {e}"))?,
        };
        let counted = s["schedules"].as_u64().unwrap_or(0);
        if counted != samples.len() as u64 {
            return Err(format!(
                "{file}: round {bound} counts {counted} schedules but lists {} samples; was it made by an mcheck that lists them?",
                samples.len()
            ));
        }
        rounds.push((bound, samples, s["elapsed_s"].as_f64().unwrap_or(0.0)));
    }
    Ok(Shard {
        file: file.to_string(),
        k: u64::from(k),
        n: u64::from(n),
        report,
        rounds,
    })
}

/// The shards belong to one run and cover 0..N exactly once.
fn check_one_run(shards: &[Shard]) -> Result<(), String> {
    let first = &shards[0];
    for s in &shards[1..] {
        for field in SAME_RUN {
            if s.report[field] != first.report[field] {
                return Err(format!(
                    "{} and {} are not shards of one run: their {field} differ ({} and {})",
                    first.file, s.file, first.report[field], s.report[field]
                ));
            }
        }
        if s.n != first.n {
            return Err(format!(
                "{} is shard {}/{} but {} is shard {}/{}: the shards of one run share N",
                first.file, first.k, first.n, s.file, s.k, s.n
            ));
        }
    }
    let n = first.n;
    let mut by_k: Vec<Option<&str>> = vec![None; n as usize];
    for s in shards {
        if let Some(other) = by_k[s.k as usize] {
            return Err(format!("shard {}/{n} is given twice: {other} and {}", s.k, s.file));
        }
        by_k[s.k as usize] = Some(&s.file);
    }
    let missing: Vec<String> = (0..n)
        .filter(|&k| by_k[k as usize].is_none())
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "shard{} {} missing: the {n} shards 0/{n} .. {}/{n} must all be given",
            if missing.len() > 1 { "s" } else { "" },
            missing.join(", ") + if missing.len() > 1 { " are" } else { " is" },
            n - 1
        ));
    }
    Ok(())
}

/// The violating sample of a shard that found one: (round, index).
fn violation_of(s: &Shard) -> Option<(u64, u64)> {
    if s.report["outcome"] != "violation" {
        return None;
    }
    let (bound, samples, _) = s.rounds.last()?;
    let j = samples.len().checked_sub(1)? as u64;
    Some((*bound, s.k + j * s.n))
}

/// The merged report: the winner's counterexample, the counts of the
/// samples the unsharded run counts.
fn merged(shards: &[Shard]) -> Value {
    let winner = shards
        .iter()
        .filter_map(|s| violation_of(s).map(|v| (v, s)))
        .min_by_key(|(v, _)| *v);
    let last = winner.map(|(v, _)| v);
    let base = winner.map_or(&shards[0], |(_, s)| s);
    let mut out = base.report.clone();
    let mut strata: Vec<Value> = Vec::new();
    let (mut schedules, mut steps, mut truncated, mut longest) = (0u64, 0u64, 0u64, 0u64);
    let max_bound = shards
        .iter()
        .flat_map(|s| s.rounds.iter().map(|r| r.0))
        .max()
        .unwrap_or(0);
    let top = last.map_or(max_bound, |(b, _)| b);
    for bound in 0..=top {
        let (mut n, mut t, mut elapsed) = (0u64, 0u64, 0f64);
        for s in shards {
            let Some((_, samples, e)) = s.rounds.iter().find(|r| r.0 == bound) else {
                continue;
            };
            elapsed = elapsed.max(*e);
            for (j, [st, lo, tr]) in samples.iter().enumerate() {
                let index = s.k + j as u64 * s.n;
                if last.is_some_and(|(b, i)| b == bound && index > i) {
                    break;
                }
                n += 1;
                t += st;
                truncated += tr;
                longest = longest.max(*lo);
            }
        }
        schedules += n;
        steps += t;
        strata.push(json!({
            "bound": bound, "new_states": 0, "transitions": t, "deferrals": 0,
            "frontier": 0, "schedules": n, "elapsed_s": elapsed,
        }));
    }
    let max_of = |field: &str| {
        shards
            .iter()
            .filter_map(|s| s.report[field].as_f64())
            .fold(0f64, f64::max)
    };
    out["strata"] = json!(strata);
    out["schedules"] = json!(schedules);
    out["steps"] = json!(steps);
    // A sampling run's transitions are its steps.
    out["transitions"] = json!(steps);
    out["truncated"] = json!(truncated);
    out["longest"] = json!(longest);
    out["max_delays"] = json!(top);
    out["elapsed_s"] = json!(max_of("elapsed_s"));
    out["peak_memory_mb"] = json!(max_of("peak_memory_mb"));
    out["shard"] = Value::Null;
    let n = shards[0].n;
    let mut notes = vec![json!(format!(
        "merged from the {n} shards 0/{n} .. {}/{n}; elapsed_s and peak_memory_mb are the largest shard's",
        n - 1
    ))];
    if winner.is_none() {
        let outcomes: Vec<&Value> = shards.iter().map(|s| &s.report["bounded_by"]).collect();
        if outcomes.iter().any(|b| *b != outcomes[0]) {
            notes.push(json!(
                "the shards stopped for different reasons (bounded_by differs); bounded_by is the first file's"
            ));
        }
    }
    if let Some(v) = out["notes"].as_array_mut() {
        v.extend(notes);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(k: u32, n: u32, outcome: &str, rounds: &[Vec<[u64; 3]>]) -> (String, String) {
        let strata: Vec<Value> = rounds
            .iter()
            .enumerate()
            .map(|(b, s)| json!({"bound": b, "schedules": s.len(), "samples": s, "elapsed_s": 0.5}))
            .collect();
        let v = json!({"model": "m", "bug": 1, "params": {}, "strategy": "ss", "explorer": "rtc",
            "seed": 0, "schema_version": 1, "shard": format!("{k}/{n}"), "outcome": outcome,
            "strata": strata, "notes": [], "bounded_by": null});
        (format!("s{k}.json"), v.to_string())
    }

    #[test]
    fn counts_exactly_the_samples_before_the_lowest_violation() {
        // Two shards; round 1: shard 1 violates at j=1 (index 3), shard 0
        // at j=2 (index 4): the run stops at index 3.
        let a = report(
            0,
            2,
            "violation",
            &[vec![[1, 1, 0]; 2], vec![[2, 2, 0], [3, 3, 1], [4, 9, 0]]],
        );
        let b = report(1, 2, "violation", &[vec![[5, 5, 0]; 2], vec![[6, 6, 0], [7, 7, 0]]]);
        let m = merge(&[a, b]).unwrap();
        // Round 0: 4 samples, 12 steps; round 1: indices 0..=3: 2+6+3+7.
        assert_eq!(m["schedules"], 8);
        assert_eq!(m["steps"], 12 + 18);
        assert_eq!(m["truncated"], 1);
        assert_eq!(m["longest"], 7);
        assert_eq!(m["strata"][1]["schedules"], 4);
    }

    #[test]
    fn names_a_missing_or_duplicated_shard() {
        let a = report(0, 3, "bounded", &[vec![]]);
        let b = report(2, 3, "bounded", &[vec![]]);
        let e = merge(&[a.clone(), b.clone()]).unwrap_err();
        assert!(e.contains("shard 1/3 is missing"), "{e}");
        let e = merge(&[a.clone(), b, a]).unwrap_err();
        assert!(e.contains("shard 0/3 is given twice"), "{e}");
    }
}
