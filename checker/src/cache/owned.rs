//! The cache of one worker of the distributed SES (ARCHITECTURE.md,
//! "Distributed SES"): the worker owns the fingerprints [`owner`] gives
//! it and caches those; every other fingerprint is another worker's,
//! whose successor the search sends there instead of looking it up
//! ([`Insert::Elsewhere`]). For those it keeps a table of the keys it sent
//! lately ([`Sent`]): a key sent is in its owner's cache by the end of the
//! stratum it was sent in (in flight until then, and explored there), so
//! the table answers for it as a cache would, and a key it lost costs one
//! transfer more, never a state.

use super::{FingerprintSet, Insert};

/// The worker that owns fingerprint `fp` among `peers`: the high bits of
/// `fp` times an odd constant, scaled to `0..peers`. Not `fp`'s own high
/// bits: the cache's home slots are those, and a worker that owned the
/// fingerprints of one range of high bits would crowd its states into
/// that range of its table's slots, where linear probing degenerates
/// (TwoPhase with 8 RMs on 2 workers: 300 s and unfinished, against
/// seconds).
pub fn owner(fp: u64, peers: u32) -> u32 {
    const MIX: u64 = 0x9E37_79B9_7F4A_7C15;
    ((u128::from(fp.wrapping_mul(MIX)) * u128::from(peers)) >> 64) as u32
}

/// The slots of a worker's table of keys sent ([`Sent`]) at first: 2^16,
/// 512 KiB.
pub(crate) const SENT_FIRST: usize = 1 << 16;

/// The most slots it grows to: 2^23, 64 MiB (TwoPhase with 9 RMs,
/// `--processes 2`: 2^20 slots took 1.2 times the time of 2^23 and more
/// memory, for the copies in flight; 2^24 no less time, 52 MiB more).
pub(crate) const SENT_MOST: usize = 1 << 23;

/// The keys a worker sent lately (`Shortcuts::sent`), in a table with one
/// key a slot, the slot by the key's low bits (the owner is chosen by its
/// high bits after a multiplication, the cache's home slot by its high
/// bits). It starts small and doubles, keeping its keys, each time it has
/// taken in a quarter as many keys as it has slots, up to [`SENT_MOST`]:
/// a small search does not pay for a table it does not fill (64 MiB was
/// most of a process's memory on Paxos; doubling at as many keys as slots
/// took 1.1 times the time on TwoPhase with 9 RMs, where the table never
/// reached its most).
#[derive(Debug)]
pub(crate) struct Sent {
    /// Empty when the shortcut is off; 0 is no key.
    slots: Vec<u64>,
    /// Keys taken in since the table last grew.
    taken: usize,
}

impl Sent {
    pub(crate) fn new(on: bool) -> Self {
        Sent {
            slots: if on { vec![0; SENT_FIRST] } else { Vec::new() },
            taken: 0,
        }
    }

    /// Whether `key` was sent lately (and is still held).
    #[inline]
    pub(crate) fn holds(&self, key: u64) -> bool {
        let n = self.slots.len();
        n != 0 && key != 0 && self.slots[key as usize & (n - 1)] == key
    }

    /// Whether `key` was sent lately; if not, it is now. A key of 0 (no
    /// fingerprint of the engine's, but a program's own may be) is never
    /// held.
    #[inline]
    pub(crate) fn again(&mut self, key: u64) -> bool {
        let n = self.slots.len();
        if n == 0 || key == 0 {
            return false;
        }
        let slot = &mut self.slots[key as usize & (n - 1)];
        if std::mem::replace(slot, key) == key {
            return true;
        }
        self.taken += 1;
        if self.taken >= n / 4 && n < SENT_MOST {
            self.grow();
        }
        false
    }

    /// Doubles the table, keeping its keys.
    fn grow(&mut self) {
        let twice = vec![0; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, twice);
        let mask = self.slots.len() - 1;
        for key in old.into_iter().filter(|&k| k != 0) {
            self.slots[key as usize & mask] = key;
        }
        self.taken = 0;
    }

