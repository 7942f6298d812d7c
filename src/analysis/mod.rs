//! Analysis: pure functions from samples to inferences; no I/O.

pub mod advice;
