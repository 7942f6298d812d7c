//! The write policy's options as clap parses them, converted once into the session's
//! typed [`WriteFlags`] and [`Budgets`] (sizes in bytes, durations in ns).

pub use super::defs::write_args::*;
pub use super::values::given;

use crate::session::{Budgets, Notices, WriteFlags};

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

impl From<&BudgetArgs> for Budgets {
    fn from(a: &BudgetArgs) -> Self {
        Budgets {
            write: a.write_budget.clone(),
            time_ns: a.time_budget.value.as_ref().map(|g| g.value),
        }
    }
}
