//! `mcheck table`: the paper's Table 1 on the shipped models. Rows are
//! (model, bug); columns are the exhaustive techniques (distinct states
//! before the bug) and the sampling techniques (schedules before the bug),
//! each cell under the same budget, a randomized one over several seeds
//! (Kaplan-Meier medians, see [`crate::cell`]); the same cells in executed
//! steps and seconds, and per row the log-rank test of the best delaying
//! technique against the best baseline ([`versus_of`]).

use crate::cell::{self, Cell, Cost, Run, TEST_LEGEND, Versus, cell_of, cell_text};
use crate::registry::{DynModel, Registry};
use mcheck_checker::report::BoundedBy;
use mcheck_checker::search::{DEFAULT_IRS_STEP, DEFAULT_PCT_DEPTH, HybridParams, SsParams, Strategy};
use mcheck_checker::{BugSpec, Config, Params, Progress, StopFlag};
use serde::Serialize;
use std::collections::BTreeMap;
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
    // The later baselines, after the paper's columns; not in the ratio of
    // the first table (best SS vs RS/IRS/PCT), see `RATIO_BASELINES`.
    let pctcp = Strategy::Pctcp {
        depth: DEFAULT_PCT_DEPTH,
        steps: None,
    };
    v.push(c("POS", Strategy::Pos, "rtc", false, false, true));
    v.push(c("PCTCP", pctcp, "rtc", false, false, true));
    v.push(c("SURW", Strategy::Surw, "rtc", false, false, true));
    // Hybrid counts the schedules of its sampling phase (after SES spent
    // its state budget; 0 when SES found the bug). Not `delaying` here:
    // the first table's ratio compares SS alone with the baselines.
    let hybrid = Strategy::Hybrid(HybridParams::default());
    v.push(c("Hybrid", hybrid, "rtc", false, false, true));
    // Its count is the schedules of its sampling members; its steps are
    // every member's, SES's transitions among them.
    v.push(c(PORTFOLIO, Strategy::Portfolio, "rtc", false, false, true));
    v
}

/// The portfolio's column.
pub const PORTFOLIO: &str = "Portfolio";

/// The portfolio against the best single technique of its row.
#[derive(Clone, Debug, Serialize)]
pub struct Against {
    /// The column with the smallest median executed steps, and the
    /// portfolio's median steps divided by its (`None`: the portfolio's
    /// median not reached).
    pub steps: Option<(String, Option<f64>)>,
    /// The same in seconds.
    pub seconds: Option<(String, Option<f64>)>,
    /// The member that found the bug in most of the portfolio's seeds,
    /// and in how many.
    pub by: Option<(String, u64)>,
}

/// The portfolio's cell of `cells` against the best other cell, in
/// executed steps and in seconds; `None` without a portfolio cell.
pub fn portfolio_of(cells: &BTreeMap<String, Cell>) -> Option<Against> {
    let portfolio = cells.get(PORTFOLIO)?;
    let against = |cost: Cost| {
        let (name, best) = cells
            .iter()
            .filter(|(n, _)| n.as_str() != PORTFOLIO)
            .filter_map(|(n, c)| Some((n, c.median(cost).median?)))
            .min_by(|a, b| a.1.total_cmp(&b.1))?;
        let ratio = portfolio.median(cost).median.map(|p| p / best.max(f64::MIN_POSITIVE));
        Some((name.clone(), ratio))
    };
    let mut by: BTreeMap<&str, u64> = BTreeMap::new();
    for member in portfolio.seeds.iter().filter_map(|r| r.by.as_deref()) {
        *by.entry(member).or_default() += 1;
    }
    let by = by.into_iter().max_by_key(|(_, n)| *n).map(|(m, n)| (m.to_string(), n));
    Some(Against {
        steps: against(Cost::Steps),
        seconds: against(Cost::Seconds),
        by,
    })
}

