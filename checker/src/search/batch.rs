//! The deterministic parallel batch runner of the sampling strategies (SS,
//! RS, IRS, PCT): one way to run on threads, one shard check, one budget check, one
//! progress line and one seed scheme for all of them.
//!
//! A *round* is a numbered set of samples `0..count`. Sample `i` of round
//! `r` must be a pure function of `(seed, r, i)` (see [`stream_seed`]), so
//! that its outcome does not depend on which thread runs it. Samples run in
//! chunks, in index order; the first chunk that holds a violating sample
//! ends the search, and the reported sample is the violating one with the
//! lowest index, which is therefore the same on any number of threads.
//! Budgets count sample indices (all shards' indices, so that `--shard K/N`
//! runs cover one run exactly); the time limit and the stop flag are
//! checked between chunks (and by the samples themselves, through
//! [`Batches::deadline`]).

use super::error::SearchError;
use super::exec;
use super::progress::{Meter, human, rate};
use super::threads::run_indexed;
use crate::config::{Config, peak_rss};
use crate::report::{BoundedBy, Found, Outcome, Report, Stratum};
use crate::schedule::PathKind;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The SplitMix64 increment (2^64 / golden ratio).
const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// The most samples between two checks of the budgets.
const MAX_CHUNK: u64 = 4096;

/// One step of the SplitMix64 generator: advances `state` and returns the
/// next output. Used only to derive independent seeds.
#[inline]
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(GOLDEN);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// SplitMix64's output from state `x`: a bijection of `x`.
#[inline]
fn mix(x: u64) -> u64 {
    let mut s = x;
    splitmix64(&mut s)
}

/// The seed of random stream `stream` of sample `index` in round `round`,
/// derived with SplitMix64 from the run's seed: independent of threads and
/// shards. The sample's state is `mix(mix(mix(seed) ^ round) ^ index)`
/// (for a fixed seed and round, distinct indices give distinct states,
/// each step being a bijection); stream `k` is SplitMix64's output after
/// `k` more steps from it.
pub(super) fn stream_seed(seed: u64, round: u64, index: u64, stream: u64) -> u64 {
    let state = mix(mix(mix(seed) ^ round) ^ index);
    mix(state.wrapping_add(stream.wrapping_mul(GOLDEN)))
}

/// What one sample did.
#[derive(Clone, Debug, Default)]
pub(super) struct Sample {
    /// Program steps executed (all the executions of the sample).
    pub(super) steps: u64,
    /// Its longest execution.
    pub(super) longest: u64,
    /// Whether its execution was cut at the step limit.
    pub(super) truncated: bool,
    /// The violation, with the path that reproduces it.
    pub(super) violation: Option<(Found, Vec<u64>)>,
    /// The explorer seed of the sample, when it uses one.
    pub(super) explorer_seed: u64,
    /// Cut short by the time limit or the stop flag: it does not count.
    pub(super) aborted: bool,
    /// Whether it did all a sample of its round should (SS: placed all the
    /// delays of its bound; always, elsewhere).
    pub(super) complete: bool,
}

/// How a round ended.
#[derive(Debug)]
pub(super) enum RoundEnd {
    /// Every sample ran without a violation.
    Done,
    /// The lowest-index violating sample.
    Violation(Sample),
    /// A budget stopped the search.
    Stopped(BoundedBy),
}

/// Runs rounds of samples on threads and accumulates the report.
pub(super) struct Batches<'c> {
    config: &'c Config,
    threads: usize,
    meter: Meter,
    start: Instant,
    /// Sample indices consumed so far (every shard's), for `max_schedules`.
    consumed: u64,
    /// Samples of the last round that counted, and those of them complete.
    counted: (u64, u64),
    /// The report so far.
    report: Report,
    /// The time limit: the configured one, else the sampling default
    /// ([`Batches::without_default_time_limit`]: none).
    time_limit: Option<Duration>,
}

