//! `mcheck table --deep`: the second table. Rows are every seeded bug at a
//! long-workload configuration (a mean execution of at least
//! [`MIN_MEAN_STEPS`] steps, measured and shown in the row); columns are
//! the sampling techniques and SES-RTC, each cell under the same budget
//! (time and schedules per seed; SES-RTC only time). Cells run side by
//! side, one thread each, on every core. `mcheck scaling` runs the same
//! cells at several sizes of one parameter ([`run_cells`]).

use crate::args::parse_overrides;
use crate::cell::{self, Cell, Cost, Run, TEST_LEGEND, Versus, cell_of, cell_text};
use crate::registry::{DynModel, Registry};
use crate::table::{self, Budget, Column, Target};
use mcheck_checker::search::{SsParams, Strategy, run_indexed};
use mcheck_checker::{BugSpec, Config, Params, Progress, StopFlag};
use serde::Serialize;
use std::collections::BTreeMap;

/// A configuration is deep when its mean execution has at least this many
/// steps.
pub const MIN_MEAN_STEPS: f64 = 300.0;

/// Random executions of the bug-free program that measure a
/// configuration's mean execution length.
pub const MEAN_SAMPLES: u64 = 100;

/// The deep table's techniques, in order, by column name: one line each.
pub const TECHNIQUES: &[&str] = &[
    "RS",
    "IRS",
    "PCT",
    "POS",
    "PCTCP",
    "SURW",
    "SS-RR",
    "SS-RTC",
    "SS-PRR",
    "Hybrid",
    "SES-RTC",
    "Portfolio",
];

/// The deep table's columns (see [`TECHNIQUES`]), from the first table's,
/// but stratified sampling with its default settings (the mixed
/// placement, as `mcheck run -s ss`), not the paper's (ARCHITECTURE.md, "Where the delays go").
pub fn columns() -> Vec<Column> {
    let all = table::columns();
    TECHNIQUES
        .iter()
        .filter_map(|name| all.iter().find(|c| c.name == *name).cloned())
        .map(|mut c| {
            if let Strategy::Ss(_) = c.strategy {
                c.strategy = Strategy::Ss(SsParams::default());
            }
            c
        })
        .collect()
}

/// The deep column named `name` (any case); the error lists the valid
/// names.
pub fn column(name: &str) -> Result<Column, String> {
    let cols = columns();
    cols.iter()
        .find(|c| c.name.eq_ignore_ascii_case(name.trim()))
        .cloned()
        .ok_or_else(|| {
            let valid: Vec<&str> = cols.iter().map(|c| c.name).collect();
            format!("unknown technique {name:?}; valid techniques: {}", valid.join(", "))
        })
}

/// The deep table's settings.
#[derive(Clone, Debug)]
pub struct DeepArgs {
    /// The budget of every run (one seed of one cell).
    pub budget: Budget,
    /// Seeds per randomized cell.
    pub runs: u64,
    /// Only these models (empty: all).
    pub models: Vec<String>,
    /// Only these bugs (empty: all).
    pub bugs: Vec<u32>,
    /// Runs side by side (0: all cores).
    pub threads: usize,
    /// Progress on stderr.
    pub progress: bool,
    /// Raised to interrupt: the row in progress is dropped.
    pub stop: StopFlag,
}

/// One row of the deep table.
#[derive(Clone, Debug, Serialize)]
pub struct DeepRow {
    /// The model.
    pub model: String,
    /// The bug id.
    pub bug: u32,
    /// The bug's short name.
    pub name: String,
    /// The parameters the row ran with (`--set` syntax).
    pub params: String,
    /// Mean steps of [`MEAN_SAMPLES`] random executions of the bug-free
    /// program at `params`.
    pub mean_steps: f64,
    /// Whether `mean_steps` is at least [`MIN_MEAN_STEPS`].
    pub deep: bool,
    /// One cell per column, by column name.
    pub cells: BTreeMap<String, Cell>,
    /// The best delaying technique (SS, SES-RTC) against the best
    /// baseline, in executed steps, with the log-rank test
    /// ([`table::versus_of`]).
    pub versus: Option<Versus>,
    /// The portfolio against the best single technique
    /// ([`table::portfolio_of`]).
    pub portfolio: Option<table::Against>,
}

