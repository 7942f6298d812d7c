//! Real capacity: the block stamp format (`stamp`), the fast fake-card probe (`probe`)
//! and its pure analysis (`analysis`), the full-surface verify engine (`verify`) with its
//! extents (`extent`), and a directory as a device for `verify DIR` (`fileset`).

pub mod analysis;
pub mod extent;
pub mod fileset;
pub mod locate;
pub mod probe;
pub mod stamp;
pub mod verify;
