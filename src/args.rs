//! The command line's grammar: every command, flag and value parser. Values
//! are range-checked here, by clap, so that `run` and `table` share one
//! validation and every message carries the command's usage.

use clap::builder::{PossibleValue, PossibleValuesParser, RangedU64ValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use mcheck_checker::search::{DEFAULT_IRS_STEP, DEFAULT_PCT_DEPTH, STRATEGIES, Strategy};
use mcheck_checker::search::{HybridParams, SsParams, SsPlacement};

/// Replays a shrink may try by default.
pub const DEFAULT_SHRINK_ATTEMPTS: u64 = 5000;

/// The most worker threads `-j` accepts.
pub const MAX_THREADS: u64 = 4096;

/// The longest budget `--time-limit` and `--budget-s` accept, in seconds
/// (about 115 days).
pub const MAX_SECONDS: f64 = 1e7;

const EXIT_STATUS: &str = "Exit status: 0 no violation found, 1 violation found, 2 usage or input error, 3 a reachability property unreached (run --coverage: an exhaustive search covered every state, none violates, but a property the model declares holds in none), 130 interrupted (SIGINT, SIGTERM or SIGHUP: the report so far is printed).";

#[derive(Parser, Debug)]
#[command(
    name = "mcheck",
    version,
    about = "A stateless model checker for asynchronous message-passing programs, with delaying explorers",
    long_about = None,
    after_help = EXIT_STATUS
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// List models (with their bugs and parameters), explorers and strategies.
    List {
        /// One JSON object on stdout.
        #[arg(long, conflicts_with = "markdown")]
        json: bool,
        /// The page docs/models.md: every model's parameters and seeded
        /// bugs in tables.
        #[arg(long)]
        markdown: bool,
        /// With --markdown: also run each model's default with SES and each
        /// seeded bug with `mcheck run`'s defaults, and add their figures
        /// (a few minutes).
        #[arg(long, requires = "markdown")]
        measure: bool,
    },
    /// Check a model.
    Run(Box<RunArgs>),
    /// Re-execute a schedule (a text form or a file saved with --save) and print its trace.
    Replay {
        /// The schedule: a file, `-` for standard input, or its text form (mcheck2:...).
        schedule: String,
        /// Output format.
        #[arg(long, default_value = "text", value_parser = PossibleValuesParser::new(["text", "mermaid", "dot", "json", "html"]))]
        format: String,
        /// Show long payloads in full.
        #[arg(short, long)]
        verbose: bool,
        /// After the trace, the race report: happens-before order, races, and
        /// which of them the violation depends on (text format; an html page
        /// always shows them).
        #[arg(long)]
        races: bool,
    },
    /// The paper's table on the shipped models: every technique on every seeded bug (`--deep`: at long workloads).
    Table(TableCli),
    /// Schedules to a bug as the workload grows: each technique at each size of one parameter, with a plot.
    Scaling(ScalingCli),
    /// Shrink a counterexample: fewer delays, earlier delays, fewer steps; the same bug.
    Shrink {
        /// The schedule: a file, `-` for standard input, or its text form (mcheck2:...).
        schedule: String,
        /// Where to save the shrunk schedule (default: FILE.shrunk.json, or none for a text form).
        #[arg(long, value_name = "FILE")]
        save: Option<String>,
        /// At most this many replays.
        #[arg(long, value_name = "N", default_value_t = DEFAULT_SHRINK_ATTEMPTS, value_parser = at_least_one())]
        max_attempts: u64,
        /// One JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Merge the --json reports of the shards (--shard K/N) of one sampling run into the unsharded run's report (JSON).
    Merge {
        /// The shards' reports, one file each (0/N .. N-1/N, any order).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<String>,
    },
}

/// `mcheck table`'s default time budget per cell and seed, in seconds.
pub const TABLE_BUDGET_S: f64 = 5.0;
/// `mcheck table`'s default schedule cap per sampling cell and seed.
pub const TABLE_MAX_SCHEDULES: u64 = 100_000;
/// `mcheck table`'s default state cap per exhaustive cell.
pub const TABLE_MAX_STATES: u64 = 2_000_000;
/// `mcheck table`'s default seeds per randomized cell: enough for a
/// median's 95% interval (with 20 seeds, between the 6th and the 15th
/// without censoring).
pub const TABLE_RUNS: u64 = 20;
/// `mcheck table --deep` and `mcheck scaling`: the default time budget per
/// cell and seed, in seconds (see the deep table's header for the sum).
pub const DEEP_BUDGET_S: f64 = 2.0;
/// `mcheck table --deep` and `mcheck scaling`: the default schedule cap per
/// cell and seed.
pub const DEEP_MAX_SCHEDULES: u64 = 10_000;
/// `mcheck table --deep` and `mcheck scaling`: the default seeds per
/// randomized cell (as [`TABLE_RUNS`]).
pub const DEEP_RUNS: u64 = TABLE_RUNS;

/// `mcheck table --noise`: the default time budget per cell and seed, in
/// seconds: with [`DEEP_RUNS`] seeds its 20 rows fit in 45 minutes on two
/// cores (its header prints the worst case).
pub const NOISE_BUDGET_S: f64 = 1.0;

/// Settings of `mcheck table`.
#[derive(Args, Debug, Clone)]
pub(crate) struct TableCli {
    /// The deep table: every seeded bug at a long-workload configuration
    /// (mean execution of at least 300 steps), the sampling techniques and
    /// SES-RTC, each cell under the same time and schedule budget.
    #[arg(long, conflicts_with = "noise")]
    pub deep: bool,
    /// The noise benchmark: bugs whose race happens once per execution,
    /// among more and more independent background actors (the `noise`
    /// parameter at each of --sizes), every technique of the deep table.
    #[arg(long)]
    pub noise: bool,
    /// With --noise: the sizes of the noise parameter, comma-separated [default: 1,4,16,64].
    #[arg(long, value_name = "N,N,...", requires = "noise")]
    pub sizes: Option<String>,
    /// With --noise: draw a plot per row (counts to the bug against the mean execution length, a point per size) into this directory, as MODEL-BUG.svg.
    #[arg(long, value_name = "DIR", requires = "noise")]
    pub svg_dir: Option<String>,
    /// Time budget per cell (and per seed), in seconds [default: 5; 2 with --deep; 1 with --noise].
    #[arg(long, alias = "time-limit", value_name = "SECS", value_parser = seconds)]
    pub budget_s: Option<f64>,
    /// Distinct-state cap per exhaustive cell [default: 2000000; not with --deep, where SES-RTC has only the time budget].
    #[arg(long, value_name = "N", value_parser = at_least_one())]
    pub max_states: Option<u64>,
    /// Schedule cap per sampling cell (and per seed) [default: 100000; 10000 with --deep and --noise].
    #[arg(long, value_name = "N", value_parser = at_least_one())]
    pub max_schedules: Option<u64>,
    /// Seeds per randomized cell (the Kaplan-Meier median and its 95% interval are reported; fewer for a quick look) [default: 20].
    #[arg(long, value_name = "N", value_parser = RangedU64ValueParser::<u64>::new().range(1..=1000))]
    pub runs: Option<u64>,
    /// Only these models (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub models: Vec<String>,
    /// Only these bug ids (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub bugs: Vec<u32>,
    /// Threads (default: all cores; the table runs sampling cells on them, the deep table runs cells side by side, one thread each).
    #[arg(short = 'j', long = "threads", value_name = "T", value_parser = threads())]
    pub threads: Option<usize>,
    /// One JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Settings of `mcheck scaling`.
#[derive(Args, Debug, Clone)]
pub(crate) struct ScalingCli {
    /// The model (see `mcheck list`).
    pub model: String,
    /// The seeded bug to find.
    #[arg(long)]
    pub bug: String,
    /// The workload parameter and its sizes: NAME=V1,V2,...
    #[arg(long, value_name = "NAME=V1,V2,...")]
    pub param: String,
    /// Other parameters, fixed at every size: `KEY=VALUE`, repeatable or comma-separated.
    #[arg(long = "set", value_name = "KEY=VALUE[,KEY=VALUE]")]
    pub set: Vec<String>,
    /// The techniques (comma-separated column names of `mcheck table --deep`, any case) [default: every sampling one].
    #[arg(long, value_delimiter = ',')]
    pub techniques: Vec<String>,
    /// Seeds per technique and size (the Kaplan-Meier median and its 95% interval are reported; fewer for a quick look).
    #[arg(long, value_name = "N", default_value_t = DEEP_RUNS, value_parser = RangedU64ValueParser::<u64>::new().range(1..=1000))]
    pub runs: u64,
    /// Time budget per technique, size and seed, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = DEEP_BUDGET_S, value_parser = seconds)]
    pub budget_s: f64,
    /// Schedule cap per technique, size and seed.
    #[arg(long, value_name = "N", default_value_t = DEEP_MAX_SCHEDULES, value_parser = at_least_one())]
    pub max_schedules: u64,
    /// Draw the plot (schedules to the bug against the mean execution length) to this SVG file.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<String>,
    /// One JSON object on stdout (one record per size and technique).
    #[arg(long)]
    pub json: bool,
    /// Threads: runs go side by side, one thread each (default: all cores).
    #[arg(short = 'j', long = "threads", value_name = "T", value_parser = threads())]
    pub threads: Option<usize>,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `--set`'s values (`KEY=VALUE`, repeatable or comma-separated) as
/// (key, value) pairs, for [`mcheck_checker::Params::resolve`].
pub(crate) fn parse_overrides(set: &[String]) -> Result<Vec<(String, String)>, String> {
    set.iter()
        .flat_map(|s| s.split(','))
        .map(|kv| {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("--set takes KEY=VALUE[,KEY=VALUE...], not {kv:?}"))?;
            Ok((k.trim().to_string(), v.trim().to_string()))
        })
        .collect()
}

/// `--strategy`: the names and descriptions of
/// [`mcheck_checker::search::STRATEGIES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StrategyName {
    Ses,
    Ss,
    Dfs,
    Pb,
    Rs,
    Irs,
    Pct,
    Pos,
    Pctcp,
    Surw,
    Hybrid,
    Portfolio,
}

impl StrategyName {
    /// The name of `strategy`'s kind.
    pub fn of(strategy: &Strategy) -> StrategyName {
        match strategy {
            Strategy::Ses => StrategyName::Ses,
            Strategy::Dfs => StrategyName::Dfs,
            Strategy::Pb => StrategyName::Pb,
            Strategy::Ss(_) => StrategyName::Ss,
            Strategy::Rs => StrategyName::Rs,
            Strategy::Irs { .. } => StrategyName::Irs,
            Strategy::Pct { .. } => StrategyName::Pct,
            Strategy::Pos => StrategyName::Pos,
            Strategy::Pctcp { .. } => StrategyName::Pctcp,
            Strategy::Surw => StrategyName::Surw,
            Strategy::Hybrid(_) => StrategyName::Hybrid,
            Strategy::Portfolio => StrategyName::Portfolio,
        }
    }

    /// The name, as `mcheck list` and the reports spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            StrategyName::Ses => "ses",
            StrategyName::Ss => "ss",
            StrategyName::Dfs => "dfs",
            StrategyName::Pb => "pb",
            StrategyName::Rs => "rs",
            StrategyName::Irs => "irs",
            StrategyName::Pct => "pct",
            StrategyName::Pos => "pos",
            StrategyName::Pctcp => "pctcp",
            StrategyName::Surw => "surw",
            StrategyName::Hybrid => "hybrid",
            StrategyName::Portfolio => "portfolio",
        }
    }
}

