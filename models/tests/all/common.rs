//! Helpers shared by the model tests: building a configuration, an
//! independent BFS over full states (no engine code: its own `HashSet`),
//! and checks and replays of a shipped model through the registry.

use mcheck_checker::explorers::builtin;
use mcheck_checker::search::{self, Strategy};
use mcheck_checker::{Config, Enabled, Execution, Model, Outcome, Params, Program, Report, Schedule};
use mcheck_registry::Registry;
use std::collections::{HashSet, VecDeque};

/// `model` built with `set` overriding its default parameters.
pub fn program<M: Model>(model: &M, set: &[(&str, &str)], bug: Option<u32>) -> M::Program {
    let info = model.info();
    let overrides: Vec<(String, String)> = set.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let params = Params::resolve(info.name, &info.params, &overrides).unwrap();
    model.build(&params, bug)
}

/// Reachable states and transitions by a plain BFS over full states.
pub fn bfs<P: Program>(p: &P) -> (u64, u64) {
    let s0 = p.initial();
    let mut seen = HashSet::from([s0.clone()]);
    let mut todo = VecDeque::from([s0]);
    let (mut en, mut ev, mut transitions) = (Vec::<Enabled>::new(), Vec::new(), 0);
    while let Some(s) = todo.pop_front() {
        en.clear();
        p.enabled(&s, &mut en);
        for e in &en {
            for alt in 0..e.alternatives {
                let mut t = s.clone();
                ev.clear();
                p.execute(&mut t, e.actor, alt, &mut ev).unwrap();
                transitions += 1;
                if seen.insert(t.clone()) {
                    todo.push_back(t);
                }
            }
        }
    }
    (seen.len() as u64, transitions)
}

/// Zero-delay SES with RR and with RTC finds none of `bugs` of `model`:
/// each needs at least one delay (ARCHITECTURE.md, "Models").
pub fn assert_each_bug_needs_a_delay<M: Model>(model: &M, bugs: impl IntoIterator<Item = u32>) {
    let zero = Config::default().max_delays(0);
    for bug in bugs {
        let p = program(model, &[], Some(bug));
        for name in ["rr", "rtc"] {
            let r = search::ses(&p, builtin(name).unwrap(), &zero).unwrap();
            assert_eq!(
                r.outcome,
                Outcome::Bounded,
                "bug {bug}: {name} finds it with zero delays"
            );
            assert!(r.violation.is_none());
        }
    }
}

/// The counterexample of `report` (SES with the built-in `explorer` on `p`,
/// a program of the model named `model`) has `delays` delays and replays
/// through its text form to the same bug at the same step.
pub fn assert_replays<P: Program>(p: &P, model: &str, explorer: &str, report: &Report, delays: u32) {
    let found = report.violation.clone().expect("a violation");
    let mut schedule = report.schedule.clone().expect("a schedule");
    schedule.model = model.into();
    assert_eq!(schedule.delays(), delays as usize, "{model} with {explorer}");
    let again = Schedule::from_text(&schedule.to_text()).unwrap();
    let v = mcheck_checker::replay(p, Some(builtin(explorer).unwrap()), &again, false)
        .unwrap()
        .violation
        .unwrap();
    assert!(v.violation.same_bug(&found.violation), "{model}: {:?}", v.violation);
    assert_eq!(v.step, found.step, "{model} with {explorer}");
}

/// [`mcheck_checker::check_model`] of the shipped `model` with the
/// explorer named `explorer`, run as the CLI runs it: through the
/// registry, whose instances of the search are compiled once for the
/// workspace rather than again for a test binary.
pub fn check<M: Model>(
    model: &M,
    params: &Params,
    bug: Option<u32>,
    strategy: &Strategy,
    explorer: &str,
    config: &Config,
) -> Report {
    let name = model.info().name;
    let registry = Registry::builtin();
    let dynamic = registry.model(name).unwrap();
    let instance = dynamic.resolve(&params.as_overrides(), bug).unwrap();
    dynamic
        .check(&instance, strategy, explorer, config, false)
        .unwrap()
        .report
}

/// [`mcheck_checker::replay_model`] of a schedule of the shipped `model`,
/// with the explorer the schedule names, through the registry.
pub fn replay<M: Model>(model: &M, schedule: &Schedule) -> Execution {
    let registry = Registry::builtin();
    registry
        .model(model.info().name)
        .unwrap()
        .replay(schedule, false)
        .unwrap()
}
