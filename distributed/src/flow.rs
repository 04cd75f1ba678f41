//! The timely dataflow of the distributed SES (ARCHITECTURE.md,
//! "Distributed SES"): one operator per worker on a feedback loop whose
//! exchange sends each successor to its owner.
//!
//! Timestamps are `bound << 32 | hop`: a successor sent at time t arrives at
//! t + 1 (the loop's summary), so the transfers of stratum b have times in
//! `[b << 32, (b + 1) << 32)`. A worker with entries deferred to stratum b
//! holds a capability at `b << 32`; it resumes them once the input frontier
//! has passed `b << 32`, which timely's progress tracking says exactly when
//! no transfer of an earlier stratum is in flight or can still be made on
//! any worker of any process. A run ends when no worker holds a
//! capability: the frontier is empty.
//!
//! Transfers leave in batches: timely's exchange buffers them per
//! destination and timestamp, and a worker resuming a stratum stops after
//! a batch (`Local::resume`), keeps the stratum's capability and asks to
//! be scheduled again, so that the batch goes (and what other workers sent
//! is taken in) before it resumes the rest.

use crate::local::Local;
use crate::message::{Msg, Summary};
use mcheck_checker::search::order::Composed;
use mcheck_checker::search::part::{Piece, Remote};
use mcheck_checker::{Explorer, Program};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::vec::{Broadcast, Map};
use timely::dataflow::operators::{Capability, ConnectLoop, Exchange as _, Feedback, Inspect, ToStream};
use timely::worker::Worker;

/// The time at which stratum `bound` starts.
fn start_of(bound: u32) -> u64 {
    u64::from(bound) << 32
}

/// Run the search on this worker; the summaries of all workers on worker 0,
/// `None` elsewhere.
pub fn run_worker<P, E>(worker: &mut Worker, local: Local<P, E>, process: u32) -> Option<Vec<Summary>>
where
    P: Program<State: Serialize + DeserializeOwned + 'static> + 'static,
    E: Explorer + Serialize + DeserializeOwned + 'static,
{
    let local = Rc::new(RefCell::new(local));
    let shared = Rc::clone(&local);
    worker.dataflow::<u64, _, _>(move |scope| {
        let (handle, cycle) = scope.feedback::<Vec<Msg<P::State, Composed<E>>>>(1u64);
        cycle
            .unary_frontier(
                Exchange::new(|m: &Msg<P::State, Composed<E>>| u64::from(m.to())),
                "SES",
                move |initial: Capability<u64>, info| {
                    let activator = scope.activator_for(info.address);
                    let mut initial = Some(initial);
                    // Capabilities for the strata with deferred entries.
                    let mut waiting: BTreeMap<u32, Capability<u64>> = BTreeMap::new();
                    move |(input, frontier), output| {
                        let mut l = shared.borrow_mut();
                        let keep =
                            |l: &Local<P, E>, cap: &Capability<u64>, waiting: &mut BTreeMap<u32, Capability<u64>>| {
                                for b in l.waiting() {
                                    waiting.entry(b).or_insert_with(|| cap.delayed(&start_of(b)));
                                }
                            };
                        if let Some(cap) = initial.take() {
                            l.start();
                            output.session(&cap).give_iterator(l.outbox());
                            keep(&l, &cap, &mut waiting);
                        }
                        input.for_each_stamp(|cap, data| {
                            let Some(cap) = cap.retain_least(output.output_index()) else {
                                return;
                            };
                            let bound = (*cap.time() >> 32) as u32;
                            for batch in data {
                                l.receive(bound, batch.drain(..));
                            }
                            output.session(&cap).give_iterator(l.outbox());
                            keep(&l, &cap, &mut waiting);
                        });
                        // Strata whose predecessors are finished everywhere.
                        while let Some((&bound, _)) = waiting.iter().next() {
                            if l.stopped() || frontier.frontier().less_equal(&start_of(bound)) {
                                break;
                            }
                            let cap = waiting.remove(&bound).expect("the first waiting stratum");
                            let done = l.resume(bound);
                            output.session(&cap).give_iterator(l.outbox());
                            keep(&l, &cap, &mut waiting);
                            if !done {
                                // A batch is out: let it go, and come back.
                                activator.activate();
                                break;
                            }
                        }
                        if l.stopped() {
                            waiting.clear();
                        }
                    }
                },
            )
            .connect_loop(handle);
    });
    while worker.step_or_park(None) {}
    let mut summary = local.borrow_mut().finish(process);
    resolve(worker, &local, &mut summary);
    gather(worker, summary)
}

