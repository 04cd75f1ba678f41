//! Search strategies. Each is a library call that returns a [`Report`]:
//!
//! * [`ses`]: stratified exhaustive search with a delaying explorer
//!   (paper §3),
//! * [`dfs`]: plain exhaustive depth-first search,
//! * [`pb`]: iterative preemption bounding (a baseline),
//!
//! all three on the one loop of the (private) `stratified` module,
//! differing only in their [`order`] (SES and PB on several threads with
//! `config.threads` > 1, see the `parallel` module), or with
//! [`Config::plain`] on the plain search of the `plain` module, its
//! reference without the optimisation layer; and the sampling
//! strategies on the one deterministic parallel batch runner (the `batch`
//! module):
//!
//! * [`ss`]: stratified sampling (paper §4),
//! * [`rs`]: random walk,
//! * [`irs`]: iterative random walk with a growing depth bound,
//! * [`pct()`]: probabilistic concurrency testing,
//! * [`pos()`]: partial order sampling,
//! * [`pctcp()`]: PCT with priorities per causal chain of messages,
//! * [`surw()`]: the selectively uniform random walk.
//!
//! and [`portfolio()`], SES on a thread of its own beside all the sampling
//! strategies, each with its share of the steps;
//!
//! and [`hybrid`], SES up to a state budget, then SS from the states it
//! left unexplored (the stratified loop, then the batch runner).
//!
//! Each runs the program as it is; [`crate::run()`] runs a strategy as a
//! user asks for it (watched by coverage or the symmetry check, with
//! liveness), through the `_on` forms here that take a [`Watched`]
//! program.
//!
//! The counterexample of every strategy is a self-contained
//! [`Schedule`](crate::Schedule): its path, explorer and seed, the step
//! limit, whether deadlocks count and the violation it reproduces.

mod batch;
mod error;
pub mod exec;
mod hybrid;
pub mod order;
mod parallel;
pub mod part;
mod pct;
mod pctcp;
mod plain;
mod portfolio;
mod pos;
mod progress;
mod random;
mod sample;
mod ss;
mod stratified;
mod surw;
mod threads;
mod walk;

pub use error::SearchError;
pub use hybrid::{DEFAULT_HYBRID_STATES, HybridParams, hybrid};
pub use pct::{default_steps as pct_default_steps, pct};
pub use pctcp::pctcp;
pub use portfolio::{SES_WEIGHT as PORTFOLIO_SES_WEIGHT, portfolio};
pub use pos::pos;
pub use progress::{human, rate};
pub use random::{irs, rs};
pub use sample::{SampleEnd, SampleResult};
pub use ss::{SsParams, SsPlacement, draw_sample, ss};
pub use surw::surw;
pub use threads::run_indexed;
pub(crate) use {
    hybrid::hybrid_on, pct::pct_on, pctcp::pctcp_on, portfolio::portfolio_on, pos::pos_on, random::irs_on,
    random::rs_on, ss::ss_on, surw::surw_on,
};

use crate::config::Config;
use crate::explorer::Explorer;
use crate::explorers::AnyExplorer;
use crate::program::{Program, ViolationKind};
use crate::report::Report;
use crate::schedule::PathKind;
use crate::watch::Watched;
#[cfg(debug_assertions)]
use order::Orders;
use order::{ChoiceOrder, Composed, Natural, Preemptive};
use stratified::SearchResult;

/// Stratified exhaustive search (SES) with `explorer`, seeded with
/// `config.seed`: delay bound 0, 1, 2, ... until the frontier is empty
/// (outcome `verified`), a violation is found, or a budget stops it.
///
/// Sound and complete for any explorer that keeps the soundness contract
/// (paper Thm 2): run to exhaustion it visits exactly the reachable states.
/// The counterexample is a delay path.
///
/// With `config.worker_threads()` > 1 the strata after the first run on
/// that many threads (see the `parallel` module): the counts may then vary from run
/// to run, the outcome and, run to exhaustion, the states may not.
pub fn ses<P: Program, E: Explorer>(program: &P, explorer: E, config: &Config) -> Result<Report, SearchError> {
    ses_on(Watched::bare(program), explorer, config)
}

