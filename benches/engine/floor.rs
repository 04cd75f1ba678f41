//! The floor the engine is measured against (docs/performance.md, "Against the floors"): an
//! exhaustive search of TwoPhase written for this one specification and
//! for speed alone. A state is a `u64` of bit fields; a state's successors
//! are all generated, hashed and their table slots prefetched before any
//! is looked up; the table is open addressing over 8-byte fingerprints on
//! huge pages; the stack holds bare states. There is no explorer, no path,
//! no invariant and no budget, which the engine pays for.
//!
//! It is written from `TwoPhase.tla`, not from the engine's model, so its
//! counts are an independent oracle: the bench checks that it reaches the
//! engine's states and transitions (TLC's) before timing either.

/// The fields of a state of `n` resource managers, from bit 0: `rmState`
/// (2 bits per RM: working, prepared, committed, aborted), `tmPrepared`
/// (n bits), the `Prepared(r)` messages (n bits), `tmState` (2 bits:
/// init, committed, aborted), the `Commit` and `Abort` messages.
#[derive(Clone, Copy, Debug)]
pub struct Floor {
    n: u32,
    all: u64,
}

/// The most successors a state has: `TMRcvPrepared` per RM, `TMCommit`,
/// `TMAbort`, and at most three actions per RM.
pub(super) const MAX_SUCCESSORS: usize = 4 * MAX_RMS as usize + 2;
/// The most RMs: the fields fit in 64 bits.
const MAX_RMS: u32 = 15;

/// What one search found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    pub states: u64,
    pub transitions: u64,
}

impl Floor {
    /// The specification for `n` resource managers.
    pub fn new(n: u32) -> Floor {
        assert!((1..=MAX_RMS).contains(&n), "1 to {MAX_RMS} resource managers, not {n}");
        Floor { n, all: (1 << n) - 1 }
    }

    fn tm_prepared(&self) -> u32 {
        2 * self.n
    }
    fn msg_prepared(&self) -> u32 {
        3 * self.n
    }
    fn tm_state(&self) -> u32 {
        4 * self.n
    }

    /// Writes the successors of `s` into `out`, one per enabled action
    /// (an action that leaves the state as it is counts, as in TLC): the
    /// TM's, then each RM's.
    #[inline(always)]
    fn successors(&self, s: u64, out: &mut [u64; MAX_SUCCESSORS]) -> usize {
        let mut k = 0;
        for actor in 0..self.actors() {
            k += self.actor_successors(s, actor, &mut out[k..]);
        }
        k
    }

    /// The successors of `s` by `actor`'s alternatives, in the engine's
    /// order of them (`models/src/twophase.rs`'s module docs): actor 0 is the
    /// TM, actor `r + 1` is RM `r`. The SES floor's choices.
    #[inline(always)]
    pub(super) fn actor_successors(&self, s: u64, actor: u32, out: &mut [u64]) -> usize {
        let mut k = 0;
        let mut put = |t: u64| {
            out[k] = t;
            k += 1;
        };
        let tm = self.tm_state();
        if actor == 0 {
            if (s >> tm) & 3 == 0 {
                // TMRcvPrepared(r) for each Prepared(r) message.
                let mut msgs = (s >> self.msg_prepared()) & self.all;
                while msgs != 0 {
                    let r = msgs.trailing_zeros();
                    put(s | 1 << (self.tm_prepared() + r));
                    msgs &= msgs - 1;
                }
                if (s >> self.tm_prepared()) & self.all == self.all {
                    // TMCommit: tmState committed, the Commit message sent.
                    put(s | 1 << tm | 1 << (tm + 2));
                }
                // TMAbort.
                put(s | 2 << tm | 1 << (tm + 3));
            }
            return k;
        }
        let r = actor - 1;
        let field = 3u64 << (2 * r);
        if s & field == 0 {
            // RMPrepare (and its Prepared(r) message), RMChooseToAbort.
            put(s | 1 << (2 * r) | 1 << (self.msg_prepared() + r));
            put(s | field);
        }
        // RMRcvCommitMsg, RMRcvAbortMsg.
        if (s >> (tm + 2)) & 1 != 0 {
            put((s & !field) | 2 << (2 * r));
        }
        if (s >> (tm + 3)) & 1 != 0 {
            put(s | field);
        }
        k
    }

    /// The number of actors: the TM and the RMs.
    pub(super) fn actors(&self) -> u32 {
        self.n + 1
    }

