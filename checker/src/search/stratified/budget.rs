//! The budgets of the search (time, states, memory, the stop flag), checked
//! every few thousand transitions, and the counters that the workers of a
//! parallel search share to judge them together.

use super::{Entry, Frame, PathNode, Search, Stop, UNBOUNDED};
use crate::cache::StateCache;
use crate::config::{Config, Progress};
use crate::program::{ActorId, Enabled, Program};
use crate::report::BoundedBy;
use crate::search::order::ChoiceOrder;
use crate::search::progress::{Meter, human, rate};
use std::mem::size_of;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// Transitions between two checks of the budgets (the memory only every
/// `MEMORY_EVERY`): often enough that the time limit holds within a small
/// fraction of a second even on a loaded machine.
pub(in crate::search) const CHECK_EVERY: u64 = 1024;
/// Transitions between two checks of a parallel worker's budgets: a worker
/// may share a core with many others (`-j` above the core count), so it
/// checks the clock more often.
const WORKER_CHECK_EVERY: u64 = 256;
/// Transitions between two checks of the memory.
pub(in crate::search) const MEMORY_EVERY: u64 = 4096;
/// The least time between two reads of the resident memory from /proc
/// (a file opened, read and closed: about ten microseconds of system
/// time). A memory check in between judges by the last reading and the
/// search's own count of its bytes, read at every check.
const RSS_EVERY: Duration = Duration::from_millis(5);

/// The transitions from `transitions` to the next check of the budgets
/// of a search that checks them every `every`: a paced search
/// ([`Config::pace`], the portfolio's exhaustive member) checks every 64
/// transitions at first, then every sixteenth of its transitions so far,
/// up to `every`, so that its first shares of the portfolio can be short.
pub(in crate::search) fn check_period(config: &Config, transitions: u64, every: u64) -> u64 {
    match config.pace {
        Some(_) => (transitions / 16).max(64).min(every),
        None => every,
    }
}

/// The budgets every check looks at first: the stop flag and the time
/// limit of a search that started at `started`.
pub(in crate::search) fn interrupted_or_late(config: &Config, started: Instant) -> Option<Stop> {
    if config.stop.is_raised() {
        return Some(Stop::Budget(BoundedBy::Interrupted));
    }
    if config.time_limit.is_some_and(|t| started.elapsed() >= t) {
        return Some(Stop::Budget(BoundedBy::Time));
    }
    None
}

/// The memory budget at a check: the process's resident memory when it
/// or the search's own `bytes` exceed `config.max_memory`, else `None`.
pub(in crate::search) fn over_memory(config: &Config, bytes: u64) -> Option<u64> {
    let rss = current_rss();
    (bytes.max(rss) > config.max_memory as u64).then_some(rss)
}

/// The progress line of a stratified search of `strategy` at `bound`,
/// `secs` after it started.
pub(in crate::search) fn progress_line(
    strategy: &str,
    bound: u32,
    (states, transitions, frontier): (u64, u64, u64),
    secs: f64,
) -> String {
    let bound = if bound == UNBOUNDED {
        "no bound".to_string()
    } else {
        format!("bound {bound}")
    };
    format!(
        "{strategy}: {bound}, {} states ({}), {} transitions, frontier {}, {:.0}s",
        human(states as f64),
        rate(states, secs),
        human(transitions as f64),
        human(frontier as f64),
        secs
    )
}

/// What the workers of one parallel search share besides the cache: the
/// totals the budgets judge, the halt flag and the progress line.
#[derive(Debug)]
pub(in crate::search) struct Shared {
    halted: AtomicBool,
    states: AtomicU64,
    transitions: AtomicU64,
    /// Bytes held outside the workers (the stratum's work items, the
    /// merged path arena), counted in their memory checks.
    base_bytes: AtomicU64,
    meter: Mutex<Meter>,
}

impl Shared {
    /// Counters at zero, and a progress meter in mode `progress`.
    pub(in crate::search) fn new(progress: Progress) -> Self {
        Shared {
            halted: AtomicBool::new(false),
            states: AtomicU64::new(0),
            transitions: AtomicU64::new(0),
            base_bytes: AtomicU64::new(0),
            meter: Mutex::new(Meter::new(progress)),
        }
    }

    /// Sets the totals at the start of a stratum: `states` and
    /// `transitions` so far, `base_bytes` held outside the workers.
    pub(in crate::search) fn reset(&self, states: u64, transitions: u64, base_bytes: u64) {
        self.states.store(states, Ordering::Relaxed);
        self.transitions.store(transitions, Ordering::Relaxed);
        self.base_bytes.store(base_bytes, Ordering::Relaxed);
    }

