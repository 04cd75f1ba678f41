//! The command line: `list`, `run`, `replay`, `shrink`, `table`. Exit
//! status: 0 no violation, 1 violation found, 2 usage or input error,
//! 3 ([`EXIT_UNREACHED`]) a reachability property unreached (`run
//! --coverage`), 130 ([`EXIT_INTERRUPTED`]) interrupted by SIGINT, SIGTERM or SIGHUP
//! after printing the report so far.

use crate::args::{Cli, Command, RunArgs, ScalingCli, TableCli};
use crate::args::{
    DEEP_BUDGET_S, DEEP_MAX_SCHEDULES, DEEP_RUNS, NOISE_BUDGET_S, TABLE_BUDGET_S, TABLE_MAX_SCHEDULES,
    TABLE_MAX_STATES, TABLE_RUNS,
};
use crate::registry::{DynModel, Registry};
use crate::signals::exit_status;
use crate::{html, render};
use crate::{output, printing, settings, signals};
use clap::{ArgMatches, CommandFactory, FromArgMatches};
use mcheck_checker::coverage::reached_property;
use mcheck_checker::{Checked, Instance, ModelInfo, Schedule};
use serde_json::json;
use std::process::ExitCode;
use std::time::Duration;

pub use crate::args::DEFAULT_SHRINK_ATTEMPTS;
pub use crate::printing::{SCHEMA_VERSION, report_json};
pub use crate::signals::EXIT_INTERRUPTED;

/// Parse `args` (without the program name) and run; the exit status. On
/// Unix this restores SIGPIPE's default action, so that a write to a
/// closed stdout ends the process quietly as it does every Unix tool.
///
/// ```
/// use mcheck::{main_with, Registry};
/// use std::process::ExitCode;
///
/// let args = ["run", "lostupdate", "--bug", "1", "--set", "clients=2,increments=1", "--quiet"];
/// assert_eq!(main_with(&Registry::builtin(), args.map(String::from)), ExitCode::from(1));
/// ```
pub fn main_with(registry: &Registry, args: impl IntoIterator<Item = String>) -> ExitCode {
    static SETUP: std::sync::Once = std::sync::Once::new();
    SETUP.call_once(|| {
        mcheck_checker::machine::install_quiet_panic_hook();
        output::quiet_on_closed_pipe();
    });
    let argv = std::iter::once("mcheck".to_string()).chain(args);
    let parsed = Cli::command()
        .try_get_matches_from(argv)
        .and_then(|m| Cli::from_arg_matches(&m).map(|cli| (cli, m)));
    let (cli, matches) = match parsed {
        Ok(p) => p,
        Err(e) => {
            // clap's own message in full: what is wrong, its tip, the
            // command's usage (or the help and version, on stdout).
            let _ = e.print();
            return ExitCode::from(e.exit_code().clamp(0, 255) as u8);
        }
    };
    let result = match cli.command {
        Command::List {
            json,
            markdown,
            measure,
        } => crate::list::list(registry, list_format(json, markdown, measure)),
        Command::Run(args) => match matches.subcommand_matches("run") {
            Some(m) => run(registry, &args, m),
            None => Err("internal error (a bug in mcheck, please report it): no run arguments".into()),
        },
        Command::Replay {
            schedule,
            format,
            verbose,
            races,
        } => replay(registry, &schedule, &format, verbose, races),
        Command::Table(t) if t.deep || t.noise => deep_cmd(registry, &t),
        Command::Table(t) => table_cmd(registry, &t),
        Command::Scaling(s) => scaling_cmd(registry, &s),
        Command::Shrink {
            schedule,
            save,
            max_attempts,
            json,
        } => shrink_cmd(registry, &schedule, save.as_deref(), max_attempts, json),
        Command::Merge { files } => crate::merge::merge_cmd(&files),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            eprintln!("mcheck: {message}");
            ExitCode::from(2)
        }
    }
}

fn list_format(json: bool, markdown: bool, measure: bool) -> crate::list::ListFormat {
    use crate::list::ListFormat;
    match (json, markdown) {
        (true, _) => ListFormat::Json,
        (false, true) => ListFormat::Markdown { measure },
        (false, false) => ListFormat::Text,
    }
}