/// [`ses`] on a watched program.
pub(crate) fn ses_on<P: Program, E: Explorer>(
    program: Watched<'_, P>,
    explorer: E,
    config: &Config,
) -> Result<Report, SearchError> {
    let explorer = crate::explorer::prepare(program.program(), explorer, config.seed);
    let name = explorer.name().to_string();
    let report = Report::new("ses", Some(&name), config.seed, 1);
    let result = stratified_on_threads(program, instance::<E, _>(Composed::new(explorer)), config, report)?;
    Ok(with_delay_schedule(result, &name, config))
}

/// The report of an SES search (of explorer `name`), with the delay path
/// of its violation as the schedule.
fn with_delay_schedule(result: SearchResult, name: &str, config: &Config) -> Report {
    let mut report = result.report;
    if let Some(v) = result.violation {
        let path = exec::delay_path(&v.advances);
        let schedule = exec::schedule(
            PathKind::Delays,
            Some(name),
            config.seed,
            config.max_steps,
            config.deadlock,
            path,
            &v.found,
        );
        report.schedule = Some(schedule);
    }
    report
}

/// Plain exhaustive depth-first search: every choice of every state, in
/// actor id order, with the state cache. The counterexample is a choice
/// path. `max_delays` does not apply.
///
/// With `config.worker_threads()` > 1 it runs on that many threads (see
/// the `parallel` module): strata that defer every choice but the first
/// spread the work into [`DFS_SPREAD_PER_THREAD`] work items per thread,
/// which then run depth-first on all threads, sharing the cache. The
/// report has one stratum; its deferrals are those of the spreading
/// strata. Run to exhaustion, the states and transitions are those of one
/// thread; which state is found first, hence the counterexample, may vary.
pub fn dfs<P: Program>(program: &P, config: &Config) -> Result<Report, SearchError> {
    dfs_on(Watched::bare(program), config)
}

/// [`dfs`] on a watched program.
pub(crate) fn dfs_on<P: Program>(program: Watched<'_, P>, config: &Config) -> Result<Report, SearchError> {
    let report = Report::new("dfs", None, config.seed, 1);
    let result = match config.worker_threads() {
        1 => one_thread(program, instance::<AnyExplorer, _>(Natural::default()), config, report)?,
        threads if config.plain => return Err(plain_on_threads(threads)),
        threads => {
            let config = Config {
                max_delays: None,
                ..config.clone()
            };
            let spread = Some(threads * DFS_SPREAD_PER_THREAD);
            let root = instance::<AnyExplorer, _>(Natural::charging());
            let mut result = parallel::run(program, root, &config, report, threads, spread)?;
            one_stratum(&mut result.report, threads);
            result
        }
    };
    with_choice_schedule(
        program.program(),
        instance::<AnyExplorer, _>(Natural::default()),
        result,
        config,
    )
}

/// The work items per thread a parallel DFS spreads its work into before
/// it runs them depth-first: enough that a thread which runs out of work
/// finds more while the others still have long runs ahead.
pub const DFS_SPREAD_PER_THREAD: usize = 256;

/// Sums the strata of a parallel DFS on `threads` threads into the one
/// stratum of a DFS, with a note on how its work was spread.
fn one_stratum(report: &mut Report, threads: usize) {
    let n = report.strata.len();
    let note = match report.strata.last() {
        Some(last) if last.bound == stratified::UNBOUNDED => format!(
            "dfs on {threads} threads: {} strata spread the work into {} work items, which ran depth first on all threads",
            n - 1,
            report.strata[n - 2].frontier
        ),
        _ => format!(
            "dfs on {threads} threads: the search ended in the {n} strata that spread the work, before they reached {} work items",
            threads * DFS_SPREAD_PER_THREAD
        ),
    };
    report.notes.push(note);
    let mut one = crate::report::Stratum::default();
    for s in report.strata.drain(..) {
        one.new_states += s.new_states;
        one.transitions += s.transitions;
        one.deferrals += s.deferrals;
        one.frontier = one.frontier.max(s.frontier);
        one.elapsed_s += s.elapsed_s;
    }
    report.strata.push(one);
    report.bound_reached = 0;
}

