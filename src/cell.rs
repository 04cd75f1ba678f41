//! A cell of `mcheck table`, `mcheck table --deep` and `mcheck scaling`:
//! one technique on one bug, one run per seed, summarised in three costs
//! ([`Cost`]) by the Kaplan-Meier median and its 95% interval
//! ([`crate::stats::median`]): a seed that stopped at its budget without
//! the bug is censored at what it had spent, not dropped. And the
//! comparison of a row's best delaying technique with its best baseline
//! ([`versus`]): the log-rank test of their executed steps.

use crate::stats::{self, LogRank, Median, Obs};
use mcheck_checker::search::human;
use serde::Serialize;

/// What one run (one seed of one cell) gave.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    /// The seed.
    pub seed: u64,
    /// Whether it found the bug within the budget.
    pub found: bool,
    /// Distinct states (exhaustive techniques) or schedules (sampling ones)
    /// when it found the bug or stopped.
    pub count: u64,
    /// Program steps executed when it found the bug or stopped: every step
    /// of every execution for sampling (stratified sampling's
    /// re-executions from the initial state included), every transition
    /// taken for an exhaustive search (hybrid: both phases).
    pub steps: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// The run's error, if it failed (then it is neither an event nor
    /// censored: it is left out of the statistics).
    pub error: Option<String>,
    /// The portfolio's member that found the bug (`Report::found_by`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

/// A cost to the bug, the unit of a cell's median.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cost {
    /// Distinct states (exhaustive) or schedules (sampling): the paper's
    /// units, which differ between the two kinds.
    Count,
    /// Executed program steps: one cost for every technique.
    Steps,
    /// Wall-clock seconds (depend on the machine and its load).
    Seconds,
}

impl Run {
    /// The run as an observation of `cost`: an event when it found the
    /// bug, censored at what it had spent otherwise.
    pub fn obs(&self, cost: Cost) -> Obs {
        let time = match cost {
            Cost::Count => self.count as f64,
            Cost::Steps => self.steps as f64,
            Cost::Seconds => self.seconds,
        };
        Obs {
            time,
            event: self.found,
        }
    }
}

/// One cell: the medians of the runs that did not fail, in each cost.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    /// Whether the Kaplan-Meier median is reached (in every cost alike).
    pub found: bool,
    /// States (exhaustive) or schedules (sampling) to the bug.
    pub count: Median,
    /// Executed steps to the bug.
    pub steps: Median,
    /// Seconds to the bug.
    pub seconds: Median,
    /// Runs that found the bug, of `runs`.
    pub found_runs: u64,
    /// Runs made.
    pub runs: u64,
    /// Seconds spent on the cell, all runs together.
    pub total_seconds: f64,
    /// The first error of a run of the cell (the cell then shows `error`).
    pub error: Option<String>,
    /// The runs, one per seed.
    pub seeds: Vec<Run>,
}

impl Cell {
    /// The cell's median in `cost`.
    pub fn median(&self, cost: Cost) -> &Median {
        match cost {
            Cost::Count => &self.count,
            Cost::Steps => &self.steps,
            Cost::Seconds => &self.seconds,
        }
    }

    /// The observations of `cost` of the runs that did not fail.
    pub fn obs(&self, cost: Cost) -> Vec<Obs> {
        self.seeds
            .iter()
            .filter(|r| r.error.is_none())
            .map(|r| r.obs(cost))
            .collect()
    }
}

/// The cell of the runs made.
pub fn cell_of(runs: &[Run]) -> Cell {
    let ok: Vec<&Run> = runs.iter().filter(|r| r.error.is_none()).collect();
    let of = |cost| stats::median(&ok.iter().map(|r| r.obs(cost)).collect::<Vec<_>>());
    let count = of(Cost::Count);
    Cell {
        found: count.median.is_some(),
        count,
        steps: of(Cost::Steps),
        seconds: of(Cost::Seconds),
        found_runs: ok.iter().filter(|r| r.found).count() as u64,
        runs: runs.len() as u64,
        total_seconds: runs.iter().map(|r| r.seconds).sum(),
        error: runs.iter().find_map(|r| r.error.clone()),
        seeds: runs.to_vec(),
    }
}

