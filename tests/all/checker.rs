//! The checker builder (`mcheck::Checker`) as a test writes it, with only
//! `mcheck::prelude::*`: a seeded bug fails `assert_no_violation` with what
//! `mcheck run` prints (the same violation, trace, races and schedule,
//! byte for byte) and the diagram `mcheck replay --format mermaid` draws,
//! and the schedule replays; a correct model passes `assert_verified`; a
//! budget fails it by name; reachability properties are asserted
//! reached, and an unreachable or unreached one fails by what happened.
//! The oracles are the CLI's output and the README's walk-through.

use crate::common::{mcheck, stdout};
use crate::coverage::Mute;
use mcheck::machine::World;
use mcheck::models::lostupdate::LostUpdate;
use mcheck::prelude::*;
use mcheck::testing::RandomProgram;
use mcheck::{Outcome, Schedule, replay, replay_model};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The panic message of `f`, which must panic.
fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("the assertion passed");
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => payload.downcast_ref::<&str>().expect("a text panic").to_string(),
    }
}

/// The README's walk-through configuration.
fn lostupdate() -> Checker<'static> {
    Checker::model(&LostUpdate).set("clients", 2).set("increments", 1)
}

/// `mcheck run` of [`lostupdate`]'s configuration with the builder's
/// default strategy: the oracle of these tests.
const SES_RUN: &[&str] = &["run", "lostupdate", "--set", "clients=2,increments=1", "-s", "ses"];

/// The schedule line under "Schedule (...):" in `text`.
fn schedule_line(text: &str) -> &str {
    let at = text.find("Schedule (").expect("a schedule");
    text[at..].lines().nth(1).expect("the schedule's line").trim()
}

#[test]
fn a_seeded_bug_fails_with_the_cli_report_the_diagram_and_a_schedule_that_replays() {
    let message = panic_message(|| {
        lostupdate().bug(1).assert_no_violation();
    });
    let head = "mcheck: assert_no_violation failed: a violation was found\n\
                mcheck: lostupdate bug 1 (blind-write) [clients=2,increments=1], ses with rtc, seed 0\n\
                \n\
                VIOLATION at step 9: monitor in counter: all 2 clients are done but the counter is 1 instead of 2: an increment was lost\n\
                \n\
                Trace:\n     0  client1 handles Go; sends Read { from: #1 } to server0\n";
    assert!(message.starts_with(head), "{message}");
    // The README's schedule line, byte for byte.
    let text = schedule_line(&message);
    assert_eq!(
        text,
        "mcheck2:lostupdate:p=clients=2,increments=1:bug=1:e=rtc:seed=0:max-steps=10000:v=monitor:at=9:by=counter:msg=all+2+clients+are+done+but+the+counter+is+1+instead+of+2%3A+an+increment+was+lost:d=1:sum=e4fc47ee22c00e30"
    );
    // What `mcheck run` prints from the violation to the schedule, and
    // what `mcheck replay --format mermaid` draws, are in the message.
    let run = stdout(&mcheck(&[
        "run",
        "lostupdate",
        "--bug",
        "1",
        "--set",
        "clients=2,increments=1",
        "-s",
        "ses",
    ]));
    let (from, to) = (run.find("\nVIOLATION").unwrap(), run.find("\noutcome:").unwrap());
    assert!(message.contains(&run[from..to]), "{message}\n---\n{run}");
    assert_eq!(message.lines().nth(1), run.lines().next());
    let diagram = stdout(&mcheck(&["replay", text, "--format", "mermaid"]));
    assert!(diagram.starts_with("sequenceDiagram\n"), "{diagram}");
    let drawn = format!("\n\nSequence diagram (Mermaid; `mcheck replay --format mermaid` draws it too):\n{diagram}\n");
    assert!(message.contains(&drawn), "{message}");
    // The summary closes it: the README's 28 states.
    let summary = &message[message.find("\noutcome: violation\n").expect("the summary")..];
    assert!(summary.contains("\nstates 28 ("), "{summary}");
    // The schedule replays to the same violation at the same step.
    let schedule: Schedule = text.parse().unwrap();
    let ex = replay_model(&LostUpdate, builtin("rtc"), &schedule, false).unwrap();
    assert_eq!(ex.violation.map(|f| f.step), Some(9));
}

#[test]
fn a_correct_model_passes_and_a_budget_fails_assert_verified_by_name() {
    // `mcheck run lostupdate --set clients=2,increments=1 -s ses --json`: the oracle.
    let cli = crate::common::json(&[SES_RUN, &["--json"]].concat());
    let report = lostupdate().assert_verified();
    assert_eq!(cli["outcome"], "verified");
    assert_eq!(
        (report.outcome, report.states),
        (Outcome::Verified, cli["states"].as_u64().unwrap())
    );
    assert_eq!(u64::from(report.bound_reached), cli["max_delays"].as_u64().unwrap());
    assert_eq!(lostupdate().assert_no_violation().states, report.states);

    for (checker, budget) in [
        // (At clients=2, increments=1 the search ends verified, at 52
        // states, before it checks its budgets; at the defaults it stops.)
        (
            Checker::model(&LostUpdate).max_states(100),
            "stopped by --max-states; raise or remove `max_states(..)`",
        ),
        (
            lostupdate().max_delays(1),
            "stopped at --max-delays with work left; raise or remove `max_delays(..)`",
        ),
        (
            lostupdate().max_steps(4),
            "executions were cut at --max-steps; raise `max_steps(..)` above the longest execution",
        ),
        (
            lostupdate().strategy(Strategy::Rs).max_schedules(20),
            "stopped by --max-schedules; raise or remove `max_schedules(..)`",
        ),
    ] {
        // A budget is no violation...
        let report = checker.assert_no_violation();
        assert_eq!(report.outcome, Outcome::Bounded);
        // ...and no proof.
        let message = panic_message(|| {
            checker.assert_verified();
        });
        let first = format!("mcheck: assert_verified failed: the search ended bounded ({budget}), not verified\n");
        assert!(message.starts_with(&first), "{message}");
        assert!(message.contains("\noutcome: bounded ("), "{message}");
        assert!(!message.contains("VIOLATION"), "{message}");
    }
}

