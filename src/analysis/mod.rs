//! Analysis: pure functions from samples to inferences; no I/O.

pub mod advice;
pub mod align;
pub mod capacity_tools;
pub mod fat;
pub mod flashbench;
pub mod hostpath;
pub mod interval;
pub mod logs;
pub mod noise;
pub mod openau;
pub mod program;
pub mod slc;
pub mod stats;

// The medians' old home: callers may say `analysis::median` or `super::median`.
pub use stats::{median, median_nan};