    /// Searches every reachable state depth first; returns the counts
    /// (criterion times it). `pipelined`: the successors of the state just
    /// popped are hashed and their slots prefetched while the previous
    /// state's, prefetched one state earlier, are looked up (so a
    /// state's successors are all in the table before any is expanded,
    /// and the misses of two states overlap); else each state's
    /// successors are looked up right after their prefetches, as the
    /// engine's DFS does.
    pub fn search(&self, pipelined: bool) -> Counts {
        let mut table = Table::new(1 << 16);
        let mut stack = vec![0u64];
        table.insert(hash(0));
        let mut counts = Counts {
            states: 1,
            transitions: 0,
        };
        let mut batches = [([0u64; MAX_SUCCESSORS], [0u64; MAX_SUCCESSORS], 0usize); 2];
        let mut cur = 0;
        loop {
            let popped = stack.pop();
            if let Some(s) = popped {
                let (next, fps, k) = &mut batches[cur];
                *k = self.successors(s, next);
                counts.transitions += *k as u64;
                for (fp, &t) in fps.iter_mut().zip(&next[..*k]) {
                    *fp = hash(t);
                    table.prefetch(*fp);
                }
            }
            let (next, fps, k) = &mut batches[if pipelined { 1 - cur } else { cur }];
            for (&fp, &t) in fps[..*k].iter().zip(&next[..*k]) {
                if table.insert(fp) {
                    counts.states += 1;
                    stack.push(t);
                }
            }
            *k = 0;
            if popped.is_none() && stack.is_empty() {
                return counts;
            }
            cur = 1 - cur;
        }
    }
}

/// A state's fingerprint: a 64-bit mix of it, a bijection (distinct
/// states, distinct fingerprints) but that the state mixed to 0, which
/// marks an empty slot, becomes 1.
#[inline(always)]
pub(super) fn hash(s: u64) -> u64 {
    let mut h = s ^ 0x9E37_79B9_7F4A_7C15;
    h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^= h >> 31;
    h.max(1)
}

/// Open addressing over fingerprints, linear probing, doubled at 3/4
/// full; a fingerprint's home slot is its top bits.
pub(super) struct Table {
    slots: Vec<u64>,
    shift: u32,
    len: usize,
}

impl Table {
    pub(super) fn new(slots: usize) -> Table {
        Table {
            slots: zeroed_on_huge_pages(slots),
            shift: 64 - slots.trailing_zeros(),
            len: 0,
        }
    }

    #[inline(always)]
    pub(super) fn prefetch(&self, fp: u64) {
        let home = (fp >> self.shift) as usize;
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch reads nothing; `home` is in the table.
        unsafe {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            _mm_prefetch::<_MM_HINT_T0>(self.slots.as_ptr().add(home).cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = home;
    }

    /// Inserts `fp`; whether it was new.
    #[inline(always)]
    pub(super) fn insert(&mut self, fp: u64) -> bool {
        let Err(i) = self.probe(fp) else {
            return false;
        };
        self.slots[i] = fp;
        self.len += 1;
        if self.len * 4 >= self.slots.len() * 3 {
            self.grow();
        }
        true
    }

    /// Whether `fp` is in the table.
    #[inline(always)]
    pub(super) fn contains(&self, fp: u64) -> bool {
        self.probe(fp).is_ok()
    }

    /// The slot holding `fp` (`Ok`), or the empty slot where it would go.
    #[inline(always)]
    fn probe(&self, fp: u64) -> Result<usize, usize> {
        let mask = self.slots.len() - 1;
        let mut i = (fp >> self.shift) as usize;
        loop {
            match self.slots[i] {
                0 => return Err(i),
                x if x == fp => return Ok(i),
                _ => i = (i + 1) & mask,
            }
        }
    }

    #[cold]
    fn grow(&mut self) {
        let old = std::mem::replace(self, Table::new(2 * self.slots.len()));
        for fp in old.slots.into_iter().filter(|&fp| fp != 0) {
            self.insert(fp);
        }
    }
}

/// `n` zeros, on transparent huge pages where Linux gives them (as the
/// engine's tables are: ARCHITECTURE.md, "The state cache").
fn zeroed_on_huge_pages(n: usize) -> Vec<u64> {
    let mut v: Vec<u64> = Vec::with_capacity(n);
    #[cfg(target_os = "linux")]
    {
        unsafe extern "C" {
            fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
        }
        const HUGE: usize = 2 << 20;
        const MADV_HUGEPAGE: i32 = 14;
        let start = v.as_mut_ptr() as usize;
        let end = start + n * 8;
        let aligned = start.next_multiple_of(HUGE);
        if aligned + HUGE <= end {
            // SAFETY: the range is inside the allocation; the advice only
            // changes how its pages are backed.
            unsafe { madvise(aligned as *mut _, (end - aligned) / HUGE * HUGE, MADV_HUGEPAGE) };
        }
    }
    v.resize(n, 0);
    v
}
