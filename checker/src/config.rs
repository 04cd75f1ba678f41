//! Engine settings shared by every strategy: budgets, threads, seed,
//! progress. Strategy-specific settings live in each strategy's constructor.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The default limit on the length of one execution.
pub const DEFAULT_MAX_STEPS: usize = 10_000;

/// How a search reports progress while it runs.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Progress {
    /// Say nothing.
    #[default]
    Off,
    /// Redraw one status line on stderr a few times a second (a terminal).
    Live,
    /// Print a status line on stderr at this interval (logs, CI).
    Every(Duration),
}

/// A flag that asks a running search to stop (Ctrl-C). Cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    /// A new, lowered flag.
    pub fn new() -> Self {
        Self::default()
    }
    /// Ask the search to stop.
    pub fn raise(&self) {
        self.0.store(true, Ordering::Relaxed)
    }
    /// Was it raised?
    pub fn is_raised(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Engine settings. `Config::default()` is safe: bounded steps per
/// execution, a memory budget of three quarters of the machine, one minute
/// for sampling strategies.
///
/// Build one from the default with the setters, one per field and named
/// after it; a setter of an optional field takes the value (`None` is the
/// default; assign the field to clear it). The methods that compute from
/// the fields are named for what they compute
/// ([`temperature_threshold`](Config::temperature_threshold),
/// [`sampling_time_limit`](Config::sampling_time_limit),
/// [`worker_threads`](Config::worker_threads)). The fields stay public for
/// reading and assigning; the struct is `#[non_exhaustive]`, so that a new
/// field breaks no caller.
///
/// ```
/// use mcheck_checker::Config;
/// use std::time::Duration;
///
/// let config = Config::default().max_states(1_000).threads(2).time_limit(Duration::from_secs(5));
/// assert_eq!((config.max_states, config.threads), (Some(1_000), 2));
/// assert_eq!(config.temperature_threshold(), config.max_steps as u64 / 2);
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Config {
    /// Stop after this delay (or preemption) bound. `None`: until exhausted.
    pub max_delays: Option<u32>,
    /// Longest execution. Exhaustive searches cut deeper paths (the outcome
    /// is then `bounded`, never `verified`); sampling counts them truncated.
    pub max_steps: usize,
    /// Wall-clock budget. `None`: none for exhaustive searches; sampling
    /// strategies use [`Config::sampling_time_limit`].
    pub time_limit: Option<Duration>,
    /// Stop after this many distinct states.
    pub max_states: Option<u64>,
    /// Stop after this many schedules (executions).
    pub max_schedules: Option<u64>,
    /// Byte budget of the state cache. `None`: grow on demand (within
    /// `max_memory`).
    pub cache_bytes: Option<usize>,
    /// Byte budget of the whole search (cache, frontier, stacks, path
    /// arena). The search stops with outcome `bounded` before exceeding it.
    pub max_memory: usize,
    /// The seed of every random choice.
    pub seed: u64,
    /// Worker threads; 0 means one per core.
    pub threads: usize,
    /// Run only the samples with index mod `n` = `k`.
    pub shard: Option<(u32, u32)>,
    /// Report deadlocks as violations.
    pub deadlock: bool,
    /// Progress reporting.
    pub progress: Progress,
    /// Raised to interrupt the search.
    pub stop: StopFlag,
    /// Whether the exhaustive searches use the state cache at all (tests
    /// turn it off; without it only acyclic programs terminate).
    pub use_cache: bool,
    /// Key the exhaustive searches' cache by (program state, explorer
    /// state) instead of the program state alone. Then a finished stratum
    /// at bound d means that no execution with at most d delays (SES; at
    /// most d preemptions for PB) violates anything: a state reached again
    /// with the same explorer state at no lower cost has the same future
    /// with no more budget, so pruning it loses nothing within the bound.
    /// With the default key a state reached again with another explorer
    /// state is pruned too, and the executions it would have led to within
    /// the bound may hide a violation (ARCHITECTURE.md, "Guarantees and the cache key"). Needs an
    /// explorer whose [`crate::Explorer::state_hash`] is defined; costs
    /// more states (one per explorer state reaching a program state).
    pub exact_bound: bool,
    /// Check liveness too (ARCHITECTURE.md, "Liveness"): the exhaustive
    /// searches, once verified, look for fair cycles of hot states and
    /// terminal hot states; the sampling strategies report executions that
    /// reach `max_steps` hot for more than `temperature` consecutive steps
    /// as possible liveness violations.
    pub liveness: bool,
    /// The sampling strategies' temperature threshold, in consecutive hot
    /// steps. `None`: [`Config::temperature_threshold`]'s default, half
    /// of `max_steps`.
    pub temperature: Option<u64>,
    /// Symmetry reduction (ARCHITECTURE.md, "Symmetry"): the exhaustive
    /// searches (DFS, SES, PB, hybrid's SES phase) cache
    /// [`crate::Symmetry::canonical_fingerprint`], one entry per orbit, and
    /// still execute real states. Needs a program that declares a symmetry
    /// (an error otherwise) and is incompatible with `exact_bound`.
    pub symmetry: bool,
    /// Run SES, DFS and PB as the plain stratified search (`search/plain.rs`,
    /// the paper's algorithm as it reads) without the optimisation layer
    /// (retirement, pass-through, look-ahead, fast resume, path
    /// arena): the same counts in every stratum, the same outcome and
    /// counterexample, slower; for a user who suspects the optimisations
    /// (ARCHITECTURE.md, "The plain search"). One thread only: with
    /// more worker threads these searches return an input error.
    pub plain: bool,
    /// The shortcuts the optimised layer takes (all by default), each of
    /// which can be turned off on its own to measure what it pays; ignored
    /// with `plain`.
    pub shortcuts: Shortcuts,
    /// Called by an exhaustive search on one thread at every check of its
    /// budgets (see [`Pace`]). `None`: nothing paces the search.
    pub pace: Option<Pace>,
}

/// A hook that an exhaustive search on one thread (SES, DFS, PB, optimised
/// or plain) calls at every check of its budgets (when paced, every 64
/// transitions at first, then every sixteenth of its transitions so far,
/// up to 1,024), with its transitions and distinct states so far. It may
/// block (the search waits) and returns whether the search goes on: `false` stops it as the stop flag does (outcome
/// `bounded`, interrupted). The calls come at the same transition counts
/// in every run of the same search, so a hook that decides by the counts
/// keeps the search deterministic. The portfolio strategy paces its
/// exhaustive member with it.
#[derive(Clone)]
pub struct Pace(pub Arc<dyn Fn(u64, u64) -> bool + Send + Sync>);

impl Pace {
    /// Whether the search goes on after `transitions` transitions and
    /// `states` distinct states.
    pub fn go_on(&self, transitions: u64, states: u64) -> bool {
        (self.0)(transitions, states)
    }
}

impl std::fmt::Debug for Pace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pace(..)")
    }
}