/// The rows' portfolio comparisons ((model, bug, comparison); the bug
/// may be labelled, e.g. with the row's size) as a Markdown table under
/// its legend.
pub fn portfolio_text<'a, B: std::fmt::Display>(
    rows: impl IntoIterator<Item = (&'a str, B, Option<&'a Against>)>,
) -> String {
    let mut out = String::from(
        "The portfolio against the best single technique of the row (the column with the smallest median), in executed steps and in seconds: the portfolio's median divided by the best one's (the goal: at most 3x; `-`: the portfolio's median not reached), and the member that found the bug in most of the portfolio's seeds (its share: SES 16/32, SS 2/32 each, every walk 1/32, cut (`-cut`) or not).\n\n| model | bug | best (steps) | portfolio / best (steps) | best (seconds) | portfolio / best (seconds) | found by (seeds) |\n|---|---|---|---:|---|---:|---|\n",
    );
    let side = |x: &Option<(String, Option<f64>)>| match x {
        Some((name, ratio)) => (name.clone(), ratio_text(*ratio)),
        None => ("-".into(), "-".into()),
    };
    for (model, bug, a) in rows {
        let Some(a) = a else { continue };
        let (steps, seconds) = (side(&a.steps), side(&a.seconds));
        let by = a.by.as_ref().map_or("-".into(), |(m, n)| format!("{m} ({n})"));
        out.push_str(&format!(
            "| {model} | {bug} | {} | {} | {} | {} | {by} |\n",
            steps.0, steps.1, seconds.0, seconds.1
        ));
    }
    out
}

/// The baselines of the ratio "best SS vs best of RS/IRS/PCT".
const RATIO_BASELINES: &[&str] = &["RS", "IRS", "PCT"];

/// The baselines of a row's log-rank test ([`versus_of`]): the random
/// techniques, not preemption bounding nor hybrid.
pub const BASELINES: &[&str] = &["RS", "IRS", "PCT", "POS", "PCTCP", "SURW"];

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
    /// Raised to interrupt the table: the row in progress is dropped, the
    /// finished ones are kept.
    pub stop: StopFlag,
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
    pub cells: BTreeMap<String, Cell>,
    /// Best SES cell's advantage over PB (ratio of median states), if
    /// both found.
    pub ses_vs_pb: Option<f64>,
    /// Best SS cell's advantage over the best of RS, IRS, PCT (ratio of
    /// median schedules), if both found.
    pub ss_vs_random: Option<f64>,
    /// The best delaying technique against the best baseline, in executed
    /// steps, with the log-rank test ([`versus_of`]).
    pub versus: Option<Versus>,
    /// The portfolio against the best single technique ([`portfolio_of`]).
    pub portfolio: Option<Against>,
}

/// The budget of one run (one seed of one cell); `None` caps nothing.
#[derive(Clone, Debug)]
pub struct Budget {
    /// Wall-clock time.
    pub time: Duration,
    /// Distinct states (exhaustive columns).
    pub max_states: Option<u64>,
    /// Schedules (sampling columns).
    pub max_schedules: Option<u64>,
}

/// What a cell runs on: a model, its parameters and the bug.
#[derive(Clone, Copy)]
pub struct Target<'a> {
    /// The model.
    pub model: &'a dyn DynModel,
    /// Its parameters.
    pub params: &'a Params,
    /// The bug to find.
    pub bug: u32,
}

impl std::fmt::Debug for Target<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} bug {} ({})", self.model.info().name, self.bug, self.params)
    }
}