    fn bytes(&self) -> usize {
        self.slots.capacity() * size_of::<u64>()
    }
}

/// Worker `me` of `peers`: its part of the cache and its table of keys
/// sent. Look-ups of its own keys are the set's; another worker's key is
/// `contains`'d by the table, and its insert answers `Present` if the
/// table holds it and `Elsewhere` (now holding it) if not.
#[derive(Debug)]
pub struct OwnedCache {
    set: FingerprintSet,
    me: u32,
    peers: u32,
    sent: Sent,
    /// Keys answered `Elsewhere`, and keys of other workers answered
    /// `Present` (the transfers the table saved).
    elsewhere: u64,
    held: u64,
}

impl OwnedCache {
    /// The cache of worker `me` of `peers` with `budget` bytes for its own
    /// keys (`None`: no budget), with the table of keys sent if `sent`
    /// (and there is another worker).
    pub fn new(budget: Option<usize>, me: u32, peers: u32, sent: bool) -> Self {
        OwnedCache {
            set: FingerprintSet::new(budget),
            me,
            peers,
            sent: Sent::new(sent && peers > 1),
            elsewhere: 0,
            held: 0,
        }
    }

    /// Whether this worker owns `fp`.
    #[inline(always)]
    pub fn owns(&self, fp: u64) -> bool {
        owner(fp, self.peers) == self.me
    }

    /// The part of the cache this worker owns.
    pub fn set(&self) -> &FingerprintSet {
        &self.set
    }

    /// Keys sent ([`Insert::Elsewhere`]) and keys of other workers found in
    /// the table of keys sent ([`Insert::Present`]).
    pub fn transfers(&self) -> (u64, u64) {
        (self.elsewhere, self.held)
    }

    #[inline(always)]
    pub(crate) fn insert(&mut self, fp: u64) -> Insert {
        if self.owns(fp) {
            self.set.insert(fp)
        } else if self.sent.again(fp) {
            self.held += 1;
            Insert::Present
        } else {
            self.elsewhere += 1;
            Insert::Elsewhere
        }
    }

    #[inline(always)]
    pub(crate) fn contains(&self, fp: u64) -> bool {
        if self.owns(fp) {
            self.set.contains(fp)
        } else {
            self.sent.holds(fp)
        }
    }

    #[inline(always)]
    pub(crate) fn prefetch(&self, fp: u64) {
        if self.owns(fp) {
            self.set.prefetch(fp);
        }
    }

    pub(crate) fn bytes(&self) -> usize {
        self.set.bytes() + self.sent.bytes()
    }

    pub(crate) fn fingerprint_bits(&self) -> u32 {
        self.set.fingerprint_bits()
    }
}

#[cfg(test)]
mod tests {
    use super::{Insert, OwnedCache, SENT_FIRST, SENT_MOST, Sent, owner};
    use crate::cache::fingerprint;

    /// A key is held from its second send on, until a key of the same slot
    /// takes its place; a key of 0 is never held, and nothing without the
    /// shortcut.
    #[test]
    fn the_table_of_keys_sent_holds_a_key_until_its_slot_is_taken() {
        let mut on = Sent::new(true);
        let (a, b) = (0x1234_5678_9abc_def1, 0x1234_5678_9abc_def1 + SENT_FIRST as u64);
        assert!(!on.holds(a));
        assert_eq!((on.again(a), on.again(a), on.again(a)), (false, true, true));
        assert!(on.holds(a));
        assert!(!on.again(b), "b takes a's slot");
        assert!(!on.holds(a));
        assert_eq!((on.again(a), on.again(b)), (false, false));
        assert_eq!((on.again(0), on.again(0), on.holds(0)), (false, false, false));
        let mut off = Sent::new(false);
        assert_eq!((off.again(a), off.again(a), off.holds(a)), (false, false, false));
    }

