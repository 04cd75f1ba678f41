//! Linearizability of one history: Wing and Gong's search with Lowe's
//! memoization, key by key for P-compositional specs.
//!
//! **The search** (Wing and Gong 1993; Lowe, "Testing for linearizability",
//! 2017): the history is a list of call and return entries. Walking the
//! list from its head, a call entry is an operation that may take effect
//! now: apply it to the spec state; if its return value matches the
//! recorded one, *lift* it (remove its call and return entries), push it
//! on a stack and restart from the head. Reaching a return entry means that
//! some operation must take effect before it and none could: backtrack
//! (pop the last operation, put its entries back, try the next call after
//! it). The history is linearizable when the list becomes empty. A pending
//! operation gets a return entry at the end that accepts any value: taking
//! effect after every completed operation is the same as never taking
//! effect, so it "may or may not have happened".
//!
//! **Memoization** (Lowe): the search's position is the set of operations
//! linearized (a bitset) and the spec state; the set of positions already
//! reached (a hashbrown set with the fixed ahash keys) prunes every
//! second arrival, which may only repeat the search from there.
//!
//! **Cost bound**: each position is expanded at most once, and expanding
//! one walks the list once (O(n)); a linearized set always contains every
//! operation that returned before the first operation it lacks was
//! invoked, so with w the largest number of operations open at one
//! instant there are at most n * 2^w such sets, and the work is at most
//! O(n^2 * 2^w * m) for m spec states per set (m = 1 for a register whose
//! writes are distinct). P-compositionality ([`SequentialSpec::key`])
//! replaces n and w by those of each key's part.

use super::history::{History, HistoryError, Operation};
use super::spec::SequentialSpec;
use crate::cache::{FIXED_HASHER, FixedHashSet};

/// Why a history is not linearizable: the operation that has no valid
/// place after the longest linearizable prefix the search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotLinearizable<S: SequentialSpec> {
    /// The operations of the history ([`History::operations`]).
    pub operations: Vec<Operation<S>>,
    /// The key of the part that failed (P-compositional specs).
    pub key: Option<u64>,
    /// The longest prefix linearized, indices into `operations`, in
    /// linearization order.
    pub prefix: Vec<usize>,
    /// The spec state after `prefix`.
    pub state: S::State,
    /// The operation (index into `operations`) whose response came before
    /// it could take effect.
    pub culprit: usize,
    /// What the culprit would return if it took effect after `prefix`.
    pub would_return: S::Ret,
}

/// The result of checking a history that is well formed.
pub type Verdict<S> = Result<(), Box<NotLinearizable<S>>>;

/// Check that `history` is linearizable with respect to `spec`.
///
/// Errors: the history is not well formed (the outer `Err`), or it is not
/// linearizable (`Ok(Err(..))`, with the culprit).
pub fn check<S: SequentialSpec>(spec: &S, history: &History<S>) -> Result<Verdict<S>, HistoryError> {
    let operations = history.operations()?;
    let keys: Option<Vec<u64>> = operations.iter().map(|o| spec.key(&o.op)).collect();
    let mut parts: Vec<(Option<u64>, Vec<usize>)> = Vec::new();
    match keys {
        Some(keys) => {
            let mut seen: hashbrown::HashMap<u64, usize, ahash::RandomState> =
                hashbrown::HashMap::with_hasher(FIXED_HASHER);
            for (i, k) in keys.into_iter().enumerate() {
                let slot = *seen.entry(k).or_insert_with(|| {
                    parts.push((Some(k), Vec::new()));
                    parts.len() - 1
                });
                parts[slot].1.push(i);
            }
        }
        None => parts.push((None, (0..operations.len()).collect())),
    }
    for (key, members) in parts {
        if let Err(mut failure) = search(spec, &operations, &members) {
            failure.key = key;
            failure.operations = operations;
            return Ok(Err(failure));
        }
    }
    Ok(Ok(()))
}

/// One entry of the list: a call or a return of an operation.
#[derive(Clone, Copy)]
struct Node {
    /// Index into the operations.
    op: usize,
    call: bool,
    /// For a call: its return's node.
    matching: usize,
    prev: usize,
    next: usize,
}

const HEAD: usize = 0;

