//! The exhaustive liveness check against an independent oracle on random
//! transition systems with hot states, and the lasso and temperature
//! machinery on small hand-made programs.

use mcheck_checker::liveness::{Liveness, Temperature, check, replay_lasso};
use mcheck_checker::search::exec::{End, choice_at};
use mcheck_checker::testing::RandomProgram;
use mcheck_checker::{
    ActorId, ActorInfo, Config, Enabled, Event, Hot, Monitors, Program, Schedule, Strategy, Violation, ViolationKind,
};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::{BTreeSet, VecDeque};

/// A random system whose states are hot at random.
struct HotProgram {
    inner: RandomProgram,
    hot: Vec<bool>,
}

impl HotProgram {
    fn generate(seed: u64) -> HotProgram {
        let inner = RandomProgram::generate(seed, false, false);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x5eed);
        let p = rng.random_range(0.05..0.6);
        let hot = (0..inner.states).map(|_| rng.random_bool(p)).collect();
        HotProgram { inner, hot }
    }

    /// (target, actor) of every transition of `s`, in choice order.
    fn edges(&self, s: u32) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        for (a, targets) in self.inner.succ[s as usize].iter().enumerate() {
            out.extend(targets.iter().map(|&t| (t, a as u32)));
        }
        out
    }

    /// The oracle: is a fair hot cycle or a terminal hot state reachable?
    /// Builds the reachable set breadth first, then for every reachable
    /// hot state its component in the hot subgraph by mutual reachability
    /// (two searches per state; no Tarjan), and applies weak fairness to it.
    fn oracle(&self) -> bool {
        let reachable = self.inner.oracle().reachable;
        let reach_hot = |from: u32| {
            let mut seen = BTreeSet::from([from]);
            let mut queue = VecDeque::from([from]);
            while let Some(s) = queue.pop_front() {
                for (t, _) in self.edges(s) {
                    if self.hot[t as usize] && seen.insert(t) {
                        queue.push_back(t);
                    }
                }
            }
            seen
        };
        let mut states: Vec<u32> = reachable.iter().copied().filter(|&s| self.hot[s as usize]).collect();
        states.sort_unstable();
        for &s in &states {
            if self.edges(s).is_empty() {
                return true;
            }
            let forward = reach_hot(s);
            let comp: BTreeSet<u32> = forward.iter().copied().filter(|&t| reach_hot(t).contains(&s)).collect();
            let inner_edges: Vec<(u32, u32)> = comp
                .iter()
                .flat_map(|&u| self.edges(u))
                .filter(|(t, _)| comp.contains(t))
                .collect();
            if inner_edges.is_empty() {
                continue;
            }
            let fair = (0..self.inner.actors).all(|a| {
                let always = comp
                    .iter()
                    .all(|&u| !self.inner.succ[u as usize][a as usize].is_empty());
                !always || inner_edges.iter().any(|&(_, b)| b == a)
            });
            if fair {
                return true;
            }
        }
        false
    }
}

impl Program for HotProgram {
    type State = u32;
    fn initial(&self) -> u32 {
        0
    }
    fn actors(&self, s: &u32) -> Vec<ActorInfo> {
        self.inner.actors(s)
    }
    fn enabled(&self, s: &u32, out: &mut Vec<Enabled>) {
        self.inner.enabled(s, out)
    }
    fn execute(&self, s: &mut u32, actor: ActorId, alt: u32, events: &mut Vec<Event>) -> Result<(), Violation> {
        self.inner.execute(s, actor, alt, events)
    }
    fn liveness(&self) -> Option<&dyn Monitors<u32>> {
        Some(self)
    }
}

impl Monitors<u32> for HotProgram {
    fn hot(&self, s: &u32) -> bool {
        self.hot[*s as usize]
    }
    fn owed(&self, s: &u32) -> Option<Hot> {
        self.hot[*s as usize].then(|| Hot {
            monitor: "owed".into(),
            owed: format!("state {s} is hot"),
        })
    }
}

