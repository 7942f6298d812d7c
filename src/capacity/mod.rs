//! Real capacity: the block stamp format, the fast fake-card probe and the full-surface
//! verify engine.

pub mod extent;
pub mod stamp;