/// One run of `col` on `target` with `seed` under `budget`, on `threads`
/// threads: what it had spent when it found the bug or stopped (see
/// [`Run`]); `None` when `stop` interrupted it.
pub fn run_once(
    target: Target<'_>,
    col: &Column,
    seed: u64,
    budget: &Budget,
    threads: usize,
    stop: &StopFlag,
) -> Option<Run> {
    let start = std::time::Instant::now();
    let mut config = Config::default()
        .time_limit(budget.time)
        .seed(seed)
        .threads(threads)
        .progress(Progress::Off)
        .stop(stop.clone())
        // As `mcheck run` does by default: the liveness bugs are found by
        // the exhaustive pass after SES, PB or the portfolio verified
        // safety, and by temperature in the sampling runs.
        .liveness(true);
    config.max_states = budget.max_states;
    config.max_schedules = budget.max_schedules;
    let model = target.model;
    let r = model
        .resolve(&target.params.as_overrides(), Some(target.bug))
        .and_then(|instance| model.check(&instance, &col.strategy, col.explorer, &config, false))
        .map(|checked| checked.report);
    let mut run = Run {
        seed,
        found: false,
        count: 0,
        steps: 0,
        seconds: 0.0,
        error: None,
        by: None,
    };
    match r {
        Ok(r) if r.bounded_by == Some(BoundedBy::Interrupted) => return None,
        Ok(r) => {
            run.found = r.is_violation();
            run.count = if col.exhaustive { r.states } else { r.schedules };
            // Sampling counts its executions' steps, an exhaustive search
            // its transitions (Report::steps, Report::transitions), the
            // portfolio both (its SES member's and its samplers').
            run.steps = match col.strategy {
                Strategy::Portfolio => r.steps + r.transitions,
                _ => r.steps.max(r.transitions),
            };
            run.by = r.found_by;
        }
        Err(e) => run.error = Some(e.to_string()),
    }
    run.seconds = start.elapsed().as_secs_f64();
    Some(run)
}

fn run_cell(model: &dyn DynModel, params: &Params, bug: u32, col: &Column, args: &TableArgs) -> Cell {
    let runs = if col.randomized { args.runs.max(1) } else { 1 };
    let budget = Budget {
        time: args.budget,
        max_states: Some(args.max_states),
        max_schedules: Some(args.max_schedules),
    };
    let threads = if col.exhaustive { 1 } else { args.threads };
    let done: Vec<Run> = (0..runs)
        .map_while(|seed| run_once(Target { model, params, bug }, col, seed, &budget, threads, &args.stop))
        .collect();
    cell_of(&done)
}

/// The smallest median count of the columns `pick` selects.
fn best_count(row: &Row, cols: &[Column], pick: impl Fn(&Column) -> bool) -> Option<f64> {
    cols.iter()
        .filter(|c| pick(c))
        .filter_map(|c| row.cells.get(c.name).and_then(|x| x.count.median))
        .min_by(f64::total_cmp)
}

/// The best delaying column of `cells` (SES and SS) against the best
/// [`BASELINES`] column, by median executed steps ([`cell::versus`]).
pub fn versus_of(cells: &BTreeMap<String, Cell>, cols: &[Column]) -> Option<Versus> {
    let named = |c: &Column| Some((c.name, cells.get(c.name)?));
    let delaying = cols.iter().filter(|c| c.delaying).filter_map(named);
    let baselines = cols.iter().filter(|c| BASELINES.contains(&c.name)).filter_map(named);
    cell::versus(delaying, baselines)
}

/// The (model, bug) pairs that `models` and `bugs` select (empty: all),
/// in registration order; an error names an unknown model or an empty
/// selection.
pub fn selected<'r>(
    registry: &'r Registry,
    models: &[String],
    bugs: &[u32],
) -> Result<Vec<(&'r dyn DynModel, BugSpec)>, String> {
    let known: Vec<String> = registry.models().map(|m| m.info().name.to_string()).collect();
    for m in models {
        if !known.contains(m) {
            return Err(format!(
                "unknown model {m:?} in --models; valid models: {}",
                known.join(", ")
            ));
        }
    }
    let picked: Vec<_> = registry
        .models()
        .filter(|m| models.is_empty() || models.iter().any(|n| n == m.info().name))
        .flat_map(|m| m.info().bugs.into_iter().map(move |b| (m, b)))
        .filter(|(_, b)| bugs.is_empty() || bugs.contains(&b.id))
        .collect();
    if picked.is_empty() {
        return Err("no (model, bug) row matches --models and --bugs".into());
    }
    Ok(picked)
}

