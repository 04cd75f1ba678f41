//! Interrupts: SIGINT (Ctrl-C), SIGTERM and SIGHUP stop the running search,
//! which still prints the report so far; a second one exits at once. An
//! interrupted command exits with [`EXIT_INTERRUPTED`], never 0, so that an
//! interrupted CI run does not look green.

use mcheck_checker::StopFlag;
use std::sync::{Mutex, Once, PoisonError};

/// The exit status of an interrupted command (128 + SIGINT, as shells
/// report a process killed by Ctrl-C).
pub const EXIT_INTERRUPTED: u8 = 130;

/// The flag the next interrupt raises: the running command's.
static CURRENT: Mutex<Option<StopFlag>> = Mutex::new(None);

/// A fresh stop flag for a command about to search, raised by the next
/// interrupt. Installs the handler on first use (if the embedding program
/// installed its own, that one stays and interrupts are its business).
pub fn stop_flag() -> StopFlag {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let _ = ctrlc::set_handler(on_interrupt);
    });
    let flag = StopFlag::new();
    *CURRENT.lock().unwrap_or_else(PoisonError::into_inner) = Some(flag.clone());
    flag
}

fn on_interrupt() {
    let current = CURRENT.lock().unwrap_or_else(PoisonError::into_inner).clone();
    match current {
        Some(flag) if !flag.is_raised() => {
            eprintln!("\nmcheck: interrupted; finishing the report (interrupt again to exit at once)");
            flag.raise();
        }
        _ => {
            eprintln!("\nmcheck: interrupted twice, exiting");
            std::process::exit(EXIT_INTERRUPTED.into());
        }
    }
}

/// The exit status of a search: 1 when it found a violation, else
/// [`EXIT_INTERRUPTED`] when it was interrupted, else 0.
pub fn exit_status(violation: bool, stop: &StopFlag) -> u8 {
    if violation {
        1
    } else if stop.is_raised() {
        EXIT_INTERRUPTED
    } else {
        0
    }
}
