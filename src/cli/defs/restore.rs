// The clap definition of `restore` (see [`super`]: no crate path but `crate::cli::values`).

#[allow(unused_imports)]
use crate::cli::values::*;

/// Arguments of `restore`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
  flashscope restore ~/.local/state/flashscope/fat-1790000000-4242.fsjournal\n  \
  flashscope restore J.fsjournal --target /dev/sdc          (the card got a new name)\n  \
  flashscope restore J.fsjournal --target card.img --ignore-identity   (onto an image copy)\n\n\
Trust: the journal must be a regular file (symlinks and FIFOs are refused), owned by you or\n\
root and not writable by group or others; check one that is not with --list, which writes\n\
nothing. Every identity field the target has (device number, serial, model, loop backing\n\
file; a file's device and inode) must be in the journal and equal.\n\n\
Exit codes: 0 restored and verified, 1 corrupt journal (a complete record with a bad\n\
checksum, or a cut last record whose region was overwritten) or I/O error, 2 the journal\n\
is not trusted, does not belong to the target (identity or size), is not a journal, or the\n\
target is in use.")]
pub struct Args {
    /// The journal file printed before the test started.
    pub journal: PathBuf,
    /// Restore onto this target instead of the one recorded in the journal.
    #[arg(long, value_name = "SPEC")]
    pub target: Option<TargetSpec>,
    /// Skip the identity check (serial, device number, file); the size must still match.
    /// For restoring onto an image copy of the device.
    #[arg(long)]
    pub ignore_identity: bool,
    /// Keep the journal after a verified restore (by default it is removed).
    #[arg(long)]
    pub keep: bool,
    /// Only check the journal and list its regions; write nothing.
    #[arg(long)]
    pub list: bool,
}
