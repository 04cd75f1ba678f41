//! The state cache: a set of 64-bit state fingerprints under a memory budget.
