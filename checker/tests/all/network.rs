//! Network semantics of the machine runtime (ARCHITECTURE.md, "The network"): unordered,
//! lossy and duplicating delivery, checked on hand-counted models and
//! against an independent BFS over random systems.

use mcheck_checker::ProgramExt;
use mcheck_checker::explorers::builtin;
use mcheck_checker::machine::{Ctx, Delivery, MachineId, MachineModel, Machines, Receive, Setup, World};
use mcheck_checker::search;
use mcheck_checker::{ActorId, Config, Enabled, Outcome, Program, Report, StepTrace, ViolationKind};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::hash::{Hash, Hasher};

// ---------------------------------------------------------------------------
// A hand-counted model: machine 0 (the sender) gets `Go` and sends `A` then
// `B` to machine 1 (the receiver), which logs what it receives.

#[derive(Clone, Debug)]
struct Pair {
    /// How the network delivers `A` and `B` (`Go` is always FIFO).
    net: Delivery,
    /// The sender also sends a FIFO `F` before `A` and `B`.
    with_fifo: bool,
    /// The receiver defers this message.
    defer: Option<PMsg>,
    /// The receiver finds this message stale once it has logged `A`.
    stale: Option<PMsg>,
    /// Duplicates the network may make in one execution.
    budget: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum PM {
    Sender,
    Receiver { log: Vec<PMsg> },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum PMsg {
    Go,
    A,
    B,
    F,
}

impl MachineModel for Pair {
    type Machine = PM;
    type Msg = PMsg;
    type Announce = ();
    type Monitor = ();

    fn setup(&self, setup: &mut Setup<Self>) {
        let s = setup.create(PM::Sender);
        setup.create(PM::Receiver { log: vec![] });
        setup.send(s, PMsg::Go);
    }

    fn kind(&self, m: &PM) -> &'static str {
        match m {
            PM::Sender => "sender",
            PM::Receiver { .. } => "receiver",
        }
    }

    fn receive(&self, m: &PM, msg: &PMsg) -> Receive {
        match m {
            PM::Receiver { .. } if self.defer == Some(*msg) => Receive::Defer,
            _ => Receive::Handle,
        }
    }

    fn delivery(&self, msg: &PMsg) -> Delivery {
        match msg {
            PMsg::A | PMsg::B => self.net,
            PMsg::Go | PMsg::F => Delivery::FIFO,
        }
    }

    fn duplicate_budget(&self) -> Option<u32> {
        self.budget
    }

    fn stale(&self, m: &PM, msg: &PMsg) -> bool {
        matches!(m, PM::Receiver { log } if self.stale == Some(*msg) && log.contains(&PMsg::A))
    }

    fn handle(&self, m: &mut PM, msg: &PMsg, ctx: &mut Ctx<Self>) {
        match m {
            PM::Sender => {
                if self.with_fifo {
                    ctx.send(MachineId(1), PMsg::F);
                }
                ctx.send(MachineId(1), PMsg::A);
                ctx.send(MachineId(1), PMsg::B);
            }
            PM::Receiver { log } => log.push(*msg),
        }
    }
}

fn pair(net: Delivery) -> Machines<Pair> {
    Machines(Pair {
        net,
        with_fifo: false,
        defer: None,
        stale: None,
        budget: None,
    })
}

/// States and transitions of DFS and of SES with RR, RTC and PRR (all must
/// agree on the states; DFS's transitions are returned).
fn searched<P: Program>(p: &P, what: &str) -> (u64, u64) {
    let dfs = search::dfs(p, &Config::default()).unwrap();
    assert_eq!(dfs.outcome, Outcome::Verified, "{what}: dfs");
    for name in ["rr", "rtc", "prr"] {
        let ses = search::ses(p, builtin(name).unwrap(), &Config::default()).unwrap();
        assert_eq!(ses.outcome, Outcome::Verified, "{what}: ses {name}");
        assert_eq!(ses.states, dfs.states, "{what}: ses {name} vs dfs");
    }
    (dfs.states, dfs.transitions)
}

fn enabled<P: Program>(p: &P, s: &P::State) -> Vec<(u32, u32)> {
    let mut out: Vec<Enabled> = Vec::new();
    p.enabled(s, &mut out);
    out.iter().map(|e| (e.actor.0, e.alternatives)).collect()
}

fn traced<M: MachineModel>(p: &Machines<M>, s: &mut World<M>, actor: u32, alt: u32) -> StepTrace {
    let (mut ev, mut t) = (Vec::new(), StepTrace::default());
    p.execute_traced(s, ActorId(actor), alt, &mut ev, &mut t).unwrap();
    t
}

fn log(s: &World<Pair>) -> Vec<PMsg> {
    match s.machine(MachineId(1)) {
        PM::Receiver { log } => log.clone(),
        PM::Sender => unreachable!(),
    }
}

const UNORDERED: Delivery = Delivery {
    unordered: true,
    lossy: false,
    duplicates: 0,
};

#[test]
fn fifo_has_one_order() {
    // s0, [A B], [B] log A, log A B.
    assert_eq!(searched(&pair(Delivery::FIFO), "fifo"), (4, 3));
}

#[test]
fn unordered_reaches_both_orders() {
    // s0, {A B}, {B} log A, {A} log B, log A B, log B A.
    assert_eq!(searched(&pair(UNORDERED), "unordered"), (6, 5));
    let p = pair(UNORDERED);
    let mut s = p.initial();
    traced(&p, &mut s, 0, 0);
    assert!(
        s.inbox(MachineId(1)).is_empty(),
        "unordered messages are not in the FIFO inbox"
    );
    assert_eq!(s.unordered_to(MachineId(1)).len(), 2);
    assert_eq!(s.in_flight().count(), 2);
    assert_eq!(enabled(&p, &s), [(1, 2)]);
    let mut logs = Vec::new();
    for alt in 0..2 {
        let mut t = s.clone();
        let first = traced(&p, &mut t, 1, alt);
        let second = traced(&p, &mut t, 1, 0);
        assert_eq!(first.notes, ["taken out of order (1 other message in flight to it)"]);
        assert!(second.notes.is_empty(), "{:?}", second.notes);
        logs.push(log(&t));
    }
    logs.sort_by_key(|l| format!("{l:?}"));
    assert_eq!(logs, [vec![PMsg::A, PMsg::B], vec![PMsg::B, PMsg::A]]);
}

#[test]
fn lossy_adds_the_drop_states() {
    let lossy_fifo = Delivery {
        unordered: false,
        lossy: true,
        duplicates: 0,
    };
    // s0, [A B], [B], [B] log A, log B, log A, log A B, nothing.
    assert_eq!(searched(&pair(lossy_fifo), "lossy fifo"), (8, 7));
    // s0, then (in flight F, log L) with F and L disjoint: 4 + 2 + 2 + 1 + 1.
    assert_eq!(searched(&pair(Delivery::network(0)), "lossy unordered"), (11, 13));

    let p = pair(lossy_fifo);
    let mut s = p.initial();
    traced(&p, &mut s, 0, 0);
    assert_eq!(enabled(&p, &s), [(1, 2)]);
    let t = traced(&p, &mut s, 1, 1);
    assert_eq!(t.handled.as_deref(), Some("A"));
    assert_eq!(t.notes, ["dropped by the network"]);
    assert_eq!(log(&s), []);
    assert_eq!(s.inbox(MachineId(1)), [(MachineId(1), PMsg::B)]);
}

#[test]
fn duplicates_add_exactly_one_extra_delivery() {
    let dup = Delivery {
        unordered: true,
        lossy: false,
        duplicates: 1,
    };
    // Per message: pending (0 or 1 delivery made), or gone after 1 or 2
    // deliveries; the log interleaves the deliveries of A and B: 1 + 33.
    assert_eq!(searched(&pair(dup), "duplicating").0, 34);
    // Lossy too: gone after 0, 1 or 2 deliveries: 1 + 42.
    assert_eq!(searched(&pair(Delivery::network(1)), "network(1)").0, 43);
    // FIFO with one duplicate each: the log is A^a B^b with the same
    // states per message, but B is delivered only after A is gone:
    // s0; A pending (0 or 1 made) with B pending (0): 2; A gone after 1 or
    // 2 deliveries, B pending (0 or 1) or gone after 1 or 2: 2 * 4.
    let fifo_dup = Delivery {
        unordered: false,
        lossy: false,
        duplicates: 1,
    };
    assert_eq!(searched(&pair(fifo_dup), "fifo duplicating").0, 11);

    let p = pair(dup);
    let mut s = p.initial();
    traced(&p, &mut s, 0, 0);
    assert_eq!(enabled(&p, &s), [(1, 4)]);
    let t = traced(&p, &mut s, 1, 1);
    assert_eq!(
        t.notes,
        [
            "duplicated by the network (stays pending; duplicate 1 of at most 1)",
            "taken out of order (1 other message in flight to it)"
        ]
    );
    assert_eq!(s.unordered_to(MachineId(1)).len(), 2);
    let used: Vec<u8> = s.unordered().iter().map(|f| f.duplicated()).collect();
    assert_eq!(used.iter().filter(|&&u| u == 1).count(), 1, "{used:?}");
    // The duplicated copy has no duplicate left: 2 + 1 alternatives.
    assert_eq!(enabled(&p, &s), [(1, 3)]);
}

#[test]
fn the_duplicate_budget_bounds_duplicates_per_execution() {
    let dup = |budget| {
        Machines(Pair {
            net: Delivery {
                unordered: true,
                lossy: false,
                duplicates: 1,
            },
            with_fifo: false,
            defer: None,
            stale: None,
            budget,
        })
    };
    // No budget: as without one (34); budget 0: as unordered (6, 5).
    assert_eq!(searched(&dup(None), "no budget").0, 34);
    assert_eq!(searched(&dup(Some(0)), "budget 0"), (6, 5));
    // Budget 1, by hand (log, in flight, duplicates made): s0; [] {A B} 0;
    // [A] {B} 0, [A] {A' B} 1, [B] {A} 0, [B] {A B'} 1; then 8 states
    // with one message left or none ([A B] {} 0, [A B] {B'} 1,
    // [A A] {B} 1, [A B] {A'} 1, [B A] {} 0, [B A] {A'} 1, [B A] {B'} 1,
    // [B B] {A} 1); then the 6 logs of three deliveries: 20 states;
    // transitions 1 + 4 + 4 * 2 + 6 * 1 = 19.
    assert_eq!(searched(&dup(Some(1)), "budget 1"), (20, 19));
    let p = dup(Some(1));
    let mut s = p.initial();
    traced(&p, &mut s, 0, 0);
    assert_eq!(enabled(&p, &s), [(1, 4)]);
    traced(&p, &mut s, 1, 1);
    // The budget is used up: deliver only, for both.
    assert_eq!(enabled(&p, &s), [(1, 2)]);
}

#[test]
fn stale_messages_leave_the_network() {
    let p = Machines(Pair {
        net: UNORDERED,
        with_fifo: false,
        defer: None,
        stale: Some(PMsg::B),
        budget: None,
    });
    // s0, {A B}, [A] (B left with A's delivery), [B] {A}, [B A]: B is
    // never delivered after A.
    assert_eq!(searched(&p, "stale B"), (5, 4));
    let mut s = p.initial();
    traced(&p, &mut s, 0, 0);
    let first = *s.unordered()[0].msg();
    let alt = if first == PMsg::A { 0 } else { 1 };
    traced(&p, &mut s, 1, alt);
    assert_eq!(log(&s), [PMsg::A]);
    assert_eq!(s.in_flight().count(), 0);
    assert_eq!(enabled(&p, &s), Vec::<(u32, u32)>::new());
}

#[test]
fn alternative_zero_delivers_the_fifo_candidate() {
    let p = Machines(Pair {
        net: Delivery::network(1),
        with_fifo: true,
        defer: None,
        stale: None,
        budget: None,
    });
    let mut s = p.initial();
    traced(&p, &mut s, 0, 0);
    // F (FIFO: 1), A and B (3 each).
    assert_eq!(enabled(&p, &s), [(1, 7)]);
    let t = traced(&p, &mut s, 1, 0);
    assert_eq!(t.handled.as_deref(), Some("F"));
    assert!(t.notes.is_empty());
    // Then the first unordered message in the canonical order.
    let first = *s.unordered()[0].msg();
    let t = traced(&p, &mut s, 1, 0);
    assert_eq!(t.handled, Some(format!("{first:?}")));
}

#[test]
fn deferred_unordered_messages_block() {
    let p = Machines(Pair {
        net: Delivery::network(1),
        with_fifo: false,
        defer: Some(PMsg::B),
        stale: None,
        budget: None,
    });
    // B is no candidate: it is neither delivered, dropped nor duplicated.
    // s0, then A pending (0 or 1 made) or gone after 0, 1 or 2 deliveries.
    assert_eq!(searched(&p, "deferred B").0, 6);
    let config = Config::default().deadlock(true);
    let r = search::dfs(&p, &config).unwrap();
    let v = r.violation.expect("a deadlock").violation;
    assert_eq!(v.kind, ViolationKind::Deadlock);
    assert_eq!(v.machine.as_deref(), Some("receiver1"));
    assert_eq!(v.message, "blocked: its queue holds only deferred messages [B]");
}

// ---------------------------------------------------------------------------
// Multiset hashing: two senders each send one unordered message to the
// receiver; both send orders leave the same state.

fn world_hash<T: Hash>(t: &T) -> u64 {
    let mut h = DefaultHasher::new();
    t.hash(&mut h);
    h.finish()
}

#[derive(Clone, Debug)]
struct Two(Delivery);

impl MachineModel for Two {
    type Machine = u8;
    type Msg = (u8, u32);
    type Announce = ();
    type Monitor = ();

