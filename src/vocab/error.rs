//! Library errors, each carrying the offending value, a command's [`Verdict`], and the
//! process exit codes (docs/reference.md, "Exit codes") they map to: the one set of names every command and
//! `main` use. A run a signal stopped exits 128 + the signal.

use std::io;

/// Exit code: success.
pub const EXIT_OK: i32 = 0;
/// Exit code: a runtime error (missing or vanished target, I/O error).
pub const EXIT_RUNTIME: i32 = 1;
/// Exit code: a usage error or a refusal by the safety policy.
pub const EXIT_USAGE: i32 = 2;
/// Exit code: the check ran and the device failed it (fake capacity, bad data, a class or
/// `--expect` not met); a result, not an error, so no `Error` variant carries it.
pub const EXIT_CHECK_FAILED: i32 = 3;

/// How a command that ran ended: what it says about the device, not how to exit. Only the
/// command line maps it to the process's exit code ([`Verdict::exit_code`]); an [`Error`]
/// is the other way a command ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It ran and every answer it owes stands (exit 0).
    Ok,
    /// It ran but an answer it owes is inconclusive, or the workload met errors (exit 1).
    Incomplete,
    /// The check ran and the device failed it (exit 3).
    CheckFailed,
    /// A signal stopped it, after the regions it wrote were restored (exit 128 + signal).
    Stopped { signal: i32 },
}

impl Verdict {
    /// The process exit code docs/reference.md gives this verdict.
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Ok => EXIT_OK,
            Verdict::Incomplete => EXIT_RUNTIME,
            Verdict::CheckFailed => EXIT_CHECK_FAILED,
            Verdict::Stopped { signal } => 128 + signal,
        }
    }

    /// The graver of two verdicts (the one with the higher exit code), for a command
    /// that runs several tests (`auto`).
    pub fn worst(self, other: Verdict) -> Verdict {
        if other.exit_code() > self.exit_code() {
            other
        } else {
            self
        }
    }
}

/// Every error flashscope reports to a user.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A malformed spec or argument (exit 2).
    #[error("{0}")]
    Usage(String),
    /// The safety policy refused the request (exit 2).
    #[error("{0}")]
    Refused(String),
    /// Something went wrong while running (exit 1).
    #[error("{0}")]
    Runtime(String),
    /// An I/O error with what was being done (exit 1).
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
}

impl Error {
    /// The process exit code docs/reference.md gives this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) | Error::Refused(_) => EXIT_USAGE,
            Error::Runtime(_) | Error::Io { .. } => EXIT_RUNTIME,
        }
    }

    /// Wrap an I/O error with what was being done, e.g. "reading /dev/sdb at offset 4096".
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        let context = context.into();
        let context = if is_vanished(&source) {
            format!("the device went away (unplugged or failed) while {context}")
        } else {
            context
        };
        Error::Io { context, source }
    }

    pub fn usage(msg: impl Into<String>) -> Self {
        Error::Usage(msg.into())
    }

    pub fn runtime(msg: impl Into<String>) -> Self {
        Error::Runtime(msg.into())
    }
}

/// Result with flashscope's error.
pub type Result<T> = std::result::Result<T, Error>;

/// True when an I/O error means the device has gone away (unplugged, vanished).
pub fn is_vanished(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENODEV) | Some(libc::ENXIO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_map_to_the_documented_exit_codes() {
        assert_eq!(Verdict::Ok.exit_code(), 0);
        assert_eq!(Verdict::Incomplete.exit_code(), 1);
        assert_eq!(Verdict::CheckFailed.exit_code(), 3);
        // The shell's convention: 128 + the signal (SIGINT 2, SIGTERM 15).
        assert_eq!(Verdict::Stopped { signal: 2 }.exit_code(), 130);
        assert_eq!(Verdict::Stopped { signal: 15 }.exit_code(), 143);
    }

    #[test]
    fn the_worst_verdict_wins() {
        let stop = Verdict::Stopped { signal: 15 };
        assert_eq!(Verdict::Ok.worst(Verdict::Incomplete), Verdict::Incomplete);
        assert_eq!(
            Verdict::CheckFailed.worst(Verdict::Incomplete),
            Verdict::CheckFailed
        );
        assert_eq!(Verdict::Ok.worst(stop), stop);
        assert_eq!(
            Verdict::CheckFailed.worst(Verdict::Ok),
            Verdict::CheckFailed
        );
    }
}
