//! The command line: `list`, `run`, `replay`. Exit status: 0 no violation,
//! 1 violation found, 2 usage or input error.

use crate::registry::{DynModel, Registry};
use crate::render;
use clap::{Args, Parser, Subcommand};
use mcheck_checker::search::{Strategy, STRATEGIES};
use mcheck_checker::{Config, Params, Progress, Report, Schedule, StopFlag};
use serde_json::{json, Value};
use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

/// The JSON schema version of `run --json` and `list --json`.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Parser, Debug)]
#[command(
    name = "mcheck",
    version,
    about = "A stateless model checker for asynchronous message-passing programs, with delaying explorers",
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List models (with their bugs and parameters), explorers and strategies.
    List {
        /// One JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Check a model.
    Run(Box<RunArgs>),
    /// Re-execute a schedule (a text form or a file saved with --save) and print its trace.
    Replay {
        /// The schedule: its text form (mcheck2:...) or a file.
        schedule: String,
        /// Output format: text, mermaid, dot or json.
        #[arg(long, default_value = "text")]
        format: String,
        /// Show long payloads in full.
        #[arg(short, long)]
        verbose: bool,
    },
    /// The paper's table on the shipped models: every technique on every seeded bug.
    Table(TableCli),
    /// Shrink a counterexample: fewer delays, earlier delays, fewer steps; the same bug.
    Shrink {
        /// The schedule: its text form (mcheck2:...) or a file.
        schedule: String,
        /// Where to save the shrunk schedule (default: FILE.shrunk.json, or none for a text form).
        #[arg(long, value_name = "FILE")]
        save: Option<String>,
        /// At most this many replays.
        #[arg(long, value_name = "N", default_value_t = DEFAULT_SHRINK_ATTEMPTS)]
        max_attempts: u64,
        /// One JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
}

/// Settings of `mcheck table`.
#[derive(Args, Debug, Clone)]
struct TableCli {
    /// Time budget per cell (and per seed), in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    budget_s: f64,
    /// Distinct-state cap per exhaustive cell.
    #[arg(long, value_name = "N", default_value_t = 2_000_000)]
    max_states: u64,
    /// Schedule cap per sampling cell.
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    max_schedules: u64,
    /// Seeds per randomized cell (the median is reported).
    #[arg(long, value_name = "N", default_value_t = 3)]
    runs: u64,
    /// Only these models (comma-separated).
    #[arg(long, value_delimiter = ',')]
    models: Vec<String>,
    /// Only these bug ids (comma-separated).
    #[arg(long, value_delimiter = ',')]
    bugs: Vec<u32>,
    /// Threads for sampling cells (default: all cores).
    #[arg(short = 'j', long = "threads", value_name = "T", default_value_t = 0)]
    threads: usize,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// No progress on stderr.
    #[arg(short, long)]
    quiet: bool,
}

/// Replays a shrink may try by default.
pub const DEFAULT_SHRINK_ATTEMPTS: u64 = 5000;

#[derive(Args, Debug, Clone)]
struct RunArgs {
    /// The model (see `mcheck list`).
    model: String,
    /// Switch on seeded bug N.
    #[arg(long)]
    bug: Option<String>,
    /// Override model parameters: `KEY=VALUE`, repeatable or
    /// comma-separated (`--set clients=2,increments=1`).
    #[arg(long = "set", value_name = "KEY=VALUE[,KEY=VALUE]")]
    set: Vec<String>,
    /// The delaying explorer.
    #[arg(short, long, default_value = "rtc")]
    explorer: String,
    /// The search strategy.
    #[arg(short, long, default_value = "ses")]
    strategy: String,
    /// Stop after this delay (or preemption) bound.
    #[arg(long, value_name = "D")]
    max_delays: Option<u32>,
    /// Longest execution, in steps.
    #[arg(long, value_name = "L", default_value_t = mcheck_checker::config::DEFAULT_MAX_STEPS)]
    max_steps: usize,
    /// Wall-clock budget in seconds.
    #[arg(long, value_name = "SECS")]
    time_limit: Option<f64>,
    /// Stop after this many distinct states.
    #[arg(long, value_name = "N")]
    max_states: Option<u64>,
    /// Stop after this many schedules.
    #[arg(long, value_name = "N")]
    max_schedules: Option<u64>,
    /// Memory budget of the state cache in MiB (default: grow within --max-memory-mb).
    #[arg(long, value_name = "MB")]
    cache_mb: Option<u64>,
    /// Memory budget of the whole search in MiB (default: 3/4 of the machine).
    #[arg(long, value_name = "MB")]
    max_memory_mb: Option<u64>,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Worker threads (default: 1 for exhaustive strategies, all cores for sampling).
    #[arg(short = 'j', long = "threads", value_name = "T")]
    threads: Option<usize>,
    /// Run only the samples with index mod N = K.
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
    /// Report deadlocks as violations.
    #[arg(long)]
    deadlock: bool,
    /// PCT: the bug depth d (d - 1 priority-change points).
    #[arg(long, value_name = "D", default_value_t = mcheck_checker::search::DEFAULT_PCT_DEPTH)]
    pct_depth: u32,
    /// PCT: change points are drawn in [1, K] (default: the length of one execution).
    #[arg(long, value_name = "K")]
    pct_steps: Option<u64>,
    /// SS: c1 in num_samples(d) = c1 * c2^d.
    #[arg(long, value_name = "X")]
    c1: Option<f64>,
    /// SS: c2 in num_samples(d) = c1 * c2^d.
    #[arg(long, value_name = "Y")]
    c2: Option<f64>,
    /// IRS: the depth bound added per iteration.
    #[arg(long, value_name = "S", default_value_t = mcheck_checker::search::DEFAULT_IRS_STEP)]
    irs_step: usize,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// Save the counterexample to this file (JSON).
    #[arg(long, value_name = "FILE")]
    save: Option<String>,
    /// Shrink the counterexample before printing and saving it.
    #[arg(long)]
    shrink: bool,
    /// Show long payloads in full.
    #[arg(short, long)]
    verbose: bool,
    /// No progress on stderr.
    #[arg(short, long)]
    quiet: bool,
}

/// Parse `args` (without the program name) and run; the exit status.
pub fn main_with(registry: &Registry, args: impl IntoIterator<Item = String>) -> ExitCode {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(mcheck_checker::machine::install_quiet_panic_hook);
    let argv = std::iter::once("mcheck".to_string()).chain(args);
    let cli = match Cli::try_parse_from(argv) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                eprintln!("mcheck: a command is needed: list, run, replay, shrink or table (see mcheck --help)");
                return ExitCode::from(2);
            }
            let rendered = e.to_string();
            let first = rendered
                .lines()
                .next()
                .unwrap_or("bad arguments")
                .trim_start_matches("error: ");
            eprintln!("mcheck: {first} (see mcheck --help)");
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Command::List { json } => list(registry, json),
        Command::Run(args) => run(registry, &args),
        Command::Replay {
            schedule,
            format,
            verbose,
        } => replay(registry, &schedule, &format, verbose),
        Command::Table(t) => table_cmd(registry, &t),
        Command::Shrink {
            schedule,
            save,
            max_attempts,
            json,
        } => shrink_cmd(registry, &schedule, save.as_deref(), max_attempts, json),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            eprintln!("mcheck: {message}");
            ExitCode::from(2)
        }
    }
}

