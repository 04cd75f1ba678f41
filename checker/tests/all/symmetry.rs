//! Symmetry reduction (ARCHITECTURE.md, "Symmetry") on random machine
//! systems with interchangeable workers, against an independent oracle: a
//! plain BFS of every reachable world, each canonicalized by brute force
//! over all permutations of the workers (its own renaming, through the
//! public view of a world only). DFS and SES with symmetry must count
//! exactly one state per orbit, the runtime's canonical fingerprint must
//! agree with the oracle's orbits on every reachable world, and a violation
//! must be found with symmetry exactly when it is found without.

use mcheck_checker::ProgramExt;
use mcheck_checker::machine::{Ctx, MachineId, MachineModel, Machines, MonitorError, Renamed, Setup, World};
use mcheck_checker::run;
use mcheck_checker::search::{SearchError, Strategy, dfs, pb, ses};
use mcheck_checker::testing::Causal;
use mcheck_checker::{Config, Enabled, Outcome, Program};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::{HashMap, HashSet, VecDeque};

/// Local states of a worker, values in a message, hub counter values.
const L: usize = 3;
const C: usize = 3;

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Node {
    Hub { count: u8, last: Option<MachineId> },
    Worker { local: u8, peer: Option<MachineId> },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Poke {
    from: MachineId,
    v: u8,
}

/// Bit i: worker i + 1 reached local state 0 after a step.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Reached(u8);

/// A random system: a hub (id 0) and `k` interchangeable workers, each
/// step driven by seeded tables; ids occur in machines, messages and the
/// monitor (a bit mask), so renaming is exercised everywhere.
#[derive(Clone, Debug)]
struct Sym {
    k: u32,
    /// Worker: (next local, send code 0 none / 1 hub / 2 sender / 3 old
    /// peer, remember the sender, choose) per (local, value).
    worker: [[(u8, u8, bool, bool); L]; L],
    /// Hub: (next count, send code 0 sender / 1 last / 2 none) per (count, value).
    hub: [[(u8, u8); L]; C],
    /// The monitor fails once this many workers reached 0 (0: never).
    fail_at: u32,
}

impl Sym {
    fn generate(seed: u64, k: u32) -> Sym {
        let mut r = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut worker = [[(0, 0, false, false); L]; L];
        for row in &mut worker {
            for w in row.iter_mut() {
                *w = (
                    r.random_range(0..L as u8),
                    r.random_range(0..4),
                    r.random_bool(0.5),
                    r.random_bool(0.3),
                );
            }
        }
        let mut hub = [[(0, 0); L]; C];
        for row in &mut hub {
            for h in row.iter_mut() {
                *h = (r.random_range(0..C as u8), r.random_range(0..3));
            }
        }
        let fail_at = if r.random_bool(0.3) { r.random_range(1..=k) } else { 0 };
        Sym {
            k,
            worker,
            hub,
            fail_at,
        }
    }
}

impl MachineModel for Sym {
    type Machine = Node;
    type Msg = Poke;
    type Announce = MachineId;
    type Monitor = Reached;

    fn setup(&self, setup: &mut Setup<Self>) {
        let hub = setup.create(Node::Hub { count: 0, last: None });
        for _ in 0..self.k {
            let w = setup.create(Node::Worker { local: 1, peer: None });
            setup.send(w, Poke { from: hub, v: 0 });
        }
    }

    fn kind(&self, m: &Node) -> &'static str {
        match m {
            Node::Hub { .. } => "hub",
            Node::Worker { .. } => "worker",
        }
    }

    fn handle(&self, m: &mut Node, msg: &Poke, ctx: &mut Ctx<Self>) {
        let me = ctx.me();
        match m {
            Node::Hub { count, last } => {
                let (next, code) = self.hub[*count as usize][msg.v as usize];
                let old = last.replace(msg.from);
                *count = next;
                let to = match code {
                    0 => Some(msg.from),
                    1 => Some(old.unwrap_or(msg.from)),
                    _ => None,
                };
                if let Some(to) = to {
                    ctx.send(to, Poke { from: me, v: next });
                }
            }
            Node::Worker { local, peer } => {
                let (next, code, remember, choose) = self.worker[*local as usize][msg.v as usize];
                let flip = if choose { ctx.choose(2, "flip") as u8 } else { 0 };
                *local = (next + flip) % L as u8;
                let old = *peer;
                if remember {
                    *peer = Some(msg.from);
                }
                let to = match code {
                    1 => Some(MachineId(0)),
                    2 => Some(msg.from),
                    3 => old,
                    _ => None,
                };
                if let Some(to) = to {
                    ctx.send(to, Poke { from: me, v: *local });
                }
                if *local == 0 {
                    ctx.announce(me);
                }
            }
        }
    }

    fn observe(&self, mon: &mut Reached, who: &MachineId) -> Result<(), MonitorError> {
        mon.0 |= 1 << (who.0 - 1);
        if self.fail_at > 0 && mon.0.count_ones() >= self.fail_at {
            return Err(MonitorError::new(
                "reached",
                format!("{} workers reached 0", mon.0.count_ones()),
            ));
        }
        Ok(())
    }

    fn symmetry(&self) -> Vec<Vec<MachineId>> {
        vec![(1..=self.k).map(MachineId).collect()]
    }

    fn rename(&self, value: Renamed<'_, Self>, f: &dyn Fn(MachineId) -> MachineId) {
        match value {
            Renamed::Machine(Node::Hub { last: id, .. } | Node::Worker { peer: id, .. }) => *id = id.map(f),
            Renamed::Msg(p) => p.from = f(p.from),
            Renamed::Monitor(r) => {
                let bits = r.0;
                r.0 = (0..8)
                    .filter(|i| bits >> i & 1 == 1)
                    .map(|i| 1 << (f(MachineId(i + 1)).0 - 1))
                    .sum();
            }
        }
    }
}

