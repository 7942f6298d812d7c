//! `flashscope sim list`: the simulator's presets and keys.

pub use super::defs::sim::*;

use super::Output;
use crate::vocab::error::Verdict;
use crate::Result;

pub fn run(cmd: &SimCommand, out: &Output) -> Result<Verdict> {
    match cmd {
        SimCommand::List => list(out),
        SimCommand::Serve(a) => super::serve::run(a, out),
    }
}

fn list(out: &Output) -> Result<Verdict> {
    out.emit(&crate::commands::sim::list()?);
    Ok(Verdict::Ok)
}
