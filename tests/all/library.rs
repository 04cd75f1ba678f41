//! The library is whole without the CLI: a user with the one `mcheck`
//! dependency finds a deadlock in a hand-written program with every kind
//! of search, and replays each counterexample from its text form to the
//! same deadlock; a `Model` gets complete schedules (model, digest, trail).
//! Only `mcheck::` paths are used.

use mcheck::explorers::{ProbabilisticRoundRobin, RoundRobin, RunToCompletion};
use mcheck::search;
use mcheck::{
    ActorId, ActorInfo, AnyExplorer, Config, Enabled, End, Event, Model, ModelInfo, Params, PathKind, Program,
    Progress, ReplayError, Report, Schedule, Strategy, Violation, ViolationKind, check_model, replay, replay_model,
    shrink_model,
};

/// Two philosophers and two forks: philosopher i takes fork i, then fork
/// i + 1 (mod 2), then puts both down and leaves. Each step takes one fork;
/// if both took their first fork, nothing is enabled: a deadlock after
/// exactly two steps, the only one (worked out by hand: the other
/// interleavings let one philosopher finish first).
#[derive(Clone, Copy, Debug)]
struct Forks;

/// Who holds each fork (0: nobody, i + 1: philosopher i), and how many
/// forks each philosopher has taken (2: done).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct State {
    forks: [u8; 2],
    taken: [u8; 2],
}

impl Forks {
    /// The fork philosopher `i` wants next, if any.
    fn wants(s: &State, i: usize) -> Option<usize> {
        match s.taken[i] {
            0 => Some(i),
            1 => Some((i + 1) % 2),
            _ => None,
        }
    }
}

const MESSAGE: &str = "each philosopher holds one fork and waits for the other";

impl Program for Forks {
    type State = State;
    fn initial(&self) -> State {
        State {
            forks: [0; 2],
            taken: [0; 2],
        }
    }
    fn actors(&self, _: &State) -> Vec<ActorInfo> {
        (0..2)
            .map(|i| ActorInfo {
                id: ActorId(i),
                kind: "philosopher",
                name: format!("philosopher{i}"),
            })
            .collect()
    }
    fn enabled(&self, s: &State, out: &mut Vec<Enabled>) {
        for i in 0..2 {
            if Self::wants(s, i).is_some_and(|f| s.forks[f] == 0) {
                out.push(Enabled {
                    actor: ActorId(i as u32),
                    alternatives: 1,
                });
            }
        }
    }
    fn execute(&self, s: &mut State, actor: ActorId, _: u32, _: &mut Vec<Event>) -> Result<(), Violation> {
        let i = actor.0 as usize;
        let fork = Self::wants(s, i).expect("an enabled philosopher wants a fork");
        s.forks[fork] = i as u8 + 1;
        s.taken[i] += 1;
        if s.taken[i] == 2 {
            s.forks = [0; 2];
        }
        Ok(())
    }
    fn deadlock(&self, s: &State) -> Option<Violation> {
        (s.taken != [2, 2]).then(|| Violation {
            kind: ViolationKind::Deadlock,
            machine: None,
            message: MESSAGE.into(),
        })
    }
}

/// The same program as a model.
struct ForksModel;

impl Model for ForksModel {
    type Program = Forks;
    fn info(&self) -> ModelInfo {
        ModelInfo::new("forks", "two philosophers, two forks")
    }
    fn build(&self, _: &Params, _: Option<u32>) -> Forks {
        Forks
    }
}

fn config() -> Config {
    Config::default().deadlock(true).progress(Progress::Off)
}

/// The deadlock, as the oracle above says: at step 2 (after two steps).
fn the_deadlock() -> Violation {
    Violation {
        kind: ViolationKind::Deadlock,
        machine: None,
        message: MESSAGE.into(),
    }
}

fn assert_found_the_deadlock(r: &Report, what: &str) {
    assert!(r.is_violation(), "{what}: {:?}", r.outcome);
    let found = r.violation.as_ref().unwrap();
    assert_eq!((&found.violation, found.step), (&the_deadlock(), 2), "{what}");
    let s = r.schedule.as_ref().unwrap();
    assert!(s.deadlock, "{what}: the schedule must say that deadlocks count");
    assert_eq!(
        (&s.expected, s.expected_step),
        (&Some(the_deadlock()), Some(2)),
        "{what}"
    );
}

