//! Analysis: pure functions from samples to inferences; no I/O.

pub mod advice;
pub mod fat;
pub mod openau;
pub mod program;
pub mod slc;
