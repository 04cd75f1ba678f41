//! A path from s0 as the plain search keeps it: the steps whose choice
//! was not their state's first, as a shared list in which each step links
//! to the path before it. A frame and the entries it defers share their
//! common prefix instead of each holding a copy of it (a copy per entry
//! made the search move more bytes than it computed: TwoPhase with 8 RMs,
//! 27% of its time in copying paths).

use std::fmt;
use std::sync::Arc;

/// A path from s0: (depth, index) for each step whose choice was not its
/// state's first, in order of depth (the replay takes choice `index` of
/// the order at that depth, choice 0 elsewhere). Cloning it is a
/// reference count's increment.
#[derive(Clone, Default)]
pub(super) struct Path(Option<Arc<Link>>);

/// A path that is not empty: its last step after the path before it.
struct Link {
    depth: u32,
    index: u32,
    before: Path,
}

impl Path {
    /// The path of the successor that choice `index` of the state at
    /// `depth` reaches, this being that state's path: the same path when
    /// `index` is 0 (the first choice is not recorded).
    pub(super) fn then(&self, depth: u32, index: u32) -> Path {
        if index == 0 {
            return self.clone();
        }
        Path(Some(Arc::new(Link {
            depth,
            index,
            before: self.clone(),
        })))
    }

    /// Its (depth, index) pairs, in order of depth.
    pub(super) fn to_vec(&self) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let mut at = &self.0;
        while let Some(Link { depth, index, before }) = at.as_deref() {
            out.push((*depth, *index));
            at = &before.0;
        }
        out.reverse();
        out
    }
}

impl Drop for Path {
    /// Drops the steps no other path shares one at a time: a path can be
    /// thousands of steps long (a DFS records every choice that was not
    /// its state's first), too deep to drop by recursion on a worker's
    /// stack.
    fn drop(&mut self) {
        let mut next = self.0.take();
        while let Some(link) = next.and_then(Arc::into_inner) {
            let Link { mut before, .. } = link;
            next = before.0.take();
        }
    }
}

impl PartialEq for Path {
    fn eq(&self, other: &Path) -> bool {
        self.to_vec() == other.to_vec()
    }
}

impl Eq for Path {}

impl fmt::Debug for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.to_vec()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::Path;

    /// A first choice is not recorded; the others are, in order of depth,
    /// and a path extended twice shares its prefix.
    #[test]
    fn a_path_lists_the_choices_that_were_not_first() {
        let root = Path::default();
        let a = root.then(0, 1).then(1, 0).then(2, 3);
        let b = a.then(5, 2);
        let c = a.then(5, 1);
        assert_eq!(root.to_vec(), vec![]);
        assert_eq!(a.to_vec(), vec![(0, 1), (2, 3)]);
        assert_eq!(b.to_vec(), vec![(0, 1), (2, 3), (5, 2)]);
        assert_eq!(c.to_vec(), vec![(0, 1), (2, 3), (5, 1)]);
        assert_ne!(b, c);
        assert_eq!(root.then(0, 1).then(2, 3).then(4, 0).then(5, 2), b);
        drop(a);
        assert_eq!(b.to_vec().len(), 3);
    }

    /// A path of a million steps drops without exhausting a small stack,
    /// and one that shares its prefix with another leaves it whole.
    #[test]
    fn a_long_path_drops_without_recursion() {
        let long = std::thread::Builder::new()
            .stack_size(64 << 10)
            .spawn(|| {
                let mut p = Path::default();
                for depth in 0..1_000_000 {
                    p = p.then(depth, 1);
                }
                let q = p.then(1_000_000, 1);
                drop(p);
                let n = q.to_vec().len();
                drop(q);
                n
            })
            .unwrap();
        assert_eq!(long.join().unwrap(), 1_000_001);
    }
}
