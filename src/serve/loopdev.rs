//! Attaching a loop device with direct I/O over the served file (LOOP_CONFIGURE), and
//! detaching it by its exact name.
//!
//! The device is configured with autoclear and kept open by the server: if the server dies,
//! even by SIGKILL, the kernel detaches the loop device once its last user closes it.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use rustix::ioctl::{opcode, Getter, Ioctl, IoctlOutput, NoArg, Opcode, Setter};

// <linux/loop.h> numbers them plainly (0x4C = 'L'); each is `_IO('L', n)`.
const LOOP_CLR_FD: Opcode = opcode::none(b'L', 0x01);
const LOOP_GET_STATUS64: Opcode = opcode::none(b'L', 0x05);
const LOOP_CONFIGURE: Opcode = opcode::none(b'L', 0x0A);
const LOOP_CTL_GET_FREE: Opcode = opcode::none(b'L', 0x82);

/// `LOOP_CTL_GET_FREE`: no argument; the free device's number is the call's return value,
/// which none of rustix's ready-made patterns returns.
struct GetFree;

// SAFETY: the opcode is LOOP_CTL_GET_FREE, which takes no argument (a null pointer is
// passed) and writes no user memory; the output is the ioctl's non-negative return value.
unsafe impl Ioctl for GetFree {
    type Output = u32;
    const IS_MUTATING: bool = false;
    fn opcode(&self) -> Opcode {
        LOOP_CTL_GET_FREE
    }
    fn as_ptr(&mut self) -> *mut std::ffi::c_void {
        std::ptr::null_mut()
    }
    unsafe fn output_from_ptr(
        out: IoctlOutput,
        _: *mut std::ffi::c_void,
    ) -> rustix::io::Result<u32> {
        Ok(out as u32)
    }
}

const LO_FLAGS_AUTOCLEAR: u32 = 4;
const LO_FLAGS_DIRECT_IO: u32 = 16;

const LOOP_MAJOR: u32 = 7;

/// `struct loop_info64` from <linux/loop.h>.
#[repr(C)]
#[derive(Clone, Copy)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

/// `struct loop_config` from <linux/loop.h>.
#[repr(C)]
struct LoopConfig {
    fd: u32,
    block_size: u32,
    info: LoopInfo64,
    reserved: [u64; 8],
}

impl LoopInfo64 {
    fn zeroed() -> Self {
        LoopInfo64 {
            lo_device: 0,
            lo_inode: 0,
            lo_rdevice: 0,
            lo_offset: 0,
            lo_sizelimit: 0,
            lo_number: 0,
            lo_encrypt_type: 0,
            lo_encrypt_key_size: 0,
            lo_flags: 0,
            lo_file_name: [0; 64],
            lo_crypt_name: [0; 64],
            lo_encrypt_key: [0; 32],
            lo_init: [0; 2],
        }
    }
}

/// An attached loop device, open by this process. Dropping it detaches the device.
pub struct LoopDevice {
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
    pub fn attach_direct(backing: &File, block_size: u32, name: &Path) -> io::Result<Self> {
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
            // SAFETY: GetFree describes LOOP_CTL_GET_FREE exactly (see its impl).
            let n = unsafe { rustix::ioctl::ioctl(&control, GetFree) }
                .map_err(|e| ioctl_err("LOOP_CTL_GET_FREE", Path::new("/dev/loop-control"), e))?;
            let path = PathBuf::from(format!("/dev/loop{n}"));
            ensure_node(&path, n)?;
            let file = OpenOptions::new().read(true).write(true).open(&path)?;
            let mut info = LoopInfo64::zeroed();
            info.lo_flags = LO_FLAGS_DIRECT_IO | LO_FLAGS_AUTOCLEAR;
            let bytes = name.as_os_str().as_encoded_bytes();
            let k = bytes.len().min(63);
            info.lo_file_name[..k].copy_from_slice(&bytes[..k]);
            let cfg = LoopConfig {
                fd: backing.as_raw_fd() as u32,
                block_size,
                info,
                reserved: [0; 8],
            };
            // SAFETY: LOOP_CONFIGURE reads one loop_config through the pointer `Setter`
            // passes, to a fully initialised value that outlives the call.
            let rc = unsafe {
                rustix::ioctl::ioctl(&file, Setter::<LOOP_CONFIGURE, LoopConfig>::new(cfg))
            };
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
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the kernel reports direct I/O on for this device.
    pub fn direct_io(&self) -> io::Result<bool> {
        let Some(file) = &self.file else {
            return Ok(false);
        };
        // SAFETY: LOOP_GET_STATUS64 writes one loop_info64 through the pointer `Getter`
        // passes, to memory of that type it provides.
        let info =
            unsafe { rustix::ioctl::ioctl(file, Getter::<LOOP_GET_STATUS64, LoopInfo64>::new()) }
                .map_err(|e| ioctl_err("LOOP_GET_STATUS64", &self.path, e))?;
        Ok(info.lo_flags & LO_FLAGS_DIRECT_IO != 0)
    }

    /// Detach the device (deferred by the kernel until its other users close it).
    pub fn detach(mut self) -> io::Result<()> {
        self.detach_inner()
    }

    fn detach_inner(&mut self) -> io::Result<()> {
        let Some(file) = self.file.take() else {
            return Ok(());
        };
        // SAFETY: LOOP_CLR_FD takes no argument.
        let rc = unsafe { rustix::ioctl::ioctl(&file, NoArg::<LOOP_CLR_FD>::new()) };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structures_match_the_kernel_abi() {
        assert_eq!(std::mem::size_of::<LoopInfo64>(), 232);
        assert_eq!(std::mem::size_of::<LoopConfig>(), 304);
    }
}