impl<'c> Batches<'c> {
    /// Batches for `config`, filling `report`.
    pub(super) fn new(config: &'c Config, mut report: Report) -> Result<Self, SearchError> {
        let threads = config.worker_threads().max(1);
        if let Some((k, n)) = config.shard {
            if n == 0 || k >= n {
                return Err(SearchError::Input(format!(
                    "shard {k}/{n} is impossible: it needs 0 <= K < N (the samples with index mod N = K)"
                )));
            }
            report.shard = Some(format!("{k}/{n}"));
        }
        report.threads = threads;
        Ok(Batches {
            config,
            threads,
            meter: Meter::new(config.progress.clone()),
            start: Instant::now(),
            consumed: 0,
            counted: (0, 0),
            report,
            time_limit: Some(config.sampling_time_limit()),
        })
    }

    /// Only the configured time limit, none by default (the portfolio's:
    /// without one it runs as long as its SES member).
    pub(super) fn without_default_time_limit(mut self) -> Self {
        self.time_limit = self.config.time_limit;
        self
    }

    /// The run's seed.
    pub(super) fn seed(&self) -> u64 {
        self.config.seed
    }

    /// Whether deadlocks are violations.
    pub(super) fn deadlock(&self) -> bool {
        self.config.deadlock
    }

    /// When the time limit ends the run, if it has one.
    pub(super) fn deadline(&self) -> Option<Instant> {
        self.time_limit.map(|limit| self.start + limit)
    }

    /// The report so far (for notes).
    pub(super) fn report_mut(&mut self) -> &mut Report {
        &mut self.report
    }

    /// Whether some sample of the last round counted, and none of those
    /// that counted was complete.
    pub(super) fn last_round_incomplete(&self) -> bool {
        self.counted.0 > 0 && self.counted.1 == 0
    }

    pub(super) fn budget_hit(&self) -> Option<BoundedBy> {
        if self.config.stop.is_raised() {
            return Some(BoundedBy::Interrupted);
        }
        if self.deadline().is_some_and(|d| Instant::now() >= d) {
            return Some(BoundedBy::Time);
        }
        if self.config.max_schedules.is_some_and(|m| self.consumed >= m) {
            return Some(BoundedBy::Schedules);
        }
        None
    }

    /// Run samples `0..count` of `round` (those of this shard), calling
    /// `sample(i, scratch)` for each, in parallel chunks, with a `scratch`
    /// from `init` per thread. A sample after a violating one of its chunk
    /// may be skipped (it would not count). `label` names the round in
    /// progress lines.
    pub(super) fn round<T, I, F>(
        &mut self,
        round: u32,
        count: u64,
        label: &str,
        init: I,
        sample: F,
    ) -> Result<RoundEnd, SearchError>
    where
        I: Fn() -> T + Sync + Send,
        F: Fn(u64, &mut T) -> Result<Sample, SearchError> + Sync + Send,
    {
        let round_start = Instant::now();
        let mut stratum = Stratum {
            bound: round,
            ..Stratum::default()
        };
        self.counted = (0, 0);
        // Enough samples to keep every thread busy, few enough that the
        // budgets are checked often whatever `-j` is.
        let chunk = (16 * self.threads as u64).min(MAX_CHUNK);
        let mut next = 0u64;
        let end = loop {
            if next >= count {
                break RoundEnd::Done;
            }
            if let Some(b) = self.budget_hit() {
                break RoundEnd::Stopped(b);
            }
            let mut hi = (next + chunk).min(count);
            if let Some(m) = self.config.max_schedules {
                hi = hi.min(next + (m - self.consumed));
            }
            // This shard's indices in [next, hi).
            let mine: Vec<u64> = match self.config.shard {
                Some((k, n)) => (next..hi).filter(|i| i % u64::from(n) == u64::from(k)).collect(),
                None => (next..hi).collect(),
            };
            let lowest = AtomicU64::new(u64::MAX);
            let results = run_indexed(self.threads, mine.len(), &init, |scratch, j| {
                let i = mine[j];
                if i > lowest.load(Ordering::Relaxed) {
                    return Ok(None);
                }
                let s = sample(i, scratch)?;
                if s.violation.is_some() {
                    lowest.fetch_min(i, Ordering::Relaxed);
                }
                Ok(Some((i, s)))
            });
            let results = results
                .into_iter()
                .filter_map(Result::transpose)
                .collect::<Result<Vec<_>, _>>()?;
            // Count samples in index order up to the first violating one, so
            // that the counts do not depend on the chunk size (threads).
            let mut first = None;
            let mut counted_to = hi;
            let mut aborted = false;
            for (i, s) in results {
                if s.aborted {
                    aborted = true;
                    continue;
                }
                let r = &mut self.report;
                r.schedules += 1;
                r.steps += s.steps;
                r.truncated += u64::from(s.truncated);
                r.longest = r.longest.max(s.longest);
                stratum.schedules += 1;
                stratum.transitions += s.steps;
                if self.config.shard.is_some() {
                    stratum.samples.push([s.steps, s.longest, u64::from(s.truncated)]);
                }
                self.counted.0 += 1;
                self.counted.1 += u64::from(s.complete);
                if s.violation.is_some() {
                    counted_to = i + 1;
                    first = Some(s);
                    break;
                }
            }
            self.consumed += counted_to - next;
            next = counted_to;
            let r = &self.report;
            self.meter.tick(|t| {
                format!(
                    "{label}: schedules {} ({}), steps {} ({}), truncated {}, longest {}",
                    human(r.schedules as f64),
                    rate(r.schedules, t),
                    human(r.steps as f64),
                    rate(r.steps, t),
                    r.truncated,
                    r.longest
                )
            });
            if let Some(s) = first {
                break RoundEnd::Violation(s);
            }
            if aborted {
                // A sample saw the deadline or the stop flag.
                break RoundEnd::Stopped(self.budget_hit().unwrap_or(BoundedBy::Time));
            }
        };
        stratum.elapsed_s = round_start.elapsed().as_secs_f64();
        self.report.strata.push(stratum);
        self.report.bound_reached = round;
        Ok(end)
    }

