//! Replay checks the whole expectation (the violation's kind, machine,
//! message and step), with or without the trail, names what differs, and
//! blames an edited schedule on the edit, a changed model on the model;
//! unknown versions are rejected. On the shipped lost-update model (bug 1:
//! a monitor violation by `counter` that needs one delay under rtc).

use mcheck::models::lostupdate::LostUpdate;
use mcheck::{
    AnyExplorer, Cause, Config, Field, Model, ModelInfo, Params, ParseError, Progress, ReplayError, Schedule, Strategy,
    ViolationKind, builtin, check_model, replay_model,
};

fn rtc() -> Option<AnyExplorer> {
    builtin("rtc")
}

fn params() -> Params {
    Params::resolve("lostupdate", &LostUpdate.info().params, &[]).unwrap()
}

/// The counterexample as `mcheck run --save` would write it.
fn found() -> Schedule {
    let config = Config::default().progress(Progress::Off);
    let r = check_model(&LostUpdate, &params(), Some(1), &Strategy::Ses, rtc().unwrap(), &config).unwrap();
    let s = r.schedule.unwrap();
    let v = s.expected.as_ref().unwrap();
    assert_eq!(
        (v.kind, v.machine.as_deref()),
        (ViolationKind::Monitor, Some("counter"))
    );
    assert_eq!(s.expected_step, Some(r.violation.unwrap().step));
    assert!(!s.trail.is_empty() && !s.digest.is_empty());
    assert_eq!(s.is_edited(), Some(false));
    s
}

/// The replay's error, which must be a `NotReproduced`: (differs, cause, message).
fn not_reproduced(s: &Schedule) -> (Vec<Field>, Cause, String) {
    match replay_model(&LostUpdate, rtc(), s, false) {
        Err(ReplayError::NotReproduced(n)) => {
            let message = n.to_string();
            (n.differs, n.cause, message)
        }
        other => panic!("expected NotReproduced, got {other:?}"),
    }
}

#[test]
fn an_edited_expectation_names_what_differs_and_blames_the_edit() {
    let s = found();
    assert!(replay_model(&LostUpdate, rtc(), &s, false).is_ok());
    let step = s.expected_step.unwrap();
    let text = s.to_text();
    let (at, later) = (format!(":at={step}:"), format!(":at={}:", step + 1));
    // Edits of the text form, field by field.
    let edits = [
        (":v=monitor:", ":v=assertion:", Field::Kind, "kind differs"),
        (":by=counter:", ":by=client0:", Field::Machine, "machine differs"),
        (":msg=", ":msg=not+", Field::Message, "message differs"),
        (at.as_str(), later.as_str(), Field::Step, "step differs"),
    ];
    for (from, to, field, words) in edits {
        assert!(text.contains(from), "{text} lacks {from}");
        let edited: Schedule = text.replacen(from, to, 1).parse().unwrap();
        assert_eq!(edited.is_edited(), Some(true));
        let (differs, cause, message) = not_reproduced(&edited);
        assert_eq!((differs, cause), (vec![field], Cause::Edited), "{message}");
        assert!(message.contains(words) && message.contains("edited"), "{message}");
        assert!(!message.contains("nondeterministic"), "{message}");
    }
    // The same edit of the file form (which has the trail: it matches, the
    // expectation does not).
    let mut file = s.clone();
    file.expected.as_mut().unwrap().message.push('!');
    let (differs, cause, _) = not_reproduced(&file);
    assert_eq!((differs, cause), (vec![Field::Message], Cause::Edited));
    // Without its checksum (as a version 1 file), the cause is left open.
    file.checksum.clear();
    let (_, cause, message) = not_reproduced(&file);
    assert_eq!(
        cause,
        Cause::Undetermined {
            sealed: false,
            digest: true
        }
    );
    assert!(message.contains("either the schedule was edited"), "{message}");
}

#[test]
fn without_its_trail_the_expectation_is_still_checked() {
    let mut s = found();
    s.trail.clear();
    // The trail is not part of the checksum: removing it is no edit, and
    // the schedule still replays.
    assert_eq!(s.is_edited(), Some(false));
    assert!(replay_model(&LostUpdate, rtc(), &s, false).is_ok());
    // Without its delay, rtc runs every client to completion: no
    // violation; the schedule expects one, so the replay fails.
    assert_eq!(s.delays(), 1);
    s.path.clear();
    let (differs, cause, message) = not_reproduced(&s);
    assert_eq!(differs, vec![Field::Kind, Field::Machine, Field::Message, Field::Step]);
    assert_eq!(cause, Cause::Edited);
    assert!(message.contains("without the expected violation"), "{message}");
    // Through the JSON file form too.
    let json: Schedule = serde_json::to_string(&s).unwrap().parse().unwrap();
    assert_eq!(not_reproduced(&json).1, Cause::Edited);
}

/// Lost update, except that it always builds two clients whatever the
/// schedule says: the model changed under the schedule.
struct Changed;

impl Model for Changed {
    type Program = <LostUpdate as Model>::Program;
    fn info(&self) -> ModelInfo {
        LostUpdate.info()
    }
    fn build(&self, params: &Params, bug: Option<u32>) -> Self::Program {
        let mut p = params.clone();
        p.0.insert("clients".into(), 2);
        LostUpdate.build(&p, bug)
    }
}

#[test]
fn a_changed_model_is_blamed_on_the_model() {
    let s = found();
    assert_eq!(s.params.get("clients"), Some(&3));
    match replay_model(&Changed, rtc(), &s, false) {
        Err(e @ ReplayError::Diverged { .. }) => {
            let ReplayError::Diverged { step, cause, .. } = &e else {
                unreachable!()
            };
            assert_eq!((*step, *cause), (0, Cause::ModelChanged), "{e}");
            assert!(e.to_string().contains("the model changed"), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unknown_versions_are_rejected() {
    let s = found();
    let text = s.to_text();
    assert!(text.starts_with("mcheck2:lostupdate:"), "{text}");
    let e = text.replacen("mcheck2", "mcheck3", 1).parse::<Schedule>().unwrap_err();
    assert_eq!(
        e,
        ParseError::UnsupportedVersion {
            found: "mcheck3".into()
        }
    );
    let mut json: serde_json::Value = serde_json::to_value(&s).unwrap();
    assert_eq!(json["version"], 2);
    for bad in [serde_json::json!(3), serde_json::json!(0), serde_json::json!("2")] {
        json["version"] = bad.clone();
        let e = json.to_string().parse::<Schedule>().unwrap_err();
        assert_eq!(
            e,
            ParseError::UnsupportedVersion {
                found: format!("version {bad}")
            }
        );
        assert!(e.to_string().contains("not supported"), "{e}");
    }
    // Version 1 files (no expected step, no checksum) still replay.
    json["version"] = 1.into();
    json.as_object_mut().unwrap().remove("expected_step");
    json.as_object_mut().unwrap().remove("checksum");
    let v1: Schedule = json.to_string().parse().unwrap();
    assert_eq!((v1.version, v1.is_edited()), (2, None));
    assert!(replay_model(&LostUpdate, rtc(), &v1, false).is_ok());
}