/// Iterative preemption bounding: preemption bound 0, 1, 2, ..., with the
/// state cache kept across bounds. A preemption is running another actor
/// while the one that ran last is still enabled; data alternatives are
/// free. `max_delays` bounds the preemptions. On several threads like
/// [`ses`].
pub fn pb<P: Program>(program: &P, config: &Config) -> Result<Report, SearchError> {
    pb_on(Watched::bare(program), config)
}

/// [`pb`] on a watched program.
pub(crate) fn pb_on<P: Program>(program: Watched<'_, P>, config: &Config) -> Result<Report, SearchError> {
    let report = Report::new("pb", None, config.seed, 1);
    let root = || instance::<AnyExplorer, _>(Preemptive::initial());
    let result = stratified_on_threads(program, root(), config, report)?;
    with_choice_schedule(program.program(), root(), result, config)
}

/// `order` as the exhaustive searches are instantiated with it: itself in
/// release builds; in builds with debug assertions (the tests'), as
/// [`Orders`] with the explorer type `E` (any for DFS and PB), so that SES,
/// DFS and PB share one instance of the search per program type and
/// explorer type. The search was half of each test binary's code.
#[cfg(not(debug_assertions))]
#[inline(always)]
#[allow(clippy::extra_unused_type_parameters)] // the debug build's `E`
fn instance<E, O: ChoiceOrder>(order: O) -> O {
    order
}

/// See the release build's `instance`.
#[cfg(debug_assertions)]
fn instance<E: Explorer, O: Into<Orders<E>>>(order: O) -> Orders<E> {
    order.into()
}

/// The stratified search on one thread, or on `config.worker_threads()`.
fn stratified_on_threads<P: Program, O: ChoiceOrder>(
    program: Watched<'_, P>,
    root: O,
    config: &Config,
    report: Report,
) -> Result<SearchResult, SearchError> {
    if config.exact_bound && root.state_hash().is_none() {
        return Err(SearchError::Input(format!(
            "--exact-bound needs an explorer that can hash its state, and explorer {} cannot (it does not implement Explorer::state_hash)",
            root.name()
        )));
    }
    match config.worker_threads() {
        1 => one_thread(program, root, config, report),
        threads if config.plain => Err(plain_on_threads(threads)),
        threads => parallel::run(program, root, config, report, threads, None),
    }
}

/// The stratified search on one thread: the optimised one, or with
/// [`Config::plain`] the plain one.
fn one_thread<P: Program, O: ChoiceOrder>(
    program: Watched<'_, P>,
    root: O,
    config: &Config,
    report: Report,
) -> Result<SearchResult, SearchError> {
    if config.plain {
        plain::run(program, root, config, report)
    } else {
        stratified::run(program, root, config, report)
    }
}

/// The error of the plain search asked for on `threads` threads: it runs
/// on one, and a search that quietly ran on fewer threads than asked
/// would mislead.
fn plain_on_threads(threads: usize) -> SearchError {
    SearchError::Input(format!(
        "the plain search (--plain) runs on one thread, not {threads}: drop -j, or use -j 1"
    ))
}

/// The report of a DFS or PB search, with the choice path of its
/// violation as the schedule.
fn with_choice_schedule<P: Program, O: ChoiceOrder>(
    program: &P,
    root: O,
    result: SearchResult,
    config: &Config,
) -> Result<Report, SearchError> {
    let mut report = result.report;
    if let Some(v) = result.violation {
        // A step violation at step k needs k+1 choices; a deadlock after k
        // steps needs k.
        let steps = if v.found.violation.kind == ViolationKind::Deadlock {
            v.found.step
        } else {
            v.found.step + 1
        };
        let path = exec::choices_path(program, root, v.advances, steps)?;
        let (seed, max_steps, deadlock) = (config.seed, config.max_steps, config.deadlock);
        let schedule = exec::schedule(PathKind::Choices, None, seed, max_steps, deadlock, path, &v.found);
        report.schedule = Some(schedule);
    }
    Ok(report)
}

