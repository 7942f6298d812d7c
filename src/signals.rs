//! Ctrl-C, SIGTERM and SIGHUP, for every test: the handler only records the signal; the
//! test checks between I/Os ([`pending`], [`check`]), stops, cleans up (restores the
//! saved regions in preserve mode, removes the files it made in a directory) and the
//! process exits 130 (SIGINT), 143 (SIGTERM) or 129 (SIGHUP) — or 1 when the cleanup
//! itself fails, e.g. a restore error (the journal is then kept for `flashscope restore`).
//!
//! SIGHUP is what a closed terminal or a dropped ssh session sends: the terminal is gone,
//! so its handler also points standard output and error at /dev/null (open and dup2 are
//! async-signal-safe), and the restore's messages cannot fail on a hung-up terminal. A
//! closed stdout pipe (SIGPIPE) is ignored, as Rust programs do: the run goes on and
//! restores, and what it would print is dropped.
//!
//! `sim serve` has no I/O loop to check between: it blocks the same signals in every
//! thread instead ([`StopSignals`]) and waits for them in one place. The system calls of
//! both ways are in [`crate::sys`].

use crate::{sys, Error, Result};

/// The signals that stop a test.
const STOP: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// What a second signal does once the first was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Second {
    /// Recorded too: nothing may cut a restore short (preserve mode).
    Record,
    /// The default action, so an impatient second Ctrl-C ends the process at once
    /// (tests that only have files of their own to remove).
    Terminate,
}

/// Install the recording handler for SIGINT, SIGTERM and SIGHUP (idempotent; the last
/// call decides what a second signal does).
pub(crate) fn install(second: Second) {
    sys::record_signals(&STOP, second == Second::Terminate);
}

/// The signal received since `install`, if any.
pub(crate) fn pending() -> Option<i32> {
    sys::recorded_signal()
}

/// True once a signal asked the test to stop.
pub(crate) fn interrupted() -> bool {
    pending().is_some()
}

/// The name of a stopping signal, for messages.
pub(crate) fn name(sig: i32) -> &'static str {
    match sig {
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "SIGINT",
    }
}

/// The error a backend returns when a signal asked the test to stop.
pub(crate) fn interrupted_error(sig: i32) -> std::io::Error {
    let name = name(sig);
    std::io::Error::new(
        std::io::ErrorKind::Interrupted,
        format!("stopped by {name}"),
    )
}

/// [`interrupted_error`] when a signal is pending: for backends to call before each I/O.
pub(crate) fn check_io() -> std::io::Result<()> {
    match pending() {
        Some(sig) => Err(interrupted_error(sig)),
        None => Ok(()),
    }
}

/// An error when a signal asked the test to stop; filesystem probes call this between
/// blocks.
pub fn check() -> Result<()> {
    if interrupted() {
        return Err(Error::runtime(
            "interrupted by a signal: the test stopped and its test files were removed (unless --keep)",
        ));
    }
    Ok(())
}

/// SIGINT, SIGTERM and SIGHUP blocked in every thread and taken with [`StopSignals::wait`]:
/// the other way to stop, for a process that waits for them in one place (`sim serve`)
/// instead of checking between I/Os. Dropping it restores the mask from before.
pub(crate) struct StopSignals(sys::BlockedSignals);

impl StopSignals {
    /// Block the stop signals; must run before any thread is spawned so all inherit it.
    pub(crate) fn block() -> std::io::Result<Self> {
        sys::BlockedSignals::block(&STOP).map(StopSignals)
    }

    /// Wait up to `timeout` for a stop signal; the signal if one came.
    pub(crate) fn wait(&self, timeout: std::time::Duration) -> Option<i32> {
        self.0.wait(timeout).filter(|s| STOP.contains(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_is_an_interrupted_error() {
        assert_eq!(
            interrupted_error(libc::SIGTERM).kind(),
            std::io::ErrorKind::Interrupted
        );
    }
}
