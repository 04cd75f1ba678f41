//! POS and PCTCP: the hit rate on a hand-made message-passing program
//! equals the probability computed by enumerating every random choice of
//! the algorithm (an implementation written here from the algorithms'
//! descriptions, sharing no code with the drivers); the same seed gives the
//! same report on 1 and 2 threads; lostupdate's seeded bug is found and its
//! counterexample replays; planted violations of random programs are found
//! only when reachable.

use crate::{assert_binomial, default_program};
use mcheck_checker::search::{self, Strategy};
use mcheck_checker::testing::RandomProgram;
use mcheck_checker::{
    ActorId, ActorInfo, Config, Enabled, Event, Model, Outcome, PathKind, Program, Report, Violation, replay,
};
use mcheck_models::lostupdate::LostUpdate;
use std::time::Duration;

/// Choice-path replay needs no explorer; this type only names `None`.
type NoExplorer = mcheck_checker::AnyExplorer;

// ---------------------------------------------------------------------------
// The hand-made program: a starter Z sends Go to A and B; A, on Go, sends A1
// to the server S and Next to itself, and on Next sends A2 to S; B, on Go,
// sends B to S. The bug: S delivers B between A1 and A2 (an atomicity
// violation). Every step has one alternative; 7 steps at most.

const Z: u32 = 0;
const A: u32 = 1;
const B: u32 = 2;
const S: u32 = 3;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Msg {
    Go,
    Next,
    A1,
    A2,
    B,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
struct St {
    started: bool,
    inbox: [Vec<Msg>; 4],
    /// Whether S has delivered A1, A2.
    seen: (bool, bool),
}

/// What actor `a` sends when it handles `m` (None: the starter's step), in
/// the order of the step's events.
fn sends(a: u32, m: Option<Msg>) -> Vec<(u32, Msg)> {
    match (a, m) {
        (Z, None) => vec![(A, Msg::Go), (B, Msg::Go)],
        (A, Some(Msg::Go)) => vec![(S, Msg::A1), (A, Msg::Next)],
        (A, Some(Msg::Next)) => vec![(S, Msg::A2)],
        (B, Some(Msg::Go)) => vec![(S, Msg::B)],
        _ => vec![],
    }
}

/// S delivers `m` having seen `seen` (A1, A2): whether it is the bug, and
/// what S has seen after it.
fn at_server(m: Msg, seen: &mut (bool, bool)) -> bool {
    if m == Msg::B && seen.0 && !seen.1 {
        return true;
    }
    seen.0 |= m == Msg::A1;
    seen.1 |= m == Msg::A2;
    false
}

struct Atomicity;

impl Program for Atomicity {
    type State = St;
    fn initial(&self) -> St {
        St::default()
    }
    fn actors(&self, _: &St) -> Vec<ActorInfo> {
        ["z", "a", "b", "s"]
            .iter()
            .enumerate()
            .map(|(i, n)| ActorInfo {
                id: ActorId(i as u32),
                kind: n,
                name: n.to_string(),
            })
            .collect()
    }
    fn enabled(&self, s: &St, out: &mut Vec<Enabled>) {
        for a in 0..4u32 {
            let on = if a == Z {
                !s.started
            } else {
                !s.inbox[a as usize].is_empty()
            };
            if on {
                out.push(Enabled {
                    actor: ActorId(a),
                    alternatives: 1,
                });
            }
        }
    }
    fn execute(&self, s: &mut St, actor: ActorId, _alt: u32, events: &mut Vec<Event>) -> Result<(), Violation> {
        let a = actor.0;
        let m = if a == Z {
            s.started = true;
            None
        } else {
            Some(s.inbox[a as usize].remove(0))
        };
        if a == S && at_server(m.unwrap(), &mut s.seen) {
            return Err(Violation::invariant("B delivered between A1 and A2"));
        }
        for (to, msg) in sends(a, m) {
            s.inbox[to as usize].push(msg);
            events.push(Event::Sent {
                from: actor,
                to: ActorId(to),
            });
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// The oracle: the exact probability of the bug under each algorithm, by
// enumerating the algorithm's random choices. A priority is a draw of an
// i.i.d. continuous value; only the relative order of the draws matters, and
// a new draw falls with equal probability into each of the n + 1 gaps
// between the n values drawn before it. So a draw is a choice among n + 1,
// and a change point a choice among k. `Choices` replays a prefix of
// choices and asks for one more when the prefix runs out; `exact` walks the
// whole tree.

/// A run of the algorithm that needs one more choice among `n`.
struct NeedMore(u64);

struct Choices<'a> {
    prefix: &'a [u64],
    used: usize,
    /// Every value drawn so far, lowest first (value ids).
    order: Vec<usize>,
}

impl Choices<'_> {
    fn pick(&mut self, n: u64) -> Result<u64, NeedMore> {
        let c = *self.prefix.get(self.used).ok_or(NeedMore(n))?;
        self.used += 1;
        Ok(c)
    }
    /// A new value, placed among the earlier ones.
    fn draw(&mut self) -> Result<usize, NeedMore> {
        let gap = self.pick(self.order.len() as u64 + 1)? as usize;
        let id = self.order.len();
        self.order.insert(gap, id);
        Ok(id)
    }
    fn rank(&self, id: usize) -> usize {
        self.order.iter().position(|&x| x == id).unwrap()
    }
}

/// The probability that `run` returns true, over all its choices.
fn exact(run: impl Fn(&mut Choices) -> Result<bool, NeedMore>) -> f64 {
    fn walk(prefix: &mut Vec<u64>, weight: f64, run: &dyn Fn(&mut Choices) -> Result<bool, NeedMore>) -> f64 {
        let mut c = Choices {
            prefix,
            used: 0,
            order: Vec::new(),
        };
        match run(&mut c) {
            Ok(hit) => f64::from(u8::from(hit)) * weight,
            Err(NeedMore(n)) => (0..n)
                .map(|x| {
                    prefix.push(x);
                    let p = walk(prefix, weight / n as f64, run);
                    prefix.pop();
                    p
                })
                .sum(),
        }
    }
    walk(&mut Vec::new(), 1.0, &run)
}

/// A message in flight in the oracle: sender, message, and the algorithm's
/// value (POS: a priority draw; PCTCP: a chain).
type Flying = (u32, Msg, usize);

/// The program's semantics for the oracles: the enabled actors, and the
/// step of `a` delivering `m` (None: the starter). `Err(())`: the bug.
fn enabled(started: bool, q: &[Vec<Flying>; 4]) -> Vec<u32> {
    (0..4u32)
        .filter(|&a| if a == Z { !started } else { !q[a as usize].is_empty() })
        .collect()
}

/// POS, one execution: every message has a priority drawn when it is sent;
/// the starter's step has its own; after S (or anyone) delivers a message
/// from sender x, its other pending messages from senders other than x get
/// fresh priorities. True when the bug is hit.
fn pos_run(c: &mut Choices) -> Result<bool, NeedMore> {
    pos_or_uniform(c, true)
}

/// For contrast: a uniform choice among the enabled actors at every step.
fn uniform_actor_run(c: &mut Choices) -> Result<bool, NeedMore> {
    pos_or_uniform(c, false)
}

/// One execution under POS (`pos`) or under a uniform choice among the
/// enabled actors (then priorities are neither drawn nor used).
fn pos_or_uniform(c: &mut Choices, pos: bool) -> Result<bool, NeedMore> {
    let mut q: [Vec<Flying>; 4] = Default::default();
    let mut started = false;
    let mut seen = (false, false);
    loop {
        let en = enabled(started, &q);
        if en.is_empty() {
            return Ok(false);
        }
        let a = if !pos {
            en[c.pick(en.len() as u64)? as usize]
        } else if started {
            *en.iter().max_by_key(|&&a| c.rank(q[a as usize][0].2)).unwrap()
        } else {
            // The starter is enabled alone (first step), with a priority
            // of its own.
            c.draw()?;
            Z
        };
        let m = if a == Z {
            started = true;
            None
        } else {
            let (from, m, _) = q[a as usize].remove(0);
            if pos {
                for x in q[a as usize].iter_mut().filter(|x| x.0 != from) {
                    x.2 = c.draw()?;
                }
            }
            Some(m)
        };
        if a == S && at_server(m.unwrap(), &mut seen) {
            return Ok(true);
        }
        for (to, msg) in sends(a, m) {
            let p = if pos { c.draw()? } else { 0 };
            q[to as usize].push((a, msg, p));
        }
    }
}

/// PCTCP, one execution, bug depth `depth`, change points in [1, k]: the
/// starter's step is its own chain; a message sent by a step that delivered
/// a message continues a chain whose last message was delivered to the
/// sender (the most recently delivered first), else it starts a new chain;
/// each new chain's priority is a draw; at the j-th change point the chain
/// about to run is demoted to j, below every undemoted chain.
fn pctcp_run(c: &mut Choices, depth: u32, k: u64) -> Result<bool, NeedMore> {
    let mut changes = Vec::new();
    for _ in 1..depth {
        changes.push(c.pick(k)? + 1);
    }
    changes.sort_unstable();
    // Chain priorities: (demoted to j, or 0 and the draw's rank); compared
    // as (undemoted first, then rank or j).
    let mut chains: Vec<(u64, usize)> = Vec::new();
    let new_chain = |c: &mut Choices, chains: &mut Vec<(u64, usize)>| -> Result<usize, NeedMore> {
        let d = c.draw()?;
        chains.push((0, d));
        Ok(chains.len() - 1)
    };
    let key = |c: &Choices, chains: &[(u64, usize)], ch: usize| match chains[ch] {
        (0, d) => (1, c.rank(d)),
        (j, _) => (0, j as usize),
    };
    let mut q: [Vec<Flying>; 4] = Default::default();
    let mut open: [Vec<usize>; 4] = Default::default();
    let mut started = false;
    let starter = new_chain(c, &mut chains)?;
    let mut seen = (false, false);
    let mut next_change = 0;
    for step in 1u64.. {
        let en = enabled(started, &q);
        if en.is_empty() {
            return Ok(false);
        }
        let chain_of = |a: u32, q: &[Vec<Flying>; 4]| if a == Z { starter } else { q[a as usize][0].2 };
        let top = |chains: &[(u64, usize)], q: &[Vec<Flying>; 4]| {
            // Highest key; ties to the lowest id.
            let mut best = en[0];
            for &a in &en[1..] {
                if key(c, chains, chain_of(a, q)) > key(c, chains, chain_of(best, q)) {
                    best = a;
                }
            }
            best
        };
        let mut a = top(&chains, &q);
        while next_change < changes.len() && changes[next_change] == step {
            next_change += 1;
            chains[chain_of(a, &q)].0 = next_change as u64;
            a = top(&chains, &q);
        }
        let m = if a == Z {
            started = true;
            None
        } else {
            let (_, m, ch) = q[a as usize].remove(0);
            open[a as usize].push(ch);
            Some(m)
        };
        if a == S && at_server(m.unwrap(), &mut seen) {
            return Ok(true);
        }
        for (to, msg) in sends(a, m) {
            let ch = match open[a as usize].pop() {
                Some(ch) => ch,
                None => new_chain(c, &mut chains)?,
            };
            q[to as usize].push((a, msg, ch));
        }
    }
    unreachable!()
}

// ---------------------------------------------------------------------------

fn one_execution(seed: u64, threads: usize) -> Config {
    Config::default()
        .seed(seed)
        .threads(threads)
        .max_schedules(1)
        .time_limit(Duration::from_secs(60))
}

/// Runs of `strategy` on seeds `0..n`, one execution each: how many hit the
/// bug.
fn hits(n: u64, strategy: impl Fn(&Config) -> Report) -> u64 {
    (0..n)
        .map(|seed| {
            let r = strategy(&one_execution(seed, 1));
            assert_eq!(r.schedules, 1);
            u64::from(r.outcome == Outcome::Violation)
        })
        .sum()
}

const RUNS: u64 = 2000;

#[test]
fn pos_hit_rate_matches_the_enumeration() {
    let p = exact(pos_run);
    // The bug needs A1 delivered, then B, then A2: neither certain nor
    // impossible, and not what a uniform choice among actors gives.
    assert!(p > 0.05 && p < 0.95, "{p}");
    let uniform = exact(uniform_actor_run);
    assert!((p - uniform).abs() > 0.02, "pos {p}, uniform {uniform}");
    let h = hits(RUNS, |c| search::pos(&Atomicity, c).unwrap());
    assert_binomial(h, RUNS, p, "pos");
    assert_eq!((h, format!("{p:.6}")), (POS_HITS, POS_P.to_string()));
}

#[test]
fn pctcp_hit_rate_matches_the_enumeration() {
    for (depth, k, pinned_hits, pinned_p) in PCTCP_PINNED {
        let p = exact(|c| pctcp_run(c, depth, k));
        assert!(p > 0.02 && p < 0.98, "depth {depth}: {p}");
        let h = hits(RUNS, |c| search::pctcp(&Atomicity, c, depth, Some(k)).unwrap());
        assert_binomial(h, RUNS, p, &format!("pctcp depth {depth}"));
        assert_eq!(
            (h, format!("{p:.6}")),
            (pinned_hits, pinned_p.to_string()),
            "depth {depth}"
        );
    }
}

/// The bug needs B's Go delivered after A's Go and before A's Next (S
/// delivers in the order of the sends: A1, B, A2). Under POS the first
/// step is the starter's; then A's Go must beat B's Go, and B's Go (which
/// keeps its priority: nothing it races with ran) must beat Next's fresh
/// priority; S's steps do not touch A's or B's priorities. So the bug is
/// the order Next < Go_B < Go_A of three i.i.d. draws: 1/6. A uniform
/// choice among actors needs A first (1/2), then B before A's Next (1/2,
/// whatever S does): 1/4.
#[test]
fn pos_probability_by_hand() {
    assert!((exact(pos_run) - 1.0 / 6.0).abs() < 1e-12);
    assert!((exact(uniform_actor_run) - 0.25).abs() < 1e-12);
}

/// POS's hits on seeds 0..RUNS and its exact probability (1/6: see
/// `pos_probability_by_hand`).
const POS_HITS: u64 = 321;
const POS_P: &str = "0.166667";
/// PCTCP's (depth, k, hits on seeds 0..RUNS, exact probability).
const PCTCP_PINNED: [(u32, u64, u64, &str); 2] = [(2, 7, 319, "0.166667"), (3, 7, 326, "0.159864")];

// ---------------------------------------------------------------------------

/// Both strategies with PCT's default depth.
fn strategies() -> [Strategy; 2] {
    [Strategy::Pos, Strategy::Pctcp { depth: 3, steps: None }]
}

fn run<P: Program>(p: &P, s: &Strategy, c: &Config) -> Report {
    match s {
        Strategy::Pos => search::pos(p, c),
        Strategy::Pctcp { depth, steps } => search::pctcp(p, c, *depth, *steps),
        other => panic!("not pos or pctcp: {}", other.name()),
    }
    .unwrap()
}

fn lostupdate(bug: Option<u32>) -> <LostUpdate as Model>::Program {
    default_program(&LostUpdate, bug)
}

/// What must not depend on the number of threads or shards.
fn summary(r: &Report) -> (Outcome, u64, u64, u64, Option<Vec<u64>>) {
    let path = r.schedule.as_ref().map(|s| s.path.clone());
    (r.outcome, r.schedules, r.steps, r.truncated, path)
}

/// Same seed, same report on 1 and 2 threads: the bug's counterexample
/// and every count before it, and the counts of a run that finds nothing.
#[test]
fn same_report_on_one_and_two_threads() {
    let buggy = lostupdate(Some(1));
    let correct = lostupdate(None);
    for s in strategies() {
        for seed in [0, 7] {
            let c = |threads| {
                Config::default()
                    .seed(seed)
                    .threads(threads)
                    .time_limit(Duration::from_secs(60))
            };
            let one = run(&buggy, &s, &c(1));
            assert_eq!(one.outcome, Outcome::Violation, "{} seed {seed}", s.name());
            assert_eq!(
                summary(&one),
                summary(&run(&buggy, &s, &c(2))),
                "{} seed {seed}",
                s.name()
            );
            let budget = |threads| c(threads).max_schedules(300);
            let one = run(&correct, &s, &budget(1));
            assert_eq!((one.outcome, one.schedules), (Outcome::Bounded, 300));
            assert_eq!(summary(&one), summary(&run(&correct, &s, &budget(2))), "{}", s.name());
        }
    }
}

/// Two shards run exactly the executions of one unsharded run: their
/// schedules and steps add up to its own.
#[test]
fn shards_partition_the_executions() {
    let p = lostupdate(None);
    for s in strategies() {
        let c = Config::default()
            .seed(3)
            .threads(2)
            .max_schedules(200)
            .time_limit(Duration::from_secs(60));
        let whole = run(&p, &s, &c);
        let parts: Vec<Report> = (0..2).map(|k| run(&p, &s, &c.clone().shard(k, 2))).collect();
        assert_eq!(
            parts.iter().map(|r| r.schedules).sum::<u64>(),
            whole.schedules,
            "{}",
            s.name()
        );
        assert_eq!(parts.iter().map(|r| r.steps).sum::<u64>(), whole.steps, "{}", s.name());
    }
}

/// Lostupdate's seeded bug at the default configuration: the schedules to
/// find it for seeds 0..5 (pinned), and every counterexample replays to
/// the same violation.
#[test]
fn lostupdate_bug_found_and_replayed() {
    let p = lostupdate(Some(1));
    for (s, pinned) in strategies().iter().zip(LOSTUPDATE_SCHEDULES) {
        let mut counts = Vec::new();
        for seed in 0..5 {
            let c = Config::default()
                .seed(seed)
                .threads(2)
                .time_limit(Duration::from_secs(60));
            let r = run(&p, s, &c);
            assert_eq!(r.outcome, Outcome::Violation, "{} seed {seed}", s.name());
            let schedule = r.schedule.as_ref().unwrap();
            assert_eq!(schedule.kind, PathKind::Choices);
            let ex = replay(&p, None::<NoExplorer>, schedule, false).unwrap();
            let found = r.violation.as_ref().unwrap();
            assert_eq!(ex.violation.as_ref(), Some(found), "{} seed {seed}", s.name());
            counts.push(r.schedules);
        }
        assert_eq!(counts, pinned, "{}", s.name());
    }
}

const LOSTUPDATE_SCHEDULES: [[u64; 5]; 2] = [[1; 5], [1, 1, 1, 2, 1]];

/// On random transition systems (plain programs: no message events, the
/// documented fallbacks) a planted violation is found only when it is
/// reachable, and its counterexample replays.
#[test]
fn random_programs_found_only_when_reachable_and_replayed() {
    let mut found = [0u32; 2];
    let mut reachable = 0;
    for seed in 0..100 {
        let p = RandomProgram::generate(seed, false, true);
        let oracle = p.oracle();
        reachable += u32::from(oracle.violation_reachable);
        for (k, s) in strategies().iter().enumerate() {
            let c = Config::default()
                .max_schedules(3000)
                .max_steps(200)
                .time_limit(Duration::from_secs(30));
            let r = run(&p, s, &c);
            if r.outcome != Outcome::Violation {
                assert_eq!(r.outcome, Outcome::Bounded, "seed {seed} {}", s.name());
                continue;
            }
            assert!(
                oracle.violation_reachable,
                "seed {seed} {}: unreachable violation",
                s.name()
            );
            found[k] += 1;
            let ex = replay(&p, None::<NoExplorer>, r.schedule.as_ref().unwrap(), false).unwrap();
            assert_eq!(ex.violation.as_ref(), r.violation.as_ref(), "seed {seed} {}", s.name());
        }
    }
    assert_eq!((reachable, found), RANDOM_FOUND);
}

const RANDOM_FOUND: (u32, [u32; 2]) = (65, [64, 63]);