/// `threads`, with 0 resolved to the core count.
pub fn resolve_threads(threads: usize) -> usize {
    Config::default().threads(threads).worker_threads()
}

/// The mean execution length at `params`: [`MEAN_SAMPLES`] random walks
/// (seed 0) of the bug-free program, within `budget`'s time.
pub fn mean_steps(model: &dyn DynModel, params: &Params, budget: &Budget, stop: &StopFlag) -> Result<f64, String> {
    let config = Config::default()
        .time_limit(budget.time)
        .max_schedules(MEAN_SAMPLES)
        .seed(0)
        .threads(1)
        .progress(Progress::Off)
        .stop(stop.clone());
    let instance = model.resolve(&params.as_overrides(), None)?;
    let r = model.check(&instance, &Strategy::Rs, "rtc", &config, false)?.report;
    Ok(r.steps as f64 / r.schedules.max(1) as f64)
}

/// The cells of `cols` on `target`: `runs` seeds for a randomized
/// column, one otherwise, every run under `budget` on one thread,
/// `threads` runs side by side. `None` when `stop` interrupted a run.
pub fn run_cells(
    target: Target<'_>,
    cols: &[Column],
    runs: u64,
    budget: &Budget,
    threads: usize,
    stop: &StopFlag,
) -> Option<Vec<Cell>> {
    let jobs: Vec<(usize, u64)> = cols
        .iter()
        .enumerate()
        .flat_map(|(i, c)| (0..if c.randomized { runs.max(1) } else { 1 }).map(move |seed| (i, seed)))
        .collect();
    let done: Vec<Option<Run>> = run_indexed(
        resolve_threads(threads),
        jobs.len(),
        || (),
        |_, j| {
            let (i, seed) = jobs[j];
            table::run_once(target, &cols[i], seed, budget, 1, stop)
        },
    );
    let done: Vec<Run> = done.into_iter().collect::<Option<_>>()?;
    let cells = (0..cols.len())
        .map(|i| {
            let mine: Vec<Run> = jobs
                .iter()
                .zip(&done)
                .filter(|((c, _), _)| *c == i)
                .map(|(_, r)| r.clone())
                .collect();
            cell_of(&mine)
        })
        .collect();
    Some(cells)
}

/// The parameters of `model` from `overrides` (`--set` syntax), as a run
/// with `bug` uses them.
pub fn params_for(model: &dyn DynModel, overrides: &[String], bug: Option<u32>) -> Result<Params, String> {
    let instance = model.resolve(&parse_overrides(overrides)?, bug)?;
    Ok(instance.params().clone())
}

/// Build the deep table, handing each row to `on_row` as soon as it is
/// done. When `args.stop` is raised the row in progress is dropped and the
/// rows done so far are returned.
pub fn build(registry: &Registry, args: &DeepArgs, mut on_row: impl FnMut(&DeepRow)) -> Result<Vec<DeepRow>, String> {
    let picked = table::selected(registry, &args.models, &args.bugs)?;
    let cols = columns();
    let mut rows = Vec::new();
    for (model, b) in picked {
        let set: Vec<String> = mcheck_models::deep_params(model.info().name, b.id)
            .map(str::to_string)
            .into_iter()
            .collect();
        let Some(row) = build_row("table --deep", model, &b, &set, &cols, args)? else {
            return Ok(rows);
        };
        on_row(&row);
        rows.push(row);
    }
    Ok(rows)
}

