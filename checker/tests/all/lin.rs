//! Linearizability (ARCHITECTURE.md, "Linearizability"): Wing and Gong's search and the
//! incremental tracker against a brute-force oracle written here (every
//! order of the operations consistent with real time, pending operations
//! placed anywhere or nowhere) on thousands of small random histories per
//! ready spec, the classic examples, pending operations, and the
//! soundness of hashing the tracker instead of the history.

use mcheck_checker::lin::{
    Entry, History, KvMap, KvOp, KvRet, Log, LogOp, LogRet, MAX_CONFIGS, Operation, RegOp, RegRet, Register,
    SequentialSpec, TrackError, Tracker, check,
};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::hash::{DefaultHasher, Hash, Hasher};

/// The oracle: can the operations not yet `placed` be ordered after the
/// placed ones (state `state`) so that each takes effect after every
/// operation that returned before it was invoked, every completed one
/// returns what it returned, and every completed one is placed?
fn oracle<S: SequentialSpec>(spec: &S, ops: &[Operation<S>], placed: &mut Vec<bool>, state: &S::State) -> bool {
    if ops.iter().zip(placed.iter()).all(|(o, p)| *p || o.ret.is_none()) {
        return true;
    }
    for i in 0..ops.len() {
        if placed[i] {
            continue;
        }
        // Every operation that returned before i was invoked must be placed.
        let blocked = ops
            .iter()
            .enumerate()
            .any(|(j, o)| !placed[j] && o.returned.is_some_and(|r| r < ops[i].call));
        if blocked {
            continue;
        }
        let (next, ret) = spec.apply(state, &ops[i].op);
        if ops[i].ret.as_ref().is_some_and(|r| *r != ret) {
            continue;
        }
        placed[i] = true;
        let ok = oracle(spec, ops, placed, &next);
        placed[i] = false;
        if ok {
            return true;
        }
    }
    false
}

fn oracle_says<S: SequentialSpec>(spec: &S, h: &History<S>) -> bool {
    let ops = h.operations().expect("well formed");
    oracle(spec, &ops, &mut vec![false; ops.len()], &spec.init())
}

/// Whether the tracker accepts every event of `h`.
fn tracker_says<S: SequentialSpec>(h: &History<S>) -> bool {
    let mut t = Tracker::<S>::default();
    for e in h.entries() {
        match t.record(e) {
            Ok(()) => {}
            Err(TrackError::NotLinearizable(_)) => return false,
            Err(e) => panic!("{e}"),
        }
    }
    true
}

/// A simulated process: idle, invoked `op`, or `op` took effect with `ret`.
type Process<S> = Option<(<S as SequentialSpec>::Op, Option<<S as SequentialSpec>::Ret>)>;

/// A random history of `processes` processes and at most `max_ops`
/// operations: a simulated object where an invoked operation takes effect
/// at a random later moment and returns at a random moment after that;
/// with probability 1/4 a response is replaced by `wrong` (which makes
/// many, not all, of those histories non-linearizable). Some operations
/// stay pending.
fn random_history<S: SequentialSpec>(
    rng: &mut Xoshiro256PlusPlus,
    processes: u32,
    max_ops: usize,
    op_of: &dyn Fn(&mut Xoshiro256PlusPlus) -> S::Op,
    wrong: &dyn Fn(&mut Xoshiro256PlusPlus, &S::Ret) -> S::Ret,
) -> History<S> {
    let spec = S::default();
    let mut state = spec.init();
    let mut h = History::new();
    // Per process: None idle, Some((op, None)) invoked, Some((op, Some(ret))) took effect.
    let mut proc: Vec<Process<S>> = vec![None; processes as usize];
    let mut invoked = 0;
    for _ in 0..4 * max_ops {
        let p = rng.random_range(0..processes) as usize;
        match proc[p].take() {
            None if invoked < max_ops => {
                let op = op_of(rng);
                h.invoke(p as u32, op.clone());
                proc[p] = Some((op, None));
                invoked += 1;
            }
            None => {}
            Some((op, None)) => {
                let (next, ret) = spec.apply(&state, &op);
                state = next;
                proc[p] = Some((op, Some(ret)));
            }
            Some((_, Some(ret))) => {
                let ret = if rng.random_range(0..4) == 0 {
                    wrong(rng, &ret)
                } else {
                    ret
                };
                h.respond(p as u32, ret);
            }
        }
    }
    h
}