/// Validate the model, bug and parameters.
fn resolve_model<'r>(
    registry: &'r Registry,
    name: &str,
    bug: Option<&str>,
    set: &[String],
) -> Result<(&'r dyn DynModel, Instance), String> {
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
    // Resolved once: what the run reports (header, JSON, saved schedule)
    // is what it runs.
    let instance = model.resolve(&crate::args::parse_overrides(set)?, bug)?;
    Ok((model, instance))
}

/// Whether `name` is one of the explorers `model` accepts.
fn known_explorer(info: &ModelInfo, name: &str) -> bool {
    mcheck_checker::explorers::BUILTIN.iter().any(|e| e.name == name) || info.explorers.iter().any(|e| e.name == name)
}

fn run(registry: &Registry, args: &RunArgs, matches: &ArgMatches) -> Result<u8, String> {
    settings::check_applicable(args.strategy, matches)?;
    let (model, instance) = resolve_model(registry, &args.model, args.bug.as_deref(), &args.set)?;
    let (params, bug) = (instance.params(), instance.bug());
    let strategy = args.strategy();
    let mut config = settings::run_config(args)?;
    if let Some(path) = &args.save {
        output::check_writable("--save", path)?;
    }
    config.stop = signals::stop_flag();
    let info = model.info();
    // An unknown explorer is reported by the search, before any header.
    if !args.json && known_explorer(&info, &args.explorer) {
        let (explorer, seed) = settings::shown(args.strategy, &args.explorer, args.seed);
        let line = printing::header(&info, params, bug, strategy.name(), explorer, seed);
        println!("{line}");
    }
    // A workload beyond a parameter's exhaustive cap: warn before the
    // search starts, and note it in the report. The caps are for the
    // search without symmetry, which may take a workload far beyond them
    // (twophase's rms=12 is 6,656 orbits).
    let beyond = if strategy.is_exhaustive() && !config.symmetry {
        params.beyond_exhaustive(info.name, &info.params)
    } else {
        Vec::new()
    };
    // Process 0 of a cluster run warns for all (the others would repeat it).
    if args.cluster.process.is_none_or(|p| p == 0) {
        for warning in &beyond {
            eprintln!("mcheck: warning: {warning}");
        }
    }
    // The explorer is validated even for strategies that do not use it, so
    // that a typo is never silently ignored.
    let plan = args.cluster.plan(strategy.name())?;
    if plan.is_some() && args.coverage {
        return Err("--coverage does not apply to a distributed run (--workers, --processes, --hostfile): run it on one machine".into());
    }
    // The counterexample's one replay gives the text report its trace and
    // races; the JSON report needs neither.
    let explain = !args.json;
    let Checked {
        mut report,
        mut counterexample,
    } = if let Some(plan) = plan {
        match crate::distributed::run(model, &instance, &args.explorer, &config, &plan)? {
            Some(report) => Checked {
                report,
                counterexample: None,
            },
            None => return Ok(0),
        }
    } else if args.coverage {
        model.check_coverage(&instance, &strategy, &args.explorer, &config, explain)?
    } else {
        model.check(&instance, &strategy, &args.explorer, &config, explain)?
    };
    report.notes.extend(beyond.iter().map(|w| w.to_string()));
    if args.shrink
        && let Some(schedule) = &report.schedule
    {
        let shrunk = model.shrink(schedule, DEFAULT_SHRINK_ATTEMPTS)?;
        report.notes.push(format!(
            "shrunk the counterexample from {} and {} to {} and {} ({})",
            render::count_of(shrunk.before.0 as u64, "delay"),
            render::count_of(shrunk.before.1 as u64, "step"),
            render::count_of(shrunk.after.0 as u64, "delay"),
            render::count_of(shrunk.after.1 as u64, "step"),
            render::count_of(shrunk.attempts, "replay")
        ));
        if let Some(f) = report.violation.as_mut() {
            f.violation = shrunk.violation.clone();
            f.step = shrunk.schedule.expected_step.unwrap_or(f.step);
        }
        report.schedule = Some(shrunk.schedule);
        counterexample = None;
    }
    // A failure to save loses nothing else: the report is printed in full
    // and the warning comes last.
    let saved = match (&args.save, &report.schedule) {
        (Some(path), Some(schedule)) => {
            let text = serde_json::to_string_pretty(schedule).expect("schedule serializes") + "\n";
            Some(output::write_file("--save", path, &text).map(|()| path.as_str()))
        }
        _ => None,
    };
    if args.json {
        let v = report_json(info.name, params, bug, &report);
        println!("{}", serde_json::to_string_pretty(&v).expect("json"));
    } else {
        let path = saved.as_ref().and_then(|s| s.as_ref().ok().copied());
        printing::print_text_report(model, &report, counterexample, path, args.verbose)?;
    }
    if let Some(Err(warning)) = saved {
        eprintln!("mcheck: warning: {warning}");
    }
    if report.outcome == mcheck_checker::Outcome::Unreached {
        return Ok(EXIT_UNREACHED);
    }
    Ok(exit_status(report.is_violation(), &config.stop))
}

