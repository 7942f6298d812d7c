//! `flashscope health TARGET`: wear and end of life from what the device reports
//! (read-only; nothing is measured).

pub use super::defs::health::*;

use super::Output;
use crate::health::{self};
use crate::vocab::error::Verdict;
use crate::Result;

/// Check the file options, assess (projecting the wear from the runs stored in `history`,
/// the one this run is recorded into) and print the document; returns the exit code.
pub fn run(args: &Args, history: Option<&std::path::Path>, out: &Output) -> Result<Verdict> {
    let (ext_csd, roots) =
        crate::commands::health::sources(args.ext_csd.as_deref(), args.sysfs_root.as_deref())?;
    let opts = health::Options {
        max_wear_percent: health::parse_max_wear(&args.max_wear)?,
        ext_csd,
        roots,
    };
    let (doc, verdict) = crate::commands::health::measure(args.target.as_ref(), &opts, history)?;
    out.emit(&doc);
    Ok(verdict)
}
