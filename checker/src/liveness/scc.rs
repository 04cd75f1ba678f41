//! The fair hot cycles of a [`Graph`]: Tarjan's strongly connected
//! components of the hot subgraph (iterative), each checked for weak
//! fairness (ARCHITECTURE.md, "Liveness").
//!
//! An SCC C of hot states with at least one edge inside holds a fair cycle
//! iff no actor is enabled at every state of C without taking an edge
//! inside C. If one is, every cycle in C leaves it enabled throughout and
//! never runs it: unfair. If none is, the cycle through all of C's states
//! and edges is fair. Weak fairness needs no further refinement.

use super::graph::{Graph, NONE};

/// The states of the fair hot SCC whose first-reached state is reached
/// first (the shortest stem), if any.
pub(super) fn fair_hot_scc(g: &Graph) -> Option<Vec<u32>> {
    let actors = g.edges.iter().map(|e| e.actor as usize + 1).max().unwrap_or(0);
    let mut best: Option<(u32, Vec<u32>)> = None;
    for_each_hot_scc(g, |scc| {
        let first = scc.iter().copied().min().unwrap_or(NONE);
        // A single state is a cycle only with a self-loop.
        let cyclic = scc.len() > 1 || g.out(first).iter().any(|e| e.to == first);
        let better = best.as_ref().is_none_or(|b| first < b.0);
        if cyclic && better && is_fair(g, scc, actors) {
            best = Some((first, scc.to_vec()));
        }
    });
    best.map(|b| b.1)
}

/// Whether the nontrivial SCC `scc` (its states) holds a weakly fair cycle.
/// `actors` bounds the actor ids plus one.
pub(super) fn is_fair(g: &Graph, scc: &[u32], actors: usize) -> bool {
    let inside = membership(scc);
    // enabled_at[a]: states of the SCC where actor a is enabled;
    // steps[a]: whether a has an edge inside.
    let (mut enabled_at, mut steps) = (vec![0usize; actors], vec![false; actors]);
    let mut internal = false;
    for &i in scc {
        let mut last = None;
        for e in g.out(i) {
            if last != Some(e.actor) {
                enabled_at[e.actor as usize] += 1;
                last = Some(e.actor);
            }
            if e.to != NONE && inside(e.to) {
                steps[e.actor as usize] = true;
                internal = true;
            }
        }
    }
    internal && (0..actors).all(|a| enabled_at[a] < scc.len() || steps[a])
}

/// A membership test for `scc` (sorted copy, binary search).
pub(super) fn membership(scc: &[u32]) -> impl Fn(u32) -> bool + use<> {
    let mut sorted = scc.to_vec();
    sorted.sort_unstable();
    move |i| sorted.binary_search(&i).is_ok()
}

/// Call `f` with every strongly connected component of the subgraph of hot
/// states (edges between hot states), trivial ones included.
fn for_each_hot_scc(g: &Graph, mut f: impl FnMut(&[u32])) {
    let n = g.len();
    let mut index = vec![NONE; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    // The call stack: (state, next edge position).
    let mut calls: Vec<(u32, u32)> = Vec::new();
    let mut counter = 0u32;
    for root in 0..n as u32 {
        if !g.hot[root as usize] || index[root as usize] != NONE {
            continue;
        }
        calls.push((root, g.offsets[root as usize]));
        index[root as usize] = counter;
        low[root as usize] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&(v, pos)) = calls.last() {
            let end = g.offsets[v as usize + 1];
            if pos < end {
                let w = g.edges[pos as usize].to;
                if let Some(top) = calls.last_mut() {
                    top.1 += 1;
                }
                if w == NONE || !g.hot[w as usize] {
                    continue;
                }
                if index[w as usize] == NONE {
                    index[w as usize] = counter;
                    low[w as usize] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w as usize] = true;
                    calls.push((w, g.offsets[w as usize]));
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(index[w as usize]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(u, _)) = calls.last() {
                low[u as usize] = low[u as usize].min(low[v as usize]);
            }
            if low[v as usize] == index[v as usize] {
                let at = stack.iter().rposition(|&x| x == v).unwrap_or(0);
                let scc = stack.split_off(at);
                for &x in &scc {
                    on_stack[x as usize] = false;
                }
                f(&scc);
            }
        }
    }
}