/// The exit status of `run --coverage` when an exhaustive search covered
/// every reachable state, none violates, and a reachability property
/// holds in none of them (outcome `unreached`).
pub const EXIT_UNREACHED: u8 = 3;

/// Read a schedule given as its text form, JSON, or a file holding either;
/// check its model, parameters and bug against the registry.
/// The most bytes `replay` and `shrink` read from a file or standard input:
/// a schedule file with its trail is a few hundred bytes a step.
const MAX_SCHEDULE_BYTES: u64 = 64 << 20;

/// Where a schedule argument comes from: `-` is standard input, the name of
/// an existing file is that file, anything else is an inline schedule.
enum Source {
    Stdin,
    File,
    Inline,
}

fn source_of(input: &str) -> Source {
    if input == "-" {
        Source::Stdin
    } else if std::path::Path::new(input).is_file() {
        Source::File
    } else {
        Source::Inline
    }
}

/// Read at most [`MAX_SCHEDULE_BYTES`] of `reader`, naming `what` in errors.
fn read_bounded(reader: impl std::io::Read, what: &str) -> Result<String, String> {
    use std::io::Read;
    let mut text = String::new();
    reader
        .take(MAX_SCHEDULE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read {what}: {e}"))?;
    if text.len() as u64 > MAX_SCHEDULE_BYTES {
        return Err(format!(
            "{what} is larger than {} MiB: not a schedule",
            MAX_SCHEDULE_BYTES >> 20
        ));
    }
    Ok(text)
}

/// The schedule named by `input` (see [`source_of`]) and its model.
fn load_schedule<'r>(registry: &'r Registry, input: &str) -> Result<(Schedule, &'r dyn DynModel), String> {
    let text = match source_of(input) {
        Source::Stdin => read_bounded(std::io::stdin().lock(), "standard input")?,
        Source::File => {
            let file = std::fs::File::open(input).map_err(|e| format!("cannot read {input:?}: {e}"))?;
            read_bounded(file, &format!("{input:?}"))?
        }
        Source::Inline => {
            let t = input.trim_start();
            if !(t.starts_with("mcheck") || t.starts_with('{')) {
                return Err(format!(
                    "{input:?} is neither an existing file nor a schedule ({}:...); `-` reads standard input",
                    mcheck_checker::schedule::TEXT_TAG
                ));
            }
            input.to_string()
        }
    };
    let schedule = Schedule::parse(&text).map_err(|e| e.to_string())?;
    let model = registry.model(&schedule.model)?;
    Ok((schedule, model))
}