/// Build the table, handing each row to `on_row` as soon as it is done.
/// When `args.stop` is raised the row in progress is dropped and the rows
/// done so far are returned.
pub fn build(registry: &Registry, args: &TableArgs, mut on_row: impl FnMut(&Row)) -> Result<Vec<Row>, String> {
    let picked = selected(registry, &args.models, &args.bugs)?;
    let cols = columns();
    let mut rows = Vec::new();
    for (model, b) in picked {
        let info = model.info();
        let params = Params::resolve(info.name, &info.params, &[]).map_err(|e| e.to_string())?;
        let mut row = Row {
            model: info.name.to_string(),
            bug: b.id,
            name: b.name.to_string(),
            cells: Default::default(),
            ses_vs_pb: None,
            ss_vs_random: None,
            versus: None,
            portfolio: None,
        };
        for col in &cols {
            let cell = run_cell(model, &params, b.id, col, args);
            if args.stop.is_raised() {
                return Ok(rows);
            }
            if args.progress {
                eprintln!(
                    "table: {} bug {} {:<8} {} ({} steps; {:.1}s)",
                    info.name,
                    b.id,
                    col.name,
                    cell_text(&cell, Cost::Count),
                    cell_text(&cell, Cost::Steps),
                    cell.total_seconds
                );
            }
            row.cells.insert(col.name.to_string(), cell);
        }
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(d), Some(base)) => Some(base / d.max(1.0)),
            _ => None,
        };
        row.ses_vs_pb = ratio(
            best_count(&row, &cols, |c| c.delaying && c.exhaustive),
            best_count(&row, &cols, |c| !c.delaying && c.exhaustive),
        );
        row.ss_vs_random = ratio(
            best_count(&row, &cols, |c| c.delaying && !c.exhaustive),
            best_count(&row, &cols, |c| RATIO_BASELINES.contains(&c.name)),
        );
        row.versus = versus_of(&row.cells, &cols);
        row.portfolio = portfolio_of(&row.cells);
        on_row(&row);
        rows.push(row);
    }
    Ok(rows)
}

/// The table as Markdown: [`markdown_head`], a [`markdown_row`] per row
/// (counts), [`markdown_tail`].
pub fn markdown(rows: &[Row], args: &TableArgs) -> String {
    let mut out = markdown_head();
    for r in rows {
        out.push_str(&markdown_row(r, Cost::Count));
    }
    out + &markdown_tail(rows, args)
}

/// The Markdown table's heading lines.
pub fn markdown_head() -> String {
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
    out
}

/// One row of the Markdown table in `cost`, cells as
/// [`cell::cell_text`] (`error`: a run of the cell failed; see
/// [`markdown_tail`]).
pub fn markdown_row(r: &Row, cost: Cost) -> String {
    let mut out = format!("| {} | {} {} |", r.model, r.bug, r.name);
    for c in &columns() {
        out.push_str(&format!(" {} |", cell_text(&r.cells[c.name], cost)));
    }
    out.push('\n');
    out
}

/// The errors of the cells of `rows` ((model, bug, cells by column); the
/// bug may be labelled), one line each, under a heading; empty when there
/// are none.
pub fn errors_text<'a, B: std::fmt::Display>(
    rows: impl IntoIterator<Item = (&'a str, B, &'a BTreeMap<String, Cell>)>,
) -> String {
    let errors: Vec<String> = rows
        .into_iter()
        .flat_map(|(model, bug, cells)| {
            cells.iter().filter_map(move |(col, cell)| {
                Some(format!("error: {model} bug {bug} {col}: {}\n", cell.error.as_ref()?))
            })
        })
        .collect();
    if errors.is_empty() {
        return String::new();
    }
    format!("`error`: a run of the cell failed:\n{}\n", errors.concat())
}