    /// The final report: outcome, what bounded it, the schedule of the
    /// violating sample (a path of `kind`, for `explorer`, replayed within
    /// `max_steps`), timing and memory.
    pub(super) fn finish(mut self, end: RoundEnd, kind: PathKind, explorer: Option<&str>, max_steps: usize) -> Report {
        self.meter.finish();
        let r = &mut self.report;
        match end {
            RoundEnd::Violation(s) => {
                r.outcome = Outcome::Violation;
                if let Some((found, path)) = s.violation {
                    let deadlock = self.config.deadlock;
                    let schedule = exec::schedule(kind, explorer, s.explorer_seed, max_steps, deadlock, path, &found);
                    r.schedule = Some(schedule);
                    r.violation = Some(found);
                }
            }
            RoundEnd::Stopped(b) => {
                r.outcome = Outcome::Bounded;
                r.bounded_by = Some(b);
            }
            RoundEnd::Done => {
                r.outcome = Outcome::Bounded;
                r.bounded_by = Some(BoundedBy::MaxDelays);
            }
        }
        r.elapsed_s = self.start.elapsed().as_secs_f64();
        r.peak_memory_mb = peak_rss().unwrap_or(0) as f64 / (1 << 20) as f64;
        self.report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_values() {
        // The reference sequence of SplitMix64 from seed 0.
        let mut s = 0u64;
        assert_eq!(splitmix64(&mut s), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(&mut s), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(splitmix64(&mut s), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn streams_are_distinct() {
        let mut seen = crate::cache::FixedHashSet::with_hasher(crate::cache::FIXED_HASHER);
        for r in 0..4 {
            for i in 0..1000 {
                for st in 0..2 {
                    assert!(seen.insert(stream_seed(7, r, i, st)));
                }
            }
        }
        assert_ne!(stream_seed(7, 0, 0, 0), stream_seed(8, 0, 0, 0));
    }

    /// Stream k of a sample is SplitMix64's k-th output from the sample's
    /// state (stream 0 is what the random walks used, streams 0 and 1 the
    /// delay positions and explorer seed of stratified sampling).
    #[test]
    fn streams_are_consecutive_outputs_from_the_sample_state() {
        let mut state = mix(mix(mix(7) ^ 3) ^ 11);
        let outputs: Vec<u64> = (0..3).map(|_| splitmix64(&mut state)).collect();
        let streams: Vec<u64> = (0..3).map(|k| stream_seed(7, 3, 11, k)).collect();
        assert_eq!(outputs, streams);
    }
}
