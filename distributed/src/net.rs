//! The processes of a cluster: connecting them, and what a lost connection
//! means.
//!
//! [`connect`] connects the processes as timely's own set-up does (process
//! `i` connects to every process below it and sends its index as a
//! big-endian `u64`, and accepts the connection of every process above
//! it), but with a deadline, the run's stop flag, a line on standard
//! error while it waits, and an error that names the process that never
//! came; the sockets then go to timely
//! (`initialize_networking_from_sockets`). Timely's set-up waits for ever
//! and ignores the stop flag.
//!
//! A process that dies mid-run closes its sockets, and timely's
//! communication threads panic ("timely communication error"), cascading
//! to the workers. [`quiet_timely_panics`] keeps those panics off standard
//! error and records the first, so that `ses` returns one error naming the
//! process whose connection was lost ([`lost_peer`]) instead of a page of
//! backtraces and exit status 101.

use mcheck_checker::{SearchError, StopFlag};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

/// How long a process waits for the others by default.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(60);

/// How often a waiting process says so on standard error.
const WAIT_NOTICE_EVERY: Duration = Duration::from_secs(10);

/// Pause between connection attempts.
const RETRY_EVERY: Duration = Duration::from_millis(50);

/// One socket per process in process order, `None` at `me`: process `me`
/// of `addresses` connected to every other within `timeout`.
pub(crate) fn connect(
    addresses: &[String],
    me: usize,
    timeout: Duration,
    stop: &StopFlag,
) -> Result<Vec<Option<TcpStream>>, SearchError> {
    let resolved = addresses
        .iter()
        .enumerate()
        .map(|(i, a)| resolve(i, a))
        .collect::<Result<Vec<_>, _>>()?;
    let listener = if me + 1 < addresses.len() {
        let l = TcpListener::bind(resolved[me]).map_err(|e| {
            SearchError::Cluster(format!(
                "process {me} cannot listen on {} (its line of the host file): {e}",
                addresses[me]
            ))
        })?;
        l.set_nonblocking(true)
            .map_err(|e| SearchError::Cluster(format!("cannot poll {}: {e}", addresses[me])))?;
        Some(l)
    } else {
        None
    };
    let mut sockets: Vec<Option<TcpStream>> = (0..addresses.len()).map(|_| None).collect();
    let started = Instant::now();
    let mut noticed = started;
    loop {
        for peer in 0..me {
            if sockets[peer].is_none() {
                sockets[peer] = dial(resolved[peer], me);
            }
        }
        if let Some(listener) = &listener {
            accept(listener, me, addresses.len(), &mut sockets)?;
        }
        let missing: Vec<usize> = (0..addresses.len())
            .filter(|&p| p != me && sockets[p].is_none())
            .collect();
        if missing.is_empty() {
            eprintln!("mcheck: process {me} of {} is connected to the others", addresses.len());
            return Ok(sockets);
        }
        let waited = started.elapsed();
        let named = || {
            missing
                .iter()
                .map(|&p| format!("process {p} ({})", addresses[p]))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if stop.is_raised() {
            return Err(SearchError::Cluster(format!(
                "interrupted while process {me} waited for {}",
                named()
            )));
        }
        if waited >= timeout {
            return Err(SearchError::Cluster(format!(
                "{} did not connect within {} s: start every process of the host file (--process 0..{}), \
                 check the addresses, or raise --connect-timeout",
                named(),
                timeout.as_secs_f64(),
                addresses.len() - 1
            )));
        }
        if noticed.elapsed() >= WAIT_NOTICE_EVERY {
            noticed = Instant::now();
            eprintln!(
                "mcheck: process {me} waits for {} ({} s so far)",
                named(),
                waited.as_secs()
            );
        }
        std::thread::sleep(RETRY_EVERY);
    }
}

fn resolve(process: usize, address: &str) -> Result<SocketAddr, SearchError> {
    address
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| {
            SearchError::Cluster(format!(
                "the address of process {process}, {address:?}, is not a reachable host:port"
            ))
        })
}

/// A connection to the process at `address`, introduced as process `me`,
/// or `None` when it is not listening yet.
fn dial(address: SocketAddr, me: usize) -> Option<TcpStream> {
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(1)).ok()?;
    stream.set_nodelay(true).ok()?;
    stream.write_all(&(me as u64).to_be_bytes()).ok()?;
    Some(stream)
}

/// Accept the connections waiting on `listener`, each from a process above
/// `me` that introduces itself.
fn accept(
    listener: &TcpListener,
    me: usize,
    processes: usize,
    sockets: &mut [Option<TcpStream>],
) -> Result<(), SearchError> {
    loop {
        let mut stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) => {
                return Err(SearchError::Cluster(format!(
                    "process {me} cannot accept a connection: {e}"
                )));
            }
        };
        let mut index = [0u8; 8];
        let introduced = stream
            .set_nonblocking(false)
            .and_then(|()| stream.set_read_timeout(Some(Duration::from_secs(5))))
            .and_then(|()| stream.read_exact(&mut index))
            .and_then(|()| stream.set_read_timeout(None))
            .and_then(|()| stream.set_nodelay(true));
        let peer = u64::from_be_bytes(index) as usize;
        match introduced {
            Ok(()) if peer > me && peer < processes && sockets[peer].is_none() => sockets[peer] = Some(stream),
            // A stray connection (a port scan, a process of another run):
            // not one of ours, so it is dropped and the wait goes on.
            _ => {}
        }
    }
}

