//! Targets.
pub mod mmc;
