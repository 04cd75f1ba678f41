//! `mcheck run ... -s ses --workers W [--processes N [--process I
//! --hostfile F]]`: SES on timely dataflow (the `mcheck-distributed`
//! crate, ARCHITECTURE.md, "Distributed SES"). `--processes N` alone
//! starts processes 1..N-1 itself on loopback addresses and runs process 0
//! here, for trying it on one machine; with `--process I --hostfile F`
//! (timely's conventions: one `host:port` a line, in process order) each
//! machine starts its own. The report of process 0 is the run's report.

use crate::registry::DynModel;
use clap::Args;
use mcheck_checker::{Config, Instance, Report};
use mcheck_distributed::{DEFAULT_CONNECT_TIMEOUT, Layout};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The flags of the distributed SES.
#[derive(Args, Debug, Clone, Default)]
pub struct ClusterArgs {
    /// Distributed SES on timely dataflow: W worker threads per process (ses only).
    #[arg(long, value_name = "W")]
    pub workers: Option<usize>,
    /// Distributed SES over N processes; alone, starts them on this machine (ses only).
    #[arg(long, value_name = "N")]
    pub processes: Option<usize>,
    /// This process's index among --processes (with --hostfile).
    #[arg(long, value_name = "I")]
    pub process: Option<usize>,
    /// The processes' addresses, one host:port a line in process order (timely's host file).
    #[arg(long, value_name = "FILE")]
    pub hostfile: Option<String>,
    /// Seconds a process waits for the others to connect before it gives up, naming them (default 60).
    #[arg(long, value_name = "SECS", value_parser = crate::args::seconds)]
    pub connect_timeout: Option<f64>,
}

/// How a distributed run is laid out, and whether this process starts the
/// others.
#[derive(Debug)]
pub struct Plan {
    /// This process's part.
    pub layout: Layout,
    /// `--processes N` alone: the arguments for processes 1..N-1.
    pub spawn: bool,
}

/// Seconds the local processes get to finish after process 0 did.
const CHILD_GRACE_S: u64 = 60;

impl ClusterArgs {
    /// The plan, or `None` for the single-machine engine; `strategy` must
    /// be ses.
    pub fn plan(&self, strategy: &str) -> Result<Option<Plan>, String> {
        if self.workers.is_none() && self.processes.is_none() && self.process.is_none() && self.hostfile.is_none() {
            return Ok(None);
        }
        if strategy != "ses" {
            return Err(format!(
                "--workers, --processes, --process and --hostfile apply to strategy ses only, not {strategy}"
            ));
        }
        let threads = self.workers.unwrap_or(1);
        if threads == 0 {
            return Err("--workers must be at least 1".into());
        }
        let processes = self.processes.unwrap_or(1);
        if processes == 0 {
            return Err("--processes must be at least 1".into());
        }
        let timeout = self
            .connect_timeout
            .map_or(DEFAULT_CONNECT_TIMEOUT, Duration::from_secs_f64);
        match (&self.hostfile, self.process) {
            (None, None) if processes == 1 => Ok(Some(Plan {
                layout: Layout::threads(threads),
                spawn: false,
            })),
            (None, None) => {
                let addresses = free_loopback_addresses(processes)?;
                Ok(Some(Plan {
                    layout: Layout::cluster(threads, 0, addresses).connect_timeout(timeout),
                    spawn: true,
                }))
            }
            (Some(file), Some(process)) => {
                let addresses = read_hostfile(file)?;
                if self.processes.is_some_and(|n| n != addresses.len()) {
                    return Err(format!(
                        "--processes {processes} but host file {file} lists {} addresses",
                        addresses.len()
                    ));
                }
                if process >= addresses.len() {
                    return Err(format!(
                        "--process {process} is not one of the {} processes of host file {file} (0..{})",
                        addresses.len(),
                        addresses.len() - 1
                    ));
                }
                Ok(Some(Plan {
                    layout: Layout::cluster(threads, process, addresses).connect_timeout(timeout),
                    spawn: false,
                }))
            }
            _ => Err("--process and --hostfile go together (process I of the host file's processes)".into()),
        }
    }
}

/// `n` loopback addresses with ports free now.
fn free_loopback_addresses(n: usize) -> Result<Vec<String>, String> {
    let listeners = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("cannot find a free loopback port for the local processes: {e}"))?;
    listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.to_string()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())
}