/// The list of entries of `members` in history order (pending returns at
/// the end, in invocation order), as a doubly linked list with a head
/// sentinel at index 0 (next of the last node: 0).
fn entries<S: SequentialSpec>(operations: &[Operation<S>], members: &[usize]) -> Vec<Node> {
    let end = usize::MAX / 2;
    // (time, op, call): pending returns after everything, in call order.
    let mut events: Vec<(usize, usize, bool)> = Vec::with_capacity(2 * members.len());
    for &i in members {
        let o = &operations[i];
        events.push((o.call, i, true));
        events.push((o.returned.unwrap_or(end + o.call), i, false));
    }
    events.sort_unstable();
    let mut nodes = Vec::with_capacity(events.len() + 1);
    nodes.push(Node {
        op: usize::MAX,
        call: false,
        matching: 0,
        prev: events.len(),
        next: if events.is_empty() { HEAD } else { 1 },
    });
    let mut return_of: hashbrown::HashMap<usize, usize, ahash::RandomState> =
        hashbrown::HashMap::with_hasher(FIXED_HASHER);
    for (k, &(_, op, call)) in events.iter().enumerate() {
        let at = k + 1;
        if !call {
            return_of.insert(op, at);
        }
        nodes.push(Node {
            op,
            call,
            matching: 0,
            prev: at - 1,
            next: if at == events.len() { HEAD } else { at + 1 },
        });
    }
    for n in nodes.iter_mut().skip(1) {
        if n.call {
            n.matching = return_of[&n.op];
        }
    }
    nodes
}

fn unlink(nodes: &mut [Node], at: usize) {
    let (p, n) = (nodes[at].prev, nodes[at].next);
    nodes[p].next = n;
    nodes[n].prev = p;
}

fn relink(nodes: &mut [Node], at: usize) {
    let (p, n) = (nodes[at].prev, nodes[at].next);
    nodes[p].next = at;
    nodes[n].prev = at;
}

/// A bitset over the members of one part.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Bits(Vec<u64>);

impl Bits {
    fn flip(&mut self, i: usize) {
        self.0[i / 64] ^= 1 << (i % 64);
    }
}

/// Wing and Gong's search over the operations `members` (see the module
/// docs).
fn search<S: SequentialSpec>(
    spec: &S,
    operations: &[Operation<S>],
    members: &[usize],
) -> Result<(), Box<NotLinearizable<S>>> {
    let mut nodes = entries(operations, members);
    // Position of each member in the bitset.
    let mut slot: hashbrown::HashMap<usize, usize, ahash::RandomState> = hashbrown::HashMap::with_hasher(FIXED_HASHER);
    for (k, &i) in members.iter().enumerate() {
        slot.insert(i, k);
    }
    let mut bits = Bits(vec![0; members.len().div_ceil(64)]);
    let mut seen: FixedHashSet<(Bits, S::State)> = FixedHashSet::with_hasher(FIXED_HASHER);
    let mut state = spec.init();
    // The call nodes lifted, with the state before each.
    let mut stack: Vec<(usize, S::State)> = Vec::new();
    // The deepest blocking point: (depth, culprit, prefix, state).
    let mut deepest: Option<(usize, usize, Vec<usize>, S::State)> = None;
    let mut at = nodes[HEAD].next;
    while nodes[HEAD].next != HEAD {
        let node = nodes[at];
        if node.call {
            let o = &operations[node.op];
            let (next, ret) = spec.apply(&state, &o.op);
            if o.ret.as_ref().is_none_or(|r| *r == ret) {
                bits.flip(slot[&node.op]);
                if seen.insert((bits.clone(), next.clone())) {
                    stack.push((at, std::mem::replace(&mut state, next)));
                    unlink(&mut nodes, at);
                    unlink(&mut nodes, node.matching);
                    at = nodes[HEAD].next;
                    continue;
                }
                bits.flip(slot[&node.op]);
            }
            at = node.next;
        } else {
            if deepest.as_ref().is_none_or(|d| stack.len() > d.0) {
                let prefix = stack.iter().map(|(n, _)| nodes[*n].op).collect();
                deepest = Some((stack.len(), node.op, prefix, state.clone()));
            }
            let Some((call, before)) = stack.pop() else {
                let (_, culprit, prefix, state) = deepest.expect("set at this return entry");
                let would_return = spec.apply(&state, &operations[culprit].op).1;
                return Err(Box::new(NotLinearizable {
                    operations: Vec::new(),
                    key: None,
                    prefix,
                    state,
                    culprit,
                    would_return,
                }));
            };
            let op = nodes[call].op;
            bits.flip(slot[&op]);
            state = before;
            let matching = nodes[call].matching;
            relink(&mut nodes, matching);
            relink(&mut nodes, call);
            at = nodes[call].next;
        }
    }
    Ok(())
}
