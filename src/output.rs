//! Where output goes. A closed stdout ends the program quietly, the Unix
//! way; output files are checked before a search, and a failure to write
//! one after it is a warning that loses nothing else.

use std::fs::{self, OpenOptions};
use std::path::Path;

/// Let a write to a closed pipe (`mcheck list | head -1`) end the process
/// as SIGPIPE's default action does for every Unix tool, instead of the
/// "failed printing to stdout" panic that Rust's ignored SIGPIPE leads to.
/// A shell reports the status as 141 (128 + SIGPIPE). Nothing to do
/// elsewhere than Unix.
pub fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    {
        unsafe extern "C" {
            fn signal(signum: std::ffi::c_int, handler: usize) -> usize;
        }
        const SIGPIPE: std::ffi::c_int = 13;
        const SIG_DFL: usize = 0;
        // SAFETY: restoring the default action of SIGPIPE, before any
        // thread of ours writes, installs no handler of our own.
        unsafe {
            signal(SIGPIPE, SIG_DFL);
        }
    }
}

/// Check, before a search, that `flag`'s file `path` can be written, so
/// that a typo does not cost the search. Leaves no file behind.
pub fn check_writable(flag: &str, path: &str) -> Result<(), String> {
    let p = Path::new(path);
    if p.is_dir() {
        return Err(format!("cannot write {flag} file {path:?}: it is a directory"));
    }
    if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        return Err(format!(
            "cannot write {flag} file {path:?}: directory {:?} does not exist",
            dir.display().to_string()
        ));
    }
    let existed = p.exists();
    // Appending to an existing file leaves it intact.
    match OpenOptions::new().append(true).create(true).open(p) {
        Ok(_) => {
            if !existed {
                let _ = fs::remove_file(p);
            }
            Ok(())
        }
        Err(e) => Err(format!("cannot write {flag} file {path:?}: {e}")),
    }
}

/// Write `text` to `flag`'s file `path`; the error is a warning for people.
pub fn write_file(flag: &str, path: &str, text: &str) -> Result<(), String> {
    fs::write(path, text).map_err(|e| format!("could not write {flag} file {path:?}: {e}"))
}