/// The first panic of a timely communication thread since
/// [`quiet_timely_panics`]: (the thread's name, the message).
static TIMELY_PANIC: Mutex<Option<(String, String)>> = Mutex::new(None);

/// From now on, a panic on one of timely's threads (named `timely:...`) or
/// in timely's communication code is recorded, the first one only, instead
/// of printed; other panics go to the hook that was installed before.
pub(crate) fn quiet_timely_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let name = std::thread::current().name().unwrap_or("").to_string();
            // Timely's own threads, and timely's code on ours (the
            // connections' guard, which panics as it is dropped after a
            // communication thread did).
            let in_timely = info
                .location()
                .is_some_and(|l| l.file().contains("timely_communication"));
            if !name.starts_with("timely:") && !in_timely {
                return previous(info);
            }
            let message = match (
                info.payload().downcast_ref::<&str>(),
                info.payload().downcast_ref::<String>(),
            ) {
                (Some(s), _) => s.to_string(),
                (_, Some(s)) => s.clone(),
                _ => "a panic".to_string(),
            };
            if let Ok(mut first) = TIMELY_PANIC.lock() {
                // The communication threads' panic is the cause (a read's
                // first: it says how the peer went); the workers' "MergeQueue
                // poisoned" only follows from it.
                if first.as_ref().is_none_or(|(n, _)| rank(&name) > rank(n)) {
                    *first = Some((name, message));
                }
            }
        }));
    });
}

/// How much a panic on the thread `name` says of its cause: 2 for a
/// communication thread's read (`timely:recv-P`), 1 for its write
/// (`timely:send-P`), 0 for anything else.
fn rank(name: &str) -> u8 {
    if name.starts_with("timely:recv-") {
        2
    } else if name.starts_with("timely:send-") {
        1
    } else {
        0
    }
}

/// The error for a run whose timely threads panicked: the process whose
/// connection was lost, from the name of the communication thread
/// (`timely:recv-P`, `timely:send-P`); an internal error when only a
/// worker panicked (a bug); `None` when no timely thread panicked.
pub(crate) fn lost_peer(me: usize) -> Option<SearchError> {
    let (name, message) = TIMELY_PANIC.lock().ok()?.take()?;
    let peer = (rank(&name) > 0)
        .then(|| name.rsplit('-').next()?.parse::<usize>().ok())
        .flatten();
    Some(match peer {
        Some(p) => SearchError::Cluster(format!(
            "process {me} lost its connection to process {p} ({message}): it exited or the network failed; the run stops"
        )),
        None => SearchError::Internal(format!("a timely worker of process {me} panicked: {message}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free_addresses(n: usize) -> Vec<String> {
        let listeners: Vec<TcpListener> = (0..n).map(|_| TcpListener::bind("127.0.0.1:0").unwrap()).collect();
        listeners.iter().map(|l| l.local_addr().unwrap().to_string()).collect()
    }

    #[test]
    fn three_processes_connect_each_to_each() {
        let addresses = free_addresses(3);
        let handles: Vec<_> = (0..3)
            .map(|me| {
                let a = addresses.clone();
                std::thread::spawn(move || connect(&a, me, Duration::from_secs(20), &StopFlag::new()))
            })
            .collect();
        let sockets: Vec<Vec<Option<TcpStream>>> = handles.into_iter().map(|h| h.join().unwrap().unwrap()).collect();
        for (me, row) in sockets.iter().enumerate() {
            let have: Vec<bool> = row.iter().map(Option::is_some).collect();
            let want: Vec<bool> = (0..3).map(|p| p != me).collect();
            assert_eq!(have, want, "process {me}");
        }
        // Each pair's two ends are one connection.
        let (a, b) = (&sockets[0][1], &sockets[1][0]);
        assert_eq!(
            a.as_ref().unwrap().local_addr().unwrap(),
            b.as_ref().unwrap().peer_addr().unwrap()
        );
    }

    #[test]
    fn a_process_that_never_comes_is_named_after_the_timeout() {
        let addresses = free_addresses(2);
        let started = Instant::now();
        let err = connect(&addresses, 0, Duration::from_millis(300), &StopFlag::new()).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with(&format!("process 1 ({}) did not connect within 0.3 s", addresses[1])),
            "{text}"
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        let stop = StopFlag::new();
        stop.raise();
        let err = connect(&addresses, 1, Duration::from_secs(60), &stop).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("interrupted while process 1 waited for process 0"),
            "{err}"
        );
    }

    #[test]
    fn a_bad_address_is_named() {
        let err = connect(
            &["nowhere:x".to_string(), "127.0.0.1:1".to_string()],
            1,
            Duration::from_secs(1),
            &StopFlag::new(),
        );
        let text = err.unwrap_err().to_string();
        assert!(
            text.contains("process 0, \"nowhere:x\", is not a reachable host:port"),
            "{text}"
        );
    }
}