/// Checks `n` random histories of spec `S`: the search, the tracker and
/// the oracle agree on each. Returns how many were not linearizable.
fn agree<S: SequentialSpec>(
    seed: u64,
    n: usize,
    op_of: &dyn Fn(&mut Xoshiro256PlusPlus) -> S::Op,
    wrong: &dyn Fn(&mut Xoshiro256PlusPlus, &S::Ret) -> S::Ret,
) -> usize {
    let spec = S::default();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut bad = 0;
    for i in 0..n {
        let processes = rng.random_range(1..=4);
        let h = random_history::<S>(&mut rng, processes, 7, op_of, wrong);
        let expected = oracle_says(&spec, &h);
        let got = check(&spec, &h).expect("well formed").is_ok();
        assert_eq!(
            got, expected,
            "history {i}: search says {got}, oracle {expected}: {h:?}"
        );
        assert_eq!(tracker_says(&h), expected, "history {i}: tracker disagrees: {h:?}");
        if !expected {
            bad += 1;
        }
    }
    bad
}

#[test]
fn register_agrees_with_the_oracle() {
    let op_of = |r: &mut Xoshiro256PlusPlus| match r.random_range(0..2) {
        0 => RegOp::Read,
        _ => RegOp::Write(r.random_range(1..4)),
    };
    let wrong = |r: &mut Xoshiro256PlusPlus, ret: &RegRet| match ret {
        RegRet::Ok => RegRet::Ok,
        RegRet::Value(_) => RegRet::Value(r.random_range(0..4)),
    };
    assert_eq!(agree::<Register>(1, 3000, &op_of, &wrong), 1162);
}

#[test]
fn kv_map_agrees_with_the_oracle() {
    let op_of = |r: &mut Xoshiro256PlusPlus| match r.random_range(0..2) {
        0 => KvOp::Get(r.random_range(0..2)),
        _ => KvOp::Put(r.random_range(0..2), r.random_range(1..3)),
    };
    let wrong = |r: &mut Xoshiro256PlusPlus, ret: &KvRet| match ret {
        KvRet::Ok => KvRet::Ok,
        KvRet::Value(_) => KvRet::Value([None, Some(1), Some(2)][r.random_range(0..3)]),
    };
    assert_eq!(agree::<KvMap>(2, 3000, &op_of, &wrong), 1225);
}

#[test]
fn log_agrees_with_the_oracle() {
    let op_of = |r: &mut Xoshiro256PlusPlus| match r.random_range(0..3) {
        0 => LogOp::Read,
        _ => LogOp::Append(r.random_range(1..4)),
    };
    let wrong = |r: &mut Xoshiro256PlusPlus, ret: &LogRet| match ret {
        LogRet::Index(i) => LogRet::Index((i + r.random_range(1..3)) % 4),
        LogRet::Entries(e) => {
            let mut e = e.clone();
            if e.is_empty() || r.random_range(0..2) == 0 {
                e.push(r.random_range(1..4));
            } else {
                e.pop();
            }
            LogRet::Entries(e)
        }
    };
    assert_eq!(agree::<Log>(3, 3000, &op_of, &wrong), 2501);
}

fn reg(events: &[(u32, Option<RegOp>, Option<RegRet>)]) -> History<Register> {
    events
        .iter()
        .map(|(p, op, ret)| match (op, ret) {
            (Some(op), _) => Entry::Invoke { process: *p, op: *op },
            (None, Some(ret)) => Entry::Return { process: *p, ret: *ret },
            (None, None) => unreachable!("an event is an invocation or a response"),
        })
        .collect()
}

fn inv(p: u32, op: RegOp) -> (u32, Option<RegOp>, Option<RegRet>) {
    (p, Some(op), None)
}

fn ret(p: u32, r: RegRet) -> (u32, Option<RegOp>, Option<RegRet>) {
    (p, None, Some(r))
}

