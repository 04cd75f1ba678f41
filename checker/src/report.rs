//! The result of a search: outcome, statistics, violation and schedule.

use crate::coverage::Coverage;
use crate::program::Violation;
use crate::schedule::Schedule;
use serde::Serialize;
use std::fmt;

/// How a search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A violation was found.
    Violation,
    /// Every reachable state was covered and none violates.
    Verified,
    /// A budget or bound stopped the search before it covered everything.
    Bounded,
    /// Every reachable state was covered and none violates, but a
    /// reachability property holds in none of them (the model is vacuous
    /// there; `mcheck run --coverage`, exit status 3).
    Unreached,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Outcome::Violation => "violation",
            Outcome::Verified => "verified",
            Outcome::Bounded => "bounded",
            Outcome::Unreached => "unreached",
        })
    }
}

/// What stopped a `bounded` search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BoundedBy {
    /// `--time-limit`.
    Time,
    /// `--max-states`.
    States,
    /// `--max-schedules`.
    Schedules,
    /// `--max-memory-mb`.
    Memory,
    /// `--max-delays` (the last stratum left work undone).
    MaxDelays,
    /// Executions were cut at `--max-steps`.
    MaxSteps,
    /// Ctrl-C.
    Interrupted,
    /// Sampling never proves anything: it ran out of its bounds.
    Sampling,
}

impl BoundedBy {
    /// The JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            BoundedBy::Time => "time",
            BoundedBy::States => "states",
            BoundedBy::Schedules => "schedules",
            BoundedBy::Memory => "memory",
            BoundedBy::MaxDelays => "max_delays",
            BoundedBy::MaxSteps => "max_steps",
            BoundedBy::Interrupted => "interrupted",
            BoundedBy::Sampling => "sampling",
        }
    }
}

/// What the state cache of an exhaustive search is keyed by, which sets
/// what a finished stratum guarantees (ARCHITECTURE.md, "Guarantees and the cache key").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheKey {
    /// The program state: a finished stratum d checked every state that
    /// the explored executions with at most d delays reach, but executions
    /// pruned at a state reached again with another explorer state may
    /// hide a violation within d delays.
    ProgramState,
    /// The program state and the explorer state (`Config::exact_bound`):
    /// a finished stratum d means that no execution with at most d delays
    /// violates anything.
    ProgramAndExplorerState,
}

/// Statistics of one stratum (one delay or preemption bound). Outside
/// this crate, start from `Stratum::default()` and set the fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Stratum {
    /// The bound.
    pub bound: u32,
    /// New distinct states found in this stratum (exhaustive strategies).
    pub new_states: u64,
    /// Transitions executed in this stratum.
    pub transitions: u64,
    /// Work items deferred to the next stratum.
    pub deferrals: u64,
    /// Frontier size at the end of the stratum.
    pub frontier: u64,
    /// Schedules (executions) run in this stratum (sampling strategies).
    pub schedules: u64,
    /// Seconds spent in the stratum.
    pub elapsed_s: f64,
    /// With `--shard K/N` (sampling strategies): every counted sample of
    /// this shard in index order (the j-th has index K + j*N), as
    /// [steps, longest execution, 1 if truncated else 0], so that
    /// `mcheck merge` can count exactly the samples an unsharded run
    /// counts (ARCHITECTURE.md, "Determinism and sharding"). Empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<[u64; 3]>,
}

/// A violation with the step at which it happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Found {
    /// The violation.
    #[serde(flatten)]
    pub violation: Violation,
    /// The index of the step that violated (0 = first step).
    pub step: usize,
}