/// A strategy and its own settings, as chosen at run time.
#[derive(Clone, Debug, PartialEq)]
pub enum Strategy {
    /// Stratified exhaustive search with the explorer.
    Ses,
    /// Plain exhaustive DFS.
    Dfs,
    /// Iterative preemption bounding.
    Pb,
    /// Stratified sampling with the explorer (paper §4).
    Ss(SsParams),
    /// Random walk.
    Rs,
    /// Iterative random walk: iteration i runs 3^i walks cut at depth
    /// i * `step`.
    Irs {
        /// The depth added per iteration.
        step: usize,
    },
    /// PCT with bug depth `depth` and change points in `[1, steps]`
    /// (`None`: measured, see [`pct_default_steps`]).
    Pct {
        /// The bug depth d (d - 1 priority-change points).
        depth: u32,
        /// k, the range of the change points.
        steps: Option<u64>,
    },
    /// POS: partial order sampling.
    Pos,
    /// PCTCP with bug depth `depth` and change points in `[1, steps]`
    /// (`None`: measured, see [`pct_default_steps`]).
    Pctcp {
        /// The bug depth d (d - 1 priority-change points).
        depth: u32,
        /// k, the range of the change points.
        steps: Option<u64>,
    },
    /// SURW: the selectively uniform random walk (see [`surw()`]).
    Surw,
    /// SES up to a state budget, then stratified sampling from where it
    /// stopped (see [`hybrid`]).
    Hybrid(HybridParams),
    /// SES and every sampling technique at once, each with its share of
    /// the steps, the counterexample that of the member that found the
    /// bug first (see [`crate::run::run`] and the `portfolio` module).
    Portfolio,
}

/// Default IRS depth step.
pub const DEFAULT_IRS_STEP: usize = 10;
/// Default PCT depth: the paper's bugs need few preemptions.
pub const DEFAULT_PCT_DEPTH: u32 = 3;

/// Every strategy's name with a one-line description, for `mcheck list`.
pub const STRATEGIES: &[(&str, &str)] = &[
    (
        "ses",
        "stratified exhaustive search: delay bound 0, 1, 2, ... with a state cache (paper §3)",
    ),
    (
        "ss",
        "stratified sampling: executions with d = 0, 1, 2, ... delays, c1 * c2^d samples each, on every core (paper §4)",
    ),
    ("dfs", "plain exhaustive depth-first search with a state cache"),
    (
        "pb",
        "iterative preemption bounding with a state cache kept across bounds (baseline)",
    ),
    (
        "rs",
        "random walk: uniform choice at every step, until a budget (baseline)",
    ),
    (
        "irs",
        "iterative random walk: iteration i runs 3^i walks cut at depth i * --irs-step (baseline)",
    ),
    (
        "pct",
        "PCT: random actor priorities with --pct-depth - 1 change points in [1, --pct-steps] (baseline)",
    ),
    (
        "pos",
        "POS: partial order sampling, a random priority per message, fresh ones for the messages that race with a delivery (baseline)",
    ),
    (
        "pctcp",
        "PCTCP: PCT with random priorities per causal chain of messages, --pct-depth and --pct-steps as PCT's (baseline)",
    ),
    (
        "surw",
        "SURW: selectively uniform random walk, an actor drawn in proportion to its remaining racing sends, counted by a profiling run (baseline)",
    ),
    (
        "portfolio",
        "ses (half of the steps) and ss with rr, rtc and prr (1/16 each), rs, pct, pos, pctcp and surw whole and with their walks cut short (1/32 each) at once: the bug as early as the member that finds it first, verified when ses finishes",
    ),
    (
        "hybrid",
        "ses until a state budget (--max-states, default 100,000), then stratified sampling from the states it left unexplored",
    ),
];

impl Strategy {
    /// The strategy's name.
    pub fn name(&self) -> &'static str {
        match self {
            Strategy::Ses => "ses",
            Strategy::Dfs => "dfs",
            Strategy::Pb => "pb",
            Strategy::Ss(_) => "ss",
            Strategy::Rs => "rs",
            Strategy::Irs { .. } => "irs",
            Strategy::Pct { .. } => "pct",
            Strategy::Pos => "pos",
            Strategy::Pctcp { .. } => "pctcp",
            Strategy::Surw => "surw",
            Strategy::Hybrid(_) => "hybrid",
            Strategy::Portfolio => "portfolio",
        }
    }

    /// Whether it explores exhaustively (and defaults to one thread).
    pub fn is_exhaustive(&self) -> bool {
        matches!(self, Strategy::Ses | Strategy::Dfs | Strategy::Pb)
    }
}
