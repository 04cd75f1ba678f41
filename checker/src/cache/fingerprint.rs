//! The portable 64-bit fingerprint of a program state: [`FpHasher`] and
//! [`fingerprint`].

use std::hash::{Hash, Hasher};

/// The start value of [`FpHasher`] (hex digits of pi).
const SEED: u64 = 0x243F_6A88_85A3_08D3;
/// The multiplier of a word's absorption (odd, 2^64 / golden ratio).
const MUL: u64 = 0x9E37_79B9_7F4A_7C15;
/// What a hash of 0 becomes: 0 marks an empty slot in the tables.
pub(super) const ZERO_REPLACEMENT: u64 = 0x6A09_E667_F3BC_C909;

/// A fixed, portable 64-bit hash function: the same result for the same
/// sequence of `write_*` calls on every platform, endianness and build.
///
/// Every integer is absorbed by value (`usize`/`isize` as 64 bits, 128-bit
/// integers as two words), byte slices in little-endian 8-byte chunks with
/// the tail's length folded into its last word, and [`Hasher::finish`]
/// applies the murmur3 `fmix64` avalanche. Not keyed: it is a fingerprint,
/// not a defence against adversarial inputs.
#[derive(Clone, Copy, Debug)]
pub struct FpHasher {
    h: u64,
}

impl Default for FpHasher {
    fn default() -> Self {
        FpHasher { h: SEED }
    }
}

impl FpHasher {
    /// A hasher in its fixed start state.
    #[inline]
    pub fn new() -> Self {
        Self::default()
    }

    /// Absorbs one 64-bit word: xor, multiply by an odd constant and fold
    /// the high half into the low half (a bijection of `h ^ x`).
    #[inline(always)]
    fn absorb(&mut self, x: u64) {
        let v = (self.h ^ x).wrapping_mul(MUL);
        self.h = v ^ (v >> 32);
    }
}

/// The murmur3 64-bit finalizer: a bijection with full avalanche.
#[inline(always)]
const fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    k ^= k >> 33;
    k = k.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    k ^= k >> 33;
    k
}

impl Hasher for FpHasher {
    #[inline]
    fn finish(&self) -> u64 {
        fmix64(self.h)
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.absorb(u64::from_le_bytes(w));
        }
        let tail = chunks.remainder();
        if !tail.is_empty() {
            let mut w = [0u8; 8];
            w[..tail.len()].copy_from_slice(tail);
            // The tail has at most 7 bytes: its length goes in the top byte,
            // so that [1] and [1, 0] differ.
            w[7] = tail.len() as u8;
            self.absorb(u64::from_le_bytes(w));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.absorb(u64::from(i));
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.absorb(u64::from(i));
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.absorb(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.absorb(i);
    }
    #[inline]
    fn write_u128(&mut self, i: u128) {
        self.absorb(i as u64);
        self.absorb((i >> 64) as u64);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.absorb(i as u64);
    }
    #[inline]
    fn write_i8(&mut self, i: i8) {
        self.absorb(i as u8 as u64);
    }
    #[inline]
    fn write_i16(&mut self, i: i16) {
        self.absorb(i as u16 as u64);
    }
    #[inline]
    fn write_i32(&mut self, i: i32) {
        self.absorb(i as u32 as u64);
    }
    #[inline]
    fn write_i64(&mut self, i: i64) {
        self.absorb(i as u64);
    }
    #[inline]
    fn write_i128(&mut self, i: i128) {
        self.write_u128(i as u128);
    }
    #[inline]
    fn write_isize(&mut self, i: isize) {
        self.absorb(i as i64 as u64);
    }
}

/// Makes a hash usable as a table entry: 0 (the empty-slot marker) becomes
/// a fixed non-zero value.
#[inline(always)]
pub(super) const fn nonzero(h: u64) -> u64 {
    if h == 0 { ZERO_REPLACEMENT } else { h }
}

/// The portable 64-bit fingerprint of a value (never 0): [`FpHasher`] over
/// the value's `Hash` implementation. Two distinct states share a
/// fingerprint with probability about 2^-64; among n states some pair does
/// with probability about n^2 / 2^65.
#[inline]
pub fn fingerprint<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut h = FpHasher::new();
    value.hash(&mut h);
    nonzero(h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_fingerprints() {
        // Schedule files store these digests: a change here breaks them.
        assert_eq!(fingerprint(&0u64), 0x149a_eec1_9b31_d6cc);
        assert_eq!(fingerprint(&[1u8, 2, 3]), 0xb9b4_5148_1e96_cd86);
        assert_eq!(fingerprint(&(1u32, 2u64)), 0x1a28_a6d0_5342_d4b3);
        assert_eq!(fingerprint("mcheck"), 0x9a88_c04e_75c9_049e);
        assert_eq!(fingerprint(&[7u64, 8, 9][..]), 0x9ee5_892d_c8b0_7210);
    }

    #[test]
    fn hasher_is_value_based_and_length_aware() {
        // usize is hashed as 64 bits, so 32- and 64-bit builds agree.
        assert_eq!(fingerprint(&5usize), fingerprint(&5u64));
        assert_eq!(fingerprint(&-1isize), fingerprint(&-1i64));
        // A short tail carries its length.
        let raw = |b: &[u8]| {
            let mut h = FpHasher::new();
            h.write(b);
            h.finish()
        };
        assert_ne!(raw(&[1]), raw(&[1, 0]));
        assert_ne!(raw(&[1, 0, 0, 0, 0, 0, 0, 0]), raw(&[1]));
        assert_ne!(raw(&[]), raw(&[0]));
        // Order matters.
        assert_ne!(fingerprint(&(1u32, 2u32)), fingerprint(&(2u32, 1u32)));
        assert_eq!(nonzero(0), ZERO_REPLACEMENT);
    }

    /// Sorts and counts adjacent equal values.
    fn duplicates(mut v: Vec<u64>) -> usize {
        v.sort_unstable();
        v.windows(2).filter(|w| w[0] == w[1]).count()
    }

    #[test]
    fn ten_million_structured_inputs_do_not_collide() {
        // A fair 64-bit hash collides among n = 10^7 values with
        // probability about n^2 / 2^65 = 2.7e-6 per family; this is fixed
        // input, so the result is deterministic anyway.
        const N: u64 = 10_000_000;
        let tuples: Vec<u64> = (0..N).map(|i| fingerprint(&(i as u32, i * 7))).collect();
        assert_eq!(duplicates(tuples), 0);
        let bytes: Vec<u64> = (0..N)
            .map(|i| fingerprint(&[(i & 0xff) as u8, (i >> 8) as u8, (i >> 16) as u8, 3]))
            .collect();
        assert_eq!(duplicates(bytes), 0);
        let small: Vec<u64> = (0..N)
            .map(|i| fingerprint(&((i % 100) as u8, (i / 100 % 1000) as u16, (i / 100_000) as u8)))
            .collect();
        assert_eq!(duplicates(small), 0);
    }
}
