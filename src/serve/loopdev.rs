//! Attaching a loop device with direct I/O over the served file (LOOP_CONFIGURE), and
//! detaching it by its exact name. The ioctls themselves are in [`crate::sys`].
//!
//! The device is configured with autoclear and kept open by the server: if the server dies,
//! even by SIGKILL, the kernel detaches the loop device once its last user closes it.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use crate::sys::{self, LO_FLAGS_AUTOCLEAR, LO_FLAGS_DIRECT_IO};

const LOOP_MAJOR: u32 = 7;

/// An attached loop device, open by this process. Dropping it detaches the device.
pub(crate) struct LoopDevice {
    path: PathBuf,
    file: Option<File>,
}

fn ioctl_err(what: &str, path: &Path, e: rustix::io::Errno) -> io::Error {
    let e = io::Error::from(e);
    io::Error::new(e.kind(), format!("{what} on {}: {e}", path.display()))
}

/// Make sure `/dev/loopN` exists (containers without udev lack the nodes above loop7).
fn ensure_node(path: &Path, minor: u32) -> io::Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.file_type().is_block_device() => return Ok(()),
        Ok(_) => {
            return Err(io::Error::other(format!(
                "{} exists but is not a block device",
                path.display()
            )))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::BlockDevice,
        rustix::fs::Mode::from_raw_mode(0o660),
        rustix::fs::makedev(LOOP_MAJOR, minor),
    )
    .map_err(|e| ioctl_err("mknod", path, e))
}

impl LoopDevice {
    /// Attach a free loop device to `backing` with direct I/O, the given logical block
    /// size, and autoclear. Fails — never falls back to a buffered loop — when the kernel
    /// does not grant direct I/O: a buffered loop would hide the device behind the page
    /// cache.
    pub(crate) fn attach_direct(backing: &File, block_size: u32, name: &Path) -> io::Result<Self> {
        let control = OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/loop-control")
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "/dev/loop-control: {e} (the kernel's loop driver is needed for --loop)"
                    ),
                )
            })?;
        let mut last_err = None;
        for _ in 0..8 {
            let n = sys::loop_get_free(&control)
                .map_err(|e| ioctl_err("LOOP_CTL_GET_FREE", Path::new("/dev/loop-control"), e))?;
            let path = PathBuf::from(format!("/dev/loop{n}"));
            ensure_node(&path, n)?;
            let file = OpenOptions::new().read(true).write(true).open(&path)?;
            let rc = sys::loop_configure(
                &file,
                backing,
                block_size,
                LO_FLAGS_DIRECT_IO | LO_FLAGS_AUTOCLEAR,
                name.as_os_str().as_encoded_bytes(),
            );
            let Err(e) = rc else {
                let dev = LoopDevice {
                    path,
                    file: Some(file),
                };
                if !dev.direct_io()? {
                    let p = dev.path.clone();
                    drop(dev);
                    return Err(io::Error::other(format!(
                        "the kernel attached {} without direct I/O; a buffered loop over the served file would answer from the page cache and hide the simulated card, so it was detached again",
                        p.display()
                    )));
                }
                return Ok(dev);
            };
            let e = io::Error::from(e);
            if e.raw_os_error() == Some(libc::EBUSY) {
                // Another process took this device between GET_FREE and CONFIGURE.
                last_err = Some(e);
                continue;
            }
            return Err(io::Error::new(
                e.kind(),
                format!("LOOP_CONFIGURE on {}: {e}", path.display()),
            ));
        }
        Err(last_err.unwrap_or_else(|| io::Error::other("no free loop device")))
    }

    /// The device node, e.g. `/dev/loop3`.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the kernel reports direct I/O on for this device.
    pub(crate) fn direct_io(&self) -> io::Result<bool> {
        let Some(file) = &self.file else {
            return Ok(false);
        };
        let flags =
            sys::loop_flags(file).map_err(|e| ioctl_err("LOOP_GET_STATUS64", &self.path, e))?;
        Ok(flags & LO_FLAGS_DIRECT_IO != 0)
    }

    /// Detach the device (deferred by the kernel until its other users close it).
    pub(crate) fn detach(mut self) -> io::Result<()> {
        self.detach_inner()
    }

    fn detach_inner(&mut self) -> io::Result<()> {
        let Some(file) = self.file.take() else {
            return Ok(());
        };
        let rc = sys::loop_clear(&file);
        let result = if let Err(e) = rc {
            let e = io::Error::from(e);
            // ENXIO: already detached (autoclear ran).
            if e.raw_os_error() == Some(libc::ENXIO) {
                Ok(())
            } else {
                Err(io::Error::new(
                    e.kind(),
                    format!("detaching {}: {e}", self.path.display()),
                ))
            }
        } else {
            Ok(())
        };
        // Closing our descriptor lets the kernel finish the detach.
        drop(file);
        result
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = self.detach_inner();
    }
}