impl ValueEnum for StrategyName {
    fn value_variants<'a>() -> &'a [Self] {
        use StrategyName::*;
        &[Ses, Ss, Dfs, Pb, Rs, Irs, Pct, Pos, Pctcp, Surw, Portfolio, Hybrid]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let name = self.as_str();
        let help = STRATEGIES.iter().find(|(n, _)| *n == name).map(|(_, d)| *d);
        Some(PossibleValue::new(name).help(help.unwrap_or_default()))
    }
}

#[derive(Args, Debug, Clone)]
pub(crate) struct RunArgs {
    /// The model (see `mcheck list`).
    pub model: String,
    /// Switch on seeded bug N.
    #[arg(long)]
    pub bug: Option<String>,
    /// Override model parameters: `KEY=VALUE`, repeatable or
    /// comma-separated (`--set clients=2,increments=1`).
    #[arg(long = "set", value_name = "KEY=VALUE[,KEY=VALUE]")]
    pub set: Vec<String>,
    #[arg(short, long, default_value = "rtc", help = explorer_help())]
    pub explorer: String,
    /// The search strategy. The default, portfolio, runs SES with the
    /// explorer (half of the steps, on a thread of its own) beside every
    /// sampling technique: the bug as early as the technique that finds it
    /// first, `verified` when SES finishes, for as long as SES runs. `-s ses`
    /// runs SES alone.
    #[arg(short, long, value_enum, default_value_t = StrategyName::Portfolio)]
    pub strategy: StrategyName,
    /// Stop after this delay bound (ses, ss, hybrid), preemption bound (pb) or iteration (irs).
    #[arg(long, value_name = "D")]
    pub max_delays: Option<u32>,
    /// Longest execution, in steps.
    #[arg(long, value_name = "L", default_value_t = mcheck_checker::config::DEFAULT_MAX_STEPS,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=100_000_000))]
    pub max_steps: usize,
    /// Wall-clock budget in seconds (default: none for ses, dfs, pb and portfolio; 60 for sampling and hybrid).
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    pub time_limit: Option<f64>,
    /// Stop after this many distinct states (ses, dfs, pb; hybrid: the SES phase, default 100,000).
    #[arg(long, value_name = "N", value_parser = at_least_one())]
    pub max_states: Option<u64>,
    /// Stop after this many schedules (ss, rs, irs, pct, pos, pctcp, surw; hybrid: its sampling phase).
    #[arg(long, value_name = "N", value_parser = at_least_one())]
    pub max_schedules: Option<u64>,
    /// Memory budget of the state cache in MiB (ses, dfs, pb, hybrid; default: grow within --max-memory-mb).
    #[arg(long, value_name = "MB", value_parser = at_least_one())]
    pub cache_mb: Option<u64>,
    /// Memory budget of the whole search in MiB (ses, dfs, pb, hybrid; default: 3/4 of the machine).
    #[arg(long, value_name = "MB", value_parser = memory_mb)]
    pub max_memory_mb: Option<u64>,
    /// Seed of every random choice (ses with a randomized explorer, ss, rs, irs, pct, pos, pctcp, surw, hybrid).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Worker threads (every strategy; default: 1 for ses, dfs and pb, all cores for sampling, hybrid and the portfolio's sampling members; hybrid's SES phase runs on one, the portfolio's SES on one more).
    #[arg(short = 'j', long = "threads", value_name = "T", value_parser = threads())]
    pub threads: Option<usize>,
    /// Run only the samples with index mod N = K (ss, rs, irs, pct, pos, pctcp, surw).
    #[arg(long, value_name = "K/N", value_parser = shard)]
    pub shard: Option<(u32, u32)>,
    /// The distributed SES (--workers, --processes, --process, --hostfile).
    #[command(flatten)]
    pub cluster: crate::distributed::ClusterArgs,
    /// Report deadlocks as violations.
    #[arg(long)]
    pub deadlock: bool,
    /// Key the state cache by program state and explorer state (ses, pb), so
    /// that a bound d reached means that no execution with at most d delays
    /// (preemptions for pb) violates anything; explores more states.
    #[arg(long)]
    pub exact_bound: bool,
    /// Liveness checking (on by default): ses, dfs and pb (and hybrid when
    /// it verifies) then look for fair cycles of hot monitor states and
    /// for executions that end hot; sampling strategies report executions
    /// that reach --max-steps hot for more than --temperature consecutive
    /// steps as possible liveness violations.
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = on_off, action = clap::ArgAction::Set)]
    pub liveness: bool,
    /// Sampling strategies and hybrid: the temperature threshold, in
    /// consecutive hot steps at --max-steps (default: half of --max-steps).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(0..))]
    pub temperature: Option<u64>,
    /// Symmetry reduction (dfs, ses, pb, hybrid): cache one state per orbit
    /// under the model's declared groups of interchangeable machines (see
    /// `mcheck list`); the states counted are orbits.
    #[arg(long)]
    pub symmetry: bool,
    /// ses, dfs and pb: run the plain stratified search, the paper's
    /// algorithm as it reads, without the optimisation layer (retirement,
    /// pass-through, look-ahead, fast resume, path arena): the
    /// same counts in every stratum, the same outcome and counterexample,
    /// slower; for a user who suspects the optimisations. One thread only.
    #[arg(long, conflicts_with_all = ["workers", "processes", "process", "hostfile"])]
    pub plain: bool,
    /// ses, dfs and pb: turn these shortcuts of the optimised search off
    /// (comma-separated), to measure what each one pays; the counts, the
    /// outcome and the counterexample stay the same (docs/performance.md,
    /// "What each shortcut pays"). `sent` is the distributed SES's
    /// (--workers, --processes): a worker does not send a successor again
    /// that it sent lately.
    #[arg(long, value_name = "SHORTCUTS", value_delimiter = ',', conflicts_with = "plain",
          value_parser = clap::builder::PossibleValuesParser::new(mcheck_checker::Shortcuts::NAMES))]
    pub without: Vec<String>,
    /// PCT and PCTCP: the bug depth d (d - 1 priority-change points).
    #[arg(long, value_name = "D", default_value_t = DEFAULT_PCT_DEPTH,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub pct_depth: u32,
    /// PCT and PCTCP: change points are drawn in [1, K] (default: the length of one execution).
    #[arg(long, value_name = "K", value_parser = at_least_one())]
    pub pct_steps: Option<u64>,
    /// SS and hybrid: c1 in num_samples(d) = c1 * c2^d.
    #[arg(long, value_name = "X", default_value_t = SsParams::default().c1, value_parser = |s: &str| number_in(s, 1.0, 1e12))]
    pub c1: f64,
    /// SS and hybrid: c2 in num_samples(d) = c1 * c2^d.
    #[arg(long, value_name = "Y", default_value_t = SsParams::default().c2, value_parser = |s: &str| number_in(s, 1.0, 1e6))]
    pub c2: f64,
    /// SS and hybrid: where the delays go: uniform (the paper's), or mixed (each uniform sample followed by a twin that draws its delays log-uniformly, near the start and near each other).
    #[arg(long, value_name = "P", default_value = SsParams::default().placement.name(), value_parser = PossibleValuesParser::new(SsPlacement::NAMES))]
    pub placement: String,
    /// IRS: the depth bound added per iteration.
    #[arg(long, value_name = "S", default_value_t = DEFAULT_IRS_STEP,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub irs_step: usize,
    /// Report coverage (how often each handler ran, deferred, ignored and
    /// dropped messages, monitor states; over distinct transitions for
    /// ses, dfs, pb, over executions for the others) and search for each
    /// reachability property the model declares: reached with a schedule,
    /// unreached (exit status 3) or not seen.
    #[arg(long)]
    pub coverage: bool,
    /// One JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Save the counterexample to this file (JSON).
    #[arg(long, value_name = "FILE")]
    pub save: Option<String>,
    /// Shrink the counterexample before printing and saving it.
    #[arg(long)]
    pub shrink: bool,
    /// Show long payloads in full.
    #[arg(short, long)]
    pub verbose: bool,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

