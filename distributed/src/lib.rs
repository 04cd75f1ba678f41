//! # mcheck-distributed: stratified exhaustive search on timely dataflow
//!
//! SES (ARCHITECTURE.md, "Distributed SES") on more than one thread, process or machine:
//! the states are partitioned across timely workers by fingerprint, each
//! worker running the engine's optimised stratified search over its part
//! of the cache and the frontier of its states (`search::part`); a
//! successor owned by another worker is sent to it as itself, the
//! program's state and the explorer's (both serde types: moved between
//! threads, encoded between processes), with the (worker, path node)
//! that holds its path; each stratum is a round whose end
//! timely's progress tracking detects (see `flow.rs`). Run to exhaustion
//! the outcome, the reachable set (hence `states`) and `verified` are those
//! of one thread; a counterexample is an ordinary delay-path schedule that
//! replays on one machine. Budgets: time, memory (per process), the stop
//! flag, and `max_states` (each worker adds at most its share,
//! `max_states / workers`) are checked on every worker, and the first
//! worker to hit one halts all others.
//!
//! The single-machine engine does not depend on this crate; it uses only
//! the checker's public API.
#![deny(missing_docs)]

mod flow;
mod local;
mod message;
mod net;
mod report;

pub use mcheck_checker::cache::owner;
pub use net::DEFAULT_CONNECT_TIMEOUT;

use local::Local;
use mcheck_checker::config::Config;
use mcheck_checker::{Explorer, Program, Report, SearchError, StopFlag};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};
use timely::CommunicationConfig;
use timely::WorkerConfig;
use timely::communication::allocator::ProcessBuilder;
use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::{AllocatorBuilder, Hooks};

/// Where the workers run: `threads` per process, `processes` processes of
/// which this is `process`, reached at `addresses` (`host:port`, one per
/// process, timely's host file) when there are several.
/// Built with [`Layout::threads`] or [`Layout::cluster`] (its fields may
/// grow).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Layout {
    /// Worker threads per process.
    pub threads: usize,
    /// Processes.
    pub processes: usize,
    /// This process's index.
    pub process: usize,
    /// Every process's address, in process order (empty for one process).
    pub addresses: Vec<String>,
    /// How long a process waits for the others to connect
    /// ([`DEFAULT_CONNECT_TIMEOUT`] unless set with
    /// [`Layout::connect_timeout`]).
    pub connect_timeout: Duration,
}

impl Layout {
    /// One process with `threads` workers.
    pub fn threads(threads: usize) -> Self {
        Layout {
            threads,
            processes: 1,
            process: 0,
            addresses: Vec::new(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
        }
    }

    /// Process `process` of as many as `addresses`, with `threads` workers each.
    pub fn cluster(threads: usize, process: usize, addresses: Vec<String>) -> Self {
        Layout {
            threads,
            processes: addresses.len(),
            process,
            addresses,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
        }
    }

    /// This layout with the processes given `timeout` to connect.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Workers in all.
    pub fn workers(&self) -> usize {
        self.threads * self.processes
    }

    fn check(&self) -> Result<(), SearchError> {
        if self.threads == 0 {
            return Err(SearchError::Input("--workers must be at least 1".into()));
        }
        if self.processes > 1 && self.process >= self.processes {
            return Err(SearchError::Input(format!(
                "--process {} is not one of the {} processes (0..{})",
                self.process,
                self.processes,
                self.processes - 1
            )));
        }
        Ok(())
    }

    /// Timely's allocators for this process: its threads, and with more
    /// than one process the connections to the others ([`net::connect`],
    /// which waits at most `connect_timeout` and honours `stop`).
    fn allocators(&self, stop: &StopFlag) -> Result<(Vec<AllocatorBuilder>, Box<dyn Any + Send>), SearchError> {
        if self.processes <= 1 {
            return CommunicationConfig::Process(self.threads)
                .try_build()
                .map_err(|e| SearchError::Internal(format!("cannot start the timely workers: {e}")));
        }
        let sockets = net::connect(&self.addresses, self.process, self.connect_timeout, stop)?;
        let hooks = Hooks::default();
        let local = ProcessBuilder::new_typed_vector(self.threads, hooks.refill.clone(), hooks.spill.clone());
        let (tcp, guard) = initialize_networking_from_sockets(local, sockets, self.process, self.threads, hooks)
            .map_err(|e| SearchError::Cluster(format!("process {} cannot start its connections: {e}", self.process)))?;
        Ok((tcp.into_iter().map(AllocatorBuilder::Tcp).collect(), Box::new(guard)))
    }
}

/// Stratified exhaustive search with `explorer` on the workers of `layout`.
/// Every process of a cluster calls it; process 0 gets the run's report,
/// the others `None`.
pub fn ses<P, E>(program: Arc<P>, explorer: E, config: &Config, layout: &Layout) -> Result<Option<Report>, SearchError>
where
    P: Program<State: Serialize + DeserializeOwned + 'static> + Send + 'static,
    E: Explorer + Serialize + DeserializeOwned + 'static,
{
    layout.check()?;
    if config.exact_bound {
        return Err(SearchError::Input(
            "the distributed SES keys its cache by program states only; --exact-bound runs on one machine".into(),
        ));
    }
    if !config.use_cache {
        return Err(SearchError::Input(
            "the distributed SES needs the state cache, which is off".into(),
        ));
    }
    if config.symmetry && mcheck_checker::ProgramExt::canonical_fingerprint(&*program, &program.initial()).is_none() {
        return Err(SearchError::Input(
            "symmetry is on but the program declares no symmetry".into(),
        ));
    }
    let started = Instant::now();
    let root = mcheck_checker::explorer::prepare(&*program, explorer, config.seed);
    if layout.processes > 1 {
        // Between processes every state travels with its explorer, encoded.
        serde_json::to_vec(&root).map_err(|e| SearchError::Input(format!("--processes {}: {e}", layout.processes)))?;
    }
    let budget = config.cache_bytes.unwrap_or(config.max_memory / 2) / layout.threads;
    let shared = Arc::new(config.clone());
    let process = layout.process as u32;
    let (p, r, c) = (Arc::clone(&program), root.clone(), Arc::clone(&shared));
    let (allocators, guard) = layout.allocators(&config.stop)?;
    net::quiet_timely_panics();
    let guards = timely::execute::execute_from(allocators, guard, WorkerConfig::default(), move |worker| {
        let (me, peers) = (worker.index() as u32, worker.peers() as u32);
        let local = Local::new(Arc::clone(&p), r.clone(), Arc::clone(&c), me, peers, Some(budget));
        flow::run_worker(worker, local, process)
    })
    .map_err(|e| SearchError::Internal(format!("cannot start the timely workers: {e}")))?;
    // A lost connection panics timely's communication threads, then the
    // workers, then the connections' guard as `join` drops it.
    let results = catch_unwind(AssertUnwindSafe(|| guards.join()));
    let lost = || net::lost_peer(layout.process);
    let results = results
        .map_err(|_| lost().unwrap_or_else(|| SearchError::Internal("the timely workers' guard panicked".into())))?;
    let mut summaries = None;
    for result in results {
        let found = result
            .map_err(|e| lost().unwrap_or_else(|| SearchError::Internal(format!("a timely worker failed: {e}"))))?;
        summaries = summaries.or(found);
    }
    match summaries {
        None => Ok(None),
        Some(all) => {
            let mut report = report::assemble(&*program, root, config, layout, all)?;
            report.elapsed_s = started.elapsed().as_secs_f64();
            Ok(Some(report))
        }
    }
}
