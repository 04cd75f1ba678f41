//! Writing your own delaying explorer, after the paper's §6: for chain
//! replication, failures that matter happen *after* initialisation, so rank
//! the servers first until the model says the system is stable, then move
//! the master and the fault injector to the front.
//!
//! Run with `cargo run --release --example custom_explorer`.

use mcheck_checker::explorer::check_contract;
use mcheck_checker::explorers::{ActorQueue, builtin};
use mcheck_checker::{ActorId, ActorInfo, Config, Event, Explorer, Model, Params, search};
use mcheck_models::chain::Chain;

/// Round robin over an order of all machines, by kind until "stable".
#[derive(Clone, Debug, Default)]
struct AfterInit {
    /// Preference order; `ActorQueue` is inline, so cloning is cheap.
    queue: ActorQueue,
    /// The master and the injector, promoted when the system is stable.
    late: Vec<ActorId>,
    stable: bool,
}

fn rank(kind: &str) -> u8 {
    match kind {
        "server" => 0,
        "client" => 1,
        "master" => 3,
        "injector" => 4,
        _ => 2,
    }
}

impl Explorer for AfterInit {
    fn name(&self) -> &str {
        "after-init"
    }

    // Deterministic: stratified sampling runs its zero-delay execution once.
    fn is_randomized(&self) -> bool {
        false
    }

    // d0: servers, then clients and timers, then the master and injector.
    fn init(&mut self, actors: &[ActorInfo]) {
        let mut sorted: Vec<&ActorInfo> = actors.iter().collect();
        sorted.sort_by_key(|a| (rank(a.kind), a.id));
        *self = AfterInit::default();
        for a in sorted {
            self.queue.push_back(a.id);
            if matches!(a.kind, "master" | "injector") {
                self.late.push(a.id);
            }
        }
    }

    // The first actor of the order that is enabled.
    fn next(&self, enabled: &[ActorId]) -> ActorId {
        self.queue.next(enabled)
    }

    // Learn from the program: creations, halts, and the model's own
    // `ctx.signal("stable", 1)`, which arrives as `Event::Custom`.
    fn step(&mut self, events: &[Event]) {
        for e in events {
            match e {
                Event::Created(info) => self.queue.push_back(info.id),
                Event::Halted(id) => self.queue.remove(*id),
                Event::Custom { tag: "stable", .. } if !self.stable => {
                    self.stable = true;
                    for &id in self.late.iter().rev() {
                        self.queue.push_front(id);
                    }
                }
                _ => {}
            }
        }
    }

    // The soundness contract: k delays offer each of k enabled actors once.
    // Moving the chosen actor to the end keeps the others' relative order,
    // which is all it takes.
    fn delay(&mut self, enabled: &[ActorId]) {
        self.queue.delay_first_enabled(enabled);
    }
}

fn main() {
    // 1. The contract, on random enabled sets after random events.
    check_contract(|_| AfterInit::default(), 1, 2000).expect("sound");

    // 2. The double-failure bug of chain replication: states to find it.
    let info = Chain.info();
    let params = Params::resolve(info.name, &info.params, &[]).unwrap();
    let program = Chain.build(&params, Some(5));
    let config = Config::default();
    let mine = search::ses(&program, AfterInit::default(), &config).unwrap();
    println!("after-init: {} states, {} delays", mine.states, mine.bound_reached);
    for name in ["rr", "rtc", "prr"] {
        let r = search::ses(&program, builtin(name).unwrap(), &config).unwrap();
        println!("{name}: {} states, {} delays", r.states, r.bound_reached);
    }
    assert!(mine.is_violation());
}
