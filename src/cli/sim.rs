//! `flashscope sim list`: the simulator's presets and keys.

use super::Output;
use crate::vocab::error::Verdict;
use crate::Result;
use clap::Subcommand;

/// Simulator subcommands.
#[derive(Debug, Subcommand)]
pub enum SimCommand {
    /// List the presets with their keys, and every key with its meaning.
    List,
    /// Serve a simulated card as a real block device (FUSE file + loop device), in real time.
    Serve(super::serve::Args),
}

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
