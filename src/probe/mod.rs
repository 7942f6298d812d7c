//! Probes: I/O and timing that return serialisable samples; they never print or decide.

pub mod align;
pub mod interval;
pub mod scatter;
