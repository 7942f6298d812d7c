//! Moved to the library: the write-safety policy is `crate::target::write`. This module
//! only re-exports it under the old names while the commands migrate; it goes away then.

pub use crate::report::wear_line;
pub use crate::target::peek;
pub use crate::target::write::{
    estimate_ns, stopped_early, Budgets, Ending, Guarded, Ran, WriteFlags, WriteIntent,
    WriteSession,
};