/// Sequential consistency, written here: some interleaving of the
/// processes' program orders (real time across processes ignored) is legal.
fn sequentially_consistent(h: &History<Register>) -> bool {
    let ops = h.operations().expect("well formed");
    let mut per: Vec<Vec<&Operation<Register>>> = Vec::new();
    let mut procs: Vec<u32> = Vec::new();
    for o in &ops {
        let k = procs.iter().position(|p| *p == o.process).unwrap_or_else(|| {
            procs.push(o.process);
            per.push(Vec::new());
            procs.len() - 1
        });
        per[k].push(o);
    }
    fn go(per: &[Vec<&Operation<Register>>], at: &mut Vec<usize>, state: u64) -> bool {
        if at.iter().zip(per).all(|(a, p)| *a == p.len()) {
            return true;
        }
        for k in 0..per.len() {
            if at[k] == per[k].len() {
                continue;
            }
            let o = per[k][at[k]];
            let (next, r) = Register.apply(&state, &o.op);
            if o.ret.is_some_and(|x| x != r) {
                continue;
            }
            at[k] += 1;
            let ok = go(per, at, next);
            at[k] -= 1;
            if ok {
                return true;
            }
        }
        false
    }
    go(&per, &mut vec![0; per.len()], 0)
}

#[test]
fn sequentially_consistent_but_not_linearizable() {
    // Herlihy and Wing's point: p0's write of 1 returns before p1 reads,
    // yet p1 reads the initial 0. Some interleaving of the program orders
    // is legal (the read first), but not one that respects real time.
    let h = reg(&[
        inv(0, RegOp::Write(1)),
        ret(0, RegRet::Ok),
        inv(1, RegOp::Read),
        ret(1, RegRet::Value(0)),
    ]);
    assert!(sequentially_consistent(&h));
    let failure = check(&Register, &h)
        .expect("well formed")
        .expect_err("not linearizable");
    assert_eq!(failure.culprit, 1, "the read has no valid place");
    assert_eq!(failure.prefix, vec![0]);
    assert_eq!(failure.would_return, RegRet::Value(1));
    assert!(!tracker_says(&h));
    // Overlapping, the same history is linearizable (the read first).
    let h = reg(&[
        inv(0, RegOp::Write(1)),
        inv(1, RegOp::Read),
        ret(0, RegRet::Ok),
        ret(1, RegRet::Value(0)),
    ]);
    assert!(check(&Register, &h).expect("well formed").is_ok());
    assert!(tracker_says(&h));
}

#[test]
fn a_new_value_read_cannot_be_followed_by_the_old_one() {
    // A write overlapping two reads: the first read sees the new value,
    // the later read (after the first returned) sees the old one.
    let h = reg(&[
        inv(0, RegOp::Write(1)),
        inv(1, RegOp::Read),
        ret(1, RegRet::Value(1)),
        inv(2, RegOp::Read),
        ret(2, RegRet::Value(0)),
        ret(0, RegRet::Ok),
    ]);
    let failure = check(&Register, &h)
        .expect("well formed")
        .expect_err("not linearizable");
    assert_eq!(failure.culprit, 2);
    assert!(!oracle_says(&Register, &h));
    assert!(!tracker_says(&h));
    let text = mcheck_checker::lin::explain(&h, &failure);
    assert!(
        text.starts_with("history not linearizable: p2 Read returned Value(0) (events 3..4)"),
        "{text}"
    );
    assert!(
        text.contains("   4  |   .   ]   p2 Read returns Value(0)   <-"),
        "{text}"
    );
}