/// How every table reads its cells, for the legends.
pub const CELL_LEGEND: &str = "Each cell: the Kaplan-Meier median over the seeds, a seed that did not find the bug within its budget censored at what it had spent, with its 95% interval (Brookmeyer-Crowley, Greenwood variance) and (seeds that found it / seeds); `>N`: not reached within N, the most any seed spent; a deterministic technique (one run), its one figure.";

/// What follows the rows: the legend, the same cells in executed steps
/// and in seconds, the errors, the ratios and the log-rank tests.
pub fn markdown_tail(rows: &[Row], args: &TableArgs) -> String {
    let mut out = format!(
        "\nExhaustive columns (PB, SES-*): distinct states before the bug; sampling columns: schedules before the bug (Hybrid: the schedules of its sampling phase, after its SES phase spent up to the {} states of the cap; 0 when SES found it), over {}. Budget per seed: {} s, {} states or {} schedules. {CELL_LEGEND}\n\n",
        args.max_states,
        crate::render::count_of(args.runs, "seed"),
        args.budget.as_secs_f64(),
        args.max_states,
        args.max_schedules
    );
    for (cost, what) in [
        (Cost::Steps, "In executed program steps (every technique's one cost)"),
        (Cost::Seconds, "In seconds (wall clock; sampling cells on every thread)"),
    ] {
        out.push_str(&format!("{what}:\n\n{}", markdown_head()));
        for r in rows {
            out.push_str(&markdown_row(r, cost));
        }
        out.push('\n');
    }
    out.push_str(&errors_text(rows.iter().map(|r| (r.model.as_str(), r.bug, &r.cells))));
    out.push_str(&format!(
        "Advantage of the best delaying technique over the best baseline (the baseline's median count divided by the delaying technique's): above 1x the delaying technique needed that many times fewer states or schedules; below 1x the baseline won. Then the best delaying technique (SES and SS columns) against the best of RS, IRS, PCT, POS, PCTCP and SURW, each by median executed steps (ties: more seeds that found it), with the log-rank test of their steps: chi-square with 1 degree of freedom, its p-value, and which found the bug sooner ({TEST_LEGEND}).\n\n",
    ));
    out.push_str(&format!(
        "| model | bug | best SES vs PB (states) | best SS vs best of RS/IRS/PCT (schedules) | {} |\n|---|---|---:|---:|---|---|---:|---:|---|\n",
        cell::VERSUS_HEAD
    ));
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            r.model,
            r.bug,
            ratio_text(r.ses_vs_pb),
            ratio_text(r.ss_vs_random),
            cell::versus_cells(r.versus.as_ref())
        ));
    }
    out.push('\n');
    out.push_str(&portfolio_text(
        rows.iter().map(|r| (r.model.as_str(), r.bug, r.portfolio.as_ref())),
    ));
    out
}

/// A ratio with two significant digits (`-` when absent): 12x, 3.4x,
/// 0.56x, 0.0012x.
pub fn ratio_text(x: Option<f64>) -> String {
    let Some(v) = x else {
        return "-".to_string();
    };
    if v >= 10.0 {
        return format!("{v:.0}x");
    }
    if v <= 0.0 || !v.is_finite() {
        return format!("{v}x");
    }
    // Decimals so that two significant digits show: 1 for [1, 10), 2 for
    // [0.1, 1), 3 for [0.01, 0.1), ...
    let decimals = (1 - v.log10().floor() as i32).max(1) as usize;
    format!("{v:.decimals$}x")
}