/// A cell as the Markdown tables show it in `cost`: `error` (a run
/// failed); with one run its cost or `>N`; with several the median, its
/// 95% interval and the runs that found the bug, `120 [80, 210] (20/20)`,
/// or `>N (3/20)` when the median is not reached. `>N`: not reached
/// within N, the longest any seed ran (its budget in this cost).
pub fn cell_text(cell: &Cell, cost: Cost) -> String {
    if cell.error.is_some() {
        return "error".to_string();
    }
    let m = cell.median(cost);
    let at = |x: Option<f64>| x.map_or_else(|| format!(">{}", number(m.follow_up)), number);
    if cell.runs <= 1 {
        return at(m.median);
    }
    let fraction = format!("({}/{})", cell.found_runs, cell.runs);
    match m.median {
        Some(_) => format!("{} [{}, {}] {fraction}", at(m.median), at(m.low), at(m.high)),
        None => format!("{} {fraction}", at(None)),
    }
}

/// A cost for people: whole numbers below 10,000 as they are, larger ones
/// as [`human`] rounds them (12.3k, 4.5M), fractions below 100 to three
/// significant digits (2.5, 0.0312), below 0.01 to two (6.7e-5: seconds
/// of a quick run), the rest rounded.
pub fn number(x: f64) -> String {
    if x >= 1e4 {
        return human(x);
    }
    if x == x.round() || x >= 100.0 {
        return format!("{x:.0}");
    }
    if x < 0.01 {
        return format!("{x:.1e}");
    }
    let decimals = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.decimals$}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The best of `cells` (name, cell): the smallest median executed steps
/// (not reached counts as infinite), ties broken by more runs that found
/// the bug, then by order. Failed cells do not compete.
pub fn best<'a>(cells: impl IntoIterator<Item = (&'a str, &'a Cell)>) -> Option<(&'a str, &'a Cell)> {
    cells.into_iter().filter(|(_, c)| c.error.is_none()).min_by(|a, b| {
        let key = |c: &Cell| c.steps.median.unwrap_or(f64::INFINITY);
        key(a.1).total_cmp(&key(b.1)).then(b.1.found_runs.cmp(&a.1.found_runs))
    })
}

/// A row's best delaying technique against its best baseline.
#[derive(Clone, Debug, Serialize)]
pub struct Versus {
    /// The best delaying technique (by [`best`]).
    pub delaying: String,
    /// Its median executed steps.
    pub delaying_steps: Median,
    /// The best baseline.
    pub baseline: String,
    /// Its median executed steps.
    pub baseline_steps: Median,
    /// The log-rank test of the delaying technique's executed steps
    /// against the baseline's (`observed > expected`: the delaying
    /// technique found the bug sooner); `None` when no seed of either
    /// found the bug, or when one of them has a single run (a
    /// deterministic technique): one observation against many is where
    /// the chi-square approximation fails (one run faster than 20 others
    /// gives chi-square 20, p = 8e-6, where the exact permutation test
    /// gives 1/21), so its figure is to be read against the other's
    /// interval instead.
    pub test: Option<LogRank>,
}

/// The best of `delaying` against the best of `baselines` (see [`best`]);
/// `None` when either has no cell that ran.
pub fn versus<'a>(
    delaying: impl IntoIterator<Item = (&'a str, &'a Cell)>,
    baselines: impl IntoIterator<Item = (&'a str, &'a Cell)>,
) -> Option<Versus> {
    let (d_name, d) = best(delaying)?;
    let (b_name, b) = best(baselines)?;
    let (d_obs, b_obs) = (d.obs(Cost::Steps), b.obs(Cost::Steps));
    let test = if d_obs.len() > 1 && b_obs.len() > 1 {
        stats::log_rank(&d_obs, &b_obs)
    } else {
        None
    };
    Some(Versus {
        delaying: d_name.to_string(),
        delaying_steps: d.steps,
        baseline: b_name.to_string(),
        baseline_steps: b.steps,
        test,
    })
}