/// One row: the bug `b` of `model` at the parameters `set` (`--set`
/// syntax, the rest at their defaults), its mean execution length and a
/// cell per column of `cols`; `None` when `args.stop` interrupted it. The
/// deep table and `mcheck table --noise` build their rows with it
/// (`command` heads its progress line).
pub fn build_row(
    command: &str,
    model: &dyn DynModel,
    b: &BugSpec,
    set: &[String],
    cols: &[Column],
    args: &DeepArgs,
) -> Result<Option<DeepRow>, String> {
    let info = model.info();
    let start = std::time::Instant::now();
    let params = params_for(model, set, Some(b.id))?;
    let mean = mean_steps(model, &params, &args.budget, &args.stop)?;
    let target = Target {
        model,
        params: &params,
        bug: b.id,
    };
    let cells = run_cells(target, cols, args.runs, &args.budget, args.threads, &args.stop);
    let Some(cells) = cells.filter(|_| !args.stop.is_raised()) else {
        return Ok(None);
    };
    let cells: BTreeMap<String, Cell> = cols.iter().map(|c| c.name.to_string()).zip(cells).collect();
    let row = DeepRow {
        model: info.name.to_string(),
        bug: b.id,
        name: b.name.to_string(),
        params: params.to_string(),
        mean_steps: mean,
        deep: mean >= MIN_MEAN_STEPS,
        versus: table::versus_of(&cells, cols),
        portfolio: table::portfolio_of(&cells),
        cells,
    };
    if args.progress {
        eprintln!(
            "{command}: {} bug {} ({}): mean {:.0} steps, done in {:.1}s",
            row.model,
            row.bug,
            row.params,
            row.mean_steps,
            start.elapsed().as_secs_f64()
        );
    }
    Ok(Some(row))
}

/// Runs the deep table makes per row: a seed per randomized column, one
/// per other column.
pub fn runs_per_row(runs: u64) -> u64 {
    columns().iter().map(|c| if c.randomized { runs } else { 1 }).sum()
}

/// The longest the deep table can take, in seconds, for `rows` rows on
/// `threads` threads: per row, the mean-length pass and every run, each at
/// most the time budget, the runs side by side.
pub fn worst_case_seconds(rows: u64, args: &DeepArgs) -> f64 {
    let t = args.budget.time.as_secs_f64();
    let threads = resolve_threads(args.threads) as f64;
    rows as f64 * (t + (runs_per_row(args.runs) as f64 * t / threads).ceil())
}

/// The budget, stated above the table.
pub fn markdown_budget(rows: u64, args: &DeepArgs) -> String {
    let t = args.budget.time.as_secs_f64();
    let schedules = args
        .budget
        .max_schedules
        .map_or("no cap".to_string(), |n| n.to_string());
    format!(
        "Budget per cell and seed: {t} s and {schedules} schedules (SES-RTC: {t} s only); medians over {}. At most {} runs a row on {} side by side: at most {:.1} min for {}.\n\n",
        crate::render::count_of(args.runs, "seed"),
        runs_per_row(args.runs) + 1,
        crate::render::count_of(resolve_threads(args.threads) as u64, "thread"),
        worst_case_seconds(rows, args) / 60.0,
        crate::render::count_of(rows, "row"),
    )
}

/// The Markdown table's heading lines.
pub fn markdown_head() -> String {
    let cols = columns();
    let mut out = String::from("| model | bug | parameters | mean steps |");
    for c in &cols {
        out.push_str(&format!(" {} |", c.name));
    }
    out.push_str("\n|---|---|---|---:|");
    for _ in &cols {
        out.push_str("---:|");
    }
    out.push('\n');
    out
}

/// One row of the Markdown table in `cost` (cells as
/// [`cell::cell_text`]); a mean below [`MIN_MEAN_STEPS`] is marked `*`.
pub fn markdown_row(r: &DeepRow, cost: Cost) -> String {
    let star = if r.deep { "" } else { "*" };
    let mut out = format!(
        "| {} | {} {} | {} | {:.0}{star} |",
        r.model, r.bug, r.name, r.params, r.mean_steps
    );
    for c in &columns() {
        out.push_str(&format!(" {} |", cell_text(&r.cells[c.name], cost)));
    }
    out.push('\n');
    out
}