    fn setup(&self, setup: &mut Setup<Self>) {
        for i in 0..3 {
            setup.create(i);
        }
        setup.send(MachineId(0), (0, 0));
        setup.send(MachineId(1), (0, 0));
    }

    fn kind(&self, _m: &u8) -> &'static str {
        "node"
    }

    fn delivery(&self, msg: &(u8, u32)) -> Delivery {
        if msg.0 == 0 { Delivery::FIFO } else { self.0 }
    }

    fn handle(&self, m: &mut u8, _msg: &(u8, u32), ctx: &mut Ctx<Self>) {
        // Payloads that spread over the fingerprint order.
        ctx.send(MachineId(2), (1, 1000 * *m as u32 + 7));
        ctx.send(MachineId(2), (1, 5));
    }
}

#[test]
fn send_order_is_not_part_of_the_state() {
    let run = |d: Delivery, order: [u32; 2]| {
        let p = Machines(Two(d));
        let mut s = p.initial();
        for a in order {
            traced(&p, &mut s, a, 0);
        }
        s
    };
    let (x, y) = (run(UNORDERED, [0, 1]), run(UNORDERED, [1, 0]));
    assert_eq!(x, y);
    assert_eq!(world_hash(&x), world_hash(&y));
    // One entry per distinct message: (1, 5) twice, (1, 7), (1, 1007).
    let counts: Vec<u32> = x.unordered().iter().map(|f| f.count()).collect();
    assert_eq!(counts.iter().sum::<u32>(), 4);
    assert_eq!(counts.len(), 3);
    // Identical copies are one candidate: 3 alternatives, not 4.
    assert_eq!(enabled(&Machines(Two(UNORDERED)), &x), [(2, 3)]);
    // FIFO keeps the order: different states.
    let (x, y) = (run(Delivery::FIFO, [0, 1]), run(Delivery::FIFO, [1, 0]));
    assert_ne!(x, y);
    assert_ne!(world_hash(&x), world_hash(&y));
}

