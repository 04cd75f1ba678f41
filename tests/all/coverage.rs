//! `mcheck run --coverage`: the 2pc report lists every handler with a count
//! and every property with a schedule that `mcheck replay` replays to it;
//! a model whose reply is never sent shows a dead handler, an unreached
//! property, outcome `unreached` and exit status 3.

use crate::common::{Scratch, mcheck};

use mcheck::machine::{Ctx, MachineId, MachineModel, Machines, Setup, World};
use mcheck::{Model, ModelInfo, Params, Registry, main_with};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::process::ExitCode;

#[test]
fn twopc_lists_every_handler_and_every_property_replays() {
    let out = mcheck(&["run", "2pc", "-s", "ses", "--coverage", "--json", "-q"]);
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["outcome"], "verified");
    let c = &v["coverage"];
    assert_eq!(c["counted_over"], "distinct_transitions");
    let handled: Vec<String> = c["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["declared"] == true)
        .map(|e| {
            format!(
                "{} {} {}",
                e["actor"].as_str().unwrap(),
                e["item"].as_str().unwrap(),
                e["count"]
            )
        })
        .collect();
    let names: Vec<String> = handled
        .iter()
        .map(|h| h.rsplit_once(' ').unwrap().0.to_string())
        .collect();
    assert_eq!(
        names,
        [
            "client Go",
            "client Result",
            "client Value",
            "coordinator Timeout",
            "coordinator Vote",
            "coordinator Write",
            "participant Abort",
            "participant Apply",
            "participant Commit",
            "participant Prepare",
            "participant Read",
            "timer Cancel",
            "timer Start",
            "timer Tick"
        ]
    );
    assert!(handled.iter().all(|h| !h.ends_with(" 0")), "{handled:?}");
    let scratch = Scratch::new("coverage");
    let dir = scratch.dir();
    let props = c["properties"].as_array().unwrap();
    assert_eq!(props.len(), 3);
    for p in props {
        let name = p["name"].as_str().unwrap();
        assert_eq!(p["status"], "reached", "{name}");
        let file = dir.join(format!("{name}.json"));
        std::fs::write(&file, serde_json::to_string(&p["schedule"]).unwrap()).unwrap();
        let out = mcheck(&["replay", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{name}");
        let text = String::from_utf8(out.stdout).unwrap();
        let step = p["steps"].as_u64().unwrap() - 1;
        assert!(
            text.contains(&format!("Reachability property {name} holds after step {step}.")),
            "{text}"
        );
    }
}

/// A pinger whose ponger never answers: `Pong` is a dead handler and
/// "ponged" is unreached.
#[derive(Clone, Debug)]
pub(crate) struct Mute;

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) enum M {
    Pinger { ponged: bool },
    Ponger,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) enum Msg {
    Go,
    Ping,
    // Declared and handled but never sent: the dead handler the report
    // must show with count 0.
    #[allow(dead_code)]
    Pong,
}

impl MachineModel for Mute {
    type Machine = M;
    type Msg = Msg;
    type Announce = ();
    type Monitor = ();

    fn setup(&self, s: &mut Setup<Self>) {
        let p = s.create(M::Pinger { ponged: false });
        s.create(M::Ponger);
        s.send(p, Msg::Go);
    }

    fn kind(&self, m: &M) -> &'static str {
        match m {
            M::Pinger { .. } => "pinger",
            M::Ponger => "ponger",
        }
    }

    fn handle(&self, m: &mut M, msg: &Msg, ctx: &mut Ctx<Self>) {
        match (m, msg) {
            (M::Pinger { .. }, Msg::Go) => ctx.send(MachineId(1), Msg::Ping),
            (M::Pinger { ponged }, Msg::Pong) => *ponged = true,
            _ => {} // the ponger should answer here
        }
    }

    fn handlers(&self) -> Vec<(&'static str, &'static str)> {
        vec![("pinger", "Go"), ("pinger", "Pong"), ("ponger", "Ping")]
    }

    fn sometimes(&self) -> Vec<&'static str> {
        vec!["ponged"]
    }

    fn holds(&self, w: &World<Self>, _: usize) -> bool {
        w.slots().iter().any(|s| s.machine == M::Pinger { ponged: true })
    }
}

impl Model for Mute {
    type Program = Machines<Mute>;
    fn info(&self) -> ModelInfo {
        ModelInfo::new("mute", "a ping that is never answered")
    }
    fn build(&self, _: &Params, _: Option<u32>) -> Machines<Mute> {
        Machines(Mute)
    }
}

#[test]
fn a_dead_handler_and_an_unreached_property_exit_3() {
    let run = |args: &[&str]| main_with(&Registry::empty().with(Mute), args.iter().map(|s| s.to_string()));
    assert_eq!(run(&["run", "mute", "-q", "--coverage"]), ExitCode::from(3));
    assert_eq!(
        run(&["run", "mute", "-q", "--coverage", "-s", "dfs"]),
        ExitCode::from(3)
    );
    // Without --coverage nothing is checked beyond the monitors.
    assert_eq!(run(&["run", "mute", "-q"]), ExitCode::from(0));
    // Sampling never proves a property unreachable: not seen, exit 0.
    assert_eq!(
        run(&["run", "mute", "-q", "--coverage", "-s", "rs", "--max-schedules", "10"]),
        ExitCode::from(0)
    );
    let r = mcheck::check::check_coverage(
        &Mute,
        &Params::default(),
        None,
        &mcheck::Strategy::Ses,
        mcheck::explorers::RunToCompletion::default(),
        &mcheck::Config::default(),
    )
    .unwrap();
    assert_eq!(r.outcome, mcheck::Outcome::Unreached);
    let c = r.coverage.unwrap();
    let dead: Vec<String> = c
        .dead()
        .map(|e| format!("{} {} {}", e.actor, e.item, e.count))
        .collect();
    assert_eq!(dead, ["pinger Pong 0"]);
    assert_eq!(c.properties[0].status, mcheck::PropertyStatus::Unreached);
}

/// A distributed run does not count coverage, so `--coverage` there is an
/// error, not a flag silently ignored.
#[test]
fn coverage_with_a_distributed_run_is_an_error() {
    let o = mcheck(&["run", "2pc", "-s", "ses", "-q", "--coverage", "--workers", "2"]);
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--coverage does not apply to a distributed run (--workers, --processes, --hostfile)"),
        "{err}"
    );
}