/// When a row has no test, for the legends.
pub const TEST_LEGEND: &str = "`-`: no seed of either found the bug, or one of them ran once (a deterministic technique), where the chi-square approximation does not hold";

/// The heading of [`versus_cells`]'s columns, for a Markdown table.
pub const VERSUS_HEAD: &str =
    "best delaying (median steps) | best baseline (median steps) | log-rank chi2 | p | sooner";

/// A [`Versus`] as Markdown cells (see [`VERSUS_HEAD`]); `-` throughout
/// without one, `-` for the test when it has none.
pub fn versus_cells(v: Option<&Versus>) -> String {
    let Some(v) = v else {
        return "- | - | - | - | -".to_string();
    };
    let median = |m: &Median| m.median.map_or_else(|| format!(">{}", number(m.follow_up)), number);
    let (chi2, p, sooner) = match &v.test {
        Some(t) => (
            format!("{:.1}", t.chi2),
            p_text(t.p),
            if t.observed > t.expected {
                v.delaying.clone()
            } else {
                v.baseline.clone()
            },
        ),
        None => ("-".into(), "-".into(), "-".into()),
    };
    format!(
        "{} {} | {} {} | {chi2} | {p} | {sooner}",
        v.delaying,
        median(&v.delaying_steps),
        v.baseline,
        median(&v.baseline_steps)
    )
}