/// The shortcuts of the optimised exhaustive search (ARCHITECTURE.md, "The
/// optimised search"), and the distributed SES's `sent`. None changes a
/// count, an outcome or a counterexample: each only saves work, and the
/// differential tests run the search with each one off against the plain
/// search (`sent`: the distributed SES with and without it against the
/// reachable set). A shortcut that needs another is off when that one is.
///
/// Each field has a setter of its name; [`without`](Shortcuts::without)
/// turns one off by its CLI name.
///
/// ```
/// use mcheck_checker::Shortcuts;
///
/// let no_peek = Shortcuts::ALL.peek(false);
/// assert_eq!(Ok(no_peek), Shortcuts::ALL.without("peek"));
/// assert!(!Shortcuts::ALL.fast_resume(false).closed().pass);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Shortcuts {
    /// Look-ahead: a frame's successors' fingerprints are computed when it
    /// is pushed, their cache slots prefetched, and the successors found
    /// cached taken in a tight loop without the general step.
    pub peek: bool,
    /// Fast resume: a deferred entry takes its one choice of a stratum
    /// without a stack frame.
    pub fast_resume: bool,
    /// Retirement: a resumed entry whose remaining successors are all
    /// cached is counted for the strata it would have been resumed in and
    /// dropped (needs `fast_resume`).
    pub retire: bool,
    /// Checks ahead: the retirement checks of the next few work items are
    /// prepared together, so that their cache look-ups overlap (needs
    /// `retire`).
    pub ahead: bool,
    /// Pass-through: a kept entry whose next choices reach cached
    /// successors skips the strata that would only defer it again (needs
    /// `ahead`).
    pub pass: bool,
    /// Sent lately (the distributed SES): each worker keeps a table of the
    /// keys it sent to other workers lately and does not send a successor
    /// again whose key it holds (its owner would drop it).
    pub sent: bool,
}