impl RunArgs {
    /// The chosen strategy with its own settings.
    pub fn strategy(&self) -> Strategy {
        match self.strategy {
            StrategyName::Ses => Strategy::Ses,
            StrategyName::Dfs => Strategy::Dfs,
            StrategyName::Pb => Strategy::Pb,
            StrategyName::Rs => Strategy::Rs,
            StrategyName::Ss => Strategy::Ss(self.ss_params()),
            StrategyName::Irs => Strategy::Irs { step: self.irs_step },
            StrategyName::Pct => Strategy::Pct {
                depth: self.pct_depth,
                steps: self.pct_steps,
            },
            StrategyName::Pos => Strategy::Pos,
            StrategyName::Pctcp => Strategy::Pctcp {
                depth: self.pct_depth,
                steps: self.pct_steps,
            },
            StrategyName::Surw => Strategy::Surw,
            StrategyName::Hybrid => Strategy::Hybrid(HybridParams::default().ss(self.ss_params())),
            StrategyName::Portfolio => Strategy::Portfolio,
        }
    }

    /// `--c1`, `--c2` and `--placement` (clap accepts only valid names).
    fn ss_params(&self) -> SsParams {
        let placement = SsPlacement::parse(&self.placement).unwrap_or_default();
        SsParams::default().c1(self.c1).c2(self.c2).placement(placement)
    }
}

