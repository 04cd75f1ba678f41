//! A path from s0 as the plain search keeps it: the steps whose choice
//! was not their state's first, as a shared list in which each step links
//! to the path before it (a path received from another process arrives
//! in one piece). A frame, the entries it defers and the
//! successors it sends share their common prefix instead of each holding
//! a copy of it (a copy per entry made the search move more bytes than it
//! computed: TwoPhase with 8 RMs, 27% of its time in copying paths).

use serde::de::Deserializer;
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// A path from s0: (depth, index) for each step whose choice was not its
/// state's first, in order of depth (the replay takes choice `index` of
/// the order at that depth, choice 0 elsewhere). Cloning it is a
/// reference count's increment.
#[derive(Clone, Default)]
pub struct Path(Option<Arc<Link>>);

/// A path that is not empty: its last step after the path before it, or
/// the whole path in one piece (as it arrives from another process: one
/// allocation, not one per step).
enum Link {
    Step { depth: u32, index: u32, before: Path },
    Pairs(Vec<(u32, u32)>),
}

impl Path {
    /// The path of the successor that choice `index` of the state at
    /// `depth` reaches, this being that state's path: the same path when
    /// `index` is 0 (the first choice is not recorded).
    pub fn then(&self, depth: u32, index: u32) -> Path {
        if index == 0 {
            return self.clone();
        }
        Path(Some(Arc::new(Link::Step {
            depth,
            index,
            before: self.clone(),
        })))
    }

    /// The path with these (depth, index) pairs, in order of depth.
    pub fn from_pairs(pairs: Vec<(u32, u32)>) -> Path {
        if pairs.is_empty() {
            return Path::default();
        }
        Path(Some(Arc::new(Link::Pairs(pairs))))
    }

    /// Its (depth, index) pairs, in order of depth.
    pub fn to_vec(&self) -> Vec<(u32, u32)> {
        let mut last = Vec::new();
        let mut at = &self.0;
        let first: &[(u32, u32)] = loop {
            match at.as_deref() {
                None => break &[],
                Some(Link::Pairs(pairs)) => break pairs,
                Some(Link::Step { depth, index, before }) => {
                    last.push((*depth, *index));
                    at = &before.0;
                }
            }
        };
        let mut out = Vec::with_capacity(first.len() + last.len());
        out.extend_from_slice(first);
        out.extend(last.into_iter().rev());
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
            next = match link {
                Link::Step { mut before, .. } => before.0.take(),
                Link::Pairs(_) => None,
            };
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

/// Encoded as its (depth, index) pairs.
impl Serialize for Path {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_vec().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Path {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Path, D::Error> {
        Vec::<(u32, u32)>::deserialize(deserializer).map(Path::from_pairs)
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
        assert_eq!(Path::from_pairs(b.to_vec()), b);
        assert_ne!(b, c);
        // A path received in one piece, extended.
        let d = Path::from_pairs(vec![(0, 1), (2, 3)]).then(4, 0).then(5, 2);
        assert_eq!(d, b);
        assert_eq!(Path::from_pairs(Vec::new()), root);
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

    /// Encoded as its pairs, and back.
    #[test]
    fn a_path_round_trips_through_serde() {
        let p = Path::default().then(3, 1).then(7, 2);
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(json, "[[3,1],[7,2]]");
        assert_eq!(serde_json::from_str::<Path>(&json).unwrap(), p);
    }
}
