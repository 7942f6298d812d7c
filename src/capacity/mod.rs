//! Real capacity: the block stamp format (`stamp`), the fast fake-card probe (`probe`)
//! and its pure analysis (`analysis`), the full-surface verify engine (`verify`) with its
//! extents (`extent`), and a directory as a device for `verify DIR` (`fileset`).

pub mod analysis;
pub mod extent;
pub mod fileset;
pub mod locate;
pub mod probe;
pub mod verify;

use crate::device::TargetSpec;
use crate::device::{sysfs, OpenTarget};
use crate::vocab::Warning;
use crate::{Error, Result};

/// Refuse a partition unless allowed: a fake card only shows itself on the whole device.
pub fn partition_check(
    opened: &OpenTarget,
    spec: &TargetSpec,
    partition_ok: bool,
) -> Result<Option<Warning>> {
    let Some(name) = &opened.block_name else {
        return Ok(None);
    };
    let Some(disk) = sysfs::whole_disk_name(name) else {
        return Ok(None);
    };
    let warning = Warning::Partition {
        spec: spec.to_string(),
        disk: disk.clone(),
    };
    if partition_ok {
        Ok(Some(warning))
    } else {
        Err(Error::Refused(format!(
            "{}. Test /dev/{disk} instead, or pass --partition-ok to test just the partition",
            warning.cause()
        )))
    }
}
