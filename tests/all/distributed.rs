//! `mcheck run -s ses --workers W` and `--processes N` (the distributed SES
//! on timely dataflow, ARCHITECTURE.md, "Distributed SES"): a shipped
//! model's correct version is verified with the state count of one thread,
//! and a seeded bug is found with a schedule that replays on one machine.

use crate::common::{Scratch, json, mcheck};
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A host file of `n` loopback addresses whose ports are free now.
fn hostfile(scratch: &Scratch, n: usize) -> (String, Vec<String>) {
    let listeners: Vec<TcpListener> = (0..n).map(|_| TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    let addresses: Vec<String> = listeners.iter().map(|l| l.local_addr().unwrap().to_string()).collect();
    let path = scratch.file("hosts.txt");
    std::fs::write(&path, addresses.join("\n") + "\n").unwrap();
    (path.to_str().unwrap().to_string(), addresses)
}

/// Process `process` of a cluster run of TwoPhase with 9 RMs (minutes
/// when nothing stops it), its standard error piped.
fn cluster_process(hosts: &str, process: usize) -> Child {
    Command::new(env!("CARGO_BIN_EXE_mcheck"))
        .args([
            "run",
            "twophase-packed",
            "--set",
            "rms=9",
            "-s",
            "ses",
            "-q",
            "--connect-timeout",
            "30",
        ])
        .args([
            "--processes",
            "2",
            "--process",
            &process.to_string(),
            "--hostfile",
            hosts,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mcheck starts")
}

/// `child`'s exit status and the rest of its standard error, killing it
/// if it runs longer than `limit`.
fn finish(mut child: Child, limit: Duration) -> (Option<i32>, String) {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = child.wait_with_output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn a_process_that_never_connects_is_named_and_the_other_exits() {
    let scratch = Scratch::new("cluster-absent");
    let (hosts, addresses) = hostfile(&scratch, 2);
    let started = Instant::now();
    let o = mcheck(&[
        "run",
        "twophase",
        "-s",
        "ses",
        "--processes",
        "2",
        "--process",
        "0",
        "--hostfile",
        &hosts,
        "--connect-timeout",
        "1",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let want = format!(
        "mcheck: process 1 ({}) did not connect within 1 s: start every process of the host file",
        addresses[1]
    );
    assert!(err.contains(&want), "{err}");
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
}

/// A process killed mid-run (after both connected) makes the other exit
/// with exit status 2 and one line naming it: no hang, no panic.
#[test]
fn a_process_killed_mid_run_stops_the_other_with_an_error() {
    let scratch = Scratch::new("cluster-kill");
    let (hosts, _) = hostfile(&scratch, 2);
    let mut zero = cluster_process(&hosts, 0);
    let mut one = cluster_process(&hosts, 1);
    let mut lines = BufReader::new(zero.stderr.take().unwrap()).lines();
    let connected = lines.next().map(|l| l.unwrap()).unwrap_or_default();
    assert_eq!(connected, "mcheck: process 0 of 2 is connected to the others");
    std::thread::sleep(Duration::from_millis(500));
    one.kill().unwrap();
    let _ = one.wait();
    let (code, _) = finish(zero, Duration::from_secs(60));
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert_eq!(code, Some(2), "{rest:?}");
    // One line; the cause is the operating system's ("socket closed" or
    // "Connection reset by peer", as the kill races the last read).
    assert_eq!(rest.len(), 1, "{rest:?}");
    let (start, end) = (
        "mcheck: process 0 lost its connection to process 1 (timely communication error: reading data: ",
        "): it exited or the network failed; the run stops",
    );
    assert!(rest[0].starts_with(start) && rest[0].ends_with(end), "{rest:?}");
}

#[test]
fn two_processes_and_two_workers_verify_with_one_threads_state_count() {
    let base = ["run", "twophase-packed", "--set", "rms=5", "-s", "ses", "--json", "-q"];
    let one = json(&base);
    assert_eq!(
        (one["outcome"].as_str(), one["states"].as_u64()),
        (Some("verified"), Some(8_832))
    );
    for extra in [["--processes", "2"], ["--workers", "2"]] {
        let args: Vec<&str> = base.iter().copied().chain(extra).collect();
        let r = json(&args);
        assert_eq!(r["outcome"], one["outcome"], "{extra:?}");
        assert_eq!(r["states"], one["states"], "{extra:?}");
        assert_eq!(r["threads"].as_u64(), Some(2), "{extra:?}");
    }
}

#[test]
fn a_bug_found_by_two_processes_replays_on_one_machine() {
    let scratch = Scratch::new("distributed");
    let dir = scratch.dir();
    let saved = dir.join("bug.json");
    let saved = saved.to_str().unwrap();
    let args = [
        "run",
        "2pc",
        "--bug",
        "1",
        "-s",
        "ses",
        "--processes",
        "2",
        "--save",
        saved,
    ];
    let o = mcheck(&args);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let r = mcheck(&["replay", saved]);
    assert_eq!(r.status.code(), Some(1), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(String::from_utf8_lossy(&r.stdout).contains("!! monitor in atomicity"));
}

/// Between processes a state travels with its explorer, encoded: a
/// model's own explorer (boxed, its type unknown to the encoder) is
/// refused before any process connects, naming it and the ones that can.
#[test]
fn a_models_own_explorer_cannot_cross_processes_and_says_which_can() {
    let o = mcheck(&["run", "chain", "-e", "chain-custom", "-s", "ses", "--processes", "2"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "--processes 2: the explorer chain-custom is a model's own and cannot be encoded (only rr, rtc, prr can)"
        ),
        "{err}"
    );
}

/// A workload beyond the exhaustive cap is warned about once, by process
/// 0, not by every process of the run.
#[test]
fn process_zero_alone_warns_of_a_workload_beyond_the_cap() {
    let args = [
        "run",
        "twophase-packed",
        "--set",
        "rms=10",
        "-s",
        "ses",
        "--processes",
        "2",
        "--max-states",
        "1000",
        "-q",
    ];
    let o = mcheck(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(err.matches("mcheck: warning: rms=10 is beyond 9").count(), 1, "{err}");
}
