//! Ctrl-C during a filesystem test: the first SIGINT or SIGTERM sets a flag that the probes
//! check between blocks, so they stop, remove their test files and report; a second one
//! ends the process at once (the handler resets itself).

use crate::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_sig: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Catch SIGINT and SIGTERM once (SA_RESETHAND: the next one has its default effect).
pub fn install() {
    // SAFETY: sigaction is plain data; zeroed is a valid empty mask and flags.
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
    sa.sa_flags = libc::SA_RESETHAND;
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: `sa` is a valid sigaction whose handler only stores to an atomic; the old
        // action is not needed (null).
        unsafe { libc::sigaction(sig, &sa, std::ptr::null_mut()) };
    }
}

/// True once a signal asked the test to stop.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// An error when a signal asked the test to stop; probes call this between blocks.
pub fn check() -> Result<()> {
    if interrupted() {
        return Err(Error::runtime(
            "interrupted by a signal: the test stopped and its test files were removed (unless --keep)",
        ));
    }
    Ok(())
}
