//! The state cache: a set of 64-bit state fingerprints under a memory budget.
//! (Interim version; replaced by the open-addressing table.)

use std::hash::Hash;

/// The result of an insert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Insert {
    /// Not there before.
    New,
    /// Already there.
    Present,
    /// Not inserted: the budget is used up.
    Full,
}

/// Fixed-key fingerprint of a value.
pub fn fingerprint<T: Hash + ?Sized>(value: &T) -> u64 {
    let h = ahash::RandomState::with_seeds(1, 2, 3, 4).hash_one(value);
    if h == 0 {
        1
    } else {
        h
    }
}

/// A set of fingerprints.
#[derive(Debug, Default)]
pub struct FingerprintSet {
    set: hashbrown::HashSet<u64>,
    budget: Option<usize>,
}

impl FingerprintSet {
    /// A set within `budget` bytes.
    pub fn new(budget: Option<usize>) -> Self {
        FingerprintSet {
            set: hashbrown::HashSet::new(),
            budget,
        }
    }
    /// Insert.
    pub fn insert(&mut self, fp: u64) -> Insert {
        if self.budget.is_some_and(|b| self.bytes() >= b) && !self.set.contains(&fp) {
            return Insert::Full;
        }
        if self.set.insert(fp) {
            Insert::New
        } else {
            Insert::Present
        }
    }
    /// Bytes.
    pub fn bytes(&self) -> usize {
        self.set.capacity() * 9
    }
}
