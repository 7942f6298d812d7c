//! Analysis: pure functions from samples to inferences; no I/O.

pub mod advice;
pub mod align;
pub mod fat;
pub mod flashbench;
pub mod interval;
pub mod openau;
pub mod program;
pub mod slc;