/// Walk a lasso over the successor table, independently of the engine:
/// the states before each step of the cycle.
fn walk(p: &HotProgram, schedule: &Schedule) -> (Vec<u32>, Vec<u32>, u32) {
    let mut s = 0u32;
    let mut en = Vec::new();
    let mut step = |s: &mut u32, c: u64| {
        en.clear();
        p.enabled(s, &mut en);
        let (a, alt) = choice_at(&en, c).expect("a choice of the state");
        *s = p.inner.succ[*s as usize][a.0 as usize][alt as usize];
        a.0
    };
    for &c in &schedule.path {
        step(&mut s, c);
    }
    let entry = s;
    let (mut states, mut actors) = (Vec::new(), Vec::new());
    for &c in &schedule.cycle {
        states.push(s);
        actors.push(step(&mut s, c));
    }
    assert_eq!(s, entry, "the cycle returns to its entry");
    (states, actors, entry)
}

#[test]
fn exhaustive_liveness_agrees_with_the_scc_oracle_on_1000_random_systems() {
    let (mut violated, mut held, mut unfair_only) = (0, 0, 0);
    for seed in 0..1000u64 {
        let p = HotProgram::generate(seed);
        let want = p.oracle();
        match check(&p, &Config::default()) {
            Liveness::Holds(stats) => {
                assert!(!want, "seed {seed}: the oracle finds a violation, the check none");
                assert_eq!(stats.states, p.inner.oracle().reachable.len() as u64, "seed {seed}");
                // Is there a hot cycle that only fairness rules out?
                let mut all_fair = HotProgram::generate(seed);
                all_fair.inner.actors = 0;
                if all_fair.oracle() {
                    unfair_only += 1;
                }
                held += 1;
            }
            Liveness::Violated(found, schedule, _) => {
                assert!(want, "seed {seed}: the check reports {found:?}, the oracle nothing");
                assert_eq!(found.violation.kind, ViolationKind::Liveness);
                assert_eq!(found.step, schedule.path.len());
                let (states, actors, entry) = walk(&p, &schedule);
                assert!(p.hot[entry as usize]);
                if schedule.cycle.is_empty() {
                    assert!(p.edges(entry).is_empty(), "seed {seed}: a lasso without a cycle ends");
                } else {
                    assert!(
                        states.iter().all(|&s| p.hot[s as usize]),
                        "seed {seed}: the cycle stays hot"
                    );
                    for a in 0..p.inner.actors {
                        let always = states.iter().all(|&s| !p.inner.succ[s as usize][a as usize].is_empty());
                        assert!(
                            !always || actors.contains(&a),
                            "seed {seed}: the cycle starves actor {a}"
                        );
                    }
                }
                let ex = replay_lasso(&p, &schedule, false);
                assert_eq!(ex.end, End::Violation, "seed {seed}");
                violated += 1;
            }
            Liveness::Bounded(by) => panic!("seed {seed}: bounded by {by:?}"),
        }
    }
    assert_eq!(violated + held, 1000);
    eprintln!("{violated} violated, {held} held, {unfair_only} decided by fairness");
    // Pinned: both answers are common, and fairness alone decides some.
    assert_eq!((violated, held, unfair_only), (782, 218, 52));
}

/// A server (actor 0) that waits for a request from a client (actor 1),
/// which sends it and then may retry forever (`retries`) instead of
/// letting the server answer; the request is owed from the send to the
/// answer. State: (sent, answered, retries made mod 2).
struct Retry {
    fair_server: bool,
}

impl Program for Retry {
    type State = (bool, bool, u8);
    fn initial(&self) -> Self::State {
        (false, false, 0)
    }
    fn actors(&self, _s: &Self::State) -> Vec<ActorInfo> {
        ["server", "client"]
            .iter()
            .enumerate()
            .map(|(i, k)| ActorInfo {
                id: ActorId(i as u32),
                kind: k,
                name: k.to_string(),
            })
            .collect()
    }
    fn enabled(&self, s: &Self::State, out: &mut Vec<Enabled>) {
        let (sent, answered, _) = *s;
        // The server answers a sent request; with !fair_server it never does.
        if sent && !answered && self.fair_server {
            out.push(Enabled {
                actor: ActorId(0),
                alternatives: 1,
            });
        }
        if !answered {
            out.push(Enabled {
                actor: ActorId(1),
                alternatives: 1,
            });
        }
    }
    fn execute(&self, s: &mut Self::State, actor: ActorId, _alt: u32, _e: &mut Vec<Event>) -> Result<(), Violation> {
        match actor.0 {
            0 => s.1 = true,
            _ if !s.0 => s.0 = true,
            _ => s.2 ^= 1,
        }
        Ok(())
    }
    fn liveness(&self) -> Option<&dyn Monitors<Self::State>> {
        Some(self)
    }
}