    /// Adds a worker's new states and transitions; returns the totals and
    /// the bytes held outside the workers.
    fn add(&self, states: u64, transitions: u64) -> (u64, u64, u64) {
        let s = self.states.fetch_add(states, Ordering::Relaxed) + states;
        let t = self.transitions.fetch_add(transitions, Ordering::Relaxed) + transitions;
        (s, t, self.base_bytes.load(Ordering::Relaxed))
    }

    /// Whether some worker stopped the search.
    pub(in crate::search) fn is_halted(&self) -> bool {
        self.halted.load(Ordering::Relaxed)
    }

    /// Stops every worker at its next budget check.
    pub(in crate::search) fn halt(&self) {
        self.halted.store(true, Ordering::Relaxed)
    }

    /// The progress meter, unless another worker is using it.
    fn meter(&self) -> Option<MutexGuard<'_, Meter>> {
        self.meter.try_lock().ok()
    }

    /// Clears a live progress line before the report.
    pub(in crate::search) fn finish_meter(&self) {
        self.meter.lock().unwrap_or_else(|e| e.into_inner()).finish();
    }
}

impl<P: Program, O: ChoiceOrder, const W: bool> Search<'_, P, O, W> {
    /// The budgets, checked every few thousand transitions.
    #[inline]
    pub(super) fn budgets_due(&mut self) -> Option<Stop> {
        if self.report.transitions >= self.next_check {
            self.check_budgets()
        } else {
            None
        }
    }

    /// The bytes the search holds: cache, frontier and work items, stack,
    /// enabled sets and path arena.
    pub(super) fn search_bytes(&self) -> u64 {
        let frame = size_of::<Frame<P::State, O>>() as u64;
        self.cache.bytes() as u64
            + self.entry_bytes()
            + self.stack.capacity() as u64 * frame
            + (self.en.capacity() * (size_of::<Enabled>() + size_of::<ActorId>())) as u64
            + self.arena_bytes()
    }

    /// The bytes of the frontier and the work items still to run (and of
    /// the set that keeps one entry per state once the cache is full).
    fn entry_bytes(&self) -> u64 {
        let dedup = self.deferred.capacity() * (size_of::<u64>() + 1);
        let pending: usize = self.pending.iter().map(|(list, _)| list.capacity()).sum();
        let entries = self.frontier.capacity() + pending + self.queued.capacity();
        (entries as u64 + self.work_len) * size_of::<Entry<P::State, O>>() as u64 + dedup as u64
    }

    /// The bytes of the path arena's own nodes.
    pub(super) fn arena_bytes(&self) -> u64 {
        (self.arena.nodes.capacity() * size_of::<PathNode>()) as u64
    }

    fn check_budgets(&mut self) -> Option<Stop> {
        let every = if self.shared.is_some() {
            WORKER_CHECK_EVERY
        } else {
            CHECK_EVERY
        };
        self.next_check = self.report.transitions + check_period(self.config, self.report.transitions, every);
        let memory_due = self.report.transitions >= self.next_memory_check;
        if memory_due {
            self.next_memory_check = self.report.transitions + MEMORY_EVERY;
        }
        let c = self.config;
        if let Some(stop) = interrupted_or_late(c, self.started) {
            return Some(stop);
        }
        if self.shared.is_none()
            && c.pace
                .as_ref()
                .is_some_and(|p| !p.go_on(self.report.transitions, self.report.states))
        {
            return Some(Stop::Budget(BoundedBy::Interrupted));
        }
        // A parallel worker publishes its counts and judges by the totals.
        let (states, transitions, extra_bytes) = match self.shared {
            Some(shared) => {
                let (s, t) = (self.report.states, self.report.transitions);
                let totals = shared.add(s - self.synced.0, t - self.synced.1);
                self.synced = (s, t);
                if shared.is_halted() {
                    return Some(Stop::Halted);
                }
                totals
            }
            None => (self.report.states, self.report.transitions, 0),
        };
        if c.max_states.is_some_and(|m| states >= m) {
            return Some(Stop::Budget(BoundedBy::States));
        }
        if !memory_due {
            return None;
        }
        let bytes = self.search_bytes() + extra_bytes;
        self.peak_bytes = self.peak_bytes.max(bytes);
        if let Some(rss) = over_memory(c, bytes) {
            self.report.notes.push(format!(
                "stopped at the memory budget of {} MiB: resident {} MiB, cache {} MiB, frontier {} entries ({} MiB), path arena {} MiB",
                c.max_memory >> 20,
                rss >> 20,
                self.cache.bytes() >> 20,
                self.frontier_len() + self.work_len,
                self.entry_bytes() >> 20,
                self.arena_bytes() >> 20,
            ));
            return Some(Stop::Budget(BoundedBy::Memory));
        }
        let (frontier, bound) = (self.frontier_len() + self.work_len, self.bound);
        let strategy = &self.report.strategy;
        let meter = &mut self.meter;
        let mut shared_meter = self.shared.and_then(|s| s.meter());
        let meter = shared_meter.as_deref_mut().unwrap_or(meter);
        meter.tick(|secs| progress_line(strategy, bound, (states, transitions, frontier), secs));
        None
    }
}