/// The oracle's own form of a world renamed by `perm` (worker i + 1 to
/// perm[i] + 1): machines in new-id order with their inboxes, the monitor,
/// the pending choice.
type Form = (Vec<(Node, bool, Vec<Poke>)>, u8, Option<(u32, Poke, Vec<u32>, u32)>);

fn form(w: &World<Sym>, perm: &[u32]) -> Form {
    let f = |id: MachineId| {
        if id.0 == 0 {
            id
        } else {
            MachineId(perm[id.0 as usize - 1] + 1)
        }
    };
    let poke = |p: &Poke| Poke {
        from: f(p.from),
        v: p.v,
    };
    let mut machines = vec![None; w.slots().len()];
    for (i, slot) in w.slots().iter().enumerate() {
        let node = match &slot.machine {
            Node::Hub { count, last } => Node::Hub {
                count: *count,
                last: last.map(f),
            },
            Node::Worker { local, peer } => Node::Worker {
                local: *local,
                peer: peer.map(f),
            },
        };
        let inbox = w.inbox(MachineId(i as u32)).iter().map(|(_, p)| poke(p)).collect();
        machines[f(MachineId(i as u32)).0 as usize] = Some((node, slot.halted, inbox));
    }
    let mut mon = 0u8;
    for (i, &to) in perm.iter().enumerate() {
        if w.monitor().0 >> i & 1 == 1 {
            mon |= 1 << to;
        }
    }
    let pending = w
        .pending()
        .map(|p| (f(p.machine).0, poke(&p.msg), p.choices.to_vec(), p.n));
    (machines.into_iter().map(Option::unwrap).collect(), mon, pending)
}

fn permutations(k: u32) -> Vec<Vec<u32>> {
    if k == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in permutations(k - 1) {
        for at in 0..=p.len() {
            let mut q = p.clone();
            q.insert(at, k - 1);
            out.push(q);
        }
    }
    out
}