/// What follows the rows: the legend, then [`markdown_results`].
pub fn markdown_tail(rows: &[DeepRow]) -> String {
    format!("\n{}\n\n{}", legend(), markdown_results(rows, |r| r.bug.to_string()))
}

/// How to read the deep table's cells (and `mcheck table --noise`'s).
pub fn legend() -> String {
    format!(
        "SES-RTC: distinct states before the bug; the others: schedules before the bug (Hybrid: the schedules of its sampling phase, after SES spent up to 100,000 states; 0 when SES found it). {} Mean steps: the mean length of {MEAN_SAMPLES} random executions of the bug-free program at the row's parameters (`*`: below {MIN_MEAN_STEPS}).",
        table::CELL_LEGEND
    )
}

/// The rows' cells in executed steps and in seconds, the errors, the
/// log-rank tests and the portfolio's ratios; `bug` labels a row's bug in
/// the last three (the deep table: its id).
pub fn markdown_results(rows: &[DeepRow], bug: impl Fn(&DeepRow) -> String) -> String {
    let mut out = String::new();
    for (cost, what) in [
        (Cost::Steps, "In executed program steps (every technique's one cost)"),
        (Cost::Seconds, "In seconds (wall clock, one thread a run)"),
    ] {
        out.push_str(&format!("{what}:\n\n{}", markdown_head()));
        for r in rows {
            out.push_str(&markdown_row(r, cost));
        }
        out.push('\n');
    }
    out.push_str(&table::errors_text(
        rows.iter().map(|r| (r.model.as_str(), bug(r), &r.cells)),
    ));
    out.push_str(&format!(
        "The best delaying technique (SS and SES-RTC) against the best of {}, each by median executed steps (ties: more seeds that found it), with the log-rank test of their steps: chi-square with 1 degree of freedom, its p-value, and which found the bug sooner ({TEST_LEGEND}).\n\n| model | bug | {} |\n|---|---|---|---|---:|---:|---|\n",
        table::BASELINES.join(", "),
        cell::VERSUS_HEAD
    ));
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            r.model,
            bug(r),
            cell::versus_cells(r.versus.as_ref())
        ));
    }
    out.push('\n');
    out.push_str(&table::portfolio_text(
        rows.iter().map(|r| (r.model.as_str(), bug(r), r.portfolio.as_ref())),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every technique names a column, once, and the lookup ignores case.
    #[test]
    fn techniques_are_columns() {
        let names: Vec<&str> = columns().iter().map(|c| c.name).collect();
        assert_eq!(names, TECHNIQUES);
        for c in columns() {
            if let Strategy::Ss(p) = c.strategy {
                assert_eq!(p, SsParams::default(), "{}", c.name);
            }
        }
        let first = table::columns();
        let ss_rtc = first.iter().find(|c| c.name == "SS-RTC").map(|c| &c.strategy);
        assert_eq!(ss_rtc, Some(&Strategy::Ss(SsParams::paper())));
        assert_eq!(column("ss-rtc").map(|c| c.name), Ok("SS-RTC"));
        let err = column("zz").unwrap_err();
        assert!(err.contains("\"zz\"") && err.contains("SES-RTC"), "{err}");
    }

    /// The worst case: per row the mean pass and the runs, side by side.
    #[test]
    fn worst_case_counts_every_run() {
        let args = DeepArgs {
            budget: Budget {
                time: std::time::Duration::from_secs(2),
                max_states: None,
                max_schedules: Some(10),
            },
            runs: 5,
            models: vec![],
            bugs: vec![],
            threads: 2,
            progress: false,
            stop: StopFlag::new(),
        };
        let randomized = columns().iter().filter(|c| c.randomized).count() as u64;
        let per_row = randomized * 5 + (TECHNIQUES.len() as u64 - randomized);
        assert_eq!(runs_per_row(5), per_row);
        let want = 10.0 * (2.0 + (per_row as f64 * 2.0 / 2.0).ceil());
        assert_eq!(worst_case_seconds(10, &args), want);
    }
}