impl Monitors<(bool, bool, u8)> for Retry {
    fn hot(&self, s: &(bool, bool, u8)) -> bool {
        s.0 && !s.1
    }
    fn owed(&self, s: &(bool, bool, u8)) -> Option<Hot> {
        self.hot(s).then(|| Hot {
            monitor: "answer".into(),
            owed: "the request is not answered".into(),
        })
    }
}

#[test]
fn a_starved_server_is_no_violation_a_missing_one_is() {
    let config = Config::default().liveness(true);
    // The client's retries form a hot cycle, but the server is enabled
    // throughout and never runs in it: unfair, so no violation.
    let fair = Retry { fair_server: true };
    let report = mcheck_checker::run(
        &fair,
        mcheck_checker::testing::Causal::default(),
        &Strategy::Dfs,
        &config,
    )
    .unwrap();
    assert!(report.is_verified(), "{report:?}");
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.starts_with("liveness: 5 states (2 hot), 5 transitions")),
        "{:?}",
        report.notes
    );
    // Without a server the retries are a fair hot cycle.
    let broken = Retry { fair_server: false };
    for strategy in [Strategy::Dfs, Strategy::Ses, Strategy::Pb] {
        let report =
            mcheck_checker::run(&broken, mcheck_checker::testing::Causal::default(), &strategy, &config).unwrap();
        let found = report.violation.clone().expect("a liveness violation");
        assert_eq!(found.violation.kind, ViolationKind::Liveness);
        assert_eq!(found.violation.machine.as_deref(), Some("answer"));
        let schedule = report.schedule.clone().unwrap();
        assert_eq!((schedule.path.clone(), schedule.cycle.clone()), (vec![0], vec![0, 0]));
        let text = schedule.to_text();
        assert!(text.contains(":c=0:cyc=0.0:sum="), "{text}");
        let back = Schedule::parse(&text).unwrap();
        assert_eq!((back.to_text(), back.is_edited()), (text, Some(false)));
        let ex = mcheck_checker::replay(&broken, None::<mcheck_checker::testing::Causal>, &back, true).unwrap();
        assert_eq!(ex.violation.unwrap().step, 1);
        // A cycle that does not return is refused.
        let mut bad = back.clone();
        bad.cycle = vec![0];
        assert!(mcheck_checker::replay(&broken, None::<mcheck_checker::testing::Causal>, &bad, false).is_err());
    }
    // Sampling: the walk reaches max-steps 40 hot for its last 40 steps,
    // over the threshold 20 (half of 40): a possible violation.
    let sampling = Config::default().liveness(true).max_steps(40).max_schedules(5);
    assert_eq!(sampling.temperature_threshold(), 20);
    let report = mcheck_checker::run(
        &broken,
        mcheck_checker::testing::Causal::default(),
        &Strategy::Rs,
        &sampling,
    )
    .unwrap();
    let found = report.violation.clone().expect("a possible liveness violation");
    assert_eq!(found.violation.kind, ViolationKind::PossibleLiveness);
    assert_eq!(found.step, 39);
    assert!(
        found.violation.message.contains("hot for its last 40 steps"),
        "{}",
        found.violation.message
    );
    let schedule = report.schedule.unwrap();
    mcheck_checker::replay(&broken, None::<mcheck_checker::testing::Causal>, &schedule, false).unwrap();
    // Above the threshold only: 40 hot steps are not more than 40.
    let cool = sampling.temperature(40);
    let report = mcheck_checker::run(
        &broken,
        mcheck_checker::testing::Causal::default(),
        &Strategy::Rs,
        &cool,
    )
    .unwrap();
    assert!(report.violation.is_none());
    let _ = Temperature::new(&broken, 40, 0, false);
}