/// Every reachable world with its orbit's form, and whether some
/// transition violates.
type Reachable = (Vec<(World<Sym>, Form)>, bool);

/// The most worlds the oracle enumerates (larger systems are skipped).
const MAX_WORLDS: usize = 5_000;

/// Every reachable world (plain BFS, stopping at violations) with its
/// orbit's representative: the smallest form over all permutations;
/// `None` above [`MAX_WORLDS`].
fn oracle(p: &Machines<Sym>) -> Option<Reachable> {
    let perms = permutations(p.0.k);
    let s0 = p.initial();
    let mut seen = HashSet::from([s0.clone()]);
    let mut todo = VecDeque::from([s0.clone()]);
    let mut all = vec![s0];
    let (mut en, mut ev, mut violates) = (Vec::<Enabled>::new(), Vec::new(), false);
    while let Some(s) = todo.pop_front() {
        en.clear();
        p.enabled(&s, &mut en);
        for e in &en {
            for alt in 0..e.alternatives {
                let mut t = s.clone();
                ev.clear();
                if p.execute(&mut t, e.actor, alt, &mut ev).is_err() {
                    violates = true;
                } else if seen.insert(t.clone()) {
                    todo.push_back(t.clone());
                    all.push(t);
                    if all.len() > MAX_WORLDS {
                        return None;
                    }
                }
            }
        }
    }
    let forms = all
        .into_iter()
        .map(|w| {
            let min = perms.iter().map(|q| form(&w, q)).min().unwrap();
            (w, min)
        })
        .collect();
    Some((forms, violates))
}

fn on() -> Config {
    Config::default().symmetry(true).max_memory(1 << 30)
}

/// Random systems tried.
const SYSTEMS: u64 = 300;

#[test]
fn random_symmetric_systems_count_one_state_per_orbit() {
    let (mut systems, mut reduced, mut violating) = (0, 0, 0);
    for seed in 0..SYSTEMS {
        let k = 2 + (seed % 3) as u32;
        let p = Machines(Sym::generate(seed, k));
        let Some((worlds, violates)) = oracle(&p) else {
            continue;
        };
        // Exactness: the runtime's canonical fingerprint and the oracle's
        // orbits partition the reachable worlds the same way.
        let mut fp_of_orbit: HashMap<&Form, u64> = HashMap::new();
        let mut orbit_of_fp: HashMap<u64, &Form> = HashMap::new();
        for (w, f) in &worlds {
            let fp = p.canonical_fingerprint(w).unwrap();
            assert_eq!(
                *fp_of_orbit.entry(f).or_insert(fp),
                fp,
                "seed {seed}: one orbit, two forms"
            );
            assert_eq!(
                *orbit_of_fp.entry(fp).or_insert(f),
                f,
                "seed {seed}: two orbits, one form"
            );
        }
        let orbits = fp_of_orbit.len() as u64;
        let plain = dfs(&p, &Config::default()).unwrap();
        let d = dfs(&p, &on()).unwrap();
        let s = ses(&p, Causal::default(), &on()).unwrap();
        let b = pb(&p, &on()).unwrap();
        systems += 1;
        if violates {
            violating += 1;
            for (name, r) in [("dfs", &d), ("ses", &s), ("pb", &b)] {
                assert_eq!(
                    r.outcome,
                    Outcome::Violation,
                    "seed {seed}: {name} with symmetry misses the violation"
                );
            }
            assert_eq!(plain.outcome, Outcome::Violation, "seed {seed}");
            continue;
        }
        assert_eq!(plain.states, worlds.len() as u64, "seed {seed}: plain dfs");
        for (name, r) in [("dfs", &d), ("ses", &s), ("pb", &b)] {
            assert_eq!(r.outcome, Outcome::Verified, "seed {seed}: {name}");
            assert!(r.symmetry, "seed {seed}: {name}");
            assert_eq!(r.states, orbits, "seed {seed}: {name} states vs orbits");
        }
        if orbits < worlds.len() as u64 {
            reduced += 1;
        }
    }
    // The generator is not degenerate: most systems fit the oracle and are
    // reduced, some violate.
    assert_eq!((systems, reduced, violating), (271, 232, 39));
}