/// A counter that fails an assertion at 1: its reachability property
/// "two" is never reached, since the violation ends every execution first.
struct Overflow;

impl MachineModel for Overflow {
    type Machine = u8;
    type Msg = ();
    type Announce = ();
    type Monitor = ();

    fn setup(&self, s: &mut Setup<Self>) {
        let counter = s.create(0);
        s.send(counter, ());
        s.send(counter, ());
    }

    fn kind(&self, _: &u8) -> &'static str {
        "counter"
    }

    fn handle(&self, n: &mut u8, _: &(), ctx: &mut Ctx<Self>) {
        *n += 1;
        let v = *n;
        ctx.assert(v < 1, || format!("counted to {v}"));
    }

    fn sometimes(&self) -> Vec<&'static str> {
        vec!["two"]
    }

    fn holds(&self, w: &World<Self>, _: usize) -> bool {
        w.slots().iter().any(|s| s.machine == 2)
    }
}

#[test]
fn reachability_properties_are_reached_with_a_schedule_or_fail_by_what_happened() {
    // `mcheck run --coverage`'s property search is the oracle: the same
    // schedule for the same property.
    let cli = crate::common::json(&[SES_RUN, &["--coverage", "--json"]].concat());
    let property = &cli["coverage"]["properties"][0];
    assert_eq!(
        (&property["name"], &property["status"]),
        (&"all-clients-done".into(), &"reached".into())
    );
    let schedule = lostupdate().assert_reachable("all-clients-done");
    let cli_schedule: Schedule = serde_json::from_value(property["schedule"].clone()).unwrap();
    assert_eq!(schedule, cli_schedule);
    assert_eq!(
        schedule.expected_step.map(|s| s + 1),
        property["steps"].as_u64().map(|s| s as usize)
    );
    replay_model(&LostUpdate, builtin("rtc"), &schedule, false).unwrap();

    // A bug found first is shown as a bug.
    let message = panic_message(|| {
        Checker::new(&Machines(Overflow)).assert_reachable("two");
    });
    assert!(
        message.starts_with(
            "mcheck: assert_reachable(\"two\") failed: a violation was found before the property was reached\n\
             mcheck: program, ses with rtc, seed 0\n\
             \n\
             VIOLATION at step 0: assertion in counter0: counted to 1\n"
        ),
        "{message}"
    );
    // An exhaustive search proves `ponged` unreachable; sampling stops at
    // its budget without a proof.
    let message = panic_message(|| {
        Checker::model(&Mute).assert_reachable("ponged");
    });
    assert!(
        message.starts_with("mcheck: assert_reachable(\"ponged\") failed: the property is unreachable: the search covered every reachable state, and it holds in none\nmcheck: mute [], ses with rtc, seed 0\n"),
        "{message}"
    );
    let message = panic_message(|| {
        Checker::model(&Mute)
            .strategy(Strategy::Rs)
            .max_schedules(10)
            .assert_reachable("ponged");
    });
    assert!(
        message.starts_with("mcheck: assert_reachable(\"ponged\") failed: the property was not reached before the search ended bounded (stopped by --max-schedules; raise or remove `max_schedules(..)`)\n"),
        "{message}"
    );
    // A property the model does not declare is named with those it does.
    let message = panic_message(|| {
        lostupdate().assert_reachable("all-done");
    });
    assert_eq!(
        message,
        "mcheck: assert_reachable(\"all-done\") could not check: the program has no reachability property \"all-done\"; its properties: all-clients-done, counter-at-total"
    );
}

#[test]
fn a_program_fails_with_a_schedule_that_replays_on_it() {
    // Random transition systems with a planted violation, against the
    // breadth-first oracle that shares no code with the engine.
    let mut found = 0;
    for seed in 0..20 {
        let program = RandomProgram::generate(seed, false, true);
        let reachable = program.oracle().violation_reachable;
        let checker = Checker::new(&program);
        if !reachable {
            assert!(checker.assert_verified().is_verified(), "seed {seed}");
            continue;
        }
        found += 1;
        let message = panic_message(|| {
            checker.assert_no_violation();
        });
        assert!(
            message.starts_with("mcheck: assert_no_violation failed: a violation was found\nmcheck: program, ses with rtc, seed 0\n\nVIOLATION at step "),
            "seed {seed}: {message}"
        );
        assert!(
            message.contains("\nSequence diagram (Mermaid):\nsequenceDiagram\n"),
            "{message}"
        );
        let text = schedule_line(&message);
        assert!(text.starts_with("mcheck2:-:p=-:bug=-:e=rtc:"), "seed {seed}: {text}");
        let schedule: Schedule = text.parse().unwrap();
        let ex = replay(&program, builtin("rtc"), &schedule, false).unwrap();
        assert_eq!(ex.violation.map(|f| f.step), schedule.expected_step, "seed {seed}");
    }
    assert_eq!(found, 12, "seeds with a reachable violation (the oracle says)");
    // A bug or a parameter belongs to a model.
    let program = RandomProgram::generate(0, false, false);
    let message = panic_message(|| {
        Checker::new(&program).bug(1).assert_no_violation();
    });
    assert!(message.starts_with("mcheck: assert_no_violation could not check: `bug` chooses a model's seeded bug or parameters, and this checker checks a program (Checker::new)"), "{message}");
}
