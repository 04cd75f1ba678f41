//! Zero-filled memory that grows in place: the compact cache's buckets
//! and the shared cache's tables (ARCHITECTURE.md, "The state cache").
//!
//! On Linux a [`Region`] is an anonymous mapping aligned to 2 MiB and
//! marked for transparent huge pages (`madvise(MADV_HUGEPAGE)`, a hint: it
//! is ignored where huge pages are off). A look-up of a large table misses
//! the TLB as well as the caches: with 4 KiB pages a 64 MiB table is 16,384
//! pages, more than the TLB holds, and on TwoPhase the page walks of the
//! prefetches took a quarter of DFS's time; with 2 MiB pages it is 32
//! entries. The region grows with `mremap`, which moves page tables, not
//! bytes: the old and the new table are never both alive, so growth needs
//! no second copy. Elsewhere the region comes from the global allocator and
//! growth reallocates (the old copy is alive while it is copied).

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// A type whose value with all bytes 0 is valid.
///
/// # Safety
///
/// An implementor must be valid with every byte 0 and have no drop glue
/// (a region frees its memory without dropping the values).
pub(super) unsafe trait Zeroable: Sized {}

// SAFETY: an atomic of zero bytes is 0; atomics have no drop glue.
unsafe impl Zeroable for std::sync::atomic::AtomicU64 {}

/// `len` values of `T`, zeroed when allocated or grown, that grow in place.
pub(super) struct Region<T: Zeroable> {
    ptr: NonNull<T>,
    len: usize,
}

// SAFETY: a `Region` owns its memory alone, like a `Box<[T]>`.
unsafe impl<T: Zeroable + Send> Send for Region<T> {}
// SAFETY: shared access only reads, like `&[T]`.
unsafe impl<T: Zeroable + Sync> Sync for Region<T> {}

impl<T: Zeroable> Region<T> {
    /// `len` (at least 1) zeroed values.
    pub(super) fn zeroed(len: usize) -> Self {
        let bytes = Self::bytes_of(len);
        let ptr = sys::alloc_zeroed(bytes, align_of::<T>()).unwrap_or_else(|| out_of_memory(bytes));
        Region { ptr: ptr.cast(), len }
    }

    /// Grows to `len` values (more than now): the first values keep theirs,
    /// the new ones are zero. The region may move.
    pub(super) fn grow(&mut self, len: usize) {
        assert!(len > self.len, "a region only grows");
        let (old, new) = (Self::bytes_of(self.len), Self::bytes_of(len));
        // SAFETY: `self.ptr` holds `old` bytes from `sys`, and is replaced
        // by the result (the old pointer is not used again).
        let ptr = unsafe { sys::grow(self.ptr.cast(), old, new, align_of::<T>()) };
        self.ptr = ptr.unwrap_or_else(|| out_of_memory(new)).cast();
        self.len = len;
    }

    /// The value at `i` modulo the length, which is a power of two where
    /// it is used (a table's slots or buckets): `i & (len - 1)`, always in
    /// bounds, so the look-ups in the caches' inner loops check no bound.
    #[inline(always)]
    pub(super) fn wrap(&self, i: usize) -> &T {
        debug_assert!(self.len.is_power_of_two());
        // SAFETY: `len >= 1`, so `i & (len - 1) <= len - 1`, and `ptr`
        // holds `len` initialized values.
        unsafe { &*self.ptr.as_ptr().add(i & (self.len - 1)) }
    }

    fn bytes_of(len: usize) -> usize {
        assert!(len > 0, "an empty region");
        len.checked_mul(size_of::<T>()).expect("a region's size overflows")
    }
}

