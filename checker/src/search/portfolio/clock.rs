//! The clock between the portfolio's exhaustive member, which runs on a
//! thread of its own, and the sampling members, which the portfolio runs
//! in epochs: the exhaustive search may run up to the transitions the
//! portfolio allows it (its share of the epoch), then waits, through its
//! [`Pace`] hook, until the next epoch allows more or the portfolio stops
//! it.
//!
//! The exhaustive search calls the hook at the same transition counts in
//! every run (every check of its budgets), and the portfolio decides by
//! those counts only, never by which thread got where first: so the
//! portfolio's result is the same on any number of threads.

use crate::config::Pace;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// What the two sides know of each other.
#[derive(Debug, Default)]
struct State {
    /// The transitions the search may run before it waits.
    allowed: u64,
    /// The transitions it had run at its last call of the hook.
    at: u64,
    /// Its (transitions, states) at every call of the hook, in order.
    history: Vec<(u64, u64)>,
    /// Its search returned.
    done: bool,
    /// The portfolio asks it to stop.
    stop: bool,
}

/// The shared clock.
#[derive(Debug, Default)]
pub(super) struct Clock {
    state: Mutex<State>,
    changed: Condvar,
}

impl Clock {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic on the other side poisons the lock; the state itself is
        // only ever a few counters, still consistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The hook for the exhaustive search: records its transitions, waits
    /// while it is at or past its allowance, and says whether it goes on.
    pub(super) fn pace(self: &Arc<Self>) -> Pace {
        let clock = Arc::clone(self);
        Pace(Arc::new(move |transitions, states| {
            let mut s = clock.lock();
            s.at = transitions;
            s.history.push((transitions, states));
            clock.changed.notify_all();
            while transitions >= s.allowed && !s.stop {
                s = clock.changed.wait(s).unwrap_or_else(|e| e.into_inner());
            }
            !s.stop
        }))
    }

    /// Lets the search run up to `transitions`.
    pub(super) fn allow(&self, transitions: u64) {
        let mut s = self.lock();
        s.allowed = s.allowed.max(transitions);
        self.changed.notify_all();
    }

    /// Waits until the search has run `transitions` transitions (as its
    /// last call of the hook says) or has returned; true in the first
    /// case.
    pub(super) fn reached(&self, transitions: u64) -> bool {
        let mut s = self.lock();
        while s.at < transitions && !s.done {
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.at >= transitions
    }

    /// Its (transitions, states) at its last call of the hook at or before
    /// `transitions` ((0, 0) before its first): the same in every run,
    /// wherever the search has got to since.
    pub(super) fn counts_at(&self, transitions: u64) -> (u64, u64) {
        let s = self.lock();
        let i = s.history.partition_point(|&(t, _)| t <= transitions);
        i.checked_sub(1).map_or((0, 0), |i| s.history[i])
    }

    /// The search has returned (called on its thread).
    pub(super) fn finish(&self) {
        let mut s = self.lock();
        s.done = true;
        self.changed.notify_all();
    }

    /// Asks the search to stop at its next call of the hook.
    pub(super) fn stop(&self) {
        let mut s = self.lock();
        s.stop = true;
        self.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A search that calls the hook every 10 transitions stops at the
    /// first call at or past its allowance, and goes on when allowed more.
    #[test]
    fn waits_at_its_allowance_and_stops_when_asked() {
        let clock = Arc::new(Clock::default());
        let pace = clock.pace();
        clock.allow(25);
        let search = {
            let clock = Arc::clone(&clock);
            std::thread::spawn(move || {
                let mut t = 0;
                while pace.go_on(t, t / 2) {
                    t += 10;
                }
                clock.finish();
                t
            })
        };
        assert!(clock.reached(25));
        assert_eq!(clock.lock().at, 30);
        clock.allow(45);
        assert!(clock.reached(45));
        assert_eq!(clock.lock().at, 50);
        clock.stop();
        assert_eq!(search.join().unwrap(), 50);
        assert!(clock.lock().done);
        assert_eq!(clock.counts_at(44), (40, 20));
        assert_eq!(clock.counts_at(1000), (50, 25));
        assert!(!clock.reached(1000));
    }
}
