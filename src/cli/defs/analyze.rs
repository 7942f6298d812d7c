// The clap definition of `analyze` (see [`super`]: no crate path but `crate::cli::values`).

use super::options::{BlockSize, EraseSize, Plot, Use};
#[allow(unused_imports)]
use crate::cli::values::*;

/// Arguments of `analyze`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  flashscope analyze align-1k.txt align-4k.txt align-16k.txt\n  flashscope analyze interval.txt --json\n  flashscope analyze openau.txt --erase-size 4M --open-au-nr 2\n  flashscope analyze openau-loop.txt --erase-size 4M --open-au-nr 1,2,8,9\n\nReads flashbench output (align -a, interval -i, open-au -O, find-fat -f) as pasted: a\ncommand line after any shell prompt, CRLF, tabs, a BOM, a cut last line (left out, with\na warning). A file with several runs is split at command lines and where the sizes start\nagain. Several align logs are taken as one card measured with different block sizes;\nruns with the same block size are pooled (per-alignment medians, a repeated copy once).\nRaw -O runs without command lines: --open-au-nr 1,2,8,9 gives their counts in order;\nwithout it they are taken as 1, 2, 3, ... and open_au is at most tentative.\nA log is a regular file of at most 64 MiB and 10000 runs (- reads standard input; each\nrun is kept for the document, so the runs bound its memory). Exit code 2 for a\nlog flashscope cannot read as flashbench output, a FIFO or device, or an impossible\nvalue (named by file and line); 1 for a file it cannot open.\nPublished commands are read as written: $[4*1024*1024] and $((...)) in option values, a\nbackslash continuation, and ^C (the run ends there, with a warning). A pasted result of\nanother capacity test (a probe's Device geometry block, a Data OK / Data LOST summary, a\nfill-and-verify window in English or German) is restated with its blind spots."
)]
pub struct Args {
    /// flashbench log files (regular files of at most 64 MiB and 10000 runs; `-` reads standard
    /// input).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<String>,
    #[command(flatten)]
    pub blocksize: BlockSize<LogBlockSize>,
    #[command(flatten)]
    pub erasesize: EraseSize<LogEraseSize>,
    /// Open erase blocks for open-au runs without --open-au-nr on a command line: one count
    /// for all of them, or one per run in the order they appear (e.g. 1,2,8,9).
    #[arg(long, value_name = "N[,N...]", allow_hyphen_values = true)]
    pub open_au_nr: Option<String>,
    #[command(flatten)]
    pub plot: Plot<AnalyzePlot>,
}

pub struct LogBlockSize;
impl Use for LogBlockSize {
    const HELP: &'static str = "Block size for logs whose command line does not give one";
}

pub struct LogEraseSize;
impl Use for LogEraseSize {
    const HELP: &'static str = "Erase block size for open-au / find-fat logs without one";
    const ALIASES: &'static [&'static str] = &["erasesize"];
}

pub struct AnalyzePlot;
impl Use for AnalyzePlot {
    const HELP: &'static str =
        "Write an SVG plot (align: boundary cost against alignment; interval: time against size)";
}