/// This process's resident memory in bytes (0 if unknown), read from /proc
/// at most once every [`RSS_EVERY`] whatever the number of searches and
/// workers that ask; a call in between gets the last reading. (Read at
/// every memory check, it was 30,000 reads and a tenth of a DFS's time on
/// TwoPhase with 9 RMs: ARCHITECTURE.md, "Budgets".)
fn current_rss() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    static PROBE: Probe = Probe::new();
    let now = START.get_or_init(Instant::now).elapsed();
    PROBE.get(now.as_nanos() as u64, read_rss)
}

/// A reading taken at most once per [`RSS_EVERY`], shared by its callers.
struct Probe {
    /// When the last reading was taken, in nanoseconds (`u64::MAX`: never).
    read_at: AtomicU64,
    /// What it read.
    value: AtomicU64,
}

impl Probe {
    const fn new() -> Self {
        Probe {
            read_at: AtomicU64::new(u64::MAX),
            value: AtomicU64::new(0),
        }
    }

    /// The reading at time `now` (nanoseconds): `read`'s (0 for `None`) if
    /// the last was taken [`RSS_EVERY`] or more before, else the last.
    /// Of callers racing for a new reading one takes it, and the others
    /// answer with the last.
    fn get(&self, now: u64, read: impl FnOnce() -> Option<u64>) -> u64 {
        let at = self.read_at.load(Ordering::Relaxed);
        let fresh = at != u64::MAX && now.saturating_sub(at) < RSS_EVERY.as_nanos() as u64;
        if fresh
            || self
                .read_at
                .compare_exchange(at, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return self.value.load(Ordering::Relaxed);
        }
        let value = read().unwrap_or(0);
        self.value.store(value, Ordering::Relaxed);
        value
    }
}

/// This process's current resident memory in bytes, if /proc tells it.
fn read_rss() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[cfg(test)]
mod tests {
    use super::{Probe, RSS_EVERY};
    use std::cell::Cell;

    /// The first call reads; a call less than [`RSS_EVERY`] after the last
    /// reading gets it without reading; one at [`RSS_EVERY`] or later reads
    /// again; a failed read counts as 0 and is kept as a reading.
    #[test]
    fn the_resident_memory_is_read_once_per_interval() {
        let every = RSS_EVERY.as_nanos() as u64;
        let probe = Probe::new();
        let reads = Cell::new(0);
        let read = |v: Option<u64>| {
            reads.set(reads.get() + 1);
            v
        };
        // Never read yet: even at time 0.
        assert_eq!(probe.get(0, || read(Some(100))), 100);
        assert_eq!(probe.get(every - 1, || read(Some(200))), 100);
        assert_eq!(reads.get(), 1);
        assert_eq!(probe.get(every, || read(Some(300))), 300);
        assert_eq!(probe.get(2 * every - 1, || read(Some(400))), 300);
        assert_eq!(probe.get(3 * every, || read(None)), 0);
        assert_eq!(probe.get(3 * every + 1, || read(Some(500))), 0);
        assert_eq!(reads.get(), 3);
        // A clock read before the last reading (another thread's) is
        // within the interval.
        assert_eq!(probe.get(every, || read(Some(600))), 0);
        assert_eq!(reads.get(), 3);
    }

    /// The process's resident memory is read from /proc (Linux has it).
    /// (`current_rss` itself may answer 0 to a caller that races with the
    /// process's first reading, so it is not asserted here.)
    #[cfg(target_os = "linux")]
    #[test]
    fn the_process_rss_is_read_from_proc() {
        let rss = super::read_rss().expect("/proc/self/statm");
        assert!(rss > 0);
    }
}
