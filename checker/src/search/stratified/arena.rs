//! Paths as an arena of nodes: a frontier entry's or a violation's path is
//! one index, derived from the stack only when it is needed.

use super::{NONE, REMOTE, ROOT, Search};
use crate::program::Program;
use crate::search::error::SearchError;
use crate::search::order::ChoiceOrder;

/// `count` moves to the next choice at step `depth`, after the path
/// `parent`; or, with the parent [`REMOTE`], the path that worker `depth`
/// of a distributed search holds as its node `count`.
#[derive(Clone, Copy, Debug)]
pub(in crate::search) struct PathNode {
    pub(super) parent: u32,
    pub(super) depth: u32,
    pub(super) count: u32,
}

/// A path that another worker of a distributed search holds: (worker,
/// path node there).
pub type Remote = (u32, u32);

/// A piece of a path: its (depth, count) pairs held here, and the path
/// before them if another worker holds it.
pub type Piece = (Vec<(u32, u32)>, Option<Remote>);

/// An arena of path nodes. Ids below `below.len()` name the read-only
/// nodes of earlier strata (a parallel worker's view of the merged arena;
/// empty in a sequential search), the others `nodes`.
#[derive(Default)]
pub(super) struct Arena<'a> {
    pub(super) below: &'a [PathNode],
    pub(super) nodes: Vec<PathNode>,
}

impl Arena<'_> {
    pub(super) fn push(&mut self, node: PathNode) -> Result<u32, SearchError> {
        let id = self.below.len() + self.nodes.len();
        if id >= REMOTE as usize {
            return Err(too_many_nodes());
        }
        self.nodes.push(node);
        Ok(id as u32)
    }

    /// The path as (depth, count) pairs from the initial state on.
    pub(super) fn expand(&self, node: u32) -> Vec<(u32, u32)> {
        self.expand_here(node).0
    }

    /// The path's pairs held here, from the initial state on or from the
    /// path that another worker holds (then named as (worker, node)).
    pub(super) fn expand_here(&self, mut node: u32) -> Piece {
        let mut out = Vec::new();
        let mut before = None;
        while node != ROOT {
            let n = self.get(node);
            if n.parent == REMOTE {
                before = Some((n.depth, n.count));
                break;
            }
            out.push((n.depth, n.count));
            node = n.parent;
        }
        out.reverse();
        (out, before)
    }

    /// Node `id`.
    fn get(&self, id: u32) -> PathNode {
        let i = id as usize;
        match self.below.get(i) {
            Some(n) => *n,
            None => self.nodes[i - self.below.len()],
        }
    }

    /// The path that node `id` names, if another worker holds all of it:
    /// (worker, node there).
    pub(super) fn remote(&self, id: u32) -> Option<Remote> {
        (id != ROOT)
            .then(|| self.get(id))
            .filter(|n| n.parent == REMOTE)
            .map(|n| (n.depth, n.count))
    }

    /// Appends `nodes`, numbered from `base` on (after the read-only nodes
    /// a worker saw), renumbering their ids and returning the renumbering
    /// for the ids that refer to them.
    pub(super) fn append(&mut self, nodes: &[PathNode], base: usize) -> Result<Remap, SearchError> {
        let offset = self.nodes.len();
        if offset + nodes.len() >= REMOTE as usize || base >= REMOTE as usize {
            return Err(too_many_nodes());
        }
        let remap = Remap {
            base: base as u32,
            offset: offset as u32,
        };
        self.nodes.extend(nodes.iter().map(|n| PathNode {
            parent: remap.apply(n.parent),
            ..*n
        }));
        Ok(remap)
    }
}

/// The renumbering of a worker's path nodes appended to the main arena:
/// ids from `base` on (the worker's own) move to `offset` on; the others
/// (earlier strata's, and [`ROOT`]) stay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::search) struct Remap {
    base: u32,
    offset: u32,
}

impl Remap {
    /// The renumbering that changes nothing.
    pub(in crate::search) const NONE: Remap = Remap { base: ROOT, offset: 0 };

    #[inline]
    pub(super) fn apply(self, id: u32) -> u32 {
        if id >= self.base && id < REMOTE {
            id - self.base + self.offset
        } else {
            id
        }
    }
}

/// The path arena's ids are 32 bits.
fn too_many_nodes() -> SearchError {
    SearchError::Input(
        "the search needs more than 4 billion path nodes: bound it (--max-delays, --max-states or --time-limit)".into(),
    )
}

impl<P: Program, O: ChoiceOrder, const W: bool> Search<'_, P, O, W> {
    /// The path node of frame `k`, creating nodes for the frames below it
    /// that have none yet.
    pub(super) fn materialize(&mut self, k: usize) -> Result<u32, SearchError> {
        let mut j = k;
        while self.stack[j].node == NONE {
            j -= 1;
        }
        for m in j + 1..=k {
            let p = &self.stack[m - 1];
            let (parent, depth, count) = (p.node, p.depth, p.next - 1);
            let node = self.child_node(parent, depth, count)?;
            self.stack[m].node = node;
        }
        Ok(self.stack[k].node)
    }

    /// The path node of the successor reached by choice `index` of the
    /// state at `node` and `depth`.
    pub(super) fn child_node(&mut self, node: u32, depth: u32, index: u32) -> Result<u32, SearchError> {
        if index == 0 {
            Ok(node)
        } else {
            self.arena.push(PathNode {
                parent: node,
                depth,
                count: index,
            })
        }
    }
}