fn list(registry: &Registry, json: bool) -> Result<u8, String> {
    let explorers: Vec<Value> = mcheck_explorers::BUILTIN
        .iter()
        .map(|e| json!({"name": e.name, "description": e.description}))
        .collect();
    let strategies: Vec<Value> = STRATEGIES
        .iter()
        .map(|(n, d)| json!({"name": n, "description": d}))
        .collect();
    if json {
        let models: Vec<Value> = registry
            .models()
            .map(|m| serde_json::to_value(m.info()).expect("model info serializes"))
            .collect();
        let out = json!({
            "schema_version": SCHEMA_VERSION,
            "models": models,
            "explorers": explorers,
            "strategies": strategies,
        });
        println!("{}", serde_json::to_string_pretty(&out).expect("json"));
        return Ok(0);
    }
    println!("Models:");
    for m in registry.models() {
        let info = m.info();
        println!("  {:<12} {}", info.name, first_sentence(info.description));
        for p in &info.params {
            println!(
                "      --set {}=N   {} (default {}, {}..={})",
                p.name, p.description, p.default, p.min, p.max
            );
        }
        for b in &info.bugs {
            println!("      --bug {}   {}: {}", b.id, b.name, first_sentence(b.description));
        }
        for e in &info.explorers {
            println!("      -e {}   {}", e.name, e.description);
        }
    }
    println!("Explorers:");
    for e in mcheck_explorers::BUILTIN {
        println!("  {:<12} {}", e.name, e.description);
    }
    println!("Strategies:");
    for (n, d) in STRATEGIES {
        println!("  {n:<12} {d}");
    }
    println!("\nmcheck list --json gives every description in full.");
    Ok(0)
}

