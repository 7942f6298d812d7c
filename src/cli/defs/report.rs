// The clap definition of `report` (see [`super`]: no crate path but `crate::cli::values`).

use super::options::{OutputFile, Use};
#[allow(unused_imports)]
use crate::cli::values::*;

/// Arguments of `report`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  flashscope align sim:sd-16g --json > align.json\n  flashscope probe sim:fake-64g --write --json > probe.json\n  flashscope report align.json probe.json -o report.html\n\nOne self-contained page (inline CSS and SVG charts, no script, no network), printable:\nper document the verdict, every inference with its evidence and confidence, the checks,\nwarnings, a chart of the samples, the plan and what was written, the raw samples folded.\nEach FILE is a regular file of at most 64 MiB (- reads standard input once). Exit code 2\nfor a file that is not a complete flashscope/1 document (named) or an -o that cannot be\nused (named); 1 when writing it fails. The page is written beside -o and renamed over it\n(mode 0644 less the umask); a device or FIFO (/dev/null, /dev/stdout) is written through,\nand -o - is standard output."
)]
pub struct Args {
    /// Saved `--json` documents of any flashscope command (`-` reads standard input).
    #[arg(required = true, value_name = "FILE.json")]
    pub files: Vec<String>,
    #[command(flatten)]
    pub output: OutputFile<ReportOutput>,
}

pub struct ReportOutput;
impl Use for ReportOutput {
    const HELP: &'static str = "Where to write the HTML page";
    const REQUIRED: bool = true;
}
