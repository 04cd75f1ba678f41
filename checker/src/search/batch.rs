//! Deterministic parallel batches of independent executions, shared by the
//! randomized strategies.
//!
//! A *round* is a numbered set of samples `0..count`. Sample `i` of round
//! `r` must be a pure function of `(seed, r, i)` (see [`stream_seed`]), so
//! that its outcome does not depend on which thread runs it. Samples run in
//! chunks, in index order; the first chunk that holds a violating sample
//! ends the search, and the reported sample is the violating one with the
//! lowest index, which is therefore the same on any number of threads.
//! Budgets count sample indices (all shards' indices, so that `--shard K/N`
//! runs cover one run exactly); the time limit and the stop flag are
//! checked between chunks.

use super::progress::{human, rate, Meter};
use super::SearchError;
use crate::config::Config;
use crate::report::{BoundedBy, Found, Outcome, Report, Stratum};
use rayon::prelude::*;
use std::time::Instant;

/// One step of the SplitMix64 generator: advances `state` and returns the
/// next output. Used only to derive independent seeds.
#[inline]
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of stream `stream` of sample `index` in round `round`, derived
/// with SplitMix64 from the run's seed: independent of threads and shards.
pub fn stream_seed(seed: u64, round: u64, index: u64, stream: u64) -> u64 {
    let mut s = seed;
    let mut x = splitmix64(&mut s);
    for v in [round, index, stream] {
        let mut t = x ^ v;
        x = splitmix64(&mut t);
    }
    x
}

/// What one sample did.
#[derive(Clone, Debug, Default)]
pub struct Sample {
    /// Program steps executed (all the executions of the sample).
    pub steps: u64,
    /// Its longest execution.
    pub longest: u64,
    /// Executions cut at the step limit.
    pub truncated: u64,
    /// Executions run (a stratified sample with d delays runs d+1).
    pub executions: u64,
    /// The violation, with the path that reproduces it.
    pub violation: Option<(Found, Vec<u64>)>,
    /// The explorer seed of the sample, when it uses one.
    pub explorer_seed: u64,
}

/// How a round ended.
#[derive(Debug)]
pub enum RoundEnd {
    /// Every sample ran without a violation.
    Done,
    /// The lowest-index violating sample.
    Violation(u64, Sample),
    /// A budget stopped the search.
    Stopped(BoundedBy),
}

/// Runs rounds of samples on a thread pool and accumulates the report.
pub struct Batches<'c> {
    config: &'c Config,
    pool: rayon::ThreadPool,
    threads: usize,
    meter: Meter,
    start: Instant,
    /// Sample indices consumed so far (every shard's), for `max_schedules`.
    consumed: u64,
    /// The report so far.
    pub report: Report,
}

impl<'c> Batches<'c> {
    /// Batches for `config`, filling `report`.
    pub fn new(config: &'c Config, mut report: Report) -> Result<Self, SearchError> {
        let threads = config.worker_threads();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| SearchError::Input(format!("cannot start {threads} threads: {e}")))?;
        if let Some((k, n)) = config.shard {
            if n == 0 || k >= n {
                return Err(SearchError::Input(format!(
                    "shard {k}/{n} is impossible: it needs 0 <= K < N"
                )));
            }
            report.shard = Some(format!("{k}/{n}"));
        }
        report.threads = threads;
        Ok(Batches {
            config,
            pool,
            threads,
            meter: Meter::new(config.progress.clone()),
            start: Instant::now(),
            consumed: 0,
            report,
        })
    }

    fn budget_hit(&self) -> Option<BoundedBy> {
        if self.config.stop.is_raised() {
            return Some(BoundedBy::Interrupted);
        }
        if self.start.elapsed() >= self.config.sampling_time_limit() {
            return Some(BoundedBy::Time);
        }
        if self.config.max_schedules.is_some_and(|m| self.consumed >= m) {
            return Some(BoundedBy::Schedules);
        }
        None
    }

    /// Run samples `0..count` of `round` (those of this shard), calling
    /// `sample(i)` for each, in parallel chunks. `label` names the round in
    /// progress lines.
    pub fn round<F>(&mut self, round: u32, count: u64, label: &str, sample: F) -> RoundEnd
    where
        F: Fn(u64) -> Sample + Sync,
    {
        let round_start = Instant::now();
        let mut stratum = Stratum {
            bound: round,
            ..Stratum::default()
        };
        let chunk = 16 * self.threads as u64;
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
            let shard = self.config.shard;
            let mut results: Vec<(u64, Sample)> = self.pool.install(|| {
                (next..hi)
                    .into_par_iter()
                    .filter(|i| shard.is_none_or(|(k, n)| i % n as u64 == k as u64))
                    .map(|i| (i, sample(i)))
                    .collect()
            });
            results.sort_unstable_by_key(|(i, _)| *i);
            // Count samples in index order up to the first violating one, so
            // that the counts do not depend on the chunk size (threads).
            let mut first: Option<(u64, Sample)> = None;
            let mut counted_to = hi;
            for (i, s) in results {
                let r = &mut self.report;
                r.schedules += 1;
                r.steps += s.steps;
                r.truncated += s.truncated;
                r.longest = r.longest.max(s.longest);
                stratum.schedules += 1;
                stratum.transitions += s.steps;
                if s.violation.is_some() {
                    counted_to = i + 1;
                    first = Some((i, s));
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
            if let Some((i, s)) = first {
                break RoundEnd::Violation(i, s);
            }
        };
        stratum.elapsed_s = round_start.elapsed().as_secs_f64();
        self.report.strata.push(stratum);
        self.report.bound_reached = round;
        end
    }

    /// The final report: outcome, what bounded it, timing and memory.
    pub fn finish(mut self, end: &RoundEnd) -> Report {
        self.meter.finish();
        let r = &mut self.report;
        match end {
            RoundEnd::Violation(_, s) => {
                r.outcome = Outcome::Violation;
                r.violation = s.violation.as_ref().map(|(f, _)| f.clone());
                r.expect_found(self.config.deadlock);
            }
            RoundEnd::Stopped(b) => {
                r.outcome = Outcome::Bounded;
                r.bounded_by = Some(*b);
            }
            RoundEnd::Done => {
                r.outcome = Outcome::Bounded;
                r.bounded_by = Some(BoundedBy::MaxDelays);
            }
        }
        r.elapsed_s = self.start.elapsed().as_secs_f64();
        r.peak_memory_mb = crate::config::peak_rss().unwrap_or(0) as f64 / (1 << 20) as f64;
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
        let mut seen = std::collections::HashSet::new();
        for r in 0..4 {
            for i in 0..1000 {
                for st in 0..2 {
                    assert!(seen.insert(stream_seed(7, r, i, st)));
                }
            }
        }
        assert_ne!(stream_seed(7, 0, 0, 0), stream_seed(8, 0, 0, 0));
    }
}
