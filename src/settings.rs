//! From parsed arguments to the engine's settings: which flags apply to
//! which strategy (a flag that does not apply is an error, never silently
//! ignored), and the [`Config`] of a run.

use crate::args::{RunArgs, StrategyName};
use clap::ArgMatches;
use clap::parser::ValueSource;
use mcheck_checker::{Config, Progress};
use std::io::IsTerminal;
use std::time::Duration;

use StrategyName::{Dfs, Hybrid, Irs, Pb, Pct, Pctcp, Portfolio, Pos, Rs, Ses, Ss, Surw};

/// A strategy-specific flag of `run`: its clap id, its spelling, the
/// strategies it applies to, and why the others ignore it. Flags not
/// listed apply to every strategy.
struct Applies {
    id: &'static str,
    flag: &'static str,
    to: &'static [StrategyName],
    why: &'static str,
}

const SAMPLING: &[StrategyName] = &[Ss, Rs, Irs, Pct, Pos, Pctcp, Surw];
/// The exhaustive searches, hybrid and the portfolio, whose SES phase or
/// member keeps a cache and counts states.
const CACHED: &[StrategyName] = &[Ses, Dfs, Pb, Hybrid, Portfolio];

const APPLIES: &[Applies] = &[
    Applies {
        id: "explorer",
        flag: "--explorer",
        to: &[Ses, Ss, Hybrid, Portfolio],
        why: "the other strategies follow no explorer",
    },
    Applies {
        id: "max_delays",
        flag: "--max-delays",
        to: &[Ses, Pb, Ss, Irs, Hybrid, Portfolio],
        why: "the others have no bound to stop at",
    },
    Applies {
        id: "exact_bound",
        flag: "--exact-bound",
        to: &[Ses, Pb],
        why: "it sets the cache key of the bounded exhaustive searches",
    },
    Applies {
        id: "symmetry",
        flag: "--symmetry",
        to: CACHED,
        why: "it reduces the state cache of the exhaustive searches; sampling keeps none",
    },
    Applies {
        id: "plain",
        flag: "--plain",
        to: &[Ses, Dfs, Pb, Portfolio],
        why: "it runs the exhaustive searches without their optimisation layer; the others have none",
    },
    Applies {
        id: "without",
        flag: "--without",
        to: &[Ses, Dfs, Pb, Portfolio],
        why: "it turns shortcuts of the exhaustive searches off; the others take none",
    },
    Applies {
        id: "max_states",
        flag: "--max-states",
        to: CACHED,
        why: "sampling does not count distinct states; use --max-schedules",
    },
    Applies {
        id: "cache_mb",
        flag: "--cache-mb",
        to: CACHED,
        why: "sampling keeps no state cache",
    },
    Applies {
        id: "max_memory_mb",
        flag: "--max-memory-mb",
        to: CACHED,
        why: "sampling keeps no states in memory",
    },
    Applies {
        id: "max_schedules",
        flag: "--max-schedules",
        to: &[Ss, Rs, Irs, Pct, Pos, Pctcp, Surw, Hybrid, Portfolio],
        why: "exhaustive searches count states; use --max-states",
    },
    Applies {
        id: "shard",
        flag: "--shard",
        to: SAMPLING,
        why: "an exhaustive search is not split into shards: every shard would run it whole",
    },
    Applies {
        id: "seed",
        flag: "--seed",
        to: &[Ses, Ss, Rs, Irs, Pct, Pos, Pctcp, Surw, Hybrid, Portfolio],
        why: "dfs and pb make no random choice",
    },
    Applies {
        id: "c1",
        flag: "--c1",
        to: &[Ss, Hybrid],
        why: "it sets stratified sampling's sample counts",
    },
    Applies {
        id: "c2",
        flag: "--c2",
        to: &[Ss, Hybrid],
        why: "it sets stratified sampling's sample counts",
    },
    Applies {
        id: "placement",
        flag: "--placement",
        to: &[Ss, Hybrid],
        why: "it sets where stratified sampling puts its delays",
    },
    Applies {
        id: "pct_depth",
        flag: "--pct-depth",
        to: &[Pct, Pctcp],
        why: "it is the bug depth of PCT and PCTCP",
    },
    Applies {
        id: "pct_steps",
        flag: "--pct-steps",
        to: &[Pct, Pctcp],
        why: "it is the change-point range of PCT and PCTCP",
    },
    Applies {
        id: "temperature",
        flag: "--temperature",
        to: &[Ss, Rs, Irs, Pct, Pos, Pctcp, Surw, Hybrid, Portfolio],
        why: "exhaustive searches find liveness violations as fair cycles, without a threshold",
    },
    Applies {
        id: "irs_step",
        flag: "--irs-step",
        to: &[Irs],
        why: "it is IRS's depth step",
    },
];

