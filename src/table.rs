//! `mcheck table`: the paper's Table 1 on the shipped models. Rows are
//! (model, bug); columns are the exhaustive techniques (distinct states
//! before the bug) and the sampling techniques (schedules before the bug,
//! median over several seeds), each cell under the same budget.

use crate::registry::{DynModel, Registry};
use mcheck_checker::search::{Strategy, DEFAULT_IRS_STEP, DEFAULT_PCT_DEPTH};
use mcheck_checker::{Config, Params, Progress};
use serde::Serialize;
use std::time::Duration;

/// One column of the table.
#[derive(Clone, Debug)]
pub struct Column {
    /// Its heading.
    pub name: &'static str,
    /// The strategy.
    pub strategy: Strategy,
    /// The explorer (ignored by strategies without one).
    pub explorer: &'static str,
    /// Whether it counts states (exhaustive) or schedules (sampling).
    pub exhaustive: bool,
    /// Whether it is one of the paper's delaying techniques.
    pub delaying: bool,
    /// Whether its result depends on the seed (median over `--runs`).
    pub randomized: bool,
}

/// The columns, in the paper's order.
pub fn columns() -> Vec<Column> {
    let c = |name, strategy, explorer, exhaustive, delaying, randomized| Column {
        name,
        strategy,
        explorer,
        exhaustive,
        delaying,
        randomized,
    };
    let pct = Strategy::Pct {
        depth: DEFAULT_PCT_DEPTH,
        steps: None,
    };
    let irs = Strategy::Irs { step: DEFAULT_IRS_STEP };
    let mut v = vec![
        c("PB", Strategy::Pb, "rtc", true, false, false),
        c("SES-RR", Strategy::Ses, "rr", true, true, false),
        c("SES-RTC", Strategy::Ses, "rtc", true, true, false),
        c("SES-PRR", Strategy::Ses, "prr", true, true, true),
        c("RS", Strategy::Rs, "rtc", false, false, true),
        c("IRS", irs, "rtc", false, false, true),
        c("PCT", pct, "rtc", false, false, true),
    ];
    v.extend(sampling_columns());
    v
}

/// The table's settings.
#[derive(Clone, Debug)]
pub struct TableArgs {
    /// Per-cell time budget.
    pub budget: Duration,
    /// Per-cell state cap (exhaustive columns).
    pub max_states: u64,
    /// Per-cell schedule cap (sampling columns).
    pub max_schedules: u64,
    /// Seeds per randomized cell.
    pub runs: u64,
    /// Only these models (empty: all).
    pub models: Vec<String>,
    /// Only these bugs (empty: all).
    pub bugs: Vec<u32>,
    /// Threads for sampling cells (0: all cores).
    pub threads: usize,
    /// Progress on stderr.
    pub progress: bool,
}

/// One cell: found or not, and the medians.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    /// Whether the median run found the bug within budget.
    pub found: bool,
    /// Median distinct states (exhaustive) or schedules (sampling) before
    /// the bug; `None` when not found.
    pub count: Option<u64>,
    /// Median program steps executed.
    pub steps: Option<u64>,
    /// Runs that found the bug, of `runs`.
    pub found_runs: u64,
    /// Runs made.
    pub runs: u64,
    /// Seconds spent on the cell.
    pub seconds: f64,
}

/// One row.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The model.
    pub model: String,
    /// The bug id.
    pub bug: u32,
    /// The bug's short name.
    pub name: String,
    /// One cell per column, by column name.
    pub cells: std::collections::BTreeMap<String, Cell>,
    /// Best SES cell's advantage over PB (states ratio), if both found.
    pub ses_vs_pb: Option<f64>,
    /// Best SS cell's advantage over the best of RS, IRS, PCT (schedules
    /// ratio), if both found.
    pub ss_vs_random: Option<f64>,
}

fn median(mut v: Vec<Option<u64>>) -> Option<u64> {
    // Not found counts as infinitely many; the median is found only when
    // more than half the runs found the bug.
    v.sort_by_key(|x| x.unwrap_or(u64::MAX));
    v[(v.len() - 1) / 2]
}

fn run_cell(model: &dyn DynModel, params: &Params, bug: u32, col: &Column, args: &TableArgs) -> Cell {
    let runs = if col.randomized { args.runs.max(1) } else { 1 };
    let start = std::time::Instant::now();
    let mut counts = Vec::new();
    let mut steps = Vec::new();
    for seed in 0..runs {
        let config = Config {
            time_limit: Some(args.budget),
            max_states: Some(args.max_states),
            max_schedules: Some(args.max_schedules),
            seed,
            threads: if col.exhaustive { 1 } else { args.threads },
            progress: Progress::Off,
            ..Config::default()
        };
        let r = model.check(params, Some(bug), &col.strategy, col.explorer, &config);
        let (count, step) = match r {
            Ok(r) if r.is_violation() => {
                let c = if col.exhaustive { r.states } else { r.schedules };
                (Some(c), Some(r.steps.max(r.transitions)))
            }
            _ => (None, None),
        };
        counts.push(count);
        steps.push(step);
    }
    let found_runs = counts.iter().filter(|c| c.is_some()).count() as u64;
    let count = median(counts);
    Cell {
        found: count.is_some(),
        count,
        steps: count.and(median(steps)),
        found_runs,
        runs,
        seconds: start.elapsed().as_secs_f64(),
    }
}

