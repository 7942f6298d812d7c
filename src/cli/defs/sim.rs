// The clap definition of `sim` (see [`super`]: no crate path but `crate::cli::values`).

#[allow(unused_imports)]
use crate::cli::values::*;

/// Simulator subcommands.
#[derive(Debug, Subcommand)]
pub enum SimCommand {
    /// List the presets with their keys, and every key with its meaning.
    List,
    /// Serve a simulated card as a real block device (FUSE file + loop device), in real time.
    Serve(super::serve::Args),
}