// ---------------------------------------------------------------------------
// Random systems against an independent BFS of the network semantics.

/// Message kinds and values, machine states and machines of a random system.
const KINDS: usize = 3;
const VALS: u8 = 2;
const STATES: u8 = 3;
const BUDGET: u8 = 1;

/// A random machine system: per (machine, state, message kind) what the
/// machine does; per message kind how the network delivers it.
#[derive(Clone, Debug)]
struct Sys {
    n: usize,
    delivery: [Delivery; KINDS],
    /// [machine][state][kind]
    rules: Vec<Vec<[Rule; KINDS]>>,
    initial: Vec<(usize, (u8, u8))>,
    /// An assertion fails when machine 0 enters state 2.
    plant: bool,
}

#[derive(Clone, Debug)]
struct Rule {
    receive: Receive,
    /// The next state is `(next + value) % STATES`.
    next: u8,
    /// Sends (receiver, kind, value offset), while the budget lasts.
    sends: Vec<(usize, u8, u8)>,
    halt: bool,
}

/// A machine: its state and how many handlers with sends it has left.
type Node = (u8, u8);
type Msg = (u8, u8);

impl Sys {
    fn generate(seed: u64) -> Sys {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let n = rng.random_range(2..=3);
        let deliveries = [
            Delivery::FIFO,
            UNORDERED,
            Delivery::network(0),
            Delivery::network(1),
            Delivery {
                unordered: false,
                lossy: true,
                duplicates: 0,
            },
            Delivery {
                unordered: false,
                lossy: false,
                duplicates: 1,
            },
            Delivery {
                unordered: true,
                lossy: false,
                duplicates: 1,
            },
        ];
        let delivery = std::array::from_fn(|_| deliveries[rng.random_range(0..deliveries.len())]);
        let rule = |rng: &mut Xoshiro256PlusPlus| {
            let receive = match rng.random_range(0..10) {
                0 => Receive::Defer,
                1 => Receive::Ignore,
                _ => Receive::Handle,
            };
            let sends = (0..rng.random_range(0..=2))
                .map(|_| {
                    (
                        rng.random_range(0..n),
                        rng.random_range(0..KINDS as u8),
                        rng.random_range(0..VALS),
                    )
                })
                .collect();
            Rule {
                receive,
                next: rng.random_range(0..STATES),
                sends,
                halt: rng.random_range(0..20) == 0,
            }
        };
        let rules = (0..n)
            .map(|_| (0..STATES).map(|_| std::array::from_fn(|_| rule(&mut rng))).collect())
            .collect();
        let initial = (0..rng.random_range(1..=3))
            .map(|_| {
                (
                    rng.random_range(0..n),
                    (rng.random_range(0..KINDS as u8), rng.random_range(0..VALS)),
                )
            })
            .collect();
        Sys {
            n,
            delivery,
            rules,
            initial,
            plant: false,
        }
    }