/// `--explorer`'s help: the built-in explorers (models add their own, so
/// the value is not a closed list).
fn explorer_help() -> String {
    let names: Vec<&str> = mcheck_checker::explorers::BUILTIN.iter().map(|e| e.name).collect();
    format!(
        "The delaying explorer (ses, ss): {}, or one of the model's own (see `mcheck list`)",
        names.join(", ")
    )
}

/// A count of at least 1.
fn at_least_one() -> RangedU64ValueParser<u64> {
    RangedU64ValueParser::new().range(1..)
}

/// `-j`: 1 to [`MAX_THREADS`].
fn threads() -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::new().range(1..=MAX_THREADS)
}

/// A number from `lo` to `hi`.
fn number_in(s: &str, lo: f64, hi: f64) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if (lo..=hi).contains(&x) => Ok(x),
        _ => Err(format!("expected a number from {lo} to {hi:e}")),
    }
}

/// A duration in seconds: above 0, at most [`MAX_SECONDS`].
pub(crate) fn seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x <= MAX_SECONDS => Ok(x),
        _ => Err(format!(
            "expected a number of seconds above 0 and at most {MAX_SECONDS:e}"
        )),
    }
}

/// `--max-memory-mb`: 16 MiB up to the machine's memory.
fn memory_mb(s: &str) -> Result<u64, String> {
    let total = (mcheck_checker::config::total_memory().unwrap_or(1 << 40) >> 20) as u64;
    match s.trim().parse::<u64>() {
        Ok(mb) if (16..=total).contains(&mb) => Ok(mb),
        _ => Err(format!("expected 16 to {total} (this machine's memory in MiB)")),
    }
}