/// The stratified-sampling columns, with the paper's settings (uniform
/// placement; the deep table uses the default, see `deep::columns`).
fn sampling_columns() -> Vec<Column> {
    let ss = Strategy::Ss(SsParams::paper());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_keep_two_significant_digits() {
        let cases = [
            (None, "-"),
            (Some(250.0), "250x"),
            (Some(12.4), "12x"),
            (Some(3.45), "3.5x"),
            (Some(1.0), "1.0x"),
            (Some(0.5), "0.50x"),
            (Some(0.123), "0.12x"),
            (Some(0.0123), "0.012x"),
            (Some(0.000_43), "0.00043x"),
            (Some(0.0), "0x"),
        ];
        for (x, want) in cases {
            assert_eq!(ratio_text(x), want, "{x:?}");
        }
    }

    /// A cell of one run: found at `count` (steps three times that), or
    /// censored at 10 when `None`.
    fn cell(count: Option<u64>, error: Option<&str>) -> Cell {
        cell_of(&[Run {
            seed: 0,
            found: count.is_some(),
            count: count.unwrap_or(10),
            steps: 3 * count.unwrap_or(10),
            seconds: 0.5,
            error: error.map(str::to_string),
            by: None,
        }])
    }

    /// A cell whose run failed reads `error` (and the error is listed under
    /// the table), one that ran out of budget `>N`; the row's test pits the
    /// fastest delaying column against the fastest baseline, in steps.
    #[test]
    fn failed_cells_differ_from_cells_that_did_not_find_the_bug() {
        let cols = columns();
        let mut row = Row {
            model: "m".into(),
            bug: 1,
            name: "b".into(),
            cells: Default::default(),
            ses_vs_pb: None,
            ss_vs_random: None,
            versus: None,
            portfolio: None,
        };
        for (i, c) in cols.iter().enumerate() {
            let cell = match i {
                0 => cell(None, Some("unknown explorer \"zz\"")),
                1 => cell(None, None),
                _ => cell(Some(i as u64), None),
            };
            row.cells.insert(c.name.to_string(), cell);
        }
        let line = markdown_row(&row, Cost::Count);
        let fields: Vec<&str> = line.trim_end().split('|').map(str::trim).collect();
        assert_eq!(&fields[..6], ["", "m", "1 b", "error", ">10", "2"], "{line}");
        let line = markdown_row(&row, Cost::Steps);
        assert!(line.starts_with("| m | 1 b | error | >30 | 6 | 9 | 12 |"), "{line}");
        // SES-RTC (6 steps) against RS (12), one seed each: no test.
        row.versus = versus_of(&row.cells, &cols);
        let args = TableArgs {
            budget: std::time::Duration::from_secs(1),
            max_states: 10,
            max_schedules: 10,
            runs: 1,
            models: vec![],
            bugs: vec![],
            threads: 1,
            progress: false,
            stop: StopFlag::new(),
        };
        let tail = markdown_tail(std::slice::from_ref(&row), &args);
        assert!(
            tail.contains("\nerror: m bug 1 PB: unknown explorer \"zz\"\n"),
            "{tail}"
        );
        assert_eq!(tail.matches("error: ").count(), 1, "{tail}");
        assert!(tail.contains("over 1 seed. Budget per seed: 1 s"), "{tail}");
        assert!(tail.contains("| SES-RTC 6 | RS 12 | - | - | - |\n"), "{tail}");
        row.cells.values_mut().for_each(|c| c.error = None);
        let tail = markdown_tail(std::slice::from_ref(&row), &args);
        assert!(!tail.contains("error"), "{tail}");
    }

    /// The test's baselines are columns, and so are the ratio's.
    #[test]
    fn baselines_are_columns() {
        let names: Vec<&str> = columns().iter().map(|c| c.name).collect();
        for b in BASELINES.iter().chain(RATIO_BASELINES) {
            assert!(names.contains(b), "{b}");
        }
        assert!(columns().iter().all(|c| !(c.delaying && BASELINES.contains(&c.name))));
    }
}
