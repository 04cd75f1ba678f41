//! Coverage counts and reachability properties on a small machine model,
//! against an oracle written here: a breadth-first enumeration of every
//! reachable transition that classifies each step by looking at the
//! message itself, sharing no code with the runtime's coverage hooks; and
//! the searches' counting hooks on random systems against their BFS.

use hashbrown::{HashMap, HashSet};
use mcheck_checker::check::{check_coverage, replay_model};
use mcheck_checker::coverage::{CountedOver, Coverage, How, Status, reached_property};
use mcheck_checker::explorers::{RoundRobin, RunToCompletion};
use mcheck_checker::machine::{Ctx, MachineId, MachineModel, Machines, Receive, Setup, World};
use mcheck_checker::search::Strategy;
use mcheck_checker::testing::RandomProgram;
use mcheck_checker::{ActorId, Config, Enabled, Model, ModelInfo, Outcome, ParamSpec, Params, Program, Watch};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Two clients each send a request and a noise message to a server, the
/// second one then starts it; the server ignores noise, defers requests
/// until it has been started, and
/// answers each request; a client that gets its answer is done. With
/// `reply` off (the broken variant) the server never answers.
#[derive(Clone, Debug)]
struct Cfg {
    reply: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum M {
    Server { started: bool, served: u8 },
    Client { done: bool },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Msg {
    Start,
    Req(u32),
    Noise,
    Resp,
}

const SERVER: MachineId = MachineId(0);

impl MachineModel for Cfg {
    type Machine = M;
    type Msg = Msg;
    type Announce = ();
    type Monitor = ();

    fn setup(&self, s: &mut Setup<Self>) {
        s.create(M::Server {
            started: false,
            served: 0,
        });
        for _ in 0..2 {
            let c = s.create(M::Client { done: false });
            s.send(c, Msg::Start);
        }
    }

    fn kind(&self, m: &M) -> &'static str {
        match m {
            M::Server { .. } => "server",
            M::Client { .. } => "client",
        }
    }

    fn receive(&self, m: &M, msg: &Msg) -> Receive {
        match (m, msg) {
            (M::Server { .. }, Msg::Noise) => Receive::Ignore,
            (M::Server { started: false, .. }, Msg::Req(_)) => Receive::Defer,
            _ => Receive::Handle,
        }
    }

    fn handle(&self, m: &mut M, msg: &Msg, ctx: &mut Ctx<Self>) {
        match (m, msg) {
            (M::Server { started, .. }, Msg::Start) => *started = true,
            (M::Server { served, .. }, Msg::Req(from)) => {
                *served += 1;
                if self.reply {
                    ctx.send(MachineId(*from), Msg::Resp);
                }
            }
            (M::Client { .. }, Msg::Start) => {
                ctx.send(SERVER, Msg::Req(ctx.me().0));
                ctx.send(SERVER, Msg::Noise);
                if ctx.me().0 == 2 {
                    ctx.send(SERVER, Msg::Start);
                }
            }
            (M::Client { done }, Msg::Resp) => *done = true,
            _ => {}
        }
    }

    fn handlers(&self) -> Vec<(&'static str, &'static str)> {
        vec![
            ("client", "Resp"),
            ("client", "Start"),
            ("server", "Req"),
            ("server", "Start"),
        ]
    }

    fn sometimes(&self) -> Vec<&'static str> {
        vec!["both-served", "a-client-done"]
    }

    fn holds(&self, w: &World<Self>, property: usize) -> bool {
        match property {
            0 => matches!(w.machine(SERVER), M::Server { served: 2, .. }),
            1 => w.slots().iter().any(|s| s.machine == M::Client { done: true }),
            _ => false,
        }
    }
}

struct Toy(bool);

impl Model for Toy {
    type Program = Machines<Cfg>;
    fn info(&self) -> ModelInfo {
        ModelInfo::new("toy", "clients and a server").param(ParamSpec::new("n", 1, 1..=1, "unused"))
    }
    fn build(&self, _: &Params, _: Option<u32>) -> Machines<Cfg> {
        Machines(Cfg { reply: self.0 })
    }
}

fn kind_of(msg: &Msg) -> &'static str {
    match msg {
        Msg::Start => "Start",
        Msg::Req(_) => "Req",
        Msg::Noise => "Noise",
        Msg::Resp => "Resp",
    }
}

