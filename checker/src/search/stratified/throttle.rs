//! The throttle of a shortcut that may not pay: retiring entries (a
//! failed check computed its successors for nothing) and passing kept
//! entries through strata (an entry that retires at its next check was
//! carried through them for nothing).

/// A shortcut is tried while at least 1 in `HIT_RATE` tries pays, and
/// after that on every `PROBE`th chance, to notice when it pays again.
const HIT_RATE: u64 = 2;
const PROBE: u64 = 16;
/// The tries made before the throttle judges.
const MIN_TRIES: u64 = 64;

/// A shortcut's tries, the tries that paid and the chances it had while
/// throttled. The counts add up across a parallel search's workers and
/// strata ([`merge`](Self::merge)), since what a try finds may show only
/// a stratum later, in another worker.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(super) struct Throttle {
    tries: u64,
    hits: u64,
    chances: u64,
}

impl Throttle {
    /// Whether tries fail too often: the throttle is on.
    fn throttling(&self) -> bool {
        self.tries >= MIN_TRIES && self.hits * HIT_RATE < self.tries
    }

    /// Whether the throttle skips the next chance to try.
    pub(super) fn skips_next(&self) -> bool {
        self.throttling() && !(self.chances + 1).is_multiple_of(PROBE)
    }

    /// Whether a try may be made now; counts the chance while throttled.
    pub(super) fn allows(&mut self) -> bool {
        if !self.throttling() {
            return true;
        }
        let skip = self.skips_next();
        self.chances += 1;
        !skip
    }

    /// [`allows`](Self::allows), counting the try if it may be made (its
    /// [`hit`](Self::hit) is counted when it pays).
    pub(super) fn due(&mut self) -> bool {
        let due = self.allows();
        self.tries += u64::from(due);
        due
    }

    /// Counts a try that paid.
    pub(super) fn hit(&mut self) {
        self.hits += 1;
    }

    /// Counts a try whose outcome shows only later, and whether it paid.
    pub(super) fn tried(&mut self, paid: bool) {
        self.tries += 1;
        self.hits += u64::from(paid);
    }

    /// Halves the counts (at the end of a stratum, so that the throttle
    /// of a shortcut whose outcome shows strata later judges the last
    /// few: a search's early strata may pay where its later ones do not).
    pub(super) fn decay(&mut self) {
        self.tries /= 2;
        self.hits /= 2;
    }

    /// The tries that paid.
    #[cfg(test)]
    pub(super) fn hits(&self) -> u64 {
        self.hits
    }

    /// Adds what a worker that started from `forked` counted since.
    pub(super) fn merge(&mut self, worker: &Throttle, forked: &Throttle) {
        self.tries += worker.tries - forked.tries;
        self.hits += worker.hits - forked.hits;
        self.chances += worker.chances - forked.chances;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tries `n` chances, `paying` of every 4 tries made paying; returns
    /// the tries made.
    fn run(t: &mut Throttle, n: u64, paying: u64) -> u64 {
        let mut made = 0;
        for _ in 0..n {
            if t.due() {
                if made % 4 < paying {
                    t.hit();
                }
                made += 1;
            }
        }
        made
    }

    #[test]
    fn throttles_below_one_in_two_and_probes() {
        // Half of the tries pay: never throttled.
        let mut t = Throttle::default();
        assert_eq!(run(&mut t, 1_000, 2), 1_000);
        // One in four pays: free for the first 64 tries, then one chance
        // in 16 (the 16th, 32nd, ... chance after them).
        let mut t = Throttle::default();
        assert_eq!(run(&mut t, 64, 1), 64);
        assert!(t.skips_next());
        assert_eq!(run(&mut t, 160, 1), 10);
        assert_eq!((t.tries, t.hits, t.chances), (74, 19, 160));
        // Tries that pay again lift it.
        let mut u = t;
        for _ in 0..60 {
            u.tries += 1;
            u.hit();
        }
        assert!(!u.skips_next());
        // A worker's counts merge as a difference from its fork.
        let mut main = t;
        main.merge(&u, &t);
        assert_eq!(main, u);
    }

    /// Passing's use: the chance is asked for first, the outcome counted
    /// later, and the counts halved at each stratum's end.
    #[test]
    fn outcomes_counted_later_and_halved() {
        let mut t = Throttle::default();
        // 64 outcomes, one in four paying: throttled.
        for i in 0..64 {
            assert!(t.allows());
            t.tried(i % 4 == 0);
        }
        assert_eq!((t.tries, t.hits, t.chances), (64, 16, 0));
        let allowed = (0..32).filter(|_| t.allows()).count();
        assert_eq!((allowed, t.chances), (2, 32));
        // Halved below the 64 tries it judges from: free again.
        t.decay();
        assert_eq!((t.tries, t.hits), (32, 8));
        assert!(!t.skips_next() && t.allows());
        assert_eq!(t.chances, 32);
    }
}
