//! `mcheck scaling`: the paper's core argument made visible. One seeded
//! bug, one workload parameter at several sizes; at each size the mean
//! execution length is measured and every technique runs as a cell of the
//! deep table ([`crate::deep::run_cells`]): the median schedules (SES:
//! states) to the bug with its interval and the fraction of seeds that
//! found it, in schedules or states (and, in the JSON, steps and seconds).

use crate::cell::{Cell, Cost, cell_text};
use crate::deep;
use crate::registry::DynModel;
use crate::table::{Budget, Column, Target};
use mcheck_checker::StopFlag;
use serde::Serialize;

/// The experiment's settings.
#[derive(Clone, Debug)]
pub struct ScalingArgs {
    /// The bug to find.
    pub bug: u32,
    /// The workload parameter.
    pub param: String,
    /// Its sizes, in order.
    pub sizes: Vec<u64>,
    /// The other parameters (`--set` syntax), fixed at every size.
    pub set: Vec<String>,
    /// The techniques (deep-table columns).
    pub techniques: Vec<Column>,
    /// Seeds per technique and size.
    pub runs: u64,
    /// The budget of every run.
    pub budget: Budget,
    /// Runs side by side (0: all cores).
    pub threads: usize,
    /// Progress on stderr.
    pub progress: bool,
    /// Raised to interrupt: the size in progress is dropped.
    pub stop: StopFlag,
}

/// One (size, technique) result.
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    /// The parameter's value.
    pub size: u64,
    /// The parameters the size ran with (`--set` syntax).
    pub params: String,
    /// Mean steps of random executions of the bug-free program at this
    /// size (see [`deep::mean_steps`]).
    pub mean_steps: f64,
    /// The technique (a deep-table column name).
    pub technique: String,
    /// What the count counts: `schedules`, or `states` for SES.
    pub unit: &'static str,
    /// The cell: the medians, seeds that found the bug, the runs.
    #[serde(flatten)]
    pub cell: Cell,
}

/// The techniques `mcheck scaling` runs by default: every sampling column
/// of the deep table.
pub fn default_techniques() -> Vec<Column> {
    deep::columns().into_iter().filter(|c| !c.exhaustive).collect()
}

/// `--param NAME=V1,V2,...` as the name and the sizes.
pub fn parse_param(text: &str) -> Result<(String, Vec<u64>), String> {
    let bad = || format!("--param takes NAME=V1,V2,... with whole numbers, not {text:?}");
    let (name, values) = text.split_once('=').ok_or_else(bad)?;
    let sizes = values
        .split(',')
        .map(|v| v.trim().parse::<u64>().map_err(|_| bad()))
        .collect::<Result<Vec<_>, _>>()?;
    if name.trim().is_empty() || sizes.is_empty() {
        return Err(bad());
    }
    Ok((name.trim().to_string(), sizes))
}

/// Run the experiment, handing each size's records to `on_size` as soon as
/// they are done; a size's records come in technique order. When
/// `args.stop` is raised the size in progress is dropped.
pub fn run(
    model: &dyn DynModel,
    args: &ScalingArgs,
    mut on_size: impl FnMut(&[Record]),
) -> Result<Vec<Record>, String> {
    let mut records = Vec::new();
    for &size in &args.sizes {
        let mut set = args.set.clone();
        set.push(format!("{}={size}", args.param));
        let params = deep::params_for(model, &set, Some(args.bug))?;
        let mean = deep::mean_steps(model, &params, &args.budget, &args.stop)?;
        let target = Target {
            model,
            params: &params,
            bug: args.bug,
        };
        let cells = deep::run_cells(
            target,
            &args.techniques,
            args.runs,
            &args.budget,
            args.threads,
            &args.stop,
        );
        let Some(cells) = cells.filter(|_| !args.stop.is_raised()) else {
            break;
        };
        let done: Vec<Record> = args
            .techniques
            .iter()
            .zip(cells)
            .map(|(c, cell)| Record {
                size,
                params: params.to_string(),
                mean_steps: mean,
                technique: c.name.to_string(),
                unit: if c.exhaustive { "states" } else { "schedules" },
                cell,
            })
            .collect();
        if args.progress {
            eprintln!("scaling: {}={size}: mean {mean:.0} steps", args.param);
        }
        on_size(&done);
        records.extend(done);
    }
    Ok(records)
}

/// The records as a Markdown table: a row per size, a column per
/// technique (cells as [`crate::cell::cell_text`], in schedules or
/// states).
pub fn markdown(param: &str, techniques: &[Column], records: &[Record]) -> String {
    let mut out = format!("| {param} | mean steps |");
    for c in techniques {
        out.push_str(&format!(" {} |", c.name));
    }
    out.push_str("\n|---:|---:|");
    out.push_str(&"---:|".repeat(techniques.len()));
    out.push('\n');
    for size in records.chunks(techniques.len().max(1)) {
        out.push_str(&format!("| {} | {:.0} |", size[0].size, size[0].mean_steps));
        for r in size {
            out.push_str(&format!(" {} |", cell_text(&r.cell, Cost::Count)));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn param_takes_a_name_and_whole_numbers() {
        assert_eq!(parse_param("requests=1, 5,10"), Ok(("requests".into(), vec![1, 5, 10])));
        for bad in ["requests", "=1,2", "requests=", "requests=1,x", "requests=-1"] {
            let err = parse_param(bad).unwrap_err();
            assert!(err.contains(bad), "{bad:?}: {err}");
        }
    }

    #[test]
    fn default_techniques_are_the_sampling_columns() {
        let names: Vec<&str> = default_techniques().iter().map(|c| c.name).collect();
        assert!(!names.contains(&"SES-RTC"), "{names:?}");
        assert!(names.contains(&"RS") && names.contains(&"SS-PRR"), "{names:?}");
    }
}
