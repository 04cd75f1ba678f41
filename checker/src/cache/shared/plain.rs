//! The 8-byte table of a [`SharedCache`](super::SharedCache) shard:
//! linear probing over atomic slots holding whole fingerprints. A shard
//! starts with one; the compact stash is one too.

use super::{MOVED, Probe};
use crate::cache::region::Region;
use crate::cache::set::{full_load, grow_load, home};
use std::sync::atomic::AtomicU64;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed};

/// Open addressing over atomic slots: 0 empty, [`MOVED`] frozen by a
/// growth, anything else a stored value ([`key`](super::key)).
pub(super) struct Plain {
    /// Huge-page backed where the system allows (see [`Region`]).
    pub(super) slots: Region<AtomicU64>,
    /// The entry count (of the shard, or of the stash) at which an insert
    /// of an absent value answers [`Probe::AtLimit`].
    pub(super) limit: usize,
    /// The same while another thread grows the shard (90% full, as the
    /// largest table's `limit`): inserts go on past `limit` meanwhile.
    hard: usize,
}

impl Plain {
    /// An empty table of `slots` slots (a power of two); `largest` says
    /// whether it may not grow any more (then it fills to 90%, else 75%).
    pub(super) fn new(slots: usize, largest: bool) -> Plain {
        Plain {
            slots: Region::zeroed(slots),
            limit: if largest { full_load(slots) } else { grow_load(slots) },
            hard: full_load(slots),
        }
    }

    #[inline(always)]
    pub(super) fn home(&self, fp: u64) -> usize {
        home(fp, self.slots.len())
    }

    /// Looks `fp` up and claims an empty slot for it if absent, counting
    /// it in `len`. A slot changes only from 0 to a value (by the claiming
    /// compare-and-swap, so two threads never both claim one value: the
    /// loser sees the winner's) or from 0 to [`MOVED`]; so a probe that
    /// meets `fp` is done, and one that meets an empty slot before `fp`
    /// knows `fp` is absent. With `slack` (another thread is growing the
    /// shard) the limit is the hard one.
    #[inline(always)]
    pub(super) fn insert(&self, fp: u64, len: &AtomicUsize, slack: bool) -> Probe {
        let limit = if slack { self.hard } else { self.limit };
        let home = self.home(fp);
        for i in home..home + self.slots.len() {
            let slot = self.slots.wrap(i);
            let mut s = slot.load(Acquire);
            loop {
                if s == fp {
                    return Probe::Present;
                }
                if s == MOVED {
                    return Probe::Moved;
                }
                if s != 0 {
                    break;
                }
                if len.load(Relaxed) >= limit {
                    return Probe::AtLimit;
                }
                match slot.compare_exchange(0, fp, AcqRel, Acquire) {
                    Ok(_) => {
                        len.fetch_add(1, Relaxed);
                        return Probe::New;
                    }
                    Err(now) => s = now,
                }
            }
        }
        // Every slot is taken: only a table at its limit gets here.
        Probe::AtLimit
    }

    /// Whether `fp` is in the table (`None`: the table is frozen where the
    /// probe went).
    #[inline]
    pub(super) fn contains(&self, fp: u64) -> Option<bool> {
        let home = self.home(fp);
        for i in home..home + self.slots.len() {
            match self.slots.wrap(i).load(Acquire) {
                s if s == fp => return Some(true),
                0 => return Some(false),
                MOVED => return None,
                _ => {}
            }
        }
        Some(false)
    }

    /// Stores `fp`, known to be absent, in a table no other thread sees
    /// yet (which has an empty slot).
    pub(super) fn place(&self, fp: u64) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(fp);
        while self.slots[i].load(Relaxed) != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i].store(fp, Relaxed);
    }

    /// Freezes every empty slot, so that an insert racing with a growth
    /// either lands before its slot is frozen or meets [`MOVED`] (then
    /// the value is absent: [`Probe::Moved`]); calls `f` with every stored
    /// value.
    pub(super) fn freeze(&self, mut f: impl FnMut(u64)) {
        for slot in self.slots.iter() {
            let mut s = slot.load(Acquire);
            while s == 0 {
                match slot.compare_exchange(0, MOVED, AcqRel, Acquire) {
                    Ok(_) => break,
                    Err(now) => s = now,
                }
            }
            if s != 0 && s != MOVED {
                f(s);
            }
        }
    }
}
