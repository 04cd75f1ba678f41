//! Figures for the report, per model (every shipped model, or those named
//! on the command line), in its default configuration:
//!
//! * the correct version: SES with run to completion (outcome, states,
//!   transitions, time);
//! * each seeded bug, with the parameters it runs with: SES with every
//!   explorer the model offers (states to the bug, delays, what was found,
//!   time), then zero-delay SES with run to completion, which finds none of
//!   them.
//!
//! Run with `cargo run --release -p mcheck-models --example figures [-- MODEL...]`.
//! For the trace of a counterexample, `mcheck run MODEL --bug N --explorer NAME`.

use mcheck_checker::explorers::{builtin, BUILTIN};
use mcheck_checker::{search, Config, Model, Params, Report};
use mcheck_models::chain::Chain;
use mcheck_models::lostupdate::LostUpdate;
use mcheck_models::multipaxos::MultiPaxos;
use mcheck_models::paxos::Paxos;
use mcheck_models::twopc::TwoPc;
use mcheck_models::twophase::TwoPhase;
use mcheck_models::twophase_packed::TwoPhasePacked;
use std::time::Instant;

/// SES on `program` with the explorer `name` (built-in or the model's own),
/// and its wall time in seconds.
fn ses<M: Model>(model: &M, program: &M::Program, name: &str, config: &Config) -> (Report, f64) {
    let explorer = match builtin(name) {
        Some(e) => e,
        None => model.explorer(name).expect("the model lists this explorer"),
    };
    let t = Instant::now();
    let report = search::ses(program, explorer, config).expect("the search runs");
    (report, t.elapsed().as_secs_f64())
}

fn figures<M: Model>(model: &M) {
    let info = model.info();
    let defaults = Params::defaults(&info.params);
    let (r, secs) = ses(model, &model.build(&defaults, None), "rtc", &Config::default());
    println!(
        "{} [{defaults}] correct, rtc: {:?}, {} states, {} transitions, {secs:.2}s",
        info.name, r.outcome, r.states, r.transitions
    );
    let explorers: Vec<&str> = BUILTIN.iter().chain(&info.explorers).map(|e| e.name).collect();
    let capped = Config::default().max_states(3_000_000);
    let zero = Config::default().max_delays(0);
    for bug in &info.bugs {
        let params = model.effective_params(&defaults, Some(bug.id));
        let program = model.build(&params, Some(bug.id));
        println!("  bug {} ({}) [{params}]:", bug.id, bug.name);
        for name in &explorers {
            let (r, secs) = ses(model, &program, name, &capped);
            let found = r.violation.as_ref().map_or("not found".to_string(), |f| {
                let machine = f.violation.machine.as_deref().unwrap_or("-");
                format!("{:?} in {machine}", f.violation.kind)
            });
            println!(
                "    {name:<12} {:>8} states, {} delays, {found} ({secs:.2}s)",
                r.states, r.bound_reached
            );
        }
        let (r, _) = ses(model, &program, "rtc", &zero);
        println!("    zero-delay rtc: {:?}", r.outcome);
    }
}

fn main() {
    let all: [(&str, fn()); 7] = [
        ("lostupdate", || figures(&LostUpdate)),
        ("twophase", || figures(&TwoPhase)),
        ("twophase-packed", || figures(&TwoPhasePacked)),
        ("paxos", || figures(&Paxos)),
        ("multipaxos", || figures(&MultiPaxos)),
        ("2pc", || figures(&TwoPc)),
        ("chain", || figures(&Chain)),
    ];
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    for name in &wanted {
        if !all.iter().any(|(n, _)| n == name) {
            let valid: Vec<&str> = all.iter().map(|(n, _)| *n).collect();
            eprintln!("figures: unknown model {name:?}; valid models: {}", valid.join(", "));
            std::process::exit(2);
        }
    }
    for (name, run) in all {
        if wanted.is_empty() || wanted.iter().any(|w| w == name) {
            run();
        }
    }
}