/// A p-value with two significant digits: 0.62, 0.031, 0.0042, 4.2e-5.
pub fn p_text(p: f64) -> String {
    if p >= 0.001 {
        let decimals = (1 - p.log10().floor() as i32).max(2) as usize;
        format!("{p:.decimals$}")
    } else {
        format!("{p:.1e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(seed: u64, found: bool, count: u64) -> Run {
        Run {
            seed,
            found,
            count,
            steps: count * 10,
            seconds: count as f64 / 100.0,
            error: None,
            by: None,
        }
    }

    #[test]
    fn numbers_read_at_a_glance() {
        let cases = [
            (0.0, "0"),
            (7.0, "7"),
            (2.5, "2.5"),
            (12.26, "12.3"),
            (0.031_24, "0.0312"),
            (0.5, "0.5"),
            (0.000_066_8, "6.7e-5"),
            (9_999.0, "9999"),
            (123.5, "124"),
            (12_345.0, "12.3k"),
            (4_500_000.0, "4.5M"),
        ];
        for (x, want) in cases {
            assert_eq!(number(x), want, "{x}");
        }
        assert_eq!(p_text(0.62), "0.62");
        assert_eq!(p_text(0.031), "0.031");
        assert_eq!(p_text(0.0042), "0.0042");
        assert_eq!(p_text(1.0), "1.00");
        assert_eq!(p_text(4.17e-5), "4.2e-5");
    }

    /// Five seeds: found at 10, 20, 30 schedules, two stopped at 40 and
    /// 50. Kaplan-Meier: S = 4/5, 3/5, 2/5 after 10, 20, 30, so the median
    /// is 30 schedules, 300 steps and 0.3 s; the Greenwood band S + 1.96
    /// se stays above 1/2 (at 30: 0.4 + 1.96 x 0.219 = 0.83), so the
    /// interval is open above, and S - 1.96 se = 0.8 - 0.35 = 0.45 < 1/2
    /// already at 10.
    #[test]
    fn a_cell_censors_the_seeds_that_stopped() {
        let runs: Vec<Run> = [(10, true), (20, true), (30, true), (40, false), (50, false)]
            .iter()
            .enumerate()
            .map(|(i, &(c, f))| run(i as u64, f, c))
            .collect();
        let cell = cell_of(&runs);
        assert!(cell.found);
        assert_eq!((cell.found_runs, cell.runs), (3, 5));
        assert_eq!(cell.count.median, Some(30.0));
        assert_eq!(cell.steps.median, Some(300.0));
        assert_eq!(cell.seconds.median, Some(0.3));
        assert_eq!(cell_text(&cell, Cost::Count), "30 [10, >50] (3/5)");
        assert_eq!(cell_text(&cell, Cost::Steps), "300 [100, >500] (3/5)");
        // Two seeds that ran out of time early (censored at 5, before any
        // bug was found) leave the risk set: S(10) = 2/3, S(20) = 1/3, so
        // the median is 20; counting them as never finding it (the median
        // seed of the five sorted with "not found" last) would give 30.
        let early: Vec<Run> = [(10, true), (20, true), (30, true), (5, false), (5, false)]
            .iter()
            .enumerate()
            .map(|(i, &(c, f))| run(i as u64, f, c))
            .collect();
        assert_eq!(cell_of(&early).count.median, Some(20.0));
        let none: Vec<Run> = (0..3).map(|s| run(s, false, 100)).collect();
        assert_eq!(cell_text(&cell_of(&none), Cost::Count), ">100 (0/3)");
        assert_eq!(cell_text(&cell_of(&runs[..1]), Cost::Count), "10");
        assert_eq!(cell_text(&cell_of(&runs[4..]), Cost::Count), ">50");
    }

    /// A failed run is left out of the statistics and marks the cell.
    #[test]
    fn failed_runs_are_not_observations() {
        let mut bad = run(1, false, 0);
        bad.error = Some("boom".into());
        let cell = cell_of(&[run(0, true, 5), bad]);
        assert_eq!(cell.obs(Cost::Count).len(), 1);
        assert_eq!(cell.count.median, Some(5.0));
        assert_eq!(cell_text(&cell, Cost::Count), "error");
        assert_eq!(best([("x", &cell)]).map(|b| b.0), None);
    }

    /// Best by median steps, then by runs that found it; the test is the
    /// log-rank test of the two cells' steps.
    #[test]
    fn versus_picks_the_best_of_each_side() {
        let fast = cell_of(&(0..6).map(|s| run(s, true, 1 + s)).collect::<Vec<_>>());
        let slow = cell_of(&(0..6).map(|s| run(s, true, 100 + s)).collect::<Vec<_>>());
        let one_found = cell_of(&[run(0, true, 5), run(1, false, 9), run(2, false, 9)]);
        let none_found = cell_of(&[run(0, false, 9), run(1, false, 9), run(2, false, 9)]);
        assert_eq!(
            best([("none", &none_found), ("one", &one_found)]).map(|b| b.0),
            Some("one")
        );
        assert_eq!(best([("slow", &slow), ("fast", &fast)]).map(|b| b.0), Some("fast"));
        let v = versus([("slow", &slow), ("none", &none_found)], [("fast", &fast)]).expect("both sides");
        assert_eq!((v.delaying.as_str(), v.baseline.as_str()), ("slow", "fast"));
        let t = v.test.expect("events");
        assert_eq!(
            t,
            stats::log_rank(&slow.obs(Cost::Steps), &fast.obs(Cost::Steps)).unwrap()
        );
        assert!(t.observed < t.expected && t.p < 0.01, "{t:?}");
        let text = versus_cells(Some(&v));
        assert!(
            text.starts_with("slow 1025 | fast 35 | ") && text.ends_with(" | fast"),
            "{text}"
        );
        assert_eq!(versus([], [("fast", &fast)]).map(|v| v.baseline), None);
        // A single run on one side: no test.
        let single = cell_of(&[run(0, true, 1)]);
        let v = versus([("single", &single)], [("slow", &slow)]).expect("both sides");
        assert_eq!((v.delaying.as_str(), v.test), ("single", None));
        assert!(
            versus_cells(Some(&v)).ends_with("| - | - | -"),
            "{}",
            versus_cells(Some(&v))
        );
        assert_eq!(versus_cells(None).matches('-').count(), 5);
    }
}
