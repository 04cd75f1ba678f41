//! `mcheck run -s ses --workers W` and `--processes N` (the distributed SES
//! on timely dataflow, ARCHITECTURE.md, "Distributed SES"): a shipped
//! model's correct version is verified with the state count of one thread,
//! and a seeded bug is found with a schedule that replays on one machine.

use crate::common::{json, mcheck, Scratch};

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
