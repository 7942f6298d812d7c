//! Targets.
