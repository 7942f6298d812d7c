//! Probes: I/O and timing that return samples; they never print and never decide.

pub mod fat;
pub mod open_au;
pub mod program;
pub mod slc;
pub mod write_common;