/// `--shard K/N` with 0 <= K < N.
pub fn shard(s: &str) -> Result<(u32, u32), String> {
    let bad = || "expected K/N with 0 <= K < N (for example 0/4)".to_string();
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let k: u32 = k.trim().parse().map_err(|_| bad())?;
    let n: u32 = n.trim().parse().map_err(|_| bad())?;
    if n == 0 || k >= n {
        return Err(bad());
    }
    Ok((k, n))
}

/// `on` or `off`.
fn on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("expected on or off, not {s:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--strategy` offers exactly the engine's strategies, each with its
    /// description, and each name maps to the strategy of that name.
    #[test]
    fn strategy_values_are_the_engines_strategies() {
        let offered: Vec<&str> = StrategyName::value_variants().iter().map(|s| s.as_str()).collect();
        let engine: Vec<&str> = STRATEGIES.iter().map(|(n, _)| *n).collect();
        assert_eq!(offered, engine);
        let cli = Cli::try_parse_from(["mcheck", "run", "m"]).expect("parses");
        let Command::Run(mut args) = cli.command else {
            panic!("not run")
        };
        for s in StrategyName::value_variants() {
            let help = s.to_possible_value().and_then(|v| v.get_help().map(|h| h.to_string()));
            assert!(help.is_some_and(|h| h.len() > 10), "{s:?}");
            args.strategy = *s;
            assert_eq!(args.strategy().name(), s.as_str());
        }
    }

    #[test]
    fn shard_takes_k_of_n() {
        assert_eq!(shard("0/4"), Ok((0, 4)));
        assert_eq!(shard(" 3 / 4 "), Ok((3, 4)));
        for bad in ["4/4", "1/0", "a/b", "1", "-1/2", ""] {
            assert!(shard(bad).is_err(), "{bad:?}");
        }
    }
}