fn first_sentence(s: &str) -> &str {
    match s.find(". ") {
        Some(i) => &s[..=i],
        None => s,
    }
}

/// Parse `--strategy` with its own settings.
fn parse_strategy(args: &RunArgs) -> Result<Strategy, String> {
    Ok(match args.strategy.as_str() {
        "ses" => Strategy::Ses,
        "dfs" => Strategy::Dfs,
        "pb" => Strategy::Pb,
        "rs" => Strategy::Rs,
        "ss" => {
            let d = mcheck_checker::search::ss::SsParams::default();
            let (c1, c2) = (args.c1.unwrap_or(d.c1), args.c2.unwrap_or(d.c2));
            if !(1.0..=1e12).contains(&c1) {
                return Err(format!("--c1 must be from 1 to 1e12, not {c1}"));
            }
            if !(1.0..=1e6).contains(&c2) {
                return Err(format!("--c2 must be from 1 to 1e6, not {c2}"));
            }
            Strategy::Ss(mcheck_checker::search::ss::SsParams { c1, c2 })
        }
        "irs" => {
            if args.irs_step == 0 || args.irs_step > 1_000_000 {
                return Err(format!("--irs-step must be from 1 to 1000000, not {}", args.irs_step));
            }
            Strategy::Irs { step: args.irs_step }
        }
        "pct" => {
            if args.pct_depth == 0 || args.pct_depth > 1000 {
                return Err(format!("--pct-depth must be from 1 to 1000, not {}", args.pct_depth));
            }
            if args.pct_steps == Some(0) {
                return Err("--pct-steps must be at least 1".into());
            }
            Strategy::Pct {
                depth: args.pct_depth,
                steps: args.pct_steps,
            }
        }
        other => {
            let valid: Vec<&str> = STRATEGIES.iter().map(|(n, _)| *n).collect();
            return Err(format!(
                "unknown strategy {other:?}; valid strategies: {}",
                valid.join(", ")
            ));
        }
    })
}

