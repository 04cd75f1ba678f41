//! Progress lines on stderr: redrawn live on a terminal, or printed at a
//! fixed interval in logs.

use crate::config::Progress;
use std::io::Write;
use std::time::{Duration, Instant};

/// Decides when to print a progress line, and prints it.
#[derive(Debug)]
pub struct Meter {
    mode: Progress,
    start: Instant,
    last: Instant,
    printed_live: bool,
}

impl Meter {
    /// A meter in `mode`, starting now.
    pub fn new(mode: Progress) -> Self {
        let now = Instant::now();
        Meter {
            mode,
            start: now,
            last: now,
            printed_live: false,
        }
    }

    /// Print `line()` if it is time to; cheap when it is not.
    pub fn tick(&mut self, line: impl FnOnce(f64) -> String) {
        let every = match self.mode {
            Progress::Off => return,
            Progress::Live => Duration::from_millis(250),
            Progress::Every(d) => d,
        };
        let now = Instant::now();
        if now.duration_since(self.last) < every {
            return;
        }
        self.last = now;
        let text = line(self.start.elapsed().as_secs_f64());
        let mut err = std::io::stderr().lock();
        let _ = match self.mode {
            Progress::Live => {
                self.printed_live = true;
                write!(err, "\r\x1b[2K{text}")
            }
            _ => writeln!(err, "{text}"),
        };
        let _ = err.flush();
    }

    /// Clear a live line before the final output.
    pub fn finish(&mut self) {
        if self.printed_live {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
            self.printed_live = false;
        }
    }
}

/// A rate, rounded for humans: "1.2M/s".
pub fn rate(count: u64, secs: f64) -> String {
    human(if secs > 0.0 { count as f64 / secs } else { 0.0 }) + "/s"
}

/// A count, rounded for humans: "1.2M".
pub fn human(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.1}G", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.1}M", x / 1e6)
    } else if x >= 1e4 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}