/// The oracle: every reachable state's every step, classified by the
/// message at the head of the receiver's queue (FIFO; requests are
/// passed over while the server has not started).
fn oracle(cfg: &Cfg) -> HashMap<(String, String, How), u64> {
    let p = Machines(cfg.clone());
    let mut seen = HashSet::new();
    let mut todo = vec![p.initial()];
    seen.insert(p.initial());
    let mut counts: HashMap<(String, String, How), u64> = HashMap::new();
    let mut en = Vec::new();
    while let Some(s) = todo.pop() {
        en.clear();
        p.enabled(&s, &mut en);
        for &Enabled { actor, alternatives } in &en {
            assert_eq!(alternatives, 1);
            let id = MachineId(actor.0);
            let m = s.machine(id);
            let kind = if matches!(m, M::Server { .. }) {
                "server"
            } else {
                "client"
            };
            let started = matches!(m, M::Server { started: true, .. } | M::Client { .. });
            for (_, msg) in s.inbox(id) {
                let how = match msg {
                    Msg::Req(_) if !started => How::Deferred,
                    Msg::Noise if kind == "server" => How::Ignored,
                    _ => How::Handled,
                };
                *counts.entry((kind.into(), kind_of(msg).into(), how)).or_insert(0) += 1;
                if how != How::Deferred {
                    break;
                }
            }
            let mut t = s.clone();
            p.execute(&mut t, actor, 0, &mut Vec::new()).unwrap();
            if seen.insert(t.clone()) {
                todo.push(t);
            }
        }
    }
    counts
}

fn counts(c: &Coverage) -> HashMap<(String, String, How), u64> {
    c.entries
        .iter()
        .filter(|e| e.count > 0)
        .map(|e| ((e.actor.clone(), e.item.clone(), e.how), e.count))
        .collect()
}

fn run(model: &Toy, strategy: Strategy, threads: usize) -> mcheck_checker::Report {
    let config = Config::default().threads(threads);
    let params = Params::defaults(&model.info().params);
    check_coverage(model, &params, None, &strategy, RunToCompletion::default(), &config).unwrap()
}

#[test]
fn exhaustive_counts_are_the_distinct_transitions_of_the_oracle() {
    for reply in [true, false] {
        let expected = oracle(&Cfg { reply });
        assert!(expected.contains_key(&("server".into(), "Req".into(), How::Deferred)));
        assert!(expected.contains_key(&("server".into(), "Noise".into(), How::Ignored)));
        for (strategy, threads) in [
            (Strategy::Ses, 1),
            (Strategy::Dfs, 1),
            (Strategy::Pb, 1),
            (Strategy::Ses, 3),
        ] {
            let r = run(&Toy(reply), strategy.clone(), threads);
            let c = r.coverage.as_ref().unwrap();
            assert_eq!(c.counted_over, CountedOver::DistinctTransitions);
            assert_eq!(counts(c), expected, "{} -j{threads}, reply {reply}", strategy.name());
        }
    }
}

#[test]
fn properties_are_reached_with_schedules_that_replay_to_them() {
    let model = Toy(true);
    for strategy in [Strategy::Ses, Strategy::Dfs, Strategy::Pb] {
        let r = run(&model, strategy, 1);
        assert_eq!(r.outcome, Outcome::Verified);
        let c = r.coverage.unwrap();
        assert_eq!(c.dead().count(), 0);
        let names: Vec<&str> = c.properties.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["both-served", "a-client-done"]);
        for p in &c.properties {
            assert_eq!(p.status, Status::Reached, "{}", p.name);
            let schedule = p.schedule.as_ref().unwrap();
            let explorer = schedule.explorer.as_ref().map(|_| RunToCompletion::default());
            let ex = replay_model(&model, explorer, schedule, false).unwrap();
            let found = ex.violation.unwrap();
            assert_eq!(reached_property(&found.violation), Some(p.name.as_str()));
            assert_eq!(Some(found.step + 1), p.steps);
        }
    }
    // The shortest ways there: both requests served after the server's
    // start, two requests and no noise (4 steps at least); a client done
    // after one more step, its answer.
    let r = run(&model, Strategy::Ses, 1);
    let steps: Vec<Option<usize>> = r.coverage.unwrap().properties.iter().map(|p| p.steps).collect();
    assert!(steps[0] >= Some(4) && steps[1] >= Some(3), "{steps:?}");
}

#[test]
fn the_broken_variant_has_a_dead_handler_and_an_unreached_property() {
    let r = run(&Toy(false), Strategy::Ses, 1);
    assert_eq!(r.outcome, Outcome::Unreached);
    assert!(r.notes.iter().any(|n| n.contains("a-client-done")), "{:?}", r.notes);
    let c = r.coverage.unwrap();
    let dead: Vec<(&str, &str)> = c.dead().map(|e| (e.actor.as_str(), e.item.as_str())).collect();
    assert_eq!(dead, [("client", "Resp")]);
    let status: Vec<Status> = c.properties.iter().map(|p| p.status).collect();
    assert_eq!(status, [Status::Reached, Status::Unreached]);
    assert!(
        c.text().contains("Handlers that never ran: client Resp"),
        "{}",
        c.text()
    );
    assert!(c.text().contains("a-client-done  UNREACHED"), "{}", c.text());
}