    /// The table doubles once it has taken in a quarter as many keys as it
    /// has slots, keeping them (two keys a slot apart at first are both
    /// held after), and stops at its most.
    #[test]
    fn the_table_of_keys_sent_grows_with_what_it_takes_in() {
        let mut t = Sent::new(true);
        // a's slot is odd; the other keys' are even.
        let (a, b) = (7u64 << 40 | 1, (7u64 << 40 | 1) + SENT_FIRST as u64);
        assert!(!t.again(a));
        for k in 1..SENT_FIRST as u64 / 4 - 1 {
            assert!(!t.again(k << 1));
        }
        assert_eq!(t.slots.len(), SENT_FIRST);
        assert!(!t.again(1 << 30), "the table's n-th key: it grows");
        assert_eq!(t.slots.len(), 2 * SENT_FIRST);
        assert!(t.holds(a) && t.holds(1 << 30), "kept");
        assert!(!t.again(b));
        assert!(t.holds(a) && t.holds(b), "a slot apart now");
        let mut k = 1u64 << 50;
        while t.slots.len() < SENT_MOST {
            t.again(k);
            k += 1;
        }
        for _ in 0..2 * SENT_MOST {
            t.again(k);
            k += 1;
        }
        assert_eq!(t.slots.len(), SENT_MOST);
    }

    /// A worker's own key is cached as in the set; another worker's is
    /// `Elsewhere` once, then `Present` (held), and `contains` agrees.
    #[test]
    fn a_worker_caches_its_keys_and_holds_the_keys_it_sent() {
        let fps: Vec<u64> = (0u64..64).map(|i| fingerprint(&i)).collect();
        let mut c = OwnedCache::new(None, 0, 2, true);
        let (mine, theirs): (Vec<u64>, Vec<u64>) = fps.iter().partition(|&&fp| owner(fp, 2) == 0);
        assert!(!mine.is_empty() && !theirs.is_empty());
        for &fp in &mine {
            assert!(!c.contains(fp));
            assert_eq!((c.insert(fp), c.insert(fp)), (Insert::New, Insert::Present));
            assert!(c.contains(fp));
        }
        for &fp in &theirs {
            assert!(!c.contains(fp));
            assert_eq!((c.insert(fp), c.insert(fp)), (Insert::Elsewhere, Insert::Present));
            assert!(c.contains(fp));
        }
        assert_eq!(c.transfers(), (theirs.len() as u64, theirs.len() as u64));
        let mut off = OwnedCache::new(None, 0, 2, false);
        assert_eq!(
            (off.insert(theirs[0]), off.insert(theirs[0])),
            (Insert::Elsewhere, Insert::Elsewhere)
        );
        assert!(!off.contains(theirs[0]));
    }

    /// What a worker owns is spread over the whole range of high bits,
    /// which the cache's home slots are: for 2, 3 and 4 workers, each
    /// owns between 0.9 and 1.1 times its share of the fingerprints in
    /// every sixteenth of that range (of 2^18 fingerprints). Owning by the
    /// high bits themselves fails it at once (worker 0 of 2 owns nothing
    /// in the upper half).
    #[test]
    fn each_worker_owns_its_share_of_every_range_of_home_slots() {
        let fps: Vec<u64> = (0u64..1 << 18).map(|i| fingerprint(&i)).collect();
        for peers in 2..=4u32 {
            let mut counts = vec![[0u32; 16]; peers as usize];
            for &fp in &fps {
                counts[owner(fp, peers) as usize][(fp >> 60) as usize] += 1;
            }
            let share = fps.len() as f64 / 16.0 / f64::from(peers);
            for (w, ranges) in counts.iter().enumerate() {
                for (r, &n) in ranges.iter().enumerate() {
                    let ratio = f64::from(n) / share;
                    assert!(
                        (0.9..1.1).contains(&ratio),
                        "worker {w} of {peers}, range {r}: {ratio:.3}"
                    );
                }
            }
        }
    }
}
