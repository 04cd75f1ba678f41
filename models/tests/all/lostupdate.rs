//! The small end-to-end model: exact state counts, every explorer covers the
//! same reachable set, and the seeded bug needs a delay and replays.

use crate::common;
use common::bfs;

use mcheck_checker::explorers::builtin;
use mcheck_checker::search;
use mcheck_checker::{Config, Model, Outcome, Schedule, ViolationKind};
use mcheck_models::lostupdate::LostUpdate;

fn program(set: &[(&str, &str)], bug: Option<u32>) -> <LostUpdate as Model>::Program {
    common::program(&LostUpdate, set, bug)
}

#[test]
fn exact_state_counts() {
    for (clients, increments, states, transitions) in [
        ("1", "1", 6, 5),
        ("2", "2", 212, 336),
        ("3", "2", 7272, 15072),
        ("3", "3", 39104, 79608),
    ] {
        let p = program(&[("clients", clients), ("increments", increments)], None);
        let r = search::dfs(&p, &Config::default()).unwrap();
        assert_eq!(r.outcome, Outcome::Verified);
        assert_eq!(bfs(&p), (states, transitions));
        assert_eq!(
            (r.states, r.transitions),
            (states, transitions),
            "clients={clients} increments={increments}"
        );
    }
}

#[test]
fn every_explorer_covers_the_default_state_space() {
    let p = program(&[], None);
    for name in ["rr", "rtc", "prr"] {
        let r = search::ses(&p, builtin(name).unwrap(), &Config::default()).unwrap();
        assert_eq!(r.outcome, Outcome::Verified, "{name}");
        assert_eq!((r.states, r.transitions), (39104, 79608), "{name}");
        assert!(r.strata.len() > 5, "{name}: only {} strata", r.strata.len());
    }
}

#[test]
fn the_bug_needs_one_delay_and_replays() {
    let p = program(&[], Some(1));
    let zero = Config::default().max_delays(0);
    for name in ["rr", "rtc"] {
        let r = search::ses(&p, builtin(name).unwrap(), &zero).unwrap();
        assert_eq!(r.outcome, Outcome::Bounded, "{name} finds it with zero delays");
    }
    let r = search::ses(&p, builtin("rtc").unwrap(), &Config::default()).unwrap();
    let found = r.violation.clone().unwrap();
    assert_eq!(found.violation.kind, ViolationKind::Monitor);
    assert_eq!(found.violation.machine.as_deref(), Some("counter"));
    assert_eq!(r.bound_reached, 1);
    let mut schedule = r.schedule.unwrap();
    schedule.model = "lostupdate".into();
    assert_eq!(schedule.delays(), 1);
    let again = Schedule::from_text(&schedule.to_text()).unwrap();
    let ex = mcheck_checker::replay(&p, Some(builtin("rtc").unwrap()), &again, false).unwrap();
    let v = ex.violation.unwrap();
    assert!(v.violation.same_bug(&found.violation));
    assert_eq!(v.step, found.step);
}

/// Stratified sampling runs the zero-delay execution of a deterministic
/// explorer once (every sample would be the same), and `c1` = 100 times
/// for PRR, whose samples differ; bound 1 runs `c1 * c2` = 200 for all.
#[test]
fn sampling_runs_bound_zero_once_for_deterministic_explorers() {
    let p = program(&[], None);
    let config = Config::default().threads(1).max_delays(1);
    let params = search::SsParams::paper();
    let per_bound = |name: &str| {
        let r = search::ss(&p, builtin(name).unwrap(), &config, &params).unwrap();
        assert_eq!(r.outcome, Outcome::Bounded, "{name}");
        r.strata.iter().map(|s| s.schedules).collect::<Vec<_>>()
    };
    assert_eq!(per_bound("rr"), [1, 200]);
    assert_eq!(per_bound("rtc"), [1, 200]);
    assert_eq!(per_bound("prr"), [100, 200]);
    // With the bug, one sample of bound 1 is enough for RTC.
    let buggy = program(&[], Some(1));
    let r = search::ss(&buggy, builtin("rtc").unwrap(), &config, &params).unwrap();
    assert_eq!((r.outcome, r.schedules), (Outcome::Violation, 2));
}