#[test]
fn symmetry_needs_a_declaration_and_no_exact_bound() {
    let p = mcheck_checker::testing::RandomProgram::generate(1, true, false);
    let e = dfs(&p, &on()).unwrap_err();
    assert!(e.to_string().contains("declares no symmetry"), "{e}");
    let sym = Machines(Sym::generate(1, 2));
    let both = on().exact_bound(true);
    let e = ses(&sym, Causal::default(), &both).unwrap_err();
    assert!(e.to_string().contains("symmetry and exact-bound"), "{e}");
}

/// A hub and three workers declared interchangeable by mistake: worker 1
/// (the first) reports to the hub when it starts, the others do not. Its
/// monitor and invariant are symmetric; its transitions are not.
#[derive(Clone, Debug)]
struct Lopsided;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Part {
    Hub(u8),
    Worker(u8),
}

impl MachineModel for Lopsided {
    type Machine = Part;
    type Msg = u8;
    type Announce = ();
    type Monitor = ();

    fn setup(&self, setup: &mut Setup<Self>) {
        setup.create(Part::Hub(0));
        for _ in 0..3 {
            let w = setup.create(Part::Worker(0));
            setup.send(w, 0);
        }
    }

    fn kind(&self, m: &Part) -> &'static str {
        match m {
            Part::Hub(_) => "hub",
            Part::Worker(_) => "worker",
        }
    }

    fn handle(&self, m: &mut Part, _msg: &u8, ctx: &mut Ctx<Self>) {
        match m {
            Part::Hub(n) => *n += 1,
            Part::Worker(n) => {
                *n += 1;
                if ctx.me() == MachineId(1) {
                    ctx.send(MachineId(0), 1);
                }
            }
        }
    }

    fn symmetry(&self) -> Vec<Vec<MachineId>> {
        vec![(1..=3).map(MachineId).collect()]
    }
}

#[test]
fn an_asymmetric_model_declared_symmetric_is_an_error_not_an_answer() {
    let p = Machines(Lopsided);
    // Without symmetry it verifies; with it, every exhaustive strategy
    // refuses to answer and says what differed.
    let plain = run(&p, Causal::default(), &Strategy::Dfs, &Config::default()).unwrap();
    assert_eq!(plain.outcome, Outcome::Verified);
    for strategy in [Strategy::Dfs, Strategy::Ses, Strategy::Pb] {
        match run(&p, Causal::default(), &strategy, &on()) {
            Err(SearchError::Symmetry(m)) => {
                assert_eq!(m.group, "worker1, worker2, worker3", "{m}");
                assert!(m.permutation.contains("worker1 -> worker"), "{m}");
                assert!(m.what.starts_with("the steps of worker1 and of worker"), "{m}");
                let text = m.to_string();
                assert!(
                    text.starts_with("the symmetry declaration does not hold: group [worker1, worker2, worker3]"),
                    "{text}"
                );
            }
            other => panic!("{strategy:?}: {other:?}"),
        }
    }
}

#[test]
fn the_check_accepts_correct_declarations() {
    // The random symmetric systems above (the first 60) keep their
    // declaration: the sampled check never objects.
    let mut checked = 0;
    for seed in 0..60 {
        let k = 2 + (seed % 3) as u32;
        let p = Machines(Sym::generate(seed, k));
        let r = run(&p, Causal::default(), &Strategy::Ses, &on()).unwrap();
        if r.outcome == Outcome::Verified {
            checked += 1;
        }
    }
    assert_eq!(checked, 52);
}
