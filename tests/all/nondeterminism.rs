//! Replay detects hidden nondeterminism: a model whose behaviour depends on
//! a global (here flipped between the run and the replay) fails to replay
//! with the nondeterminism error and exit 2, never with a wrong trace.

use crate::common::Scratch;
use mcheck::machine::{Ctx, MachineId, MachineModel, Machines, Setup};
use mcheck::{Cause, Model, ModelInfo, Params, Registry, ReplayError, Schedule, builtin, main_with, replay_model};
use serde::{Deserialize, Serialize};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Hidden input: which way the pinger counts.
static FLIPPED: AtomicBool = AtomicBool::new(false);

#[derive(Clone, Copy, Debug, Default)]
struct Flaky;

#[derive(Clone, Debug, Default)]
struct Cfg;

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
enum M {
    Pinger { sent: u8 },
    Ponger { got: u8 },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
enum Msg {
    Go,
    Ping,
    Pong,
}

impl MachineModel for Cfg {
    type Machine = M;
    type Msg = Msg;
    type Announce = ();
    type Monitor = ();

    fn setup(&self, s: &mut Setup<Self>) {
        let a = s.create(M::Pinger { sent: 0 });
        let b = s.create(M::Ponger { got: 0 });
        s.send(a, Msg::Go);
        s.send(b, Msg::Go);
    }

    fn kind(&self, m: &M) -> &'static str {
        match m {
            M::Pinger { .. } => "pinger",
            M::Ponger { .. } => "ponger",
        }
    }

    fn handle(&self, m: &mut M, msg: &Msg, ctx: &mut Ctx<Self>) {
        match (m, msg) {
            (M::Pinger { sent }, Msg::Go | Msg::Pong) if *sent < 3 => {
                *sent += 1;
                // The hidden input decides whether to send one ping or two.
                let n = if FLIPPED.load(Ordering::Relaxed) { 2 } else { 1 };
                for _ in 0..n {
                    ctx.send(MachineId(1), Msg::Ping);
                }
            }
            (M::Ponger { got }, Msg::Ping) => {
                *got += 1;
                ctx.assert(*got < 3, || "ponger got three pings".into());
                ctx.send(MachineId(0), Msg::Pong);
            }
            _ => {}
        }
    }
}

impl Model for Flaky {
    type Program = Machines<Cfg>;
    fn info(&self) -> ModelInfo {
        ModelInfo::new("flaky", "a ping-pong whose behaviour depends on a global")
    }
    fn build(&self, _: &Params, _: Option<u32>) -> Machines<Cfg> {
        Machines(Cfg)
    }
}

fn run(args: &[&str]) -> ExitCode {
    main_with(&Registry::empty().with(Flaky), args.iter().map(|s| s.to_string()))
}

#[test]
fn a_nondeterministic_model_fails_to_replay_with_exit_2() {
    let scratch = Scratch::new("nd");
    let file = scratch.file("flaky.json");
    let file = file.to_str().unwrap();
    assert_eq!(run(&["run", "flaky", "-q", "--save", file]), ExitCode::from(1));
    // Same model, same digest: replays.
    assert_eq!(run(&["replay", file]), ExitCode::from(1));
    // Now the hidden input changes: the trail differs.
    FLIPPED.store(true, Ordering::Relaxed);
    assert_eq!(run(&["replay", file]), ExitCode::from(2));

    // The checker's error names the step and the cause.
    let schedule = Schedule::parse(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(schedule.explorer.as_deref(), Some("rtc"));
    let error = replay_model(&Flaky, builtin("rtc"), &schedule, true).unwrap_err();
    assert!(
        matches!(
            error,
            ReplayError::Diverged {
                cause: Cause::Nondeterministic,
                ..
            }
        ),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.starts_with("replay diverged at step "), "{message}");
    assert!(message.contains("the model is nondeterministic"), "{message}");
    FLIPPED.store(false, Ordering::Relaxed);
    assert!(replay_model(&Flaky, builtin("rtc"), &schedule, true).is_ok());
}