#[test]
fn pending_operations_may_or_may_not_take_effect() {
    // p0's write never returns: reads may see it or not, but not both in
    // the order new, then old.
    let pending = inv(0, RegOp::Write(7));
    let seen = reg(&[pending, inv(1, RegOp::Read), ret(1, RegRet::Value(7))]);
    let unseen = reg(&[pending, inv(1, RegOp::Read), ret(1, RegRet::Value(0))]);
    let later = reg(&[
        pending,
        inv(1, RegOp::Read),
        ret(1, RegRet::Value(0)),
        inv(1, RegOp::Read),
        ret(1, RegRet::Value(7)),
    ]);
    let flip = reg(&[
        pending,
        inv(1, RegOp::Read),
        ret(1, RegRet::Value(7)),
        inv(1, RegOp::Read),
        ret(1, RegRet::Value(0)),
    ]);
    for (h, ok) in [(&seen, true), (&unseen, true), (&later, true), (&flip, false)] {
        assert_eq!(check(&Register, h).expect("well formed").is_ok(), ok, "{h:?}");
        assert_eq!(tracker_says(h), ok, "{h:?}");
        assert_eq!(oracle_says(&Register, h), ok, "{h:?}");
    }
    // A read that returns a value nobody wrote, pending write or not.
    let bogus = reg(&[pending, inv(1, RegOp::Read), ret(1, RegRet::Value(3))]);
    let failure = check(&Register, &bogus)
        .expect("well formed")
        .expect_err("no write of 3");
    assert_eq!(failure.culprit, 1);
}

#[test]
fn ill_formed_histories_are_errors() {
    let two_open = reg(&[inv(0, RegOp::Read), inv(0, RegOp::Read)]);
    assert!(check(&Register, &two_open).is_err());
    let mut t = Tracker::<Register>::default();
    t.invoke(0, RegOp::Read).expect("first");
    assert!(matches!(t.invoke(0, RegOp::Read), Err(TrackError::Malformed(_))));
    assert!(matches!(t.respond(1, RegRet::Ok), Err(TrackError::Malformed(_))));
}

#[test]
fn kv_histories_are_checked_key_by_key() {
    // Key 0 is fine; key 1 reads a stale value after the write returned.
    let h: History<KvMap> = [
        Entry::Invoke {
            process: 0,
            op: KvOp::Put(0, 1),
        },
        Entry::Invoke {
            process: 1,
            op: KvOp::Put(1, 5),
        },
        Entry::Return {
            process: 0,
            ret: KvRet::Ok,
        },
        Entry::Return {
            process: 1,
            ret: KvRet::Ok,
        },
        Entry::Invoke {
            process: 0,
            op: KvOp::Get(0),
        },
        Entry::Return {
            process: 0,
            ret: KvRet::Value(Some(1)),
        },
        Entry::Invoke {
            process: 2,
            op: KvOp::Get(1),
        },
        Entry::Return {
            process: 2,
            ret: KvRet::Value(None),
        },
    ]
    .into_iter()
    .collect();
    let failure = check(&KvMap, &h)
        .expect("well formed")
        .expect_err("stale read of key 1");
    assert_eq!(failure.key, Some(1));
    assert_eq!(failure.culprit, 3);
    assert_eq!(failure.would_return, KvRet::Value(Some(5)));
    assert!(!oracle_says(&KvMap, &h));
}

fn hash_of<T: Hash>(t: &T) -> u64 {
    let mut h = DefaultHasher::new();
    t.hash(&mut h);
    h.finish()
}

