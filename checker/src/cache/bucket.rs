//! The layout both compact tables share (ARCHITECTURE.md,
//! "The state cache"): a bucket is one 64-byte cache line of 12 quotiented fields of
//! 40 bits. The fields' low bytes (their tags) come first, with the
//! bucket's count and flags, so that one 16-byte comparison finds the
//! fields that may hold a value; their other 32 bits (their rests)
//! follow, 4 bytes each from byte [`RESTS`].

/// Fields per bucket.
pub(super) const FIELDS: usize = 12;
/// The most bits a field stores: a tag of 8 and a rest of 32.
pub(super) const FIELD_BITS: u32 = 40;
/// Where a bucket's count is: the byte after the tags.
pub(super) const COUNT: usize = FIELDS;
/// Where the rests start, after 16 bytes of tags, count, flags and padding.
pub(super) const RESTS: usize = 16;
/// Bytes per bucket: one cache line.
pub(super) const BUCKET_BYTES: usize = 64;

/// The tag of field `f`: its low byte.
#[inline(always)]
pub(super) fn tag(f: u64) -> u8 {
    f as u8
}

/// The rest of field `f`: its bits 8 to 40.
#[inline(always)]
pub(super) fn rest(f: u64) -> u32 {
    (f >> 8) as u32
}

/// The field of tag `t` and rest `r`.
#[inline(always)]
pub(super) fn field(t: u8, r: u32) -> u64 {
    u64::from(t) | u64::from(r) << 8
}

/// Bit `i` set for each of the first `count` fields whose tag is `tag(f)`,
/// given the bucket's first 16 bytes.
#[inline(always)]
pub(super) fn candidates(head: &[u8; 16], count: usize, f: u64) -> u32 {
    eq_bytes_16(head, tag(f)) & ((1 << count) - 1)
}

/// Whether field `f` is among the first `count` fields of a bucket whose
/// first 16 bytes are `head` and whose field `i` has the rest
/// `rest_of(i)`: the fields whose tag agrees, then their rests.
#[inline(always)]
pub(super) fn holds(head: &[u8; 16], count: usize, f: u64, rest_of: impl Fn(usize) -> u32) -> bool {
    let mut m = candidates(head, count, f);
    while m != 0 {
        if rest_of(m.trailing_zeros() as usize) == rest(f) {
            return true;
        }
        m &= m - 1;
    }
    false
}

/// The entries a table of `2^a` buckets holds before it doubles: 7/8.
#[inline]
pub(super) const fn grow_limit(a: u32) -> usize {
    (FIELDS << a) / 8 * 7
}

/// Bit `i` set for each byte `i` of `bytes` equal to `b`: one vector
/// compare (SSE2, which every x86-64 has).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn eq_bytes_16(bytes: &[u8; 16], b: u8) -> u32 {
    use std::arch::x86_64::{__m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    // SAFETY: SSE2 is part of x86-64; the load reads the 16 bytes of
    // `bytes` (no alignment needed).
    unsafe {
        let v = _mm_loadu_si128(bytes.as_ptr().cast::<__m128i>());
        _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8))) as u32
    }
}

/// Bit `i` set for each byte `i` of `bytes` equal to `b` (the same as the
/// vector compare, byte by byte).
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(super) fn eq_bytes_16(bytes: &[u8; 16], b: u8) -> u32 {
    bytes
        .iter()
        .enumerate()
        .fold(0, |m, (i, &x)| m | u32::from(x == b) << i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn the_tag_comparison_agrees_with_a_byte_by_byte_one() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        for _ in 0..10_000 {
            // Few distinct byte values, so that many bytes agree.
            let bytes: [u8; 16] = std::array::from_fn(|_| rng.random_range(0..4u8) * 85);
            let b = rng.random_range(0..4u8) * 85;
            let naive = (0..16).filter(|&i| bytes[i] == b).fold(0u32, |m, i| m | 1 << i);
            assert_eq!(eq_bytes_16(&bytes, b), naive, "{bytes:?} {b}");
        }
    }

    #[test]
    fn a_field_is_its_tag_and_its_rest() {
        let f = 0xAB_CDEF_0123u64;
        assert_eq!((tag(f), rest(f)), (0x23, 0xABCD_EF01));
        assert_eq!(field(tag(f), rest(f)), f);
        // Only the first `count` fields are candidates.
        let mut head = [0x23u8; 16];
        head[1] = 0;
        assert_eq!(candidates(&head, 3, f), 0b101);
        assert_eq!(candidates(&head, 0, f), 0);
    }
}
