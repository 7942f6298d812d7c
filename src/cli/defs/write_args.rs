// The clap definition of `write_args` (see [`super`]: no crate path but `crate::cli::values`).

use super::options::{TimeBudget, Use};
#[allow(unused_imports)]
use crate::cli::values::*;

/// The flags of every command that writes to a target (one definition, flattened).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct WriteArgs {
    /// Allow the test to write. On a block device or file each region is saved to a
    /// journal first and restored and verified afterwards (preserve mode); a sim: card or a
    /// directory is written directly.
    #[arg(long)]
    pub write: bool,
    /// Allow writing without saving: data in the written regions is lost (no journal).
    #[arg(long)]
    pub destructive: bool,
    /// Journal file for preserve mode [default: a new file under
    /// $XDG_STATE_HOME/flashscope/ or ~/.local/state/flashscope/]. Must not be on the target.
    #[arg(long, value_name = "PATH")]
    pub journal: Option<PathBuf>,
}

/// `--write-budget` and `--time-budget`, for the tests that take them.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct BudgetArgs {
    /// Stop once this much has been written (e.g. 512M, 4G); results so far are analysed.
    #[arg(long, value_name = "SIZE", value_parser = given(parse_size))]
    pub write_budget: Option<Given<u64>>,
    #[command(flatten)]
    pub time_budget: TimeBudget<TestBudget>,
}

pub struct TestBudget;
impl Use for TestBudget {
    const HELP: &'static str =
        "Stop after this much device time (e.g. 600s); results so far are analysed";
}
