//! The write policy's options as clap parses them, converted once into the session's
//! typed [`WriteFlags`] and [`Budgets`] (sizes in bytes, durations in ns).

use crate::session::{Budgets, Notices, WriteFlags};
use crate::vocab::units::Given;
use crate::vocab::units::{parse_duration_ns, parse_size};
use std::path::PathBuf;

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

impl From<&WriteArgs> for WriteFlags {
    fn from(a: &WriteArgs) -> Self {
        WriteFlags {
            write: a.write,
            destructive: a.destructive,
            journal: a.journal.clone(),
            planned: false,
            notices: stderr_notices(),
        }
    }
}

/// The CLI's observer of a session's notices: each on its own line on stderr.
pub fn stderr_notices() -> Notices {
    Notices::to(|n| super::say(&n.to_string()))
}

/// `--write-budget` and `--time-budget`, for the tests that take them.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct BudgetArgs {
    /// Stop once this much has been written (e.g. 512M, 4G); results so far are analysed.
    #[arg(long, value_name = "SIZE", value_parser = given(parse_size))]
    pub write_budget: Option<Given<u64>>,
    /// Stop after this much device time (e.g. 600s); results so far are analysed.
    #[arg(long, value_name = "DURATION", value_parser = given(parse_duration_ns))]
    pub time_budget: Option<Given<u64>>,
}

impl From<&BudgetArgs> for Budgets {
    fn from(a: &BudgetArgs) -> Self {
        Budgets {
            write: a.write_budget.clone(),
            time_ns: a.time_budget.as_ref().map(|g| g.value),
        }
    }
}

/// clap's parser of an option whose spelling a message needs: `parse`'s value, and the
/// text given. (Where no message needs it, `value_parser = parse_size` takes the value.)
pub fn given<T: 'static>(
    parse: fn(&str) -> crate::Result<T>,
) -> impl Fn(&str) -> crate::Result<Given<T>> + Clone + Send + Sync + 'static {
    move |text| {
        parse(text).map(|value| Given {
            value,
            text: text.to_string(),
        })
    }
}
