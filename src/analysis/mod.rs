//! Analysis: pure functions from samples to inferences; no I/O.

pub mod advice;
pub mod align;
pub mod flashbench;
pub mod interval;