fn best(row: &Row, cols: &[Column], pick: impl Fn(&Column) -> bool) -> Option<u64> {
    cols.iter()
        .filter(|c| pick(c))
        .filter_map(|c| row.cells.get(c.name).and_then(|x| x.count))
        .min()
}

/// Build the table.
pub fn build(registry: &Registry, args: &TableArgs) -> Result<Vec<Row>, String> {
    let known: Vec<String> = registry.models().map(|m| m.info().name.to_string()).collect();
    for m in &args.models {
        if !known.contains(m) {
            return Err(format!(
                "unknown model {m:?} in --models; valid models: {}",
                known.join(", ")
            ));
        }
    }
    let cols = columns();
    let mut rows = Vec::new();
    for model in registry.models() {
        let info = model.info();
        if !args.models.is_empty() && !args.models.iter().any(|m| m == info.name) {
            continue;
        }
        let params = Params::resolve(info.name, &info.params, &[])?;
        for b in &info.bugs {
            if !args.bugs.is_empty() && !args.bugs.contains(&b.id) {
                continue;
            }
            let mut row = Row {
                model: info.name.to_string(),
                bug: b.id,
                name: b.name.to_string(),
                cells: Default::default(),
                ses_vs_pb: None,
                ss_vs_random: None,
            };
            for col in &cols {
                let cell = run_cell(model, &params, b.id, col, args);
                if args.progress {
                    eprintln!(
                        "table: {} bug {} {:<8} {} ({:.1}s)",
                        info.name,
                        b.id,
                        col.name,
                        cell.count.map_or("not found".to_string(), |c| c.to_string()),
                        cell.seconds
                    );
                }
                row.cells.insert(col.name.to_string(), cell);
            }
            let ratio = |a: Option<u64>, b: Option<u64>| match (a, b) {
                (Some(d), Some(base)) => Some(base as f64 / d.max(1) as f64),
                _ => None,
            };
            row.ses_vs_pb = ratio(
                best(&row, &cols, |c| c.delaying && c.exhaustive),
                best(&row, &cols, |c| !c.delaying && c.exhaustive),
            );
            row.ss_vs_random = ratio(
                best(&row, &cols, |c| c.delaying && !c.exhaustive),
                best(&row, &cols, |c| !c.delaying && !c.exhaustive),
            );
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return Err("no (model, bug) row matches --models and --bugs".into());
    }
    Ok(rows)
}

/// The table as Markdown, with the ratios under it.
pub fn markdown(rows: &[Row], args: &TableArgs) -> String {
    let cols = columns();
    let mut out = String::from("| model | bug |");
    for c in &cols {
        out.push_str(&format!(" {} |", c.name));
    }
    out.push_str("\n|---|---|");
    for _ in &cols {
        out.push_str("---:|");
    }
    out.push('\n');
    for r in rows {
        out.push_str(&format!("| {} | {} {} |", r.model, r.bug, r.name));
        for c in &cols {
            let cell = &r.cells[c.name];
            let text = match cell.count {
                Some(n) if cell.runs > 1 => format!("{n} ({}/{})", cell.found_runs, cell.runs),
                Some(n) => n.to_string(),
                None => "-".to_string(),
            };
            out.push_str(&format!(" {text} |"));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "\nExhaustive columns (PB, SES-*): distinct states before the bug; sampling columns: schedules before the bug, median over {} seeds (runs that found it / runs). `-`: not found within {} s, {} states or {} schedules.\n\n",
        args.runs,
        args.budget.as_secs_f64(),
        args.max_states,
        args.max_schedules
    ));
    out.push_str(
        "Advantage of the best delaying technique over the best baseline (the baseline's count divided by the delaying technique's): above 1x the delaying technique needed that many times fewer states or schedules; below 1x the baseline won.\n\n",
    );
    out.push_str(
        "| model | bug | best SES vs PB (states) | best SS vs best of RS/IRS/PCT (schedules) |\n|---|---|---:|---:|\n",
    );
    // Two significant digits down to 0.01x, so that a loss reads as one.
    let fmt = |x: Option<f64>| {
        x.map_or("-".to_string(), |v| match v {
            v if v >= 10.0 => format!("{v:.0}x"),
            v if v >= 1.0 => format!("{v:.1}x"),
            v if v >= 0.1 => format!("{v:.2}x"),
            v => format!("{v:.3}x"),
        })
    };
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            r.model,
            r.bug,
            fmt(r.ses_vs_pb),
            fmt(r.ss_vs_random)
        ));
    }
    out
}

/// The stratified-sampling columns, with the default c1 and c2.
fn sampling_columns() -> Vec<Column> {
    let ss = Strategy::Ss(mcheck_checker::search::SsParams::default());
    ["rr", "rtc", "prr"]
        .into_iter()
        .zip(["SS-RR", "SS-RTC", "SS-PRR"])
        .map(|(explorer, name)| Column {
            name,
            strategy: ss.clone(),
            explorer,
            exhaustive: false,
            delaying: true,
            randomized: true,
        })
        .collect()
}
