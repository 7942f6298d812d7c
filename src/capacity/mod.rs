//! Real capacity: the block stamp format, the fast fake-card probe and the full-surface
//! verify engine.

pub mod analysis;
pub mod extent;
pub mod fileset;
pub mod probe;
pub mod stamp;
pub mod verify;