/// Through the text form and back, then replayed: the same deadlock.
fn assert_text_replays(r: &Report, explorer: Option<AnyExplorer>, what: &str) -> Schedule {
    let schedule = r.schedule.as_ref().unwrap();
    let text = schedule.to_text();
    let parsed: Schedule = text.parse().unwrap_or_else(|e| panic!("{what}: {text}: {e}"));
    assert_eq!(parsed.is_edited(), Some(false), "{what}");
    assert_eq!(Schedule::from_text(&text).unwrap(), parsed);
    let unsealed = |s: &Schedule| {
        let mut s = s.clone();
        s.checksum.clear();
        s
    };
    assert_eq!(unsealed(&parsed), unsealed(schedule), "{what}: {text}");
    let ex = replay(&Forks, explorer, &parsed, true).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(ex.end, End::Violation, "{what}");
    assert_eq!(ex.violation, r.violation, "{what}");
    assert_eq!(ex.trail.len(), 2, "{what}");
    parsed
}

#[test]
fn every_search_finds_the_deadlock_and_its_text_replays_it() {
    let c = config();
    let rtc = || AnyExplorer::Rtc(RunToCompletion::new());
    let ses = search::ses(&Forks, rtc(), &c).unwrap();
    assert_found_the_deadlock(&ses, "ses");
    let s = assert_text_replays(&ses, Some(rtc()), "ses");
    assert_eq!(
        (s.kind, s.explorer.as_deref(), s.model.as_str()),
        (PathKind::Delays, Some("rtc"), "")
    );
    assert!(s.to_text().starts_with("mcheck2:-:p=-:bug=-:e=rtc:"), "{s}");

    for (name, r) in [
        ("dfs", search::dfs(&Forks, &c).unwrap()),
        ("pb", search::pb(&Forks, &c).unwrap()),
        ("rs", search::rs(&Forks, &c).unwrap()),
    ] {
        assert_found_the_deadlock(&r, name);
        let s = assert_text_replays(&r, None, name);
        assert_eq!(s.kind, PathKind::Choices, "{name}");
        // Two choices, each among the philosophers still enabled.
        assert_eq!(s.path.len(), 2, "{name}: {s}");
        assert!(
            s.to_text()
                .contains(":deadlock:v=deadlock:at=2:msg=each+philosopher+holds"),
            "{s}"
        );
    }
}

#[test]
fn replay_takes_the_schedules_own_explorer() {
    let ses = search::ses(&Forks, RunToCompletion::new(), &config()).unwrap();
    let s = ses.schedule.unwrap();
    match replay(&Forks, Some(RoundRobin::new()), &s, false) {
        Err(ReplayError::WrongExplorer { wanted, given }) => {
            assert_eq!((wanted.as_str(), given.as_str()), ("rtc", "rr"))
        }
        other => panic!("{other:?}"),
    }
    match replay(&Forks, None::<RunToCompletion>, &s, false) {
        Err(e @ ReplayError::MissingExplorer { .. }) => assert!(e.to_string().contains("\"rtc\""), "{e}"),
        other => panic!("{other:?}"),
    }
    // The schedule's own seed is applied: any seed given to the explorer
    // beforehand is overridden.
    let mut seeded = RunToCompletion::new();
    mcheck::Explorer::seed(&mut seeded, 99);
    assert!(replay(&Forks, Some(seeded), &s, false).is_ok());
}

