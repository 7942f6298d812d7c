//! Ctrl-C and SIGTERM during a preserve-mode test: the handler only records the signal;
//! the test stops after the current I/O (the `Preserve` backend checks before each one),
//! restores the saved regions, and the process exits 130 (SIGINT) or 143 (SIGTERM), or 1
//! when the restore itself fails (the journal is then kept for `flashscope restore`).

use std::sync::atomic::{AtomicI32, Ordering};

static PENDING: AtomicI32 = AtomicI32::new(0);

extern "C" fn record(sig: libc::c_int) {
    PENDING.store(sig, Ordering::SeqCst);
}

/// Install the recording handler for SIGINT and SIGTERM (idempotent).
pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is valid; the handler only stores to an atomic, which
        // is async-signal-safe; no SA_RESTART so a blocking sleep returns early.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = record as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = 0;
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

/// The exit code for a run stopped by `sig` after a successful restore (128 + signal).
pub fn exit_code(sig: i32) -> i32 {
    128 + sig
}

/// The error a backend returns when a signal asked the test to stop.
pub fn interrupted_error(sig: i32) -> std::io::Error {
    let name = if sig == libc::SIGTERM {
        "SIGTERM"
    } else {
        "SIGINT"
    };
    std::io::Error::new(
        std::io::ErrorKind::Interrupted,
        format!("stopped by {name}"),
    )
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
