// The clap definition of `history` (see [`super`]: no crate path but `crate::cli::values`).

#[allow(unused_imports)]
use crate::cli::values::*;

const AFTER_HELP: &str = "\
Examples:
  flashscope bench sim:sd-16g --history runs.sqlite
  flashscope history list --history runs.sqlite
  flashscope history show 1 --history runs.sqlite
  flashscope history table --by device --history runs.sqlite
  flashscope history export --format csv --history runs.sqlite
  flashscope history import results/*.json --history runs.sqlite

Every measuring command (align, auto, bench, fat, fs, health, interval, io, open-au,
probe, program, scatter, slc, verify) stores its --json document and metrics in
$XDG_DATA_HOME/flashscope/history.sqlite (default ~/.local/share/...), or in --history
PATH; --no-history or FLASHSCOPE_HISTORY=off stops that. The schema and example SQL are
in docs/history.md. Exit code 2 for an id that does not exist or a FILE that is not a
complete flashscope/1 document of a measuring command.";

/// The `history` subcommands.
#[derive(Debug, clap::Subcommand)]
#[command(after_help = AFTER_HELP)]
pub enum HistoryCommand {
    /// The stored runs: id, when, device, command and its leading figure.
    #[command(after_help = AFTER_HELP)]
    List(ListArgs),
    /// One stored run as its command printed it, or with --json its document as printed.
    #[command(after_help = AFTER_HELP)]
    Show(ShowArgs),
    /// Every run: CSV (one line per metric) or JSON (an array of runs with their documents).
    #[command(after_help = AFTER_HELP)]
    Export(ExportArgs),
    /// Store --json documents saved elsewhere (another machine, a test farm).
    #[command(after_help = AFTER_HELP)]
    Import(ImportArgs),
    /// The empirical table: per part, bench's sequential MiB/s and 4 KiB random IOPS,
    /// median and range over runs, as the vendor's table (`model --reference`) lays it out.
    #[command(after_help = AFTER_HELP)]
    Table(TableArgs),
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Only the runs of this device (its identity, as `list` and `table --by device` show).
    #[arg(long)]
    pub device: Option<String>,
    /// At most this many runs, the latest.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub limit: u64,
}

#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The run's id (`history list`).
    pub id: i64,
}

/// `history export` formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    Csv,
    Json,
}

#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// csv: one line per metric with its run's columns; json: an array of runs, each with
    /// its whole document.
    #[arg(long, value_enum, default_value = "csv")]
    pub format: ExportFormat,
}

#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// Saved `--json` documents of measuring commands (`-` reads standard input).
    #[arg(required = true, value_name = "FILE.json")]
    pub files: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub struct TableArgs {
    /// One row per part (model: maker and product or model name) or per device.
    #[arg(long, value_enum, default_value = "model")]
    pub by: ByArg,
}

/// `--by`: [`By`] on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ByArg {
    /// The part: maker and product (CID) or model; devices without one by their identity.
    Model,
    /// Each device (its identity: CID, USB ids and serial, or model, serial and size).
    Device,
}