/// The decision of ARCHITECTURE.md, "Linearizability": the tracker (open operations and
/// configurations), not the history, is the hashed part of the state.
/// Two histories that end in the same tracker have the same verdict on
/// every extension (checked here on all short extensions), and two that
/// differ in what an extension can return get different trackers, so a
/// state cache never prunes an execution whose history would fail.
#[test]
fn the_tracker_decides_the_future_and_the_history_is_not_hashed() {
    // Same tracker, different histories: p0 writes 1 and returns; p1
    // invoked a read before (a) or after (b) the write returned, and its
    // read is still open.
    let a = reg(&[inv(1, RegOp::Read), inv(0, RegOp::Write(1)), ret(0, RegRet::Ok)]);
    let b = reg(&[inv(0, RegOp::Write(1)), ret(0, RegRet::Ok), inv(1, RegOp::Read)]);
    // (c): like (b) but the write returned after the read was invoked and
    // before it, so the read may still see 0.
    let c = reg(&[inv(0, RegOp::Write(1)), inv(1, RegOp::Read), ret(0, RegRet::Ok)]);
    let track = |h: &History<Register>| {
        let mut t = Tracker::<Register>::default();
        h.entries().iter().for_each(|e| t.record(e).expect("linearizable"));
        t
    };
    let (ta, tb, tc) = (track(&a), track(&b), track(&c));
    assert_ne!(ta.history(), tb.history());
    // (a) and (c): the read overlapped the write: it may return 0 or 1.
    assert_eq!(ta, tc);
    assert_eq!(hash_of(&ta), hash_of(&tc));
    // (b): the read started after the write returned: only 1. Merging (b)
    // with (a) would let a cache prune (b)'s failing extension "returns 0".
    assert_ne!(ta, tb);
    let zero = Entry::Return {
        process: 1,
        ret: RegRet::Value(0),
    };
    for (t, ok) in [(&ta, true), (&tb, false), (&tc, true)] {
        let mut t = t.clone();
        assert_eq!(t.record(&zero).is_ok(), ok);
    }
    // Equal trackers agree on every extension of up to 3 events.
    let events: Vec<Entry<Register>> = vec![
        Entry::Invoke {
            process: 0,
            op: RegOp::Read,
        },
        Entry::Invoke {
            process: 0,
            op: RegOp::Write(2),
        },
        Entry::Return {
            process: 0,
            ret: RegRet::Ok,
        },
        Entry::Return {
            process: 0,
            ret: RegRet::Value(1),
        },
        Entry::Return {
            process: 1,
            ret: RegRet::Value(0),
        },
        Entry::Return {
            process: 1,
            ret: RegRet::Value(1),
        },
        Entry::Return {
            process: 1,
            ret: RegRet::Value(2),
        },
    ];
    let mut compared = 0;
    for x in &events {
        for y in &events {
            for z in &events {
                let run = |t: &Tracker<Register>| {
                    let mut t = t.clone();
                    [x, y, z]
                        .iter()
                        .map(|e| t.record(e).map_err(|e| matches!(e, TrackError::NotLinearizable(_))))
                        .collect::<Vec<_>>()
                };
                assert_eq!(run(&ta), run(&tc));
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 343);
}

#[test]
fn failed_operations_had_no_effect() {
    // p0's write of 5 is known to have failed: a read of 5 has no place,
    // a read of 0 is fine, and the tracker agrees.
    let base = || {
        let mut h = History::<Register>::new();
        h.invoke(0, RegOp::Write(5));
        h.invoke(1, RegOp::Read);
        h.fail(0);
        h
    };
    let mut five = base();
    five.respond(1, RegRet::Value(5));
    let mut zero = base();
    zero.respond(1, RegRet::Value(0));
    assert_eq!(five.operations().expect("well formed").len(), 1);
    assert!(check(&Register, &five).expect("well formed").is_err());
    assert!(!tracker_says(&five));
    assert!(check(&Register, &zero).expect("well formed").is_ok());
    assert!(tracker_says(&zero));
    // A write that a completed read already saw cannot fail afterwards.
    let mut h = History::<Register>::new();
    h.invoke(0, RegOp::Write(5));
    h.invoke(1, RegOp::Read);
    h.respond(1, RegRet::Value(5));
    h.fail(0);
    assert!(check(&Register, &h).expect("well formed").is_err());
    assert!(!tracker_says(&h));
    let text = mcheck_checker::lin::timeline(&h, &[]);
    assert!(text.contains("   3  ]   .   p0 Write(5) failed (no effect)"), "{text}");
}

/// P(n, k): sequences of k distinct items of n.
fn arrangements(n: u64, k: u64) -> u64 {
    (n - k + 1..=n).product()
}

/// `pending` appends that never return, then process 0 appends and gets
/// index `at`: the tracker keeps one configuration per log it can be in,
/// and overflows (stops checking, reports nothing) past `MAX_CONFIGS`.
fn pending_then_one(pending: u32, at: u64) -> Tracker<Log> {
    let mut t = Tracker::<Log>::default();
    for p in 1..=pending {
        t.invoke(p, LogOp::Append(u64::from(p))).unwrap();
    }
    t.invoke(0, LogOp::Append(0)).unwrap();
    t.respond(0, LogRet::Index(at)).unwrap();
    t
}

#[test]
fn pending_operations_multiply_configurations_up_to_the_bound() {
    // Logs with 0 at position `at`: `at` of the n pending appends before
    // it in some order, then any sequence of the others after it.
    let expected = |n: u64, at: u64| arrangements(n, at) * (0..=n - at).map(|m| arrangements(n - at, m)).sum::<u64>();
    for (n, at) in [(0, 0), (1, 0), (1, 1), (3, 1), (4, 1), (5, 2)] {
        let t = pending_then_one(n as u32, at);
        assert!(!t.overflowed());
        assert_eq!(t.configurations() as u64, expected(n, at), "n={n} at={at}");
    }
    // 7 pending: 13,700 logs, past the bound of 4,096.
    assert!(expected(7, 0) > MAX_CONFIGS as u64);
    let mut t = pending_then_one(7, 0);
    assert!(t.overflowed());
    // From then on nothing is checked, and nothing fails.
    t.invoke(0, LogOp::Read).unwrap();
    t.respond(0, LogRet::Entries(vec![42])).unwrap();
    assert!(t.overflowed());
}

/// The tracker's history: what was recorded, in order; a copy keeps the
/// events before it and records its own apart from the original's; a
/// history of many events is freed without recursing through them.
#[test]
fn a_trackers_copies_share_their_past_and_keep_their_own_events() {
    let mut t = Tracker::<Register>::default();
    t.record(&Entry::Invoke {
        process: 0,
        op: RegOp::Write(1),
    })
    .expect("well formed");
    let mut u = t.clone();
    t.record(&Entry::Return {
        process: 0,
        ret: RegRet::Ok,
    })
    .expect("linearizable");
    u.record(&Entry::Fail { process: 0 }).expect("linearizable");
    let written = reg(&[inv(0, RegOp::Write(1)), ret(0, RegRet::Ok)]);
    assert_eq!(t.history(), written);
    let mut failed = History::<Register>::new();
    failed.invoke(0, RegOp::Write(1));
    failed.fail(0);
    assert_eq!(u.history(), failed);
    assert_eq!(u.history().entries().len(), 2);
    // 400,000 events (the recursion a derived drop would take overflows a
    // thread's stack long before).
    let mut long = Tracker::<Register>::default();
    for _ in 0..200_000 {
        long.record(&Entry::Invoke {
            process: 0,
            op: RegOp::Read,
        })
        .expect("well formed");
        long.record(&Entry::Return {
            process: 0,
            ret: RegRet::Value(0),
        })
        .expect("linearizable");
    }
    assert_eq!(long.history().len(), 400_000);
    let copy = long.clone();
    drop(long);
    assert_eq!(copy.history().len(), 400_000);
    drop(copy);
}

/// A tracker crosses a process boundary (the distributed SES) whole: sent
/// at every point of random KV histories (JSON here; timely encodes with
/// bincode through the same serde impls), it comes back equal, with the
/// same hash, the same history, and the same verdict on the rest.
#[test]
fn a_tracker_round_trips_through_serde_with_its_history() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(17);
    let op_of = |r: &mut Xoshiro256PlusPlus| match r.random_range(0..2) {
        0 => KvOp::Get(r.random_range(0..2)),
        _ => KvOp::Put(r.random_range(0..2), r.random_range(0..3)),
    };
    let wrong = |r: &mut Xoshiro256PlusPlus, _: &KvRet| KvRet::Value(Some(r.random_range(0..3)));
    let (mut sent, mut failed) = (0, 0);
    for _ in 0..100 {
        let h = random_history::<KvMap>(&mut rng, 3, 6, &op_of, &wrong);
        let mut t = Tracker::<KvMap>::default();
        for (i, e) in h.entries().iter().enumerate() {
            let copy: Tracker<KvMap> = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
            assert_eq!((&copy, hash_of(&copy)), (&t, hash_of(&t)));
            assert_eq!(copy.history(), t.history());
            let rest = |mut t: Tracker<KvMap>| h.entries()[i..].iter().all(|e| t.record(e).is_ok());
            assert_eq!(rest(copy), rest(t.clone()));
            sent += 1;
            if t.record(e).is_err() {
                failed += 1;
                break;
            }
        }
    }
    assert_eq!((sent, failed), (857, 73));
}