fn replay(registry: &Registry, input: &str, format: &str, verbose: bool, races: bool) -> Result<u8, String> {
    let formats = ["text", "mermaid", "dot", "json", "html"];
    if !formats.contains(&format) {
        return Err(format!(
            "unknown format {format:?}; valid formats: {}",
            formats.join(", ")
        ));
    }
    if races && format != "text" {
        return Err(format!(
            "--races applies to --format text, not {format} (an html page always shows the races)"
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
        "html" if missed.is_none() => print!("{}", html::page(&model.explain(&schedule, &ex)?, &schedule)),
        "html" => {}
        _ => {
            println!("Replaying {}", schedule.to_text());
            print!("{}", render::text_trace(&ex, verbose));
            if races && missed.is_none() {
                println!();
                print!("{}", model.explain(&schedule, &ex)?.report());
            }
        }
    }
    if let Some(message) = missed {
        eprintln!("mcheck: {message}");
        return Ok(2);
    }
    if let Some(found) = ex.violation.as_ref()
        && let Some(name) = reached_property(&found.violation)
    {
        if format == "text" {
            println!("Reachability property {name} holds after step {}.", found.step);
        }
        return Ok(0);
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
    let default_out = matches!(source_of(input), Source::File).then(|| {
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
    let args = crate::table::TableArgs {
        budget: Duration::from_secs_f64(t.budget_s.unwrap_or(TABLE_BUDGET_S)),
        max_states: t.max_states.unwrap_or(TABLE_MAX_STATES),
        max_schedules: t.max_schedules.unwrap_or(TABLE_MAX_SCHEDULES),
        runs: t.runs.unwrap_or(TABLE_RUNS),
        models: t.models.clone(),
        bugs: t.bugs.clone(),
        threads: t.threads.unwrap_or(0),
        progress: !t.quiet,
        stop: signals::stop_flag(),
    };
    // Markdown rows are printed as they are done, under a heading printed
    // with the first one.
    let mut head = false;
    let rows = crate::table::build(registry, &args, |row| {
        if !t.json {
            if !std::mem::replace(&mut head, true) {
                print!("{}", crate::table::markdown_head());
            }
            print!("{}", crate::table::markdown_row(row, crate::cell::Cost::Count));
        }
    })?;
    let interrupted = args.stop.is_raised();
    if t.json {
        let v = json!({
            "schema_version": SCHEMA_VERSION,
            "budget_s": args.budget.as_secs_f64(),
            "runs": args.runs,
            "columns": crate::table::columns().iter().map(|c| c.name).collect::<Vec<_>>(),
            "rows": rows,
            "interrupted": interrupted,
        });
        println!("{}", serde_json::to_string_pretty(&v).expect("json"));
    } else {
        if !head {
            print!("{}", crate::table::markdown_head());
        }
        print!("{}", crate::table::markdown_tail(&rows, &args));
        if interrupted {
            println!(
                "\nInterrupted: {} done, the row in progress and the rest not run.",
                render::count_of(rows.len() as u64, "row")
            );
        }
    }
    Ok(exit_status(false, &args.stop))
}

/// `mcheck table --deep` and `mcheck table --noise` (the deep table's
/// columns and cells on the noise benchmark's rows, [`crate::noise`]): the
/// rows as they are done (Markdown), or one JSON object at the end.
fn deep_cmd(registry: &Registry, t: &TableCli) -> Result<u8, String> {
    use crate::deep;
    use mcheck_models::noise::{MAX_NOISE, SIZES};
    let flag = if t.noise { "--noise" } else { "--deep" };
    if t.max_states.is_some() {
        return Err(format!(
            "--max-states does not apply to {flag}: its SES-RTC column has only the time budget (--budget-s)"
        ));
    }
    let sizes = match &t.sizes {
        Some(text) => crate::noise::parse_sizes(text, MAX_NOISE)?,
        None => SIZES.to_vec(),
    };
    let budget = if t.noise { NOISE_BUDGET_S } else { DEEP_BUDGET_S };
    if let Some(dir) = &t.svg_dir
        && !std::path::Path::new(dir).is_dir()
    {
        return Err(format!("--svg-dir {dir:?} is not a directory"));
    }
    let args = deep::DeepArgs {
        budget: crate::table::Budget {
            time: Duration::from_secs_f64(t.budget_s.unwrap_or(budget)),
            max_states: None,
            max_schedules: Some(t.max_schedules.unwrap_or(DEEP_MAX_SCHEDULES)),
        },
        runs: t.runs.unwrap_or(DEEP_RUNS),
        models: t.models.clone(),
        bugs: t.bugs.clone(),
        threads: t.threads.unwrap_or(0),
        progress: !t.quiet,
        stop: signals::stop_flag(),
    };
    let n = if t.noise {
        (crate::noise::selected(registry, &args.models, &args.bugs)?.len() * sizes.len()) as u64
    } else {
        crate::table::selected(registry, &args.models, &args.bugs)?.len() as u64
    };
    if !t.json {
        print!("{}{}", deep::markdown_budget(n, &args), deep::markdown_head());
    }
    let print_row = |row: &deep::DeepRow| {
        if !t.json {
            print!("{}", deep::markdown_row(row, crate::cell::Cost::Count));
        }
    };
    let rows = if t.noise {
        crate::noise::build(registry, &args, &sizes, print_row)?
    } else {
        deep::build(registry, &args, print_row)?
    };
    let interrupted = args.stop.is_raised();
    if t.json {
        let v = json!({
            "schema_version": SCHEMA_VERSION,
            "deep": !t.noise,
            "noise": t.noise,
            "sizes": if t.noise { Some(&sizes) } else { None },
            "budget_s": args.budget.time.as_secs_f64(),
            "max_schedules": args.budget.max_schedules,
            "runs": args.runs,
            "threads": deep::resolve_threads(args.threads),
            "min_mean_steps": deep::MIN_MEAN_STEPS,
            "mean_samples": deep::MEAN_SAMPLES,
            "worst_case_s": deep::worst_case_seconds(n, &args),
            "columns": deep::columns().iter().map(|c| c.name).collect::<Vec<_>>(),
            "rows": rows,
            "interrupted": interrupted,
        });
        println!("{}", serde_json::to_string_pretty(&v).expect("json"));
    } else {
        let tail = if t.noise {
            crate::noise::markdown_tail(&rows)
        } else {
            deep::markdown_tail(&rows)
        };
        print!("{tail}");
        if interrupted {
            println!(
                "\nInterrupted: {} done, the row in progress and the rest not run.",
                render::count_of(rows.len() as u64, "row")
            );
        }
    }
    if let Some(dir) = &t.svg_dir {
        let cap = args.budget.max_schedules.unwrap_or(DEEP_MAX_SCHEDULES);
        for path in crate::noise::plots(&rows, dir, cap)? {
            if !t.json {
                println!("Plot: {path}");
            }
        }
    }
    Ok(exit_status(false, &args.stop))
}

/// `mcheck scaling`: a Markdown table (or one JSON object) and the plot.
fn scaling_cmd(registry: &Registry, s: &ScalingCli) -> Result<u8, String> {
    use crate::scaling;
    let (model, instance) = resolve_model(registry, &s.model, Some(&s.bug), &s.set)?;
    let bug = instance.bug().ok_or("--bug is required")?;
    let (param, sizes) = scaling::parse_param(&s.param)?;
    let techniques = if s.techniques.is_empty() {
        scaling::default_techniques()
    } else {
        s.techniques
            .iter()
            .map(|n| crate::deep::column(n))
            .collect::<Result<Vec<_>, _>>()?
    };
    if let Some(path) = &s.svg {
        output::check_writable("--svg", path)?;
    }
    let args = scaling::ScalingArgs {
        bug,
        param: param.clone(),
        sizes,
        set: s.set.clone(),
        techniques,
        runs: s.runs,
        budget: crate::table::Budget {
            time: Duration::from_secs_f64(s.budget_s),
            max_states: None,
            max_schedules: Some(s.max_schedules),
        },
        threads: s.threads.unwrap_or(0),
        progress: !s.quiet,
        stop: signals::stop_flag(),
    };
    let records = scaling::run(model, &args, |_| {})?;
    let names: Vec<&str> = args.techniques.iter().map(|c| c.name).collect();
    if let Some(path) = &s.svg {
        let title = format!("{} bug {}: schedules to the bug as {param} grows", s.model, bug);
        crate::plot::svg(path, &title, &names, &records, s.max_schedules)?;
    }
    if s.json {
        let v = json!({
            "schema_version": SCHEMA_VERSION,
            "model": s.model,
            "bug": bug,
            "param": param,
            "sizes": args.sizes,
            "techniques": names,
            "runs": s.runs,
            "budget_s": s.budget_s,
            "max_schedules": s.max_schedules,
            "records": records,
            "interrupted": args.stop.is_raised(),
        });
        println!("{}", serde_json::to_string_pretty(&v).expect("json"));
    } else {
        print!("{}", scaling::markdown(&param, &args.techniques, &records));
        if let Some(path) = &s.svg {
            println!("\nPlot: {path}");
        }
    }
    Ok(exit_status(false, &args.stop))
}
