//! Helpers shared by the end-to-end tests' modules.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

/// A directory of files one test writes, under the system's temporary
/// directory, removed with its files when dropped (also when the test
/// fails), so that test runs leave nothing behind.
pub struct Scratch(PathBuf);

impl Scratch {
    /// A new empty directory named after `tag`, this process and a counter.
    pub fn new(tag: &str) -> Scratch {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("mcheck-{tag}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.0
    }

    /// The path of file `name` in the directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `mcheck ARGS`.
pub fn mcheck<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcheck"))
        .args(args)
        .output()
        .expect("mcheck runs")
}

/// A run's standard output.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A run's standard error.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A run's standard output, then its standard error.
pub fn text(o: &Output) -> String {
    stdout(o) + &stderr(o)
}

/// `mcheck ARGS` as JSON (stderr shown when it is not).
pub fn json(args: &[&str]) -> Value {
    let o = mcheck(args);
    let out = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(&out).unwrap_or_else(|e| {
        panic!(
            "{args:?}: {:?}, not JSON ({e}): {out}\n{}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// The oracle of a mean execution length: `mcheck run` of 100 random walks
/// (seed 0, one thread) of the bug-free `model` at `set`.
pub fn mean_walk(model: &str, set: &str) -> f64 {
    let walk = json(&[
        "run",
        model,
        "--set",
        set,
        "-s",
        "rs",
        "--max-schedules",
        "100",
        "-j",
        "1",
        "--json",
        "-q",
    ]);
    walk["steps"].as_f64().unwrap() / walk["schedules"].as_f64().unwrap()
}
