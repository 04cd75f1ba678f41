//! The state of a [`super::Counted`] program: the wrapped program's state
//! and its fingerprint, kept once computed (ARCHITECTURE.md §6, "Coverage
//! and reachability", "Cost").
//!
//! Counting distinct transitions keys each step by its source state's
//! fingerprint. Hashing the source again at every step cost two thirds of
//! what coverage added; but the search has just fingerprinted that state
//! (its cache look-up), through this type's `Hash`, which keeps the value,
//! and a state's copies carry it along, so a step reads it for free.

use crate::cache::fingerprint;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

/// A state and its fingerprint once known (0: not yet; fingerprints are
/// never 0). Equality is the state's; the hash is that of its fingerprint.
#[derive(Debug)]
pub struct Keyed<S> {
    /// The wrapped program's state.
    pub inner: S,
    fp: AtomicU64,
}

impl<S: Hash> Keyed<S> {
    /// `inner`, fingerprint not computed yet.
    pub fn new(inner: S) -> Self {
        Keyed {
            inner,
            fp: AtomicU64::new(0),
        }
    }

    /// `fingerprint(&self.inner)`, computed at most once per value.
    #[inline]
    pub fn fingerprint(&self) -> u64 {
        match self.fp.load(Ordering::Relaxed) {
            0 => {
                let fp = fingerprint(&self.inner);
                self.fp.store(fp, Ordering::Relaxed);
                fp
            }
            fp => fp,
        }
    }

    /// Change the state by `f`; its fingerprint is to be computed again.
    #[inline]
    pub fn step<R>(&mut self, f: impl FnOnce(&mut S) -> R) -> R {
        *self.fp.get_mut() = 0;
        f(&mut self.inner)
    }
}

/// A copy is made to be stepped (a look-ahead, or a successor split off
/// its parent), and each step keys its transition by its source's
/// fingerprint: so the fingerprint is computed here, once, for the original
/// and all its copies, not once in each copy (a state that the search
/// never fingerprinted, one whose look-up used a fingerprint computed
/// ahead, was hashed again by each of its successors' look-aheads).
impl<S: Clone + Hash> Clone for Keyed<S> {
    fn clone(&self) -> Self {
        Keyed {
            inner: self.inner.clone(),
            fp: AtomicU64::new(self.fingerprint()),
        }
    }
}

impl<S: PartialEq> PartialEq for Keyed<S> {
    fn eq(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
}

impl<S: Eq> Eq for Keyed<S> {}

impl<S: Hash> Hash for Keyed<S> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.fingerprint())
    }
}

#[cfg(test)]
mod tests {
    use super::Keyed;
    use crate::cache::fingerprint;
    use std::sync::atomic::Ordering;

    #[test]
    fn the_fingerprint_is_kept_until_the_state_changes() {
        let mut k = Keyed::new(vec![1u32, 2]);
        let copy = k.clone();
        // The copy computed it for both.
        assert_eq!(k.fp.load(Ordering::Relaxed), fingerprint(&vec![1u32, 2]));
        assert_eq!(k.fingerprint(), fingerprint(&vec![1u32, 2]));
        k.step(|v| v.push(3));
        assert_eq!(k.fingerprint(), fingerprint(&vec![1u32, 2, 3]));
        assert_eq!(copy.fingerprint(), fingerprint(&vec![1u32, 2]));
        assert_ne!(fingerprint(&k), fingerprint(&copy));
        assert_eq!(k, Keyed::new(vec![1u32, 2, 3]));
    }
}
