//! Probes: I/O and timing that return serialisable samples; they never print or decide.

pub mod align;
pub mod fat;
pub mod interval;
pub mod open_au;
pub mod program;
pub mod scatter;
pub mod slc;
pub mod write_common;
