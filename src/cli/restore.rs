//! `flashscope restore JOURNAL`: put back every region a preserve-mode test saved, after
//! a crash, a power loss or a vanished device. Idempotent; refuses a foreign target.

pub use super::defs::restore::*;

use super::Output;
use crate::commands::restore::{self, RestoreParams};
use crate::vocab::error::Verdict;
use crate::Result;

/// Restore (or list) and print the document; returns the exit code.
pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let params = RestoreParams {
        journal: args.journal.clone(),
        target: args.target.clone(),
        ignore_identity: args.ignore_identity,
        keep: args.keep,
        list: args.list,
    };
    out.emit(&restore::restore(&params)?);
    Ok(Verdict::Ok)
}