impl<T: Zeroable> Deref for Region<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` holds `len` initialized (zeroed or written) values.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Zeroable> DerefMut for Region<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Zeroable> Drop for Region<T> {
    fn drop(&mut self) {
        // SAFETY: the memory came from `sys` with this size and alignment,
        // and nothing uses it after the drop.
        unsafe { sys::free(self.ptr.cast(), Self::bytes_of(self.len), align_of::<T>()) }
    }
}

impl<T: Zeroable> fmt::Debug for Region<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Region").field("len", &self.len).finish()
    }
}

#[cold]
fn out_of_memory(bytes: usize) -> ! {
    std::alloc::handle_alloc_error(
        std::alloc::Layout::from_size_align(bytes, 1).unwrap_or(std::alloc::Layout::new::<u8>()),
    )
}

/// Anonymous mappings (Linux). The C library that `std` links provides
/// these functions; the constants are Linux's, the same on x86-64 and
/// AArch64.
#[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")))]
mod sys {
    use std::ffi::{c_int, c_void};
    use std::ptr::{NonNull, null_mut};

    unsafe extern "C" {
        fn mmap(addr: *mut c_void, len: usize, prot: c_int, flags: c_int, fd: c_int, offset: i64) -> *mut c_void;
        fn mremap(old: *mut c_void, old_len: usize, new_len: usize, flags: c_int, ...) -> *mut c_void;
        fn munmap(addr: *mut c_void, len: usize) -> c_int;
        fn madvise(addr: *mut c_void, len: usize, advice: c_int) -> c_int;
    }

    const PROT_NONE: c_int = 0;
    const PROT_READ_WRITE: c_int = 1 | 2;
    const MAP_PRIVATE_ANONYMOUS: c_int = 0x02 | 0x20;
    const MAP_NORESERVE: c_int = 0x4000;
    const MREMAP_MAYMOVE: c_int = 1;
    const MREMAP_FIXED: c_int = 2;
    const MADV_HUGEPAGE: c_int = 14;
    const FAILED: *mut c_void = usize::MAX as *mut c_void;
    /// The huge page size the mappings are aligned to.
    const HUGE: usize = 2 << 20;
    /// Mapping lengths are rounded up to this (a multiple of every page
    /// size Linux uses: 4, 16 and 64 KiB), so that the tail of a
    /// reservation is unmapped at a page boundary and a small region is
    /// freed whole.
    const GRAIN: usize = 64 << 10;

    /// The mapped length of a region of `bytes`.
    fn span(bytes: usize) -> usize {
        bytes.next_multiple_of(GRAIN)
    }

    /// Reserves `bytes` of address space at a 2 MiB boundary (with
    /// `prot`); `None` if the kernel refuses.
    fn reserve(bytes: usize, prot: c_int, flags: c_int) -> Option<*mut c_void> {
        let span = bytes.checked_add(HUGE)?;
        // SAFETY: a fresh private anonymous mapping touches no memory in use.
        let raw = unsafe { mmap(null_mut(), span, prot, MAP_PRIVATE_ANONYMOUS | flags, -1, 0) };
        if raw == FAILED {
            return None;
        }
        let head = (raw as usize).next_multiple_of(HUGE) - raw as usize;
        // SAFETY: both ranges are inside the mapping just made and unused.
        unsafe {
            if head > 0 {
                munmap(raw, head);
            }
            munmap(raw.byte_add(head + bytes), HUGE - head);
            Some(raw.byte_add(head))
        }
    }

    /// Asks for huge pages (a hint: its failure changes nothing).
    fn hint(p: *mut c_void, bytes: usize) {
        // SAFETY: `p..p + bytes` is a mapping of this module.
        unsafe { madvise(p, bytes, MADV_HUGEPAGE) };
    }

    pub(super) fn alloc_zeroed(bytes: usize, _align: usize) -> Option<NonNull<u8>> {
        // Anonymous pages are zero; a 2 MiB boundary suits every alignment.
        let bytes = span(bytes);
        let p = reserve(bytes, PROT_READ_WRITE, 0)?;
        hint(p, bytes);
        NonNull::new(p.cast())
    }

    /// # Safety
    ///
    /// `p` holds `old` bytes from this module and is not used afterwards.
    pub(super) unsafe fn grow(p: NonNull<u8>, old: usize, new: usize, _align: usize) -> Option<NonNull<u8>> {
        unsafe {
            let p = p.as_ptr().cast::<c_void>();
            let (old, new) = (span(old), span(new));
            // In place when the addresses after the mapping are free.
            let q = mremap(p, old, new, 0);
            if q != FAILED {
                hint(q, new);
                return NonNull::new(q.cast());
            }
            // Else onto a fresh reservation at a 2 MiB boundary, so that huge
            // pages move whole.
            let target = reserve(new, PROT_NONE, MAP_NORESERVE)?;
            let q = mremap(p, old, new, MREMAP_MAYMOVE | MREMAP_FIXED, target);
            if q == FAILED {
                munmap(target, new);
                return None;
            }
            hint(q, new);
            NonNull::new(q.cast())
        }
    }

    /// # Safety
    ///
    /// `p` holds `bytes` bytes from this module and is not used afterwards.
    pub(super) unsafe fn free(p: NonNull<u8>, bytes: usize, _align: usize) {
        unsafe {
            munmap(p.as_ptr().cast(), span(bytes));
        }
    }
}

/// The global allocator (other platforms).
#[cfg(not(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64"))))]
mod sys {
    use std::alloc::{Layout, alloc_zeroed as alloc0, dealloc, realloc};
    use std::ptr::NonNull;

    pub(super) fn alloc_zeroed(bytes: usize, align: usize) -> Option<NonNull<u8>> {
        let layout = Layout::from_size_align(bytes, align).ok()?;
        // SAFETY: `bytes > 0` (`Region` never asks for 0).
        NonNull::new(unsafe { alloc0(layout) })
    }

    /// # Safety
    ///
    /// `p` holds `old` bytes from this module and is not used afterwards.
    pub(super) unsafe fn grow(p: NonNull<u8>, old: usize, new: usize, align: usize) -> Option<NonNull<u8>> {
        let q = NonNull::new(realloc(p.as_ptr(), Layout::from_size_align(old, align).ok()?, new))?;
        q.as_ptr().add(old).write_bytes(0, new - old);
        Some(q)
    }

    /// # Safety
    ///
    /// `p` holds `bytes` bytes from this module and is not used afterwards.
    pub(super) unsafe fn free(p: NonNull<u8>, bytes: usize, align: usize) {
        dealloc(p.as_ptr(), Layout::from_size_align_unchecked(bytes, align));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe impl Zeroable for u64 {}

    #[test]
    fn grows_keeping_values_and_zeroing_the_rest() {
        // 4 MiB, then 8 and 64 MiB: in place or moved, the values stay.
        let mut r = Region::<u64>::zeroed(1 << 19);
        assert!(r.iter().all(|&v| v == 0));
        for (i, v) in r.iter_mut().enumerate() {
            *v = i as u64 * 7 + 1;
        }
        let other = Region::<u64>::zeroed(1 << 19);
        for len in [1 << 20, 1 << 23] {
            r.grow(len);
            assert_eq!(r.len(), len);
            assert!(r[..1 << 19].iter().enumerate().all(|(i, &v)| v == i as u64 * 7 + 1));
            assert!(r[1 << 19..].iter().all(|&v| v == 0));
        }
        assert!(other.iter().all(|&v| v == 0));
        assert_eq!(r.as_ptr() as usize % 64, 0);
        // A region smaller than a page, grown within its mapping and past it.
        let mut small = Region::<u64>::zeroed(3);
        small.copy_from_slice(&[7, 8, 9]);
        for len in [4, 100_000] {
            small.grow(len);
            assert_eq!(small[..3], [7, 8, 9]);
            assert!(small[3..].iter().all(|&v| v == 0));
        }
    }

    #[test]
    fn wrap_takes_the_index_modulo_the_length() {
        let mut r = Region::<u64>::zeroed(8);
        for (i, v) in r.iter_mut().enumerate() {
            *v = 10 + i as u64;
        }
        for i in [0, 5, 7, 8, 13, usize::MAX] {
            assert_eq!(*r.wrap(i), 10 + (i % 8) as u64, "index {i}");
        }
    }
}
