//! The machine runtime: FIFO queues, defer, ignore, unhandled events,
//! choices mid-handler, create, halt, monitors, invariants, deadlock and
//! caught panics, step by step with exact states and counts.

use mcheck_checker::ProgramExt;
use mcheck_checker::machine::{Ctx, MachineId, MachineModel, Machines, MonitorError, Receive, Setup, World};
use mcheck_checker::search;
use mcheck_checker::{ActorId, Config, Enabled, Event, Outcome, Program, StepTrace, ViolationKind};

/// A small test protocol. Machine 0 (`sender`) sends `A`, `B` to machine 1
/// (`receiver`) when it gets `Go`; the receiver starts in `Waiting`, where it
/// defers `A` and handles `B` (moving to `Ready`), then handles `A` and asks
/// for a choice among 3 values, which it sends back as `Val(v)`.
#[derive(Clone, Debug, Default)]
struct Proto {
    /// What the receiver does with `C` in `Waiting`.
    c_in_waiting: Option<Receive>,
    /// Send `C` first.
    send_c: bool,
    /// Panic when handling `Val(2)`.
    panic_on_2: bool,
    /// The sender halts after sending.
    sender_halts: bool,
    /// A monitor that fails when `Val(1)` is announced.
    monitor_hates_1: bool,
    /// The receiver waits for ever in `Ready` (deadlock detection).
    ready_waits: bool,
    /// The receiver creates a helper after the choice.
    create_helper: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum M {
    Sender { got: Vec<u32> },
    Receiver { ready: bool },
    Helper,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Msg {
    Go,
    A,
    B,
    C,
    Val(u32),
    Hello,
}

impl MachineModel for Proto {
    type Machine = M;
    type Msg = Msg;
    type Announce = u32;
    type Monitor = u32;

    fn setup(&self, setup: &mut Setup<Self>) {
        let s = setup.create(M::Sender { got: vec![] });
        setup.create(M::Receiver { ready: false });
        setup.send(s, Msg::Go);
    }

    fn kind(&self, m: &M) -> &'static str {
        match m {
            M::Sender { .. } => "sender",
            M::Receiver { .. } => "receiver",
            M::Helper => "helper",
        }
    }

    fn state_name(&self, m: &M) -> Option<String> {
        match m {
            M::Receiver { ready: false } => Some("Waiting".into()),
            M::Receiver { ready: true } => Some("Ready".into()),
            _ => None,
        }
    }

    fn receive(&self, m: &M, msg: &Msg) -> Receive {
        match (m, msg) {
            (M::Receiver { ready: false }, Msg::A) => Receive::Defer,
            (M::Receiver { ready: false }, Msg::C) => self.c_in_waiting.unwrap_or(Receive::Unhandled),
            (M::Receiver { ready: true }, Msg::C) => Receive::Ignore,
            _ => Receive::Handle,
        }
    }

    fn handle(&self, m: &mut M, msg: &Msg, ctx: &mut Ctx<Self>) {
        let (sender, receiver) = (MachineId(0), MachineId(1));
        match (m, msg) {
            (M::Sender { .. }, Msg::Go) => {
                if self.send_c {
                    ctx.send(receiver, Msg::C);
                }
                ctx.send(receiver, Msg::A);
                ctx.send(receiver, Msg::B);
                if self.sender_halts {
                    ctx.halt();
                }
            }
            (M::Sender { got }, Msg::Val(v)) => {
                assert!(!(self.panic_on_2 && *v == 2), "sender cannot take a 2");
                got.push(*v);
                ctx.announce(*v);
            }
            (M::Receiver { ready }, Msg::B) => *ready = true,
            (M::Receiver { .. }, Msg::A) => {
                let v = ctx.choose(3, "value");
                if self.create_helper {
                    let h = ctx.create(M::Helper);
                    ctx.send(h, Msg::Hello);
                }
                ctx.send(sender, Msg::Val(v));
            }
            (M::Helper, Msg::Hello) => ctx.assert(false, || "helper says hello".into()),
            (m, msg) => ctx.assert(false, || format!("{m:?} got {msg:?}")),
        }
    }

    fn observe(&self, mon: &mut u32, v: &u32) -> Result<(), MonitorError> {
        *mon += 1;
        if self.monitor_hates_1 && *v == 1 {
            return Err(MonitorError::new("hates-one", "1 was announced"));
        }
        Ok(())
    }

    fn waiting(&self, m: &M) -> bool {
        self.ready_waits && matches!(m, M::Receiver { ready: true })
    }
}

fn enabled(p: &Machines<Proto>, s: &World<Proto>) -> Vec<(u32, u32)> {
    let mut out: Vec<Enabled> = Vec::new();
    p.enabled(s, &mut out);
    out.iter().map(|e| (e.actor.0, e.alternatives)).collect()
}

fn step(p: &Machines<Proto>, s: &mut World<Proto>, actor: u32, alt: u32) -> Vec<Event> {
    let mut ev = Vec::new();
    p.execute(s, ActorId(actor), alt, &mut ev).unwrap();
    ev
}

#[test]
fn defer_then_choice_step_by_step() {
    let p = Machines(Proto::default());
    let mut s = p.initial();
    assert_eq!(enabled(&p, &s), [(0, 1)]);
    let ev = step(&p, &mut s, 0, 0);
    assert_eq!(ev.len(), 2, "{ev:?}");
    // The receiver's queue is [A, B]; A is deferred, B is handled.
    assert_eq!(s.inbox(MachineId(1)).len(), 2);
    assert_eq!(enabled(&p, &s), [(1, 1)]);
    step(&p, &mut s, 1, 0);
    assert_eq!(s.inbox(MachineId(1)), &[(MachineId(1), Msg::A)]);
    // Handling A stops at the choice: only the receiver, with 3 alternatives.
    let ev = step(&p, &mut s, 1, 0);
    assert!(ev.is_empty());
    assert!(s.pending().is_some());
    assert_eq!(enabled(&p, &s), [(1, 3)]);
    let ev = step(&p, &mut s, 1, 2);
    assert_eq!(
        ev,
        [Event::Sent {
            from: ActorId(1),
            to: ActorId(0)
        }]
    );
    assert!(s.pending().is_none());
    assert_eq!(s.inbox(MachineId(0)), &[(MachineId(0), Msg::Val(2))]);
    step(&p, &mut s, 0, 0);
    assert_eq!(s.machine(MachineId(0)), &M::Sender { got: vec![2] });
    assert_eq!(*s.monitor(), 1);
    assert_eq!(enabled(&p, &s), []);
}

#[test]
fn exact_state_count_and_terminal_states() {
    // s0, after Go, after B, pending choice, 3 after the choice, 3 final.
    let r = search::dfs(&Machines(Proto::default()), &Config::default()).unwrap();
    assert_eq!(r.outcome, Outcome::Verified);
    assert_eq!((r.states, r.transitions), (10, 9));
}

#[test]
fn unhandled_event_is_not_hidden_by_deferral() {
    let p = Machines(Proto {
        send_c: true,
        ..Proto::default()
    });
    let r = search::dfs(&p, &Config::default()).unwrap();
    let v = r.violation.expect("unhandled C");
    assert_eq!(v.violation.kind, ViolationKind::UnhandledEvent);
    assert_eq!(v.violation.machine.as_deref(), Some("receiver1"));
    assert!(
        v.violation.message.contains("C is neither handled"),
        "{}",
        v.violation.message
    );
    assert_eq!(v.step, 1);
}

#[test]
fn ignored_and_deferred_messages() {
    // C ignored in Waiting: one more step, same end states.
    let ignore = Machines(Proto {
        send_c: true,
        c_in_waiting: Some(Receive::Ignore),
        ..Proto::default()
    });
    let r = search::dfs(&ignore, &Config::default()).unwrap();
    assert_eq!((r.outcome, r.states, r.transitions), (Outcome::Verified, 11, 10));
    // C deferred in Waiting and ignored in Ready: handled after B, so C and
    // A compete: A first or C first.
    let defer = Machines(Proto {
        send_c: true,
        c_in_waiting: Some(Receive::Defer),
        ..Proto::default()
    });
    let mut s = defer.initial();
    step(&defer, &mut s, 0, 0);
    step(&defer, &mut s, 1, 0); // B: C and A are deferred, B is the oldest other
    assert_eq!(s.inbox(MachineId(1)).len(), 2);
    step(&defer, &mut s, 1, 0); // C, now ignored in Ready
    assert_eq!(s.inbox(MachineId(1)), &[(MachineId(1), Msg::A)]);
    let r = search::dfs(&defer, &Config::default()).unwrap();
    assert_eq!((r.outcome, r.states, r.transitions), (Outcome::Verified, 11, 10));
}

#[test]
fn halted_machines_drop_their_messages() {
    let p = Machines(Proto {
        sender_halts: true,
        ..Proto::default()
    });
    let mut s = p.initial();
    let ev = step(&p, &mut s, 0, 0);
    assert_eq!(ev.last(), Some(&Event::Halted(ActorId(0))));
    step(&p, &mut s, 1, 0);
    step(&p, &mut s, 1, 0);
    let ev = step(&p, &mut s, 1, 1);
    assert!(ev.is_empty(), "the send to a halted machine is dropped: {ev:?}");
    assert!(s.messages().is_empty());
    assert_eq!(p.actors(&s).len(), 1);
}

#[test]
fn monitor_failure_and_caught_panic() {
    let p = Machines(Proto {
        monitor_hates_1: true,
        ..Proto::default()
    });
    let r = search::dfs(&p, &Config::default()).unwrap();
    let v = r.violation.unwrap().violation;
    assert_eq!(v.kind, ViolationKind::Monitor);
    assert_eq!(v.machine.as_deref(), Some("hates-one"));

    let p = Machines(Proto {
        panic_on_2: true,
        ..Proto::default()
    });
    let r = search::dfs(&p, &Config::default()).unwrap();
    let v = r.violation.unwrap().violation;
    assert_eq!(v.kind, ViolationKind::Panic);
    assert_eq!(v.machine.as_deref(), Some("sender0"));
    assert_eq!(v.message, "sender cannot take a 2");
}

#[test]
fn deadlock_only_when_asked() {
    let p = Machines(Proto {
        ready_waits: true,
        ..Proto::default()
    });
    let r = search::dfs(&p, &Config::default()).unwrap();
    assert_eq!(r.outcome, Outcome::Verified);
    let config = Config::default().deadlock(true);
    let r = search::dfs(&p, &config).unwrap();
    let v = r.violation.unwrap();
    assert_eq!(v.violation.kind, ViolationKind::Deadlock);
    assert_eq!(v.violation.machine.as_deref(), Some("receiver1"));
    assert_eq!(v.step, 5);
}

#[test]
fn create_and_trace() {
    let p = Machines(Proto {
        create_helper: true,
        ..Proto::default()
    });
    let mut s = p.initial();
    step(&p, &mut s, 0, 0);
    step(&p, &mut s, 1, 0);
    step(&p, &mut s, 1, 0);
    let mut ev = Vec::new();
    let mut t = StepTrace::default();
    p.execute_traced(&mut s, ActorId(1), 1, &mut ev, &mut t).unwrap();
    assert!(matches!(&ev[0], Event::Created(info) if info.id == ActorId(2) && info.name == "helper2"));
    assert_eq!(t.handled.as_deref(), Some("A"));
    assert_eq!(t.state_before.as_deref(), Some("Ready"));
    assert_eq!(t.choices, ["value = 1 of 3"]);
    assert_eq!(t.created, ["helper2"]);
    assert_eq!(
        t.sent,
        [
            ("helper2".to_string(), "Hello".to_string()),
            ("sender0".to_string(), "Val(1)".to_string())
        ]
    );
    assert_eq!(enabled(&p, &s), [(0, 1), (2, 1)]);
    let r = search::dfs(&p, &Config::default()).unwrap();
    let v = r.violation.unwrap().violation;
    assert_eq!(
        (v.kind, v.machine.as_deref()),
        (ViolationKind::Assertion, Some("helper2"))
    );
}