    fn rule(&self, i: usize, node: Node, msg: Msg) -> &Rule {
        &self.rules[i][node.0 as usize][msg.0 as usize]
    }

    /// The handler's effect on the machine: its new value, its sends, halt.
    fn effect(&self, i: usize, node: Node, msg: Msg) -> (Node, Vec<(usize, Msg)>, bool) {
        let r = self.rule(i, node, msg);
        let next = (r.next + msg.1) % STATES;
        if node.1 == 0 || r.sends.is_empty() {
            return ((next, node.1), vec![], r.halt);
        }
        let sends = r
            .sends
            .iter()
            .map(|&(to, k, v)| (to, (k, (v + msg.1) % VALS)))
            .collect();
        ((next, node.1 - 1), sends, r.halt)
    }
}

impl MachineModel for Sys {
    type Machine = Node;
    type Msg = Msg;
    type Announce = ();
    type Monitor = ();

    fn setup(&self, setup: &mut Setup<Self>) {
        for _ in 0..self.n {
            setup.create((0, BUDGET));
        }
        for &(to, msg) in &self.initial {
            setup.send(MachineId(to as u32), msg);
        }
    }

    fn kind(&self, _m: &Node) -> &'static str {
        "node"
    }

    fn receive(&self, m: &Node, msg: &Msg) -> Receive {
        // Which machine this is is not in its value: the rules of machine 0
        // apply to every machine's receive, its own rules to its handler.
        self.rules[0][m.0 as usize][msg.0 as usize].receive
    }

    fn delivery(&self, msg: &Msg) -> Delivery {
        self.delivery[msg.0 as usize]
    }

    fn handle(&self, m: &mut Node, msg: &Msg, ctx: &mut Ctx<Self>) {
        let i = ctx.me().0 as usize;
        let (node, sends, halt) = self.effect(i, *m, *msg);
        *m = node;
        for (to, msg) in sends {
            ctx.send(MachineId(to as u32), msg);
        }
        if halt {
            ctx.halt();
        }
        ctx.assert(!(self.plant && i == 0 && node.0 == 2), || {
            "machine 0 entered state 2".into()
        });
    }
}

