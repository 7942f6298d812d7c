//! `flashscope sim list`: the simulator's presets and keys.

use super::Output;
use crate::backend::sim::config::{SimConfig, KEYS, PRESETS};
use crate::report::results::{KeyEntry, PresetEntry, SimListResult};
use crate::report::{Body, Document, Target};
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
    let mut presets = Vec::new();
    for p in PRESETS {
        let cfg = SimConfig::parse(p.name)?;
        presets.push(PresetEntry {
            name: p.name.to_string(),
            about: p.about.to_string(),
            keys: cfg
                .pairs()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        });
    }
    let keys = KEYS
        .iter()
        .map(|k| KeyEntry {
            key: k.key.to_string(),
            meaning: k.meaning.to_string(),
        })
        .collect();
    let doc = Document::new(Target::None, Body::SimList(SimListResult { presets, keys }));
    out.emit(&doc);
    Ok(Verdict::Ok)
}
