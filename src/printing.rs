//! What `run` prints: a header line before the search starts (so that a
//! log shows what runs, and an interrupted run what it was), then the
//! report, as text or as one JSON object.

use crate::registry::DynModel;
use crate::render;
use mcheck_checker::{Counterexample, Execution, Found, ModelInfo, Params, Report, Schedule};
use serde_json::{Value, json};

/// The JSON schema version of `run --json` and `list --json`.
pub const SCHEMA_VERSION: u32 = 1;

/// What a run checks and how, printed before the search:
/// `mcheck: lostupdate bug 1 (lost-update) [clients=3, ...], ses with rtc, seed 0`.
/// The explorer is named only for strategies that follow one, the seed
/// only for strategies that use it.
pub fn header(
    info: &ModelInfo,
    params: &Params,
    bug: Option<u32>,
    strategy: &str,
    explorer: Option<&str>,
    seed: Option<u64>,
) -> String {
    let what = match bug {
        Some(b) => format!(
            "{} bug {b} ({})",
            info.name,
            info.bugs.iter().find(|x| x.id == b).map(|x| x.name).unwrap_or("?")
        ),
        None => info.name.to_string(),
    };
    header_of(&format!("{what} [{params}]"), strategy, explorer, seed)
}

/// [`header`] of `what` (a model's instance, or a program).
pub fn header_of(what: &str, strategy: &str, explorer: Option<&str>, seed: Option<u64>) -> String {
    let mut line = format!("mcheck: {what}, {strategy}");
    if let Some(e) = explorer {
        line.push_str(&format!(" with {e}"));
    }
    if let Some(s) = seed {
        line.push_str(&format!(", seed {s}"));
    }
    line
}

/// The `run --json` object.
pub fn report_json(model: &str, params: &Params, bug: Option<u32>, report: &Report) -> Value {
    let mut v = serde_json::to_value(report).expect("report serializes");
    let obj = v.as_object_mut().expect("report is an object");
    obj.insert("schema_version".into(), json!(SCHEMA_VERSION));
    obj.insert("model".into(), json!(model));
    obj.insert("bug".into(), json!(bug));
    obj.insert("params".into(), json!(params.0));
    obj.insert(
        "schedule".into(),
        json!(report.schedule.as_ref().map(Schedule::to_text)),
    );
    obj.insert("bounded_by".into(), json!(report.bounded_by.map(|b| b.as_str())));
    v
}

/// The violation part of the text report: the violation, the trace of
/// `execution` (its replay), the races (`races`, their summary) and the
/// schedule, each after an empty line. `named`: the schedule names a model,
/// so `mcheck replay` takes it (a plain program's replays with
/// `mcheck::replay`).
pub fn violation_text(
    found: &Found,
    execution: &Execution,
    races: &str,
    schedule: &Schedule,
    named: bool,
    verbose: bool,
) -> String {
    let (races_report, replay_with) = match named {
        true => (
            " (the full report: mcheck replay --races)",
            "paste into `mcheck replay`",
        ),
        false => ("", "parse it and replay it on the program with `mcheck::replay`"),
    };
    format!(
        "\nVIOLATION at step {}: {}\n\nTrace:\n{}\nRaces{races_report}:\n  {races}\n\nSchedule ({replay_with}):\n  {}\n",
        found.step,
        found.violation,
        render::text_trace(execution, verbose),
        schedule.to_text()
    )
}

/// The text report after the header: the violation with its trace and
/// schedule (and where it was saved), then the summary.
pub fn print_text_report(
    model: &dyn DynModel,
    report: &Report,
    counterexample: Option<Counterexample>,
    saved: Option<&str>,
    verbose: bool,
) -> Result<(), String> {
    if let (Some(found), Some(schedule)) = (&report.violation, &report.schedule) {
        // The check's own replay; a schedule no check of this process
        // completed (shrunk, or a distributed run's) is replayed here, once.
        let counterexample = match counterexample {
            Some(c) => c,
            None => model.counterexample(schedule)?,
        };
        let explained = match counterexample.explanation {
            Some(explained) => explained.map_err(|e| e.to_string())?,
            None => model.explain(schedule, &counterexample.execution)?,
        };
        let execution = &counterexample.execution;
        print!(
            "{}",
            violation_text(found, execution, &explained.summary(), schedule, true, verbose)
        );
        if let Some(path) = saved {
            println!("Saved to {path}; replay with: mcheck replay {path}");
        }
    }
    if let Some(coverage) = &report.coverage {
        println!();
        print!("{}", coverage.text());
    }
    println!();
    println!("{}", render::summary(report));
    Ok(())
}
