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

use crate::{Error, Result};
use std::sync::atomic::{AtomicI32, Ordering};

static PENDING: AtomicI32 = AtomicI32::new(0);

extern "C" fn record(sig: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    PENDING.store(sig, Ordering::SeqCst);
}

extern "C" fn record_hangup(sig: libc::c_int) {
    // SAFETY: open, dup2 and close are async-signal-safe; the path is a static C string.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if null >= 0 {
            libc::dup2(null, 1);
            libc::dup2(null, 2);
            libc::close(null);
        }
    }
    PENDING.store(sig, Ordering::SeqCst);
}

/// What a second signal does once the first was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Second {
    /// Recorded too: nothing may cut a restore short (preserve mode).
    Record,
    /// The default action, so an impatient second Ctrl-C ends the process at once
    /// (tests that only have files of their own to remove).
    Terminate,
}

/// Install the recording handler for SIGINT, SIGTERM and SIGHUP (idempotent; the last
/// call decides what a second signal does). rustix has no safe sigaction, hence libc.
pub fn install(second: Second) {
    let flags = match second {
        Second::Record => 0,
        Second::Terminate => libc::SA_RESETHAND,
    };
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let handler = if sig == libc::SIGHUP {
            record_hangup as extern "C" fn(libc::c_int) as usize
        } else {
            record as extern "C" fn(libc::c_int) as usize
        };
        // SAFETY: a zeroed sigaction is valid; the handlers only store to an atomic and
        // call async-signal-safe functions; no SA_RESTART so a blocking sleep returns
        // early; the old action is not needed (null).
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = handler;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = flags;
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// The signal received since `install`, if any.
pub fn pending() -> Option<i32> {
    match PENDING.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// True once a signal asked the test to stop.
pub fn interrupted() -> bool {
    pending().is_some()
}

/// The exit code for a run stopped by `sig` after a successful cleanup (128 + signal).
pub fn exit_code(sig: i32) -> i32 {
    128 + sig
}

/// The name of a stopping signal, for messages.
pub fn name(sig: i32) -> &'static str {
    match sig {
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "SIGINT",
    }
}

/// The error a backend returns when a signal asked the test to stop.
pub fn interrupted_error(sig: i32) -> std::io::Error {
    let name = name(sig);
    std::io::Error::new(
        std::io::ErrorKind::Interrupted,
        format!("stopped by {name}"),
    )
}

/// [`interrupted_error`] when a signal is pending: for backends to call before each I/O.
pub fn check_io() -> std::io::Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_shell_convention() {
        assert_eq!(exit_code(libc::SIGINT), 130);
        assert_eq!(exit_code(libc::SIGTERM), 143);
        assert_eq!(
            interrupted_error(libc::SIGTERM).kind(),
            std::io::ErrorKind::Interrupted
        );
    }
}