#[test]
fn a_model_gets_complete_schedules() {
    let c = config();
    for strategy in [Strategy::Ses, Strategy::Dfs, Strategy::Pb, Strategy::Rs] {
        let name = strategy.name();
        let r = check_model(
            &ForksModel,
            &Params::default(),
            None,
            &strategy,
            RunToCompletion::new(),
            &c,
        )
        .unwrap();
        assert_found_the_deadlock(&r, name);
        let s = r.schedule.as_ref().unwrap();
        assert_eq!(s.model, "forks", "{name}");
        assert_eq!(s.digest, mcheck::replay::model_digest(&Forks, s), "{name}");
        assert_eq!(s.trail.len(), 2, "{name}");
        assert_eq!(s.is_edited(), Some(false), "{name}");
        // The JSON file form and the text form both replay through the model.
        let json: Schedule = serde_json::to_string(s).unwrap().parse().unwrap();
        assert_eq!(&json, s, "{name}");
        let text: Schedule = s.to_text().parse().unwrap();
        for schedule in [&json, &text] {
            let explorer = schedule.explorer.as_ref().map(|_| RunToCompletion::new());
            let ex = replay_model(&ForksModel, explorer, schedule, false).unwrap();
            assert_eq!(ex.violation, r.violation, "{name}");
        }
        // Shrinking keeps it complete (the path is already minimal).
        let explorer = s.explorer.as_ref().map(|_| RunToCompletion::new());
        let shrunk = shrink_model(&ForksModel, explorer, s, 100).unwrap();
        assert_eq!((shrunk.after.1, shrunk.schedule.trail.len()), (2, 2), "{name}");
        assert_eq!(shrunk.schedule.digest, s.digest, "{name}");
        assert_eq!(shrunk.schedule.is_edited(), Some(false), "{name}");
    }
    // A schedule of another model is refused by name.
    let r = check_model(
        &ForksModel,
        &Params::default(),
        None,
        &Strategy::Dfs,
        RunToCompletion::new(),
        &c,
    )
    .unwrap();
    let mut other = r.schedule.unwrap();
    other.model = "spoons".into();
    match replay_model(&ForksModel, None::<RunToCompletion>, &other, false) {
        Err(ReplayError::WrongModel { schedule, model }) => {
            assert_eq!((schedule.as_str(), model.as_str()), ("spoons", "forks"))
        }
        other => panic!("{other:?}"),
    }
    // A bug the model does not have is an input error, not a panic.
    let e = check_model(
        &ForksModel,
        &Params::default(),
        Some(3),
        &Strategy::Dfs,
        RunToCompletion::new(),
        &c,
    )
    .unwrap_err();
    assert!(e.to_string().contains("has no bug 3"), "{e}");
}

/// `check_model_ses` (a plain SES on an explorer's own type, here PRR's)
/// gives what `check_model` with SES gives on `AnyExplorer`, and
/// leaves a search that a liveness check wraps to `check_model`.
#[test]
fn the_plain_ses_on_an_explorers_own_type_is_check_models_ses() {
    use mcheck::check::check_model_ses;
    use mcheck::models::lostupdate::LostUpdate;
    let info = LostUpdate.info();
    let params = Params::resolve(info.name, &info.params, &[]).unwrap();
    let instance = |bug| mcheck::Instance::resolve(&LostUpdate, &params, bug).unwrap();
    let c = Config::default().progress(Progress::Off);
    for bug in [None, Some(1)] {
        let any = check_model(
            &LostUpdate,
            &params,
            bug,
            &Strategy::Ses,
            AnyExplorer::from(ProbabilisticRoundRobin::new(0)),
            &c,
        )
        .unwrap();
        let checked = check_model_ses(&LostUpdate, &instance(bug), ProbabilisticRoundRobin::new(0), &c, false)
            .unwrap()
            .unwrap();
        // The counterexample's one replay is kept, not explained unasked.
        let replayed = checked
            .counterexample
            .as_ref()
            .map(|c| (c.execution.steps, c.explanation.is_none()));
        let own = checked.report;
        assert_eq!(
            replayed,
            own.violation.as_ref().map(|v| (v.step + 1, true)),
            "bug {bug:?}"
        );
        assert_eq!(
            (
                own.outcome,
                own.states,
                own.transitions,
                own.deferrals,
                &own.violation,
                &own.schedule
            ),
            (
                any.outcome,
                any.states,
                any.transitions,
                any.deferrals,
                &any.violation,
                &any.schedule
            ),
            "bug {bug:?}"
        );
        assert_eq!(own.explorer.as_deref(), Some("prr"));
    }
    // Every reachable state, as `models/tests/lostupdate.rs` pins them.
    let verified = check_model_ses(&LostUpdate, &instance(None), ProbabilisticRoundRobin::new(0), &c, false)
        .unwrap()
        .unwrap()
        .report;
    assert_eq!((verified.outcome, verified.states), (mcheck::Outcome::Verified, 39_104));
    let live = c.liveness(true);
    assert!(
        check_model_ses(
            &LostUpdate,
            &instance(None),
            ProbabilisticRoundRobin::new(0),
            &live,
            false
        )
        .unwrap()
        .is_none()
    );
}
