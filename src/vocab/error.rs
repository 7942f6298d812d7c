//! Library errors, each carrying the offending value, and the process exit codes
//! (DESIGN.md): the one set of names every command and `main` use. A run a signal stopped
//! exits 128 + the signal (`signals::exit_code`).

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
    /// The process exit code DESIGN.md assigns to this error.
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
