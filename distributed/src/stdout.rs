//! Timely's connection set-up prints its progress ("awaiting connections",
//! "error connecting ...; retrying") on standard output, where `mcheck run
//! --json` prints its one JSON object. While the processes connect,
//! standard output is pointed at standard error.

use std::io::Write;

#[cfg(unix)]
extern "C" {
    fn dup(fd: i32) -> i32;
    fn dup2(from: i32, to: i32) -> i32;
    fn close(fd: i32) -> i32;
}

/// Standard output redirected to standard error until dropped.
pub struct ToStderr {
    saved: Option<i32>,
}

impl ToStderr {
    /// Redirect when `on`.
    pub fn new(on: bool) -> Self {
        let _ = std::io::stdout().flush();
        #[cfg(unix)]
        if on {
            // SAFETY: plain POSIX calls on the standard descriptors; a
            // failure (-1) leaves standard output as it was.
            let saved = unsafe { dup(1) };
            if saved >= 0 && unsafe { dup2(2, 1) } >= 0 {
                return ToStderr { saved: Some(saved) };
            }
        }
        let _ = on;
        ToStderr { saved: None }
    }
}

impl Drop for ToStderr {
    fn drop(&mut self) {
        let _ = std::io::stdout().flush();
        #[cfg(unix)]
        if let Some(fd) = self.saved {
            // SAFETY: restores the descriptor saved by `new`.
            unsafe {
                dup2(fd, 1);
                close(fd);
            }
        }
    }
}