/// A piece of a path, for the worker that asked for it.
type Answer = (u32, Piece);

/// Puts each worker's counterexample path together. A violation's path
/// is held by its worker back to the first step that another worker
/// took (the state it received), and by that worker back to the state it
/// received, and so on. In each round every worker whose path still
/// starts elsewhere asks the worker that holds the piece before it, which
/// answers with the piece and where the one before it is; the rounds go
/// on until no worker asks. A round and the check that one is needed are
/// dataflows of their own, which every worker builds.
fn resolve<P, E>(worker: &mut Worker, local: &Rc<RefCell<Local<P, E>>>, summary: &mut Summary)
where
    P: Program<State: Serialize + DeserializeOwned + 'static> + 'static,
    E: Explorer + Serialize + DeserializeOwned + 'static,
{
    loop {
        let ask = summary.violation.as_ref().and_then(|v| v.before);
        if !anyone(worker, ask.is_some()) {
            return;
        }
        let piece = round(worker, local, ask);
        if let (Some(v), Some((_, (pairs, before)))) = (summary.violation.as_mut(), piece) {
            v.path.splice(0..0, pairs);
            v.before = before;
        }
    }
}

/// Whether any worker says `yes`.
fn anyone(worker: &mut Worker, yes: bool) -> bool {
    let sink = Rc::new(Cell::new(false));
    let into = Rc::clone(&sink);
    worker.dataflow::<u64, _, _>(move |scope| {
        Some(yes)
            .to_stream(scope)
            .container::<Vec<bool>>()
            .broadcast()
            .inspect(move |&yes: &bool| into.set(into.get() || yes));
    });
    while worker.step_or_park(None) {}
    sink.get()
}

/// One round of [`resolve`]: this worker asks for the piece that `ask`
/// names, if any, and answers the others' questions; its answer.
fn round<P, E>(worker: &mut Worker, local: &Rc<RefCell<Local<P, E>>>, ask: Option<Remote>) -> Option<Answer>
where
    P: Program<State: Serialize + DeserializeOwned + 'static> + 'static,
    E: Explorer + Serialize + DeserializeOwned + 'static,
{
    let me = worker.index() as u32;
    let sink = Rc::new(RefCell::new(None));
    let into = Rc::clone(&sink);
    let holder = Rc::clone(local);
    worker.dataflow::<u64, _, _>(move |scope| {
        ask.map(|(at, node)| (at, node, me))
            .to_stream(scope)
            .container::<Vec<(u32, u32, u32)>>()
            .exchange(|q: &(u32, u32, u32)| u64::from(q.0))
            .map(move |(_, node, from)| (from, holder.borrow().path_here(node)))
            .exchange(|a: &Answer| u64::from(a.0))
            .inspect(move |a: &Answer| *into.borrow_mut() = Some(a.clone()));
    });
    while worker.step_or_park(None) {}
    sink.take()
}

/// Every worker's summary, on worker 0.
fn gather(worker: &mut Worker, summary: Summary) -> Option<Vec<Summary>> {
    let sink = Rc::new(RefCell::new(Vec::new()));
    let into = Rc::clone(&sink);
    worker.dataflow::<u64, _, _>(move |scope| {
        Some(summary)
            .to_stream(scope)
            .container::<Vec<Summary>>()
            .exchange(|_| 0)
            .inspect(move |s: &Summary| into.borrow_mut().push(s.clone()));
    });
    while worker.step_or_park(None) {}
    let all = sink.take();
    (worker.index() == 0).then_some(all)
}