/// The oracle's state: machines (value, halted), FIFO queues of (message,
/// duplicates made), and the unordered multiset.
#[derive(Clone, PartialEq, Eq, Hash)]
struct OState {
    nodes: Vec<(Node, bool)>,
    fifo: Vec<Vec<(Msg, u8)>>,
    unordered: BTreeMap<(usize, Msg, u8), u32>,
}

/// The oracle's successors of `s`: every way the network can hand a
/// candidate message to a live machine.
fn successors(sys: &Sys, s: &OState) -> Vec<OState> {
    let mut out = Vec::new();
    for i in 0..sys.n {
        if s.nodes[i].1 {
            continue;
        }
        let node = s.nodes[i].0;
        let receive = |m: Msg| sys.rules[0][node.0 as usize][m.0 as usize].receive;
        // What receiving `m` does to `t` once the network has done its part.
        let deliver = |mut t: OState, m: Msg| {
            if receive(m) == Receive::Handle {
                let (next, sends, halt) = sys.effect(i, node, m);
                t.nodes[i].0 = next;
                for (to, m) in sends {
                    if t.nodes[to].1 {
                        continue;
                    }
                    if sys.delivery[m.0 as usize].unordered {
                        *t.unordered.entry((to, m, 0)).or_insert(0) += 1;
                    } else {
                        t.fifo[to].push((m, 0));
                    }
                }
                if halt {
                    t.nodes[i].1 = true;
                    t.fifo[i].clear();
                    t.unordered.retain(|k, _| k.0 != i);
                }
            }
            t
        };
        if let Some(pos) = s.fifo[i].iter().position(|&(m, _)| receive(m) != Receive::Defer) {
            let (m, used) = s.fifo[i][pos];
            let d = sys.delivery[m.0 as usize];
            let mut gone = s.clone();
            gone.fifo[i].remove(pos);
            out.push(deliver(gone.clone(), m));
            if d.lossy {
                out.push(gone);
            }
            if used < d.duplicates {
                let mut kept = s.clone();
                kept.fifo[i][pos].1 += 1;
                out.push(deliver(kept, m));
            }
        }
        for (&(to, m, used), _) in s.unordered.range((i, (0, 0), 0)..(i + 1, (0, 0), 0)) {
            debug_assert_eq!(to, i);
            if receive(m) == Receive::Defer {
                continue;
            }
            let d = sys.delivery[m.0 as usize];
            let mut gone = s.clone();
            let c = gone.unordered.get_mut(&(i, m, used)).unwrap();
            *c -= 1;
            if *c == 0 {
                gone.unordered.remove(&(i, m, used));
            }
            out.push(deliver(gone.clone(), m));
            if d.lossy {
                out.push(gone.clone());
            }
            if used < d.duplicates {
                let mut kept = gone;
                *kept.unordered.entry((i, m, used + 1)).or_insert(0) += 1;
                out.push(deliver(kept, m));
            }
        }
    }
    out
}

