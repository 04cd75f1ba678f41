//! Two local processes for a test: the test binary starts itself again as
//! process 1 (loopback addresses only, a bounded wait for the child).

use mcheck_distributed::Layout;
use std::net::TcpListener;
use std::process::Command;
use std::time::{Duration, Instant};

const ROLE: &str = "MCHECK_DIST_TEST_PROCESS";
const PORTS: &str = "MCHECK_DIST_TEST_PORTS";

/// `runs` free loopback port pairs.
fn free_ports(runs: usize) -> Vec<u16> {
    let listeners: Vec<TcpListener> = (0..2 * runs)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("a loopback port"))
        .collect();
    listeners.iter().map(|l| l.local_addr().unwrap().port()).collect()
}

/// Run `body(i, layout)` for i in 0..runs as process 0 here and process 1
/// in a child (the test `name` of this binary), each run a cluster of two
/// processes of one worker.
pub fn run_as_two_processes(name: &str, runs: usize, body: impl Fn(usize, &Layout)) {
    let (process, ports): (usize, Vec<u16>) = match std::env::var(ROLE) {
        Ok(p) => {
            let ports = std::env::var(PORTS).expect("ports from the parent");
            (
                p.parse().unwrap(),
                ports.split(',').map(|p| p.parse().unwrap()).collect(),
            )
        }
        Err(_) => (0, free_ports(runs)),
    };
    let mut child = (process == 0).then(|| {
        let list: Vec<String> = ports.iter().map(u16::to_string).collect();
        Command::new(std::env::current_exe().unwrap())
            .args([name, "--exact", "--nocapture", "--test-threads", "1"])
            .env(ROLE, "1")
            .env(PORTS, list.join(","))
            .spawn()
            .expect("the child process starts")
    });
    // A watchdog: a lost peer must not hang the suite.
    let deadline = Instant::now() + Duration::from_secs(300);
    std::thread::spawn(move || {
        loop {
            if Instant::now() > deadline {
                eprintln!("two-process test: no result within 300 s");
                std::process::exit(3);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    for i in 0..runs {
        let addresses = vec![
            format!("127.0.0.1:{}", ports[2 * i]),
            format!("127.0.0.1:{}", ports[2 * i + 1]),
        ];
        body(i, &Layout::cluster(1, process, addresses));
    }
    if let Some(child) = child.as_mut() {
        let status = child.wait().expect("the child ends");
        assert!(status.success(), "process 1 failed: {status}");
    }
}