/// Validate the model, bug and parameters.
fn resolve_model<'r>(
    registry: &'r Registry,
    name: &str,
    bug: Option<&str>,
    set: &[String],
) -> Result<(&'r dyn DynModel, Params, Option<u32>), String> {
    let model = registry.model(name)?;
    let info = model.info();
    let valid_bugs = || {
        if info.bugs.is_empty() {
            "it has no seeded bugs".to_string()
        } else {
            format!(
                "valid bugs: {}",
                info.bugs
                    .iter()
                    .map(|b| format!("{} ({})", b.id, b.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    };
    let bug = match bug {
        None => None,
        Some(b) => {
            let id: u32 = b
                .trim()
                .parse()
                .map_err(|_| format!("bug {b:?} of model {name} is not a number; {}", valid_bugs()))?;
            if !info.bugs.iter().any(|x| x.id == id) {
                return Err(format!("model {name} has no bug {id}; {}", valid_bugs()));
            }
            Some(id)
        }
    };
    let mut overrides = Vec::new();
    for kv in set.iter().flat_map(|s| s.split(',')) {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("--set takes KEY=VALUE[,KEY=VALUE...], not {kv:?}"))?;
        overrides.push((k.trim().to_string(), v.trim().to_string()));
    }
    let params = Params::resolve(info.name, &info.params, &overrides)?;
    // What the run reports (header, JSON, saved schedule) is what it runs.
    let params = model.effective_params(&params, bug);
    Ok((model, params, bug))
}

fn config_from(args: &RunArgs, strategy: &Strategy) -> Result<Config, String> {
    let mut c = Config::default();
    if args.max_steps == 0 || args.max_steps > 100_000_000 {
        return Err(format!(
            "--max-steps must be from 1 to 100000000, not {}",
            args.max_steps
        ));
    }
    c.max_steps = args.max_steps;
    c.max_delays = args.max_delays;
    if let Some(t) = args.time_limit {
        if !(t > 0.0 && t <= 1e7) {
            return Err(format!("--time-limit must be a positive number of seconds, not {t}"));
        }
        c.time_limit = Some(Duration::from_secs_f64(t));
    }
    if args.max_states == Some(0) {
        return Err("--max-states must be at least 1".into());
    }
    c.max_states = args.max_states;
    if args.max_schedules == Some(0) {
        return Err("--max-schedules must be at least 1".into());
    }
    c.max_schedules = args.max_schedules;
    let total_mb = (mcheck_checker::config::total_memory().unwrap_or(1 << 40) >> 20) as u64;
    if let Some(mb) = args.max_memory_mb {
        if mb < 16 || mb > total_mb {
            return Err(format!(
                "--max-memory-mb must be from 16 to {total_mb} (this machine's memory), not {mb}"
            ));
        }
        c.max_memory = (mb as usize) << 20;
    }
    if let Some(mb) = args.cache_mb {
        if mb == 0 || (mb as usize) << 20 > c.max_memory {
            return Err(format!(
                "--cache-mb must be from 1 to the memory budget ({} MiB), not {mb}",
                c.max_memory >> 20
            ));
        }
        c.cache_bytes = Some((mb as usize) << 20);
    }
    c.seed = args.seed;
    c.threads = match args.threads {
        Some(0) => return Err("-j/--threads must be at least 1".into()),
        Some(t) if t > 4096 => return Err(format!("-j/--threads must be at most 4096, not {t}")),
        Some(t) => t,
        None if strategy.is_exhaustive() => 1,
        None => 0,
    };
    if let Some(s) = &args.shard {
        c.shard = Some(parse_shard(s)?);
    }
    c.deadlock = args.deadlock;
    c.progress = if args.quiet {
        Progress::Off
    } else if std::io::stderr().is_terminal() {
        Progress::Live
    } else {
        Progress::Every(Duration::from_secs(10))
    };
    Ok(c)
}

/// Parse `K/N` with K < N.
pub fn parse_shard(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("--shard takes K/N with 0 <= K < N (for example 0/4), not {s:?}");
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let k: u32 = k.trim().parse().map_err(|_| bad())?;
    let n: u32 = n.trim().parse().map_err(|_| bad())?;
    if n == 0 || k >= n {
        return Err(bad());
    }
    Ok((k, n))
}

/// Install the Ctrl-C handler: the first interrupt stops the search (which
/// still reports), a second one exits at once.
fn install_interrupt(stop: &StopFlag) {
    let stop = stop.clone();
    let _ = ctrlc::set_handler(move || {
        if stop.is_raised() {
            eprintln!("\nmcheck: interrupted twice, exiting");
            std::process::exit(130);
        }
        eprintln!("\nmcheck: interrupted; finishing the report (press Ctrl-C again to exit at once)");
        stop.raise();
    });
}

fn run(registry: &Registry, args: &RunArgs) -> Result<u8, String> {
    let (model, params, bug) = resolve_model(registry, &args.model, args.bug.as_deref(), &args.set)?;
    let strategy = parse_strategy(args)?;
    let config = config_from(args, &strategy)?;
    install_interrupt(&config.stop);
    let info = model.info();
    // The explorer is validated even for strategies that do not use it, so
    // that a typo is never silently ignored.
    let mut report = model.check(&params, bug, &strategy, &args.explorer, &config)?;
    if args.shrink {
        if let Some(schedule) = &report.schedule {
            let shrunk = model.shrink(schedule, DEFAULT_SHRINK_ATTEMPTS)?;
            report.notes.push(format!(
                "shrunk the counterexample from {} delays and {} steps to {} delays and {} steps ({} replays)",
                shrunk.before.0, shrunk.before.1, shrunk.after.0, shrunk.after.1, shrunk.attempts
            ));
            if let Some(f) = report.violation.as_mut() {
                f.violation = shrunk.violation.clone();
                f.step = shrunk.after.1.saturating_sub(1);
            }
            report.schedule = Some(shrunk.schedule);
        }
    }
    if let (Some(path), Some(schedule)) = (&args.save, &report.schedule) {
        let text = serde_json::to_string_pretty(schedule).expect("schedule serializes");
        std::fs::write(path, text + "\n").map_err(|e| format!("cannot write --save file {path:?}: {e}"))?;
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report_json(info.name, &params, bug, &report)).expect("json")
        );
    } else {
        print_report(model, &params, bug, &report, args)?;
    }
    Ok(if report.is_violation() { 1 } else { 0 })
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

fn print_report(
    model: &dyn DynModel,
    params: &Params,
    bug: Option<u32>,
    report: &Report,
    args: &RunArgs,
) -> Result<(), String> {
    let info = model.info();
    let what = match bug {
        Some(b) => format!(
            "{} bug {b} ({})",
            info.name,
            info.bugs.iter().find(|x| x.id == b).map(|x| x.name).unwrap_or("?")
        ),
        None => info.name.to_string(),
    };
    let how = match &report.explorer {
        Some(e) => format!("{} with {e}", report.strategy),
        None => report.strategy.clone(),
    };
    println!("mcheck: {what} [{params}], {how}, seed {}", report.seed);
    if let (Some(found), Some(schedule)) = (&report.violation, &report.schedule) {
        println!("\nVIOLATION at step {}: {}", found.step, found.violation);
        let execution = model.replay(schedule, true)?;
        println!("\nTrace:");
        print!("{}", render::text_trace(&execution, args.verbose));
        println!("\nSchedule (paste into `mcheck replay`):\n  {}", schedule.to_text());
        if let Some(path) = &args.save {
            println!("Saved to {path}; replay with: mcheck replay {path}");
        }
    }
    println!();
    println!("{}", render::summary(report));
    Ok(())
}

/// Read a schedule given as its text form, JSON, or a file holding either,
/// and find its model (the checker checks its parameters and bug).
fn load_schedule<'r>(registry: &'r Registry, input: &str) -> Result<(Schedule, &'r dyn DynModel), String> {
    let trimmed = input.trim_start();
    let text = if trimmed.starts_with("mcheck") || trimmed.starts_with('{') {
        input.to_string()
    } else {
        std::fs::read_to_string(input).map_err(|e| {
            format!(
                "{input:?} is neither a schedule ({}:...) nor a readable file: {e}",
                mcheck_checker::schedule::TEXT_TAG
            )
        })?
    };
    let schedule = Schedule::parse(&text).map_err(|e| e.to_string())?;
    let model = registry.model(&schedule.model)?;
    Ok((schedule, model))
}

fn replay(registry: &Registry, input: &str, format: &str, verbose: bool) -> Result<u8, String> {
    let formats = ["text", "mermaid", "dot", "json"];
    if !formats.contains(&format) {
        return Err(format!(
            "unknown format {format:?}; valid formats: {}",
            formats.join(", ")
        ));
    }
    let (schedule, model) = load_schedule(registry, input)?;
    // The checker checks the trail (nondeterminism) and the expected
    // violation; an execution that misses the expectation is still shown.
    let (ex, missed) = match model.replay(&schedule, true) {
        Ok(ex) => (ex, None),
        Err(crate::registry::Error::Replay(mcheck_checker::ReplayError::NotReproduced(n))) => {
            let message = n.to_string();
            (n.execution, Some(message))
        }
        Err(e) => return Err(e.into()),
    };
    match format {
        "json" => println!(
            "{}",
            serde_json::to_string_pretty(&render::json_trace(&ex)).expect("json")
        ),
        "mermaid" => print!("{}", render::mermaid(&ex, verbose)),
        "dot" => print!("{}", render::dot(&ex, verbose)),
        _ => {
            println!("Replaying {}", schedule.to_text());
            print!("{}", render::text_trace(&ex, verbose));
        }
    }
    if let Some(message) = missed {
        eprintln!("mcheck: {message}");
        return Ok(2);
    }
    if ex.violation.is_some() {
        return Ok(1);
    }
    eprintln!(
        "mcheck: the replay ended ({}) after {} steps without a violation: the schedule does not reproduce one",
        mcheck_checker::replay::end_text(&ex),
        ex.steps
    );
    Ok(2)
}

fn shrink_cmd(
    registry: &Registry,
    input: &str,
    save: Option<&str>,
    max_attempts: u64,
    json: bool,
) -> Result<u8, String> {
    if max_attempts == 0 {
        return Err("--max-attempts must be at least 1".into());
    }
    let (schedule, model) = load_schedule(registry, input)?;
    let shrunk = model.shrink(&schedule, max_attempts)?;
    let is_file = !(input.trim_start().starts_with("mcheck") || input.trim_start().starts_with('{'));
    let default_out = is_file.then(|| {
        let base = input.strip_suffix(".json").unwrap_or(input);
        format!("{base}.shrunk.json")
    });
    let out = save.map(str::to_string).or(default_out);
    if let Some(path) = &out {
        let text = serde_json::to_string_pretty(&shrunk.schedule).expect("schedule serializes");
        std::fs::write(path, text + "\n").map_err(|e| format!("cannot write {path:?}: {e}"))?;
    }
    if json {
        let v = json!({
            "schema_version": SCHEMA_VERSION,
            "before": {"delays": shrunk.before.0, "steps": shrunk.before.1},
            "after": {"delays": shrunk.after.0, "steps": shrunk.after.1},
            "attempts": shrunk.attempts,
            "violation": shrunk.violation,
            "schedule": shrunk.schedule.to_text(),
            "saved": out,
        });
        println!("{}", serde_json::to_string_pretty(&v).expect("json"));
    } else {
        println!(
            "shrunk from {} delays and {} steps to {} delays and {} steps ({} replays)",
            shrunk.before.0, shrunk.before.1, shrunk.after.0, shrunk.after.1, shrunk.attempts
        );
        println!("violation: {}", shrunk.violation);
        println!("schedule: {}", shrunk.schedule.to_text());
        if let Some(path) = &out {
            println!("saved to {path}; replay with: mcheck replay {path}");
        }
    }
    Ok(1)
}

fn table_cmd(registry: &Registry, t: &TableCli) -> Result<u8, String> {
    if !(t.budget_s > 0.0 && t.budget_s <= 86_400.0) {
        return Err(format!(
            "--budget-s must be from 0 to 86400 seconds, not {}",
            t.budget_s
        ));
    }
    if t.runs == 0 || t.runs > 1000 {
        return Err(format!("--runs must be from 1 to 1000, not {}", t.runs));
    }
    if t.max_states == 0 || t.max_schedules == 0 {
        return Err("--max-states and --max-schedules must be at least 1".into());
    }
    let args = crate::table::TableArgs {
        budget: Duration::from_secs_f64(t.budget_s),
        max_states: t.max_states,
        max_schedules: t.max_schedules,
        runs: t.runs,
        models: t.models.clone(),
        bugs: t.bugs.clone(),
        threads: t.threads,
        progress: !t.quiet,
    };
    let rows = crate::table::build(registry, &args)?;
    if t.json {
        let v = json!({
            "schema_version": SCHEMA_VERSION,
            "budget_s": t.budget_s,
            "runs": t.runs,
            "columns": crate::table::columns().iter().map(|c| c.name).collect::<Vec<_>>(),
            "rows": rows,
        });
        println!("{}", serde_json::to_string_pretty(&v).expect("json"));
    } else {
        print!("{}", crate::table::markdown(&rows, &args));
    }
    Ok(0)
}