/// Reachable states and transitions by BFS, and whether machine 0 can
/// enter state 2.
fn oracle(sys: &Sys) -> (u64, u64, bool) {
    let mut s0 = OState {
        nodes: vec![((0, BUDGET), false); sys.n],
        fifo: vec![vec![]; sys.n],
        unordered: BTreeMap::new(),
    };
    for &(to, m) in &sys.initial {
        if sys.delivery[m.0 as usize].unordered {
            *s0.unordered.entry((to, m, 0)).or_insert(0) += 1;
        } else {
            s0.fifo[to].push((m, 0));
        }
    }
    let mut seen = HashSet::from([s0.clone()]);
    let mut todo = VecDeque::from([s0]);
    let (mut transitions, mut two) = (0, false);
    while let Some(s) = todo.pop_front() {
        two |= s.nodes[0].0.0 == 2;
        for t in successors(sys, &s) {
            transitions += 1;
            if seen.insert(t.clone()) {
                todo.push_back(t);
            }
        }
    }
    (seen.len() as u64, transitions, two)
}

fn check(r: &Report, what: &str, states: u64) {
    assert_eq!(r.outcome, Outcome::Verified, "{what}");
    assert_eq!(r.states, states, "{what}");
}

#[test]
fn random_systems_visit_exactly_the_oracles_states() {
    let (mut total, mut planted_found, mut duplicating) = (0u64, 0, 0);
    for seed in 0..300 {
        let sys = Sys::generate(seed);
        let (states, transitions, two) = oracle(&sys);
        total += states;
        duplicating += sys.delivery.iter().any(|d| d.duplicates > 0) as u32;
        let p = Machines(sys.clone());
        let dfs = search::dfs(&p, &Config::default()).unwrap();
        check(&dfs, &format!("seed {seed}: dfs"), states);
        assert_eq!(dfs.transitions, transitions, "seed {seed}: dfs transitions");
        for name in ["rr", "rtc", "prr"] {
            let ses = search::ses(&p, builtin(name).unwrap(), &Config::default()).unwrap();
            check(&ses, &format!("seed {seed}: ses {name}"), states);
        }
        let planted = Machines(Sys { plant: true, ..sys });
        let dfs = search::dfs(&planted, &Config::default()).unwrap();
        assert_eq!(dfs.violation.is_some(), two, "seed {seed}: planted, dfs");
        for name in ["rr", "rtc", "prr"] {
            let ses = search::ses(&planted, builtin(name).unwrap(), &Config::default()).unwrap();
            assert_eq!(ses.violation.is_some(), two, "seed {seed}: planted, ses {name}");
        }
        planted_found += two as u32;
    }
    // The systems are not trivial (up to 18244 states each) and exercise
    // both outcomes of the planted bug.
    assert_eq!((total, planted_found, duplicating), (96869, 126, 237));
}
