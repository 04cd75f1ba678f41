//! The race report on hand-made programs whose races are known: the
//! happens-before order against a transitive closure computed here, the
//! exact races, which flip removes the violation, and a program where no
//! single flip does.

use mcheck_checker::machine::{Ctx, Delivery, MachineId, MachineModel, Machines, MonitorError, Setup};
use mcheck_checker::races::explain;
use mcheck_checker::search::exec::{ChoiceDriver, execute};
use mcheck_checker::{Explanation, Program, ViolationKind};

/// `pairs` receivers; receiver i gets `Set(2)` from its "late" sender and
/// `Set(1)` from its "early" sender and must end with 2 (the late value
/// last). Ids: the late senders first, then the early senders, then the
/// receivers, so that always running the lowest enabled id (the all-zero
/// choice path) delivers every `Set(2)` first: every receiver ends wrong.
/// The monitor fails when every receiver is done and one of them is wrong.
/// With `unordered`, `Set` messages are delivered unordered, and both come
/// from one sender.
#[derive(Clone, Debug)]
struct Pairs {
    pairs: u32,
    unordered: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum M {
    Sender { to: u32, value: u32 },
    Receiver { got: Vec<u32> },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Msg {
    Go,
    Set(u32),
}

impl MachineModel for Pairs {
    type Machine = M;
    type Msg = Msg;
    type Announce = u32;
    type Monitor = (u32, u32);

    fn setup(&self, setup: &mut Setup<Self>) {
        let n = self.pairs;
        if self.unordered {
            for i in 0..n {
                let s = setup.create(M::Sender { to: n + i, value: 0 });
                setup.send(s, Msg::Go);
            }
        } else {
            for value in [2, 1] {
                for i in 0..n {
                    let s = setup.create(M::Sender { to: 2 * n + i, value });
                    setup.send(s, Msg::Go);
                }
            }
        }
        for _ in 0..n {
            setup.create(M::Receiver { got: vec![] });
        }
    }

    fn kind(&self, m: &M) -> &'static str {
        match m {
            M::Sender { value: 2, .. } => "late",
            M::Sender { value: 1, .. } => "early",
            M::Sender { .. } => "sender",
            M::Receiver { .. } => "receiver",
        }
    }

    fn delivery(&self, msg: &Msg) -> Delivery {
        match msg {
            Msg::Set(_) if self.unordered => Delivery {
                unordered: true,
                lossy: false,
                duplicates: 0,
            },
            _ => Delivery::FIFO,
        }
    }

    fn handle(&self, m: &mut M, msg: &Msg, ctx: &mut Ctx<Self>) {
        match (m, msg) {
            (M::Sender { to, value: 0 }, Msg::Go) => {
                ctx.send(MachineId(*to), Msg::Set(2));
                ctx.send(MachineId(*to), Msg::Set(1));
            }
            (M::Sender { to, value }, Msg::Go) => ctx.send(MachineId(*to), Msg::Set(*value)),
            (M::Receiver { got }, Msg::Set(v)) => {
                got.push(*v);
                if got.len() == 2 {
                    ctx.announce(*v);
                }
            }
            _ => {}
        }
    }

    fn observe(&self, (done, wrong): &mut (u32, u32), last: &u32) -> Result<(), MonitorError> {
        *done += 1;
        *wrong += (*last != 2) as u32;
        if *done == self.pairs && *wrong > 0 {
            return Err(MonitorError::new(
                "late-last",
                format!("{wrong} receivers got the late value first"),
            ));
        }
        Ok(())
    }
}

/// The choice path `path` of `p`, traced, explained (`None` when it does
/// not violate).
fn explain_path(p: &Pairs, path: &[u64]) -> Option<Explanation> {
    let program = Machines(p.clone());
    let ex = execute(&program, &mut ChoiceDriver::new(path), path.len(), false, true);
    ex.violation.as_ref()?;
    Some(explain(&program, &ex, false, 100).unwrap())
}

/// The all-zero choice path of `p` (lowest enabled id, alternative 0),
/// which violates.
fn explain_zeros(p: &Pairs) -> Explanation {
    explain_path(p, &[0; 100]).expect("the all-zero path violates")
}

/// Happens-before by the transitive closure of program order and message
/// (send to receipt) edges, computed from the trace alone (these programs
/// create no machines after the set-up): `reach[a][b]` is a path a -> b.
fn closure(e: &Explanation) -> Vec<Vec<bool>> {
    let n = e.trace.len();
    let edge = |a: usize, b: usize| {
        e.trace[a].actor == e.trace[b].actor
            || e.messages
                .iter()
                .any(|m| m.sent_at == Some(a) && m.received_at == Some(b))
    };
    (0..n)
        .map(|a| {
            let mut reach = vec![false; n];
            let mut stack = vec![a];
            while let Some(x) = stack.pop() {
                for (y, r) in reach.iter_mut().enumerate().skip(x + 1) {
                    if !*r && edge(x, y) {
                        *r = true;
                        stack.push(y);
                    }
                }
            }
            reach
        })
        .collect()
}

#[test]
fn one_race_decides() {
    let e = explain_zeros(&Pairs {
        pairs: 1,
        unordered: false,
    });
    // late0 sends Set(2) (step 0), early1 sends Set(1) (step 1), receiver2
    // takes Set(2) (step 2) then Set(1) (step 3): violation at step 3.
    let steps: Vec<(&str, Option<&str>)> = e
        .trace
        .iter()
        .map(|t| (t.actor_name.as_str(), t.handled.as_deref()))
        .collect();
    assert_eq!(
        steps,
        [
            ("late0", Some("Go")),
            ("early1", Some("Go")),
            ("receiver2", Some("Set(2)")),
            ("receiver2", Some("Set(1)"))
        ]
    );
    let f = e.violation.as_ref().unwrap();
    assert_eq!((f.violation.kind, f.step), (ViolationKind::Monitor, 3));
    assert_eq!(e.views.len(), 5);
    assert_eq!(e.views[2].actors[2].inbox, ["Set(2)", "Set(1)"]);
    assert_eq!(e.races.len(), 1);
    let r = &e.races[0];
    let (x, y) = e.pair(r);
    assert_eq!(
        (x.from_name.as_str(), x.text.as_str(), x.sent_at, x.received_at),
        ("late0", "Set(2)", Some(0), Some(2))
    );
    assert_eq!(
        (y.from_name.as_str(), y.text.as_str(), y.sent_at, y.received_at),
        ("early1", "Set(1)", Some(1), Some(3))
    );
    assert!(!r.unordered);
    // The flip: early1's step moves before late0's, the receiver takes
    // Set(1) first and ends with 2; four steps, nothing impossible.
    assert!(r.responsible());
    assert_eq!(r.variant.violation, None);
    assert_eq!((r.variant.steps, r.variant.moved), (4, 1));
    assert!(r.variant.impossible.is_empty() && r.variant.changed.is_empty());
    assert_eq!(
        e.race_text(r),
        "receiver2 received Set(2) from late0 (sent at step 0) at step 2 before Set(1) from early1 (sent at step 1) at step 3"
    );
    assert!(
        e.report().contains("The violation depends on 1 of 1 race"),
        "{}",
        e.report()
    );
    // The set-up's Go messages race with nothing (different receivers).
    assert_eq!(e.messages.iter().filter(|m| m.sent_at.is_none()).count(), 2);
}

#[test]
fn no_single_flip_removes_two_wrong_orders() {
    let e = explain_zeros(&Pairs {
        pairs: 2,
        unordered: false,
    });
    // Both receivers got the late value first: one race each, and flipping
    // either leaves the other wrong.
    assert_eq!(e.races.len(), 2);
    let receivers: Vec<&str> = e.races.iter().map(|r| e.pair(r).0.to_name.as_str()).collect();
    assert_eq!(receivers, ["receiver4", "receiver5"]);
    for r in &e.races {
        assert!(r.variant.violates, "{}", e.variant_text(r));
        let v = r.variant.violation.as_ref().unwrap();
        assert_eq!(v.violation.message, "1 receivers got the late value first");
    }
    assert_eq!(e.responsible().count(), 0);
    assert_eq!(e.verdict(), "No single flip removes the violation (of 2 races).");
}

#[test]
fn unordered_messages_of_one_sender_race() {
    let p = Pairs {
        pairs: 1,
        unordered: true,
    };
    // sender0 sends Set(2) and Set(1) in one step; unordered, the receiver
    // may take either first (its two alternatives): exactly one of the two
    // paths takes Set(2) first and violates.
    let found: Vec<Explanation> = [[0, 0, 0], [0, 1, 0]]
        .iter()
        .filter_map(|path| explain_path(&p, path))
        .collect();
    assert_eq!(found.len(), 1);
    let e = &found[0];
    assert_eq!(e.races.len(), 1);
    let r = &e.races[0];
    let (x, y) = e.pair(r);
    assert!(r.unordered && x.unordered && y.unordered);
    assert_eq!((x.text.as_str(), y.text.as_str()), ("Set(2)", "Set(1)"));
    assert_eq!(
        (x.from_name.as_str(), x.sent_at, y.sent_at),
        ("sender0", Some(0), Some(0))
    );
    // Same sender, same step: the flip moves nothing, the receiver takes
    // the other alternative, and the violation is gone.
    assert!(r.responsible());
    assert_eq!((r.variant.moved, r.variant.steps), (0, 3));
}

#[test]
fn vector_clocks_are_happens_before() {
    for pairs in 1..=3 {
        let e = explain_zeros(&Pairs {
            pairs,
            unordered: false,
        });
        for (a, reach) in closure(&e).iter().enumerate() {
            let x = e.trace[a].actor.0 as usize;
            for (b, &path) in reach.iter().enumerate().skip(a + 1) {
                let clocks = e.clocks[a][x] <= e.clocks[b][x];
                assert_eq!(clocks, path, "pairs {pairs}: steps {a} -> {b}");
            }
        }
        // Deterministic: explaining again gives the same everything.
        let again = explain_zeros(&Pairs {
            pairs,
            unordered: false,
        });
        assert_eq!((&again.races, &again.clocks), (&e.races, &e.clocks));
        assert_eq!(again.report(), e.report());
    }
}

#[test]
fn program_without_views_shows_its_debug() {
    // A plain transition system: no messages, no races, the whole state's
    // Debug as the view.
    let program = mcheck_checker::testing::RandomProgram::generate(7, false, false);
    let s0 = program.initial();
    let path = vec![0; 5];
    let ex = execute(&program, &mut ChoiceDriver::new(&path), 5, false, true);
    let e = explain(&program, &ex, false, 5).unwrap();
    assert!(e.races.is_empty() && e.messages.is_empty());
    assert_eq!(e.views[0].monitors, format!("{s0:?}"));
    assert!(e.views[0].actors.is_empty());
}