impl Shortcuts {
    /// Every shortcut (the default).
    pub const ALL: Shortcuts = Shortcuts {
        peek: true,
        fast_resume: true,
        retire: true,
        ahead: true,
        pass: true,
        sent: true,
    };

    /// The shortcuts' names, as [`without`](Self::without) takes them.
    pub const NAMES: [&'static str; 6] = ["peek", "fast-resume", "retire", "ahead", "pass", "sent"];

    /// With look-ahead ([`Shortcuts::peek`]) on or off.
    pub const fn peek(mut self, on: bool) -> Shortcuts {
        self.peek = on;
        self
    }

    /// With fast resume ([`Shortcuts::fast_resume`]) on or off.
    pub const fn fast_resume(mut self, on: bool) -> Shortcuts {
        self.fast_resume = on;
        self
    }

    /// With retirement ([`Shortcuts::retire`]) on or off.
    pub const fn retire(mut self, on: bool) -> Shortcuts {
        self.retire = on;
        self
    }

    /// With checks ahead ([`Shortcuts::ahead`]) on or off.
    pub const fn ahead(mut self, on: bool) -> Shortcuts {
        self.ahead = on;
        self
    }

    /// With pass-through ([`Shortcuts::pass`]) on or off.
    pub const fn pass(mut self, on: bool) -> Shortcuts {
        self.pass = on;
        self
    }

    /// With the distributed SES's table of keys sent ([`Shortcuts::sent`])
    /// on or off.
    pub const fn sent(mut self, on: bool) -> Shortcuts {
        self.sent = on;
        self
    }

    /// These shortcuts without the one named `name` (one of
    /// [`NAMES`](Self::NAMES)), or the name back if there is none of it.
    pub fn without(mut self, name: &str) -> Result<Shortcuts, String> {
        let flag = match name {
            "peek" => &mut self.peek,
            "fast-resume" => &mut self.fast_resume,
            "retire" => &mut self.retire,
            "ahead" => &mut self.ahead,
            "pass" => &mut self.pass,
            "sent" => &mut self.sent,
            _ => return Err(name.to_string()),
        };
        *flag = false;
        Ok(self)
    }

    /// With the ones whose prerequisite is off turned off too.
    pub fn closed(mut self) -> Shortcuts {
        self.retire &= self.fast_resume;
        self.ahead &= self.retire;
        self.pass &= self.ahead;
        self
    }
}

impl Default for Shortcuts {
    fn default() -> Self {
        Shortcuts::ALL
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_delays: None,
            max_steps: DEFAULT_MAX_STEPS,
            time_limit: None,
            max_states: None,
            max_schedules: None,
            cache_bytes: None,
            max_memory: default_max_memory(),
            seed: 0,
            threads: 1,
            shard: None,
            deadlock: false,
            progress: Progress::Off,
            stop: StopFlag::new(),
            use_cache: true,
            exact_bound: false,
            liveness: false,
            temperature: None,
            symmetry: false,
            plain: false,
            shortcuts: Shortcuts::ALL,
            pace: None,
        }
    }
}

impl Config {
    /// Stop after delay (or preemption) bound `bound` ([`Config::max_delays`]).
    pub fn max_delays(mut self, bound: u32) -> Config {
        self.max_delays = Some(bound);
        self
    }

    /// Cut every execution at `steps` steps ([`Config::max_steps`]).
    pub fn max_steps(mut self, steps: usize) -> Config {
        self.max_steps = steps;
        self
    }

    /// Stop after `limit` of wall-clock time ([`Config::time_limit`]).
    pub fn time_limit(mut self, limit: Duration) -> Config {
        self.time_limit = Some(limit);
        self
    }

    /// Stop after `states` distinct states ([`Config::max_states`]).
    pub fn max_states(mut self, states: u64) -> Config {
        self.max_states = Some(states);
        self
    }

    /// Stop after `schedules` executions ([`Config::max_schedules`]).
    pub fn max_schedules(mut self, schedules: u64) -> Config {
        self.max_schedules = Some(schedules);
        self
    }