/// Everything a search reports. Serialized as the `--json` object (the CLI
/// adds the model, bug and parameters). Made by the searches; outside
/// this crate, [`Report::new`] and the fields.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Report {
    /// The strategy's name.
    pub strategy: String,
    /// The explorer's name, for explorer-based strategies.
    pub explorer: Option<String>,
    /// The seed.
    pub seed: u64,
    /// Worker threads used.
    pub threads: usize,
    /// How the search ended.
    pub outcome: Outcome,
    /// What stopped it, when `bounded`.
    pub bounded_by: Option<BoundedBy>,
    /// The violation, when found.
    pub violation: Option<Found>,
    /// The counterexample, when found.
    pub schedule: Option<Schedule>,
    /// Distinct states (exhaustive strategies).
    pub states: u64,
    /// Transitions executed.
    pub transitions: u64,
    /// Work items deferred across strata.
    pub deferrals: u64,
    /// Peak frontier size.
    pub peak_frontier: u64,
    /// Executions run (sampling strategies).
    pub schedules: u64,
    /// Program steps executed (sampling strategies; equals transitions
    /// for exhaustive ones).
    pub steps: u64,
    /// Executions cut at max-steps.
    pub truncated: u64,
    /// The longest execution seen, in steps.
    pub longest: u64,
    /// The highest delay (or preemption, or depth) bound reached. The JSON
    /// key stays `max_delays`, as documented for `run --json`.
    #[serde(rename = "max_delays")]
    pub bound_reached: u32,
    /// Per-bound statistics.
    pub strata: Vec<Stratum>,
    /// The cache refused states (the search stayed sound, only slower).
    pub cache_full: bool,
    /// What the state cache was keyed by (exhaustive searches with a
    /// cache; `None` otherwise).
    pub cache_key: Option<CacheKey>,
    /// Symmetry reduction was on: the cache held one state per orbit
    /// (`states` counts orbits; ARCHITECTURE.md, "Symmetry").
    pub symmetry: bool,
    /// Bytes used by the cache at the end.
    pub cache_bytes: u64,
    /// Peak bytes of the search's own structures (cache, frontier,
    /// stacks, path arena).
    pub peak_search_bytes: u64,
    /// Peak resident memory of the process, in MiB.
    pub peak_memory_mb: f64,
    /// Wall-clock seconds.
    pub elapsed_s: f64,
    /// With `verified`: an upper bound on the probability that a
    /// fingerprint collision hid a state (n^2 / 2^65).
    pub collision_probability: Option<f64>,
    /// The shard covered, as "k/n".
    pub shard: Option<String>,
    /// Remarks for people (why bounded, what filled memory, ...).
    pub notes: Vec<String>,
    /// What the run checked, in words, safety first (`"safety"`,
    /// `"deadlocks"`, `"liveness (...)"`, `"the symmetry declaration"`,
    /// `"coverage"`, `"reachability of P"`), so that a user sees what they
    /// pay for; filled by [`crate::run::run`] (empty for a strategy
    /// called directly).
    pub monitors: Vec<String>,
    /// The portfolio's member that found the violation (`ses-rtc`,
    /// `ss-prr`, `pct`, ...); absent for the other strategies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found_by: Option<String>,
    /// What the search exercised and the reachability properties
    /// (`mcheck run --coverage`; absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
}

impl Report {
    /// An empty report for `strategy`.
    pub fn new(strategy: &str, explorer: Option<&str>, seed: u64, threads: usize) -> Self {
        Report {
            strategy: strategy.to_string(),
            explorer: explorer.map(str::to_string),
            seed,
            threads,
            outcome: Outcome::Bounded,
            bounded_by: None,
            violation: None,
            schedule: None,
            states: 0,
            transitions: 0,
            deferrals: 0,
            peak_frontier: 0,
            schedules: 0,
            steps: 0,
            truncated: 0,
            longest: 0,
            bound_reached: 0,
            strata: Vec::new(),
            cache_full: false,
            cache_key: None,
            symmetry: false,
            cache_bytes: 0,
            peak_search_bytes: 0,
            peak_memory_mb: 0.0,
            elapsed_s: 0.0,
            collision_probability: None,
            shard: None,
            notes: Vec::new(),
            monitors: Vec::new(),
            found_by: None,
            coverage: None,
        }
    }

    /// True when the search covered every reachable state without a
    /// violation.
    pub fn is_verified(&self) -> bool {
        self.outcome == Outcome::Verified
    }

    /// True when a violation was found.
    pub fn is_violation(&self) -> bool {
        self.outcome == Outcome::Violation
    }

    /// The fingerprint-collision bound for `n` states of which the cache
    /// keeps `bits` bits each: n^2 / 2^(bits + 1) (n^2 / 2^65 for whole
    /// 64-bit fingerprints).
    pub fn collision_bound(n: u64, bits: u32) -> f64 {
        (n as f64) * (n as f64) / 2f64.powi(bits as i32 + 1)
    }
}

/// `n` and the noun, singular or plural: "1 delay", "2 delays".
///
/// ```
/// use mcheck_checker::report::count_of;
/// assert_eq!((count_of(1u32, "delay"), count_of(2u64, "step")), ("1 delay".into(), "2 steps".into()));
/// ```
pub fn count_of(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
