//! The hand-over of an SES search stopped by its state budget to the
//! sampling phase of the hybrid strategy (ARCHITECTURE.md, "Hybrid"):
//! everything the search left unexplored, as roots. A root is a state, the
//! order at the next choice it has not taken, and the path from the initial
//! state (the advances, its own included).
//!
//! The roots, in the search's order: the live frames of the stack (bottom
//! to top), the entries of the stratum not resumed yet, then the next
//! stratum's frontier. Together they hold every choice the search has not
//! taken: each root's remaining choices, and what lies below them.

use super::{Search, SearchResult, Stop};
use crate::cache::{AnyCache, FingerprintSet};
use crate::config::Config;
use crate::program::Program;
use crate::report::{BoundedBy, Report};
use crate::search::error::SearchError;
use crate::search::order::ChoiceOrder;
use crate::watch::{Watched, Watching};

/// A state the exhaustive phase left with choices it did not take.
#[derive(Debug)]
pub(in crate::search) struct Root<S, O> {
    /// The state.
    pub(in crate::search) state: S,
    /// The order at the state's first choice not taken.
    pub(in crate::search) order: O,
    /// The advances from the initial state, as (depth, count), the last
    /// ones (`taken` at `depth`) at the state itself.
    pub(in crate::search) advances: Vec<(u32, u32)>,
    /// The state's step.
    pub(in crate::search) depth: u32,
    /// The advances already made at the state (its choices taken).
    pub(in crate::search) taken: u32,
    /// The choices it has left (taken + left: all its choices).
    pub(in crate::search) left: u32,
}

/// Runs the stratified search on one thread and, when it stops at
/// `config.max_states` (checked at the step that reaches it: a
/// deterministic stopping point), returns what it left unexplored as
/// roots (`None` otherwise: the search's outcome stands).
#[allow(clippy::type_complexity)]
pub(in crate::search) fn run_to_roots<P: Program, O: ChoiceOrder>(
    program: Watched<'_, P>,
    root: O,
    config: &Config,
    report: Report,
) -> Result<(SearchResult, Option<Vec<Root<P::State, O>>>), SearchError> {
    // One instance per program type in builds with debug assertions (the
    // tests'): `Watching::<_, true>` runs without a watch too (see
    // `Watching`).
    match program.watch() {
        #[cfg(not(debug_assertions))]
        None => roots_as::<P, O, false>(program, root, config, report),
        _ => roots_as::<P, O, true>(program, root, config, report),
    }
}

/// [`run_to_roots`] instantiated for a watch there (`W`) or not.
#[allow(clippy::type_complexity)]
fn roots_as<P: Program, O: ChoiceOrder, const W: bool>(
    program: Watched<'_, P>,
    root: O,
    config: &Config,
    report: Report,
) -> Result<(SearchResult, Option<Vec<Root<P::State, O>>>), SearchError> {
    let cache = AnyCache::Local(FingerprintSet::new(super::cache_budget(config)));
    let mut search = Search::<P, O, W>::new(Watching::new(program), config, cache, report);
    search.keep_rest = true;
    search.exact_states = config.max_states.unwrap_or(u64::MAX);
    let stop = search.explore(root, |s, work| s.run_work(work))?;
    let roots = match stop {
        Some(Stop::Budget(BoundedBy::States)) => Some(search.roots()?),
        _ => None,
    };
    Ok((search.finish(stop), roots))
}

impl<P: Program, O: ChoiceOrder, const W: bool> Search<'_, P, O, W> {
    /// What the stopped search left unexplored (see the module docs).
    fn roots(&mut self) -> Result<Vec<Root<P::State, O>>, SearchError> {
        let mut roots = Vec::new();
        for k in 0..self.stack.len() {
            let f = &self.stack[k];
            if f.state.is_none() || f.next >= f.total {
                continue;
            }
            let node = self.materialize(k)?;
            let f = &mut self.stack[k];
            let (Some(state), Some(order)) = (f.state.take(), f.order.take()) else {
                continue;
            };
            let (depth, taken, left) = (f.depth, f.next, f.total - f.next);
            roots.push(self.root(state, order, node, depth, taken, Some(left)));
        }
        let rest = std::mem::take(&mut self.rest);
        let frontier = std::mem::take(&mut self.frontier);
        for e in rest.into_iter().chain(frontier) {
            roots.push(self.root(e.state, e.order, e.node, e.depth, e.next, None));
        }
        Ok(roots.into_iter().filter(|r| r.left > 0).collect())
    }

    /// The root of `state` at path `node` and `depth`, `taken` choices
    /// taken, `left` left (`None`: count them).
    fn root(
        &mut self,
        state: P::State,
        order: O,
        node: u32,
        depth: u32,
        taken: u32,
        left: Option<u32>,
    ) -> Root<P::State, O> {
        let left = left.unwrap_or_else(|| {
            let (en, total) = self.load_enabled(&state);
            self.free_enabled(en.start as usize);
            total.saturating_sub(taken)
        });
        let mut advances = self.arena.expand(node);
        if taken > 0 {
            advances.push((depth, taken));
        }
        Root {
            state,
            order,
            advances,
            depth,
            taken,
            left,
        }
    }
}