/// timely's host file: one address a line (blank lines ignored).
fn read_hostfile(file: &str) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read host file {file}: {e}"))?;
    let addresses: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    if addresses.is_empty() {
        return Err(format!("host file {file} lists no address (one host:port a line)"));
    }
    Ok(addresses)
}

/// The processes 1..N-1 of a `--processes N` run on this machine: this
/// program again with the same arguments and `--process I --hostfile F`.
/// A watchdog ends the run if one of them fails before process 0 is done.
#[derive(Debug)]
pub struct LocalProcesses {
    children: std::sync::Arc<std::sync::Mutex<Vec<Child>>>,
    hostfile: std::path::PathBuf,
}

impl LocalProcesses {
    /// Start processes 1..N-1 of `layout`.
    pub fn start(layout: &Layout) -> Result<Self, String> {
        let hostfile = std::env::temp_dir().join(format!("mcheck-hosts-{}", std::process::id()));
        std::fs::write(&hostfile, layout.addresses.join("\n") + "\n")
            .map_err(|e| format!("cannot write the host file {}: {e}", hostfile.display()))?;
        let exe =
            std::env::current_exe().map_err(|e| format!("cannot find this program to start its processes: {e}"))?;
        let args: Vec<String> = std::env::args().skip(1).collect();
        let mut children = Vec::new();
        for i in 1..layout.processes {
            let child = Command::new(&exe)
                .args(&args)
                .args(["--process", &i.to_string(), "--hostfile"])
                .arg(&hostfile)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()
                .map_err(|e| format!("cannot start process {i}: {e}"))?;
            children.push(child);
        }
        let children = std::sync::Arc::new(std::sync::Mutex::new(children));
        let watched = std::sync::Arc::clone(&children);
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(Duration::from_millis(200));
                let mut list = watched.lock().unwrap_or_else(|e| e.into_inner());
                if list.is_empty() {
                    return;
                }
                let failed = list
                    .iter_mut()
                    .enumerate()
                    .find_map(|(i, c)| c.try_wait().ok().flatten().filter(|s| !s.success()).map(|s| (i + 1, s)));
                if let Some((i, status)) = failed {
                    eprintln!("mcheck: local process {i} failed ({status}); stopping the run");
                    for c in list.iter_mut() {
                        let _ = c.kill();
                    }
                    std::process::exit(2);
                }
            }
        });
        Ok(LocalProcesses { children, hostfile })
    }

    /// Wait for the processes (at most `CHILD_GRACE_S` seconds, then
    /// they are ended).
    pub fn finish(self) -> Result<(), String> {
        let mut list = std::mem::take(&mut *self.children.lock().unwrap_or_else(|e| e.into_inner()));
        let deadline = Instant::now() + Duration::from_secs(CHILD_GRACE_S);
        let mut result = Ok(());
        for (i, c) in list.iter_mut().enumerate() {
            loop {
                match c.try_wait() {
                    Ok(Some(s)) if s.success() => break,
                    Ok(Some(s)) => {
                        result = Err(format!("local process {} failed ({s})", i + 1));
                        break;
                    }
                    Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
                    _ => {
                        let _ = c.kill();
                        result = Err(format!("local process {} did not finish; ended it", i + 1));
                        break;
                    }
                }
            }
        }
        let _ = std::fs::remove_file(&self.hostfile);
        result
    }
}

/// Run the distributed SES as `plan` says (starting the local processes
/// when it asks): the report on process 0, `None` on the others (which
/// say so on stderr).
pub fn run(
    model: &dyn DynModel,
    instance: &Instance,
    explorer: &str,
    config: &Config,
    plan: &Plan,
) -> Result<Option<Report>, String> {
    let local = if plan.spawn {
        Some(LocalProcesses::start(&plan.layout)?)
    } else {
        None
    };
    let report = model.check_distributed(instance, explorer, config, &plan.layout);
    if let Some(local) = local {
        local.finish()?;
    }
    let mut report = report.map_err(|e| e.to_string())?;
    match report.as_mut() {
        Some(r) => {
            if config.liveness {
                r.notes.push(
                    "liveness is not checked by the distributed SES (safety only); run on one machine for it".into(),
                );
            }
        }
        None => eprintln!(
            "mcheck: process {} of {} done; the run's report is process 0's",
            plan.layout.process, plan.layout.processes
        ),
    }
    Ok(report)
}