#[test]
fn sampling_counts_steps_and_reports_not_seen() {
    let config = Config::default().max_schedules(50).threads(1);
    let params = Params::defaults(&Toy(false).info().params);
    let r = check_coverage(
        &Toy(false),
        &params,
        None,
        &Strategy::Rs,
        RoundRobin::default(),
        &config,
    )
    .unwrap();
    assert_eq!(r.outcome, Outcome::Bounded);
    let c = r.coverage.unwrap();
    assert_eq!(c.counted_over, CountedOver::Executions);
    // Every execution starts both clients once.
    let started = c
        .entries
        .iter()
        .find(|e| e.actor == "client" && e.item == "Start")
        .unwrap();
    assert_eq!(started.count, 2 * r.schedules);
    let status: Vec<Status> = c.properties.iter().map(|p| p.status).collect();
    assert_eq!(status, [Status::Reached, Status::NotSeen]);
}

/// A watch that records what the search tells it (`Watch::transition`,
/// `Watch::state`) and how often it executes a step (`Watch::before`).
struct Told {
    transitions: Mutex<HashMap<(u32, u32, u32), u32>>,
    states: Mutex<HashMap<u32, u32>>,
    executions: AtomicU64,
}

impl Watch<u32> for Told {
    fn transition(&self, s: &u32, actor: ActorId, alt: u32) {
        *self.transitions.lock().unwrap().entry((*s, actor.0, alt)).or_insert(0) += 1;
    }
    fn state(&self, s: &u32) {
        *self.states.lock().unwrap().entry(*s).or_insert(0) += 1;
    }
    fn before(&self, _s: &u32, _actor: ActorId, _alt: u32) {
        self.executions.fetch_add(1, Ordering::Relaxed);
    }
}

/// Every exhaustive search, on one thread and on two, tells its watch of
/// each transition of the reachable graph once and of each reachable
/// state once, though its look-aheads, retirement's probes and resumed
/// entries execute transitions more often: on random systems, against a
/// breadth-first enumeration written here.
#[test]
fn searches_tell_each_transition_and_state_once() {
    let mut repeats = 0;
    for seed in 0..60u64 {
        let program = RandomProgram::generate(seed, false, false);
        let mut transitions = HashMap::new();
        let mut states = HashMap::from([(0u32, 1u32)]);
        let mut todo = vec![0u32];
        while let Some(s) = todo.pop() {
            for (a, targets) in program.succ[s as usize].iter().enumerate() {
                for (alt, &t) in targets.iter().enumerate() {
                    transitions.insert((s, a as u32, alt as u32), 1u32);
                    if states.insert(t, 1).is_none() {
                        todo.push(t);
                    }
                }
            }
        }
        for (name, threads) in [("ses-rr", 1), ("ses-rtc", 2), ("dfs", 1), ("pb", 1), ("pb", 2)] {
            let told = Told {
                transitions: Mutex::new(HashMap::new()),
                states: Mutex::new(HashMap::new()),
                executions: AtomicU64::new(0),
            };
            let config = Config::default().threads(threads);
            let watch = Some(&told as &dyn Watch<u32>);
            let rr = |strategy| mcheck_checker::run_watched(&program, watch, RoundRobin::default(), &strategy, &config);
            let r = match name {
                "ses-rr" => rr(Strategy::Ses),
                "ses-rtc" => {
                    mcheck_checker::run_watched(&program, watch, RunToCompletion::default(), &Strategy::Ses, &config)
                }
                "dfs" => rr(Strategy::Dfs),
                _ => rr(Strategy::Pb),
            }
            .unwrap();
            assert_eq!(r.outcome, Outcome::Verified, "seed {seed} {name} -j{threads}");
            let got = told.transitions.into_inner().unwrap();
            assert_eq!(got, transitions, "seed {seed} {name} -j{threads}");
            assert_eq!(
                told.states.into_inner().unwrap(),
                states,
                "seed {seed} {name} -j{threads}"
            );
            assert_eq!(r.transitions, transitions.len() as u64, "seed {seed} {name}");
            repeats += told.executions.into_inner().saturating_sub(r.transitions);
        }
    }
    // Not vacuous: the searches executed transitions again.
    assert!(repeats > 10_000, "{repeats} repeated executions");
}