/// Whether the flag with clap id `id` applies to `strategy`.
pub fn applies(id: &str, strategy: StrategyName) -> bool {
    APPLIES
        .iter()
        .find(|a| a.id == id)
        .is_none_or(|a| a.to.contains(&strategy))
}

/// What a run's header names beside `strategy`: the explorer where the
/// strategy follows one, the seed where it uses one.
pub fn shown(strategy: StrategyName, explorer: &str, seed: u64) -> (Option<&str>, Option<u64>) {
    (
        applies("explorer", strategy).then_some(explorer),
        applies("seed", strategy).then_some(seed),
    )
}

/// Reject every flag given on the command line (`run`'s `matches`) that
/// does not apply to `strategy`, naming the strategies it applies to.
pub fn check_applicable(strategy: StrategyName, matches: &ArgMatches) -> Result<(), String> {
    for a in APPLIES {
        if a.to.contains(&strategy) || matches.value_source(a.id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let names: Vec<&str> = a.to.iter().map(|s| s.as_str()).collect();
        return Err(format!(
            "{} does not apply to --strategy {} ({}); it applies to {}",
            a.flag,
            strategy.as_str(),
            a.why,
            names.join(", ")
        ));
    }
    Ok(())
}

/// The engine settings of `run`, its values already range-checked by the
/// parser; what is left are the checks across flags.
pub fn run_config(args: &RunArgs) -> Result<Config, String> {
    let mut c = Config::default()
        .max_steps(args.max_steps)
        .seed(args.seed)
        .deadlock(args.deadlock)
        .exact_bound(args.exact_bound)
        .liveness(args.liveness)
        .symmetry(args.symmetry)
        .plain(args.plain)
        .progress(progress(args.quiet));
    // The optional flags, `None` when not given (as the default has them).
    c.max_delays = args.max_delays;
    c.time_limit = args.time_limit.map(Duration::from_secs_f64);
    c.max_states = args.max_states;
    c.max_schedules = args.max_schedules;
    c.shard = args.shard;
    c.temperature = args.temperature;
    for name in &args.without {
        c.shortcuts = c.shortcuts.without(name).map_err(|name| {
            let names = mcheck_checker::Shortcuts::NAMES.join(", ");
            format!("--without: no shortcut is named {name}; the shortcuts are {names}")
        })?;
    }
    if let Some(mb) = args.max_memory_mb {
        c.max_memory = (mb as usize) << 20;
    }
    if let Some(mb) = args.cache_mb {
        if (mb as usize) << 20 > c.max_memory {
            return Err(format!(
                "--cache-mb must be at most the memory budget ({} MiB, see --max-memory-mb), not {mb}",
                c.max_memory >> 20
            ));
        }
        c.cache_bytes = Some((mb as usize) << 20);
    }
    c.threads = match args.threads {
        Some(t) => t,
        None if args.strategy().is_exhaustive() => 1,
        None => 0,
    };
    Ok(c)
}

/// Progress on stderr: off with `-q`, live on a terminal, every 10 s in logs.
fn progress(quiet: bool) -> Progress {
    if quiet {
        Progress::Off
    } else if std::io::stderr().is_terminal() {
        Progress::Live
    } else {
        Progress::Every(Duration::from_secs(10))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every id in the table is an argument of `run` (a typo would make
    /// its check silently pass).
    #[test]
    fn every_listed_flag_is_an_argument_of_run() {
        let cli = crate::args::Cli::command();
        let run = cli.find_subcommand("run").expect("run exists");
        for a in APPLIES {
            let arg = run
                .get_arguments()
                .find(|x| x.get_id() == a.id)
                .unwrap_or_else(|| panic!("{} is not an argument of run", a.id));
            let long = format!("--{}", arg.get_long().expect("a long flag"));
            assert!(a.flag.ends_with(&long), "{} is spelled {long}", a.flag);
            let all = <StrategyName as clap::ValueEnum>::value_variants().len();
            assert!(!a.to.is_empty() && a.to.len() < all, "{}", a.flag);
        }
    }
}