    /// Give the state cache `bytes` bytes ([`Config::cache_bytes`]).
    pub fn cache_bytes(mut self, bytes: usize) -> Config {
        self.cache_bytes = Some(bytes);
        self
    }

    /// Give the whole search `bytes` bytes ([`Config::max_memory`]).
    pub fn max_memory(mut self, bytes: usize) -> Config {
        self.max_memory = bytes;
        self
    }

    /// Seed every random choice with `seed` ([`Config::seed`]).
    pub fn seed(mut self, seed: u64) -> Config {
        self.seed = seed;
        self
    }

    /// Search on `threads` worker threads, 0 for one per core
    /// ([`Config::threads`]).
    pub fn threads(mut self, threads: usize) -> Config {
        self.threads = threads;
        self
    }

    /// Run only the samples with index mod `n` = `k` ([`Config::shard`]).
    pub fn shard(mut self, k: u32, n: u32) -> Config {
        self.shard = Some((k, n));
        self
    }

    /// Report deadlocks as violations ([`Config::deadlock`]).
    pub fn deadlock(mut self, on: bool) -> Config {
        self.deadlock = on;
        self
    }

    /// Report progress as `progress` says ([`Config::progress`]).
    pub fn progress(mut self, progress: Progress) -> Config {
        self.progress = progress;
        self
    }

    /// Stop when `stop` is raised ([`Config::stop`]).
    pub fn stop(mut self, stop: StopFlag) -> Config {
        self.stop = stop;
        self
    }

    /// Whether the exhaustive searches use the state cache
    /// ([`Config::use_cache`]).
    pub fn use_cache(mut self, on: bool) -> Config {
        self.use_cache = on;
        self
    }

    /// Key the cache by program and explorer state ([`Config::exact_bound`]).
    pub fn exact_bound(mut self, on: bool) -> Config {
        self.exact_bound = on;
        self
    }

    /// Check liveness too ([`Config::liveness`]).
    pub fn liveness(mut self, on: bool) -> Config {
        self.liveness = on;
        self
    }

    /// Set the sampling strategies' temperature threshold to `steps`
    /// consecutive hot steps ([`Config::temperature`];
    /// [`Config::temperature_threshold`] is the one in effect).
    pub fn temperature(mut self, steps: u64) -> Config {
        self.temperature = Some(steps);
        self
    }

    /// Reduce by symmetry ([`Config::symmetry`]).
    pub fn symmetry(mut self, on: bool) -> Config {
        self.symmetry = on;
        self
    }

    /// Run SES, DFS and PB as the plain search ([`Config::plain`]).
    pub fn plain(mut self, on: bool) -> Config {
        self.plain = on;
        self
    }

    /// Take these shortcuts in the optimised search ([`Config::shortcuts`]).
    pub fn shortcuts(mut self, shortcuts: Shortcuts) -> Config {
        self.shortcuts = shortcuts;
        self
    }

    /// Pace the exhaustive searches with `pace` ([`Config::pace`]).
    pub fn pace(mut self, pace: Pace) -> Config {
        self.pace = Some(pace);
        self
    }

    /// The temperature threshold of the sampling strategies: the
    /// configured one, else half of `max_steps` (hot for the whole second
    /// half of an execution that the step limit cut).
    pub fn temperature_threshold(&self) -> u64 {
        self.temperature.unwrap_or(self.max_steps as u64 / 2)
    }

    /// The time limit of sampling strategies, which never finish by
    /// themselves: the configured one, else 60 s.
    pub fn sampling_time_limit(&self) -> Duration {
        self.time_limit.unwrap_or(Duration::from_secs(60))
    }

    /// The number of worker threads to use (resolving 0 to the core count).
    pub fn worker_threads(&self) -> usize {
        if self.threads == 0 {
            std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
        } else {
            self.threads
        }
    }
}

/// Three quarters of the machine's memory (from /proc/meminfo), or 4 GiB
/// where that cannot be read.
pub fn default_max_memory() -> usize {
    total_memory().map(|t| t / 4 * 3).unwrap_or(4 << 30)
}

/// The machine's memory in bytes, if known.
pub fn total_memory() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// This process's peak resident memory in bytes (VmHWM), if known.
pub fn peak_rss() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
