//! The `mcheck` binary and liveness: a liveness bug exits 1 with its lasso
//! printed and replaying; `--liveness off` and `--temperature` as documented.

use crate::common::{mcheck, text};

#[test]
fn a_liveness_bug_exits_1_with_a_lasso_that_replays() {
    // (model, bug, step of the violation, hot monitor)
    for (model, bug, at, by) in [
        ("paxos", "4", 21, "progress"),
        ("lostupdate", "2", 23, "increments"),
        ("2pc", "6", 29, "in-doubt"),
    ] {
        let o = mcheck(&["run", model, "-s", "dfs", "--bug", bug]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let out = text(&o);
        let schedule = out
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with(&format!("mcheck2:{model}:")))
            .expect("the schedule is printed")
            .to_string();
        assert!(
            schedule.contains(&format!(":v=liveness:at={at}:by={by}:")),
            "{schedule}"
        );
        // A replay that reproduces the violation exits 1, as for every kind.
        let r = mcheck(&["replay", &schedule]);
        assert_eq!(r.status.code(), Some(1), "{}", text(&r));
        assert!(
            text(&r).contains(&format!("liveness in {by}: the execution ends with the monitor hot")),
            "{}",
            text(&r)
        );
        // Off: the same search verifies.
        let off = mcheck(&["run", model, "-s", "dfs", "--bug", bug, "--liveness", "off"]);
        assert_eq!(off.status.code(), Some(0), "{}", text(&off));
    }
}

#[test]
fn temperature_applies_to_sampling_only() {
    let o = mcheck(&["run", "paxos", "-s", "dfs", "--temperature", "5"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--temperature"), "{}", text(&o));
    let bad = mcheck(&["run", "paxos", "--liveness", "maybe"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad).contains("expected on or off"), "{}", text(&bad));
}

/// One actor that starts a request (step 0) and then spins forever,
/// flipping a bit, with the request owed: a lasso whose cycle is 2 steps.
struct Spinner;

impl mcheck_checker::Program for Spinner {
    type State = (bool, bool);
    fn initial(&self) -> Self::State {
        (false, false)
    }
    fn actors(&self, _s: &Self::State) -> Vec<mcheck_checker::ActorInfo> {
        vec![mcheck_checker::ActorInfo {
            id: mcheck_checker::ActorId(0),
            kind: "spinner",
            name: "spinner".into(),
        }]
    }
    fn enabled(&self, _s: &Self::State, out: &mut Vec<mcheck_checker::Enabled>) {
        out.push(mcheck_checker::Enabled {
            actor: mcheck_checker::ActorId(0),
            alternatives: 1,
        });
    }
    fn execute(
        &self,
        s: &mut Self::State,
        _actor: mcheck_checker::ActorId,
        _alt: u32,
        _events: &mut Vec<mcheck_checker::Event>,
    ) -> Result<(), mcheck_checker::Violation> {
        match s.0 {
            false => s.0 = true,
            true => s.1 = !s.1,
        }
        Ok(())
    }
    fn liveness(&self) -> Option<&dyn mcheck_checker::Monitors<Self::State>> {
        Some(self)
    }
}

impl mcheck_checker::Monitors<(bool, bool)> for Spinner {
    fn hot(&self, s: &(bool, bool)) -> bool {
        s.0
    }
    fn owed(&self, s: &(bool, bool)) -> Option<mcheck_checker::Hot> {
        s.0.then(|| mcheck_checker::Hot {
            monitor: "answer".into(),
            owed: "the request is not answered".into(),
        })
    }
}

#[test]
fn a_replayed_lasso_marks_where_its_cycle_starts_and_returns() {
    use mcheck_checker::testing::Causal;
    let config = mcheck_checker::Config::default().liveness(true);
    let report = mcheck_checker::run(&Spinner, Causal::default(), &mcheck_checker::Strategy::Dfs, &config)
        .expect("the search runs");
    let schedule = report.schedule.expect("a lasso");
    assert_eq!((schedule.path.clone(), schedule.cycle.clone()), (vec![0], vec![0, 0]));
    let ex = mcheck_checker::replay(&Spinner, None::<Causal>, &schedule, true).expect("the lasso replays");
    assert_eq!(mcheck_checker::liveness::cycle_of(&ex), Some(1..3));
    assert_eq!(
        mcheck::render::text_trace(&ex, false),
        "     0  spinner\n\
         \x20 ---- cycle of 2 steps starts here: steps 1..2 repeat forever ----\n\
         \x20    1  spinner\n\
         \x20    2  spinner\n\
         \x20 ---- cycle returns to the same state: after step 2 the state is the one before step 1 (same fingerprint) ----\n\
         \x20 !! liveness in answer: a fair cycle of 2 steps along which the monitor stays hot: the request is not answered (step 1)\n"
    );
    let m = mcheck::render::mermaid(&ex, false);
    let (open, close) = (
        m.find("    loop cycle: steps 1..2, back to the state before step 1\n"),
        m.find("    end\n"),
    );
    assert!(open.is_some() && close > open, "{m}");
    let d = mcheck::render::dot(&ex, false);
    assert!(
        d.contains(
            "    s2 -> s1 [label=\"cycle returns to the same state\", color=orange, penwidth=2, constraint=false];\n"
        ),
        "{d}"
    );
    assert!(d.contains("    s2 [label=\"2\", color=orange];\n"), "{d}");
    // A safety counterexample has no cycle mark.
    let mut plain = ex.clone();
    plain.violation = None;
    assert!(!mcheck::render::text_trace(&plain, false).contains("cycle"));
}
