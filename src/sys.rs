//! The system calls flashscope makes, in one place: through `rustix`'s safe wrappers where
//! it covers them (statfs, statvfs, statx, fadvise, flock, access, sync, block-device and
//! loop-device ioctls, FIEMAP, CPU affinity, clocks, user ids, kill), raw `libc` only where
//! it does not (mmap, mincore, fallocate's hole punching on 32-bit glibc, getrusage, sigaction,
//! signal masks, sched_setscheduler, the descriptor handed to a child, another thread's CPU
//! clock), each with its `// SAFETY:` line; and the bounded reads of /proc. Also the one
//! table of filesystem magic numbers and the one free-space check. Left outside: io_uring
//! (`backend::uring`, through the `io-uring` crate), whose `unsafe` is about the buffers a
//! queued entry points at, not about a call.

use crate::{Error, Result};
use rustix::fs::{Access, FlockOperation, StatxFlags};
use rustix::ioctl::{opcode, Getter, Opcode, Setter, Updater};
use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::path::Path;
use std::sync::atomic::{AtomicI32, Ordering};

pub(crate) mod dir;

/// `open(2)` flag for direct I/O, for `OpenOptionsExt::custom_flags`.
pub(crate) const O_DIRECT: i32 = rustix::fs::OFlags::DIRECT.bits() as i32;

// ----- filesystem magic numbers (statfs f_type) -----

/// `statfs.f_type` values, as the unsigned 32-bit numbers the kernel defines.
pub mod magic {
    pub(crate) const TMPFS: u32 = 0x0102_1994;
    pub(crate) const RAMFS: u32 = 0x8584_58f6;
    pub(crate) const SYSFS: u32 = 0x6265_6572;
    pub(crate) const PROC: u32 = 0x9fa0;
    pub(crate) const BTRFS: u32 = 0x9123_683e;
    pub(crate) const UBIFS: u32 = 0x2405_1905;
    pub(crate) const EXT4: u32 = 0xef53;
    pub(crate) const F2FS: u32 = 0xf2f5_2010;
    pub(crate) const XFS: u32 = 0x5846_5342;
    pub(crate) const ZFS: u32 = 0x2fc1_2fc1;
    pub(crate) const VFAT: u32 = 0x4d44;
    pub(crate) const EXFAT: u32 = 0x2011_bab0;
    pub(crate) const NTFS: u32 = 0x5346_544e;
    pub(crate) const ROMFS: u32 = 0x7275;
    pub(crate) const FUSE: u32 = 0x6573_5546;
    pub(crate) const OVERLAY: u32 = 0x794c_7630;
}

/// The name of a filesystem by its statfs magic number, for the common ones.
pub(crate) fn fs_name(f_type: u32) -> Option<&'static str> {
    use magic::*;
    Some(match f_type {
        TMPFS => "tmpfs",
        RAMFS => "ramfs",
        SYSFS => "sysfs",
        PROC => "proc",
        BTRFS => "btrfs",
        UBIFS => "ubifs",
        EXT4 => "ext4",
        F2FS => "f2fs",
        XFS => "xfs",
        ZFS => "zfs",
        VFAT => "vfat",
        EXFAT => "exfat",
        NTFS => "ntfs",
        ROMFS => "romfs",
        FUSE => "fuse",
        OVERLAY => "overlay",
        _ => return None,
    })
}

/// [`fs_name`], or the number in hex for one not in the table.
pub(crate) fn fs_label(f_type: u32) -> String {
    fs_name(f_type).map_or_else(|| format!("0x{f_type:x}"), str::to_string)
}

/// Filesystems whose files live only in memory (tmpfs, ramfs, sysfs, proc): timings there
/// measure RAM, not a medium.
pub(crate) fn memory_fs(f_type: u32) -> bool {
    use magic::*;
    matches!(f_type, TMPFS | RAMFS | SYSFS | PROC)
}

// ----- statfs, statvfs and free space -----

/// What statfs and statvfs say about the filesystem holding a path or descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FsStats {
    /// `f_type`, truncated to the 32 bits every magic number has (on 32-bit ARM the field
    /// is signed, so e.g. ramfs' 0x858458f6 would otherwise read as negative).
    pub magic: u32,
    /// Fundamental block size (`f_bsize`).
    pub block_bytes: u64,
    /// Bytes an unprivileged writer may still write; `None` where the filesystem reports
    /// no size at all (ramfs: zero blocks).
    pub free_bytes: Option<u64>,
}

fn fs_stats_of(sfs: rustix::fs::StatFs, svfs: rustix::fs::StatVfs) -> FsStats {
    FsStats {
        // Truncation to the low 32 bits is the point: every magic number is 32 bits.
        magic: sfs.f_type as u32,
        block_bytes: sfs.f_bsize as u64,
        free_bytes: (svfs.f_blocks != 0).then(|| svfs.f_bavail.saturating_mul(svfs.f_frsize)),
    }
}

/// statfs and statvfs of the filesystem holding `path` (statfs64 on 32-bit targets).
pub(crate) fn fs_stats(path: &Path) -> io::Result<FsStats> {
    Ok(fs_stats_of(
        rustix::fs::statfs(path)?,
        rustix::fs::statvfs(path)?,
    ))
}

/// [`fs_stats`] of the filesystem holding an open descriptor.
pub(crate) fn fs_stats_fd(fd: impl AsFd) -> io::Result<FsStats> {
    let fd = fd.as_fd();
    Ok(fs_stats_of(
        rustix::fs::fstatfs(fd)?,
        rustix::fs::fstatvfs(fd)?,
    ))
}

/// The statfs magic number of the filesystem holding `path`, or `None` when it cannot be
/// read.
pub(crate) fn statfs_magic(path: &Path) -> Option<u32> {
    rustix::fs::statfs(path).ok().map(|s| s.f_type as u32)
}

/// The one free-space check: refuse, before anything is written, when `free` bytes (of
/// the filesystem holding `place`; `None` = it reports no size) cannot hold `need` bytes
/// of `what` plus `margin` spare. `remedy` tells the user what to do.
pub(crate) fn check_room(
    place: &Path,
    free: Option<u64>,
    what: &str,
    need: u64,
    margin: u64,
    remedy: &str,
) -> Result<()> {
    let Some(free) = free else {
        return Ok(());
    };
    if need.saturating_add(margin) > free {
        let spare = if margin > 0 {
            format!(
                " (plus {} spare)",
                crate::vocab::units::format_bytes(margin)
            )
        } else {
            String::new()
        };
        return Err(Error::Refused(format!(
            "{} has {} free but {what} needs {}{spare}: {remedy}",
            place.display(),
            crate::vocab::units::format_bytes(free),
            crate::vocab::units::format_bytes(need),
        )));
    }
    Ok(())
}

// ----- files and the page cache -----

/// Drop a file's pages from the page cache (they must be clean: fsync first), so the
/// next read comes from the medium.
pub fn drop_file_cache(file: &File) -> io::Result<()> {
    rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::DontNeed)?;
    Ok(())
}

/// Bytes of the file's first `len` bytes that are in the page cache now (mmap + mincore),
/// so a "cold" read can show it was cold.
pub fn resident_bytes(file: &File, len: u64) -> io::Result<u64> {
    use std::os::fd::AsRawFd;
    if len == 0 {
        return Ok(0);
    }
    let page = rustix::param::page_size() as u64;
    let len_usize = usize::try_from(len)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "file too large to map"))?;
    // rustix has no mincore: map, ask and unmap with libc.
    // SAFETY: a read-only shared mapping of an open file descriptor; the result is
    // checked for MAP_FAILED and unmapped below; the memory is never dereferenced.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len_usize,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let pages = len.div_ceil(page) as usize;
    let mut vec = vec![0u8; pages];
    // SAFETY: addr..addr+len is the mapping made above and vec has one byte per page.
    let rc = unsafe { libc::mincore(addr, len_usize, vec.as_mut_ptr()) };
    let err = io::Error::last_os_error();
    // SAFETY: unmapping exactly the mapping made above.
    unsafe { libc::munmap(addr, len_usize) };
    if rc != 0 {
        return Err(err);
    }
    let resident = vec.iter().filter(|b| **b & 1 == 1).count() as u64;
    Ok((resident * page).min(len))
}

/// Write back all dirty data of every filesystem (`sync(2)`).
pub(crate) fn sync_all() {
    rustix::fs::sync();
}

/// Write back all dirty data and drop the whole page cache, dentries and inodes
/// (`echo 3 > /proc/sys/vm/drop_caches`); needs root. The kernel's file is opened as it
/// is, never created or followed through a link.
pub fn drop_all_caches() -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    sync_all();
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open("/proc/sys/vm/drop_caches")?
        .write_all(b"3\n")
}

/// `access(path, W_OK)`; used only to explain errors.
pub fn writable(path: &Path) -> bool {
    rustix::fs::access(path, Access::WRITE_OK).is_ok()
}

/// `flock(2)` without waiting, shared or exclusive: `Err` with `WouldBlock` when another
/// open file holds it.
pub(crate) fn try_lock(file: &File, exclusive: bool) -> io::Result<()> {
    let op = if exclusive {
        FlockOperation::NonBlockingLockExclusive
    } else {
        FlockOperation::NonBlockingLockShared
    };
    rustix::fs::flock(file, op)?;
    Ok(())
}

/// An open-file-description read lock on the first byte of `file`, without waiting: a
/// mark that this descriptor is at work on the file, which another process can see with
/// [`ofd_marked_by_another`]. It lasts while the file is open, is independent of `flock`,
/// and is taken by readers only (nobody in flashscope takes the write lock it would
/// conflict with).
pub(crate) fn ofd_mark(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let mut lock = ofd_first_byte(libc::F_RDLCK);
    // SAFETY: fcntl reads the flock struct we own for the duration of the call.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_SETLK, &mut lock) };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether another open file description holds an [`ofd_mark`] on `file`'s file.
pub(crate) fn ofd_marked_by_another(file: &File) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    let mut lock = ofd_first_byte(libc::F_WRLCK);
    // SAFETY: fcntl fills in the flock struct we own for the duration of the call.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_GETLK, &mut lock) };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(lock.l_type == libc::F_RDLCK as libc::c_short)
}

/// An open-file-description write lock on the whole of `file`, without waiting: the
/// kernel grants it only on a descriptor open for writing. `WouldBlock` when another
/// description holds a lock on it.
pub(crate) fn ofd_write_lock(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let mut lock = ofd_first_byte(libc::F_WRLCK);
    lock.l_len = 0;
    // SAFETY: fcntl reads the flock struct we own for the duration of the call.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_SETLK, &mut lock) };
    if rc == -1 {
        let e = io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::EACCES) => io::ErrorKind::WouldBlock.into(),
            _ => e,
        });
    }
    Ok(())
}

/// Whether another description holds an open-file-description (or record) write lock
/// on any of `file`: a writer's, not a reader's read lock.
pub(crate) fn ofd_write_locked_by_another(file: &File) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    let mut lock = ofd_first_byte(libc::F_WRLCK);
    lock.l_len = 0;
    // SAFETY: fcntl fills in the flock struct we own for the duration of the call.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_GETLK, &mut lock) };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(lock.l_type == libc::F_WRLCK as libc::c_short)
}

/// An OFD lock request of `kind` on a file's first byte.
fn ofd_first_byte(kind: libc::c_int) -> libc::flock {
    // SAFETY: flock is plain data, all zeros is a valid value (then filled in).
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = kind as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = 0;
    lock.l_len = 1;
    lock
}

/// The O_DIRECT offset alignment of a file (statx STATX_DIOALIGN, Linux 6.1+).
pub(crate) fn dio_alignment(path: &Path) -> Option<u32> {
    let st = rustix::fs::statx(
        rustix::fs::CWD,
        path,
        rustix::fs::AtFlags::empty(),
        StatxFlags::DIOALIGN,
    )
    .ok()?;
    if st.stx_mask & StatxFlags::DIOALIGN.bits() == 0 || st.stx_dio_offset_align == 0 {
        return None;
    }
    Some(st.stx_dio_offset_align.max(512))
}

/// Punch a hole `[offset, offset+len)` in a regular file (FALLOC_FL_PUNCH_HOLE), with
/// 64-bit offsets on every target.
pub(crate) fn punch_hole(file: impl AsFd, offset: u64, len: u64) -> io::Result<()> {
    let too_big = |what: &str, v: u64| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what} {v} is beyond the largest file offset (2^63-1)"),
        )
    };
    i64::try_from(offset).map_err(|_| too_big("offset", offset))?;
    i64::try_from(len).map_err(|_| too_big("length", len))?;
    let mode = rustix::fs::FallocateFlags::PUNCH_HOLE | rustix::fs::FallocateFlags::KEEP_SIZE;
    rustix::fs::fallocate(file, mode, offset, len)?;
    Ok(())
}

// ----- block-device ioctls -----

/// `BLKGETSIZE64` = `_IOR(0x12, 114, size_t)`: the kernel declares it with `size_t`, so
/// the request number differs between 32- and 64-bit userland, while the value written
/// is always a u64.
pub(crate) const BLKGETSIZE64: Opcode = opcode::read::<usize>(0x12, 114);
/// `BLKDISCARD` = `_IO(0x12, 119)`, which reads a `[u64; 2]` (offset, length).
pub(crate) const BLKDISCARD: Opcode = opcode::none(0x12, 119);

/// Size in bytes of an open block device.
pub(crate) fn block_device_bytes(file: &File) -> io::Result<u64> {
    // SAFETY: BLKGETSIZE64 is a getter that writes a u64, which `Getter` provides.
    let size = unsafe { rustix::ioctl::ioctl(file, Getter::<BLKGETSIZE64, u64>::new()) }?;
    Ok(size)
}

/// Logical and physical sector sizes of an open block device (BLKSSZGET, BLKPBSZGET);
/// 512 where the kernel does not say.
pub(crate) fn sector_sizes(file: &File) -> (u32, u32) {
    let logical = rustix::fs::ioctl_blksszget(file).unwrap_or(512).max(512);
    let physical = rustix::fs::ioctl_blkpbszget(file)
        .unwrap_or(logical)
        .max(logical);
    (logical, physical)
}

/// Discard `[offset, offset+len)` of an open block device (BLKDISCARD).
pub(crate) fn block_discard(file: &File, offset: u64, len: u64) -> io::Result<()> {
    // SAFETY: BLKDISCARD reads a [u64; 2] through the pointer `Setter` passes, valid for
    // the call.
    unsafe { rustix::ioctl::ioctl(file, Setter::<BLKDISCARD, [u64; 2]>::new([offset, len])) }?;
    Ok(())
}

// ----- MMC ioctls -----

/// `struct mmc_ioc_cmd` of `include/uapi/linux/mmc/ioctl.h`: one MMC command passed
/// through to the card. 72 bytes on every ABI (the explicit `pad` keeps `data_ptr` 8-byte
/// aligned on 32-bit userland too).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct MmcIocCmd {
    /// Non-zero = write (bit 31 selects reliable write for RPMB); 0 = read.
    pub write_flag: i32,
    /// Non-zero = an application command (preceded by CMD55).
    pub is_acmd: i32,
    pub opcode: u32,
    pub arg: u32,
    /// The card's response, filled in by the kernel.
    pub response: [u32; 4],
    /// Response and command type (`MMC_RSP_*`, `MMC_CMD_*` of `linux/mmc/core.h`).
    pub flags: u32,
    pub blksz: u32,
    pub blocks: u32,
    pub postsleep_min_us: u32,
    pub postsleep_max_us: u32,
    pub data_timeout_ns: u32,
    pub cmd_timeout_ms: u32,
    pub pad: u32,
    /// The data buffer's address as a u64.
    pub data_ptr: u64,
}

/// `MMC_IOC_CMD` = `_IOWR(MMC_BLOCK_MAJOR = 179, 0, struct mmc_ioc_cmd)` (0xc048b300).
pub(crate) const MMC_IOC_CMD: Opcode = opcode::read_write::<MmcIocCmd>(179, 0);
/// CMD8 on an MMC: SEND_EXT_CSD (an addressed data-transfer command, R1 response).
pub(crate) const MMC_SEND_EXT_CSD: u32 = 8;
/// `MMC_RSP_PRESENT | MMC_RSP_CRC | MMC_RSP_OPCODE` (`MMC_RSP_R1`).
const MMC_RSP_R1: u32 = (1 << 0) | (1 << 2) | (1 << 4);
/// `MMC_RSP_SPI_S1` (`MMC_RSP_SPI_R1`).
const MMC_RSP_SPI_R1: u32 = 1 << 7;
/// `MMC_CMD_ADTC`: addressed command with data transfer.
const MMC_CMD_ADTC: u32 = 1 << 5;

/// The CMD8 (SEND_EXT_CSD) request that reads the 512-byte EXT_CSD register into the
/// buffer at `buf` (as mmc-utils' `extcsd read` sends it).
pub(crate) fn ext_csd_command(buf: &mut [u8; 512]) -> MmcIocCmd {
    MmcIocCmd {
        opcode: MMC_SEND_EXT_CSD,
        arg: 0,
        flags: MMC_RSP_SPI_R1 | MMC_RSP_R1 | MMC_CMD_ADTC,
        blksz: 512,
        blocks: 1,
        data_ptr: buf.as_mut_ptr() as usize as u64,
        ..MmcIocCmd::default()
    }
}

/// Read the EXT_CSD register of the eMMC behind `file` (an opened `/dev/mmcblkN`) with
/// MMC_IOC_CMD. Needs CAP_SYS_RAWIO (root); read-only for the card.
pub(crate) fn mmc_read_ext_csd(file: &File) -> io::Result<[u8; 512]> {
    let mut buf = [0u8; 512];
    let mut cmd = ext_csd_command(&mut buf);
    // SAFETY: MMC_IOC_CMD reads and updates one `mmc_ioc_cmd`, whose layout `MmcIocCmd`
    // mirrors (tested); `data_ptr` points at `buf`, 512 bytes = blksz x blocks, which
    // outlives the call and is not otherwise borrowed while the kernel writes it.
    unsafe { rustix::ioctl::ioctl(file, Updater::<MMC_IOC_CMD, MmcIocCmd>::new(&mut cmd)) }?;
    Ok(buf)
}

// ----- file extent maps (FIEMAP) -----

/// `fe_flags` of a FIEMAP extent (linux/fiemap.h).
pub mod fiemap_flags {
    pub(crate) const LAST: u32 = 0x1;
    pub(crate) const UNKNOWN: u32 = 0x2;
    pub(crate) const DELALLOC: u32 = 0x4;
    pub(crate) const ENCODED: u32 = 0x8;
    pub(crate) const NOT_ALIGNED: u32 = 0x100;
    pub(crate) const DATA_INLINE: u32 = 0x200;
    pub(crate) const DATA_TAIL: u32 = 0x400;
    pub(crate) const UNWRITTEN: u32 = 0x800;
}

/// One extent of a file as `FS_IOC_FIEMAP` reports it: `length` bytes at file offset
/// `logical` live at `physical` on the filesystem's device (unless `flags` say otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileExtent {
    pub logical: u64,
    pub physical: u64,
    pub length: u64,
    pub flags: u32,
}

/// `struct fiemap` without its extent array.
#[repr(C)]
struct FiemapHeader {
    start: u64,
    length: u64,
    flags: u32,
    mapped_extents: u32,
    extent_count: u32,
    reserved: u32,
}

/// `struct fiemap_extent`.
#[repr(C)]
#[derive(Clone, Copy)]
struct FiemapExtent {
    logical: u64,
    physical: u64,
    length: u64,
    reserved64: [u64; 2],
    flags: u32,
    reserved: [u32; 3],
}

const FIEMAP_BATCH: usize = 64;

/// The header followed by room for `FIEMAP_BATCH` extents, as the kernel expects.
#[repr(C)]
struct FiemapRequest {
    header: FiemapHeader,
    extents: [FiemapExtent; FIEMAP_BATCH],
}

/// `FS_IOC_FIEMAP` = `_IOWR('f', 11, struct fiemap)`.
pub(crate) const FS_IOC_FIEMAP: Opcode = opcode::read_write::<FiemapHeader>(b'f', 11);
/// Flush dirty data first, so delayed allocations get their place.
const FIEMAP_FLAG_SYNC: u32 = 0x1;

/// The extents of the first `len` bytes of an open file, in file order, at most `max` of
/// them (a fragmented file is read in batches). Fails as the filesystem does: EOPNOTSUPP
/// where it has no FIEMAP (tmpfs).
pub(crate) fn file_extents(file: impl AsFd, len: u64, max: usize) -> io::Result<Vec<FileExtent>> {
    let zero = FiemapExtent {
        logical: 0,
        physical: 0,
        length: 0,
        reserved64: [0; 2],
        flags: 0,
        reserved: [0; 3],
    };
    let mut out: Vec<FileExtent> = Vec::new();
    let mut next = 0u64;
    while next < len && out.len() < max {
        let mut req = FiemapRequest {
            header: FiemapHeader {
                start: next,
                length: len - next,
                flags: FIEMAP_FLAG_SYNC,
                mapped_extents: 0,
                extent_count: FIEMAP_BATCH as u32,
                reserved: 0,
            },
            extents: [zero; FIEMAP_BATCH],
        };
        // SAFETY: FS_IOC_FIEMAP reads the header and writes at most `extent_count`
        // (FIEMAP_BATCH) extents after it; `req` is a `struct fiemap` with exactly that
        // many `struct fiemap_extent`s, `repr(C)`, valid and exclusively borrowed for the
        // call.
        unsafe {
            rustix::ioctl::ioctl(
                file.as_fd(),
                rustix::ioctl::Updater::<FS_IOC_FIEMAP, FiemapRequest>::new(&mut req),
            )
        }?;
        let mapped = (req.header.mapped_extents as usize).min(FIEMAP_BATCH);
        if mapped == 0 {
            break;
        }
        let mut last = false;
        for e in &req.extents[..mapped] {
            out.push(FileExtent {
                logical: e.logical,
                physical: e.physical,
                length: e.length,
                flags: e.flags,
            });
            last |= e.flags & fiemap_flags::LAST != 0;
        }
        let end = out
            .last()
            .map_or(len, |e| e.logical.saturating_add(e.length));
        if last || end <= next {
            break;
        }
        next = end;
    }
    out.truncate(max);
    Ok(out)
}

// ----- processes, CPUs and clocks -----

/// The executable `program` on `PATH` (a regular file with an execute bit), as a shell
/// would find it; `None` when it is not there. Looked up before spawning, so "not
/// installed" does not depend on how a failed exec is reported (under qemu-user a child
/// whose exec failed can look like one that ran and printed nothing).
pub(crate) fn find_on_path(program: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// This machine's host name (`uname -n`), for the run history; `None` when empty.
pub(crate) fn hostname() -> Option<String> {
    let name = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned();
    (!name.is_empty()).then_some(name)
}

/// The effective user id: the user flashscope acts as.
pub(crate) fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// True when the process runs as root.
pub(crate) fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// CPUs the calling thread may run on now (empty when the kernel does not say).
pub(crate) fn allowed_cpus() -> Vec<usize> {
    match rustix::thread::sched_getaffinity(None) {
        Ok(set) => (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|&c| set.is_set(c))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Pin the calling thread (and the threads it spawns afterwards) to `cpus` (fio's
/// `cpus_allowed`); nothing to do for an empty list.
pub(crate) fn pin_to(cpus: &[usize]) -> io::Result<()> {
    if cpus.is_empty() {
        return Ok(());
    }
    let mut set = rustix::thread::CpuSet::new();
    for &c in cpus {
        if c >= rustix::thread::CpuSet::MAX_CPU {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "CPU {c} is beyond the largest CPU number ({})",
                    rustix::thread::CpuSet::MAX_CPU - 1
                ),
            ));
        }
        set.set(c);
    }
    rustix::thread::sched_setaffinity(None, &set)?;
    Ok(())
}

/// CLOCK_MONOTONIC_RAW in nanoseconds (CLOCK_MONOTONIC where RAW is unavailable); never
/// wall-clock time.
pub fn monotonic_ns() -> u64 {
    use rustix::time::{ClockId, DynamicClockId};
    let ts = rustix::time::clock_gettime_dynamic(DynamicClockId::Known(ClockId::MonotonicRaw))
        .unwrap_or_else(|_| rustix::time::clock_gettime(ClockId::Monotonic));
    (ts.tv_sec as u64).saturating_mul(1_000_000_000) + ts.tv_nsec as u64
}

/// Nanoseconds in which at least one runnable task of this machine waited for a CPU, since
/// boot (`/proc/pressure/cpu`, "some" total); `None` where the kernel has no pressure
/// stall information. The difference over an interval, divided by its length, is the
/// share of that interval the machine was short of CPU: a measurement's own thread, the
/// loop device's and the file system's kernel workers and a served card's server alike.
pub(crate) fn cpu_pressure_some_ns() -> Option<u64> {
    pressure_some_ns(&proc_text("/proc/pressure/cpu", 512)?)
}

/// The "some" total of a pressure file's text, in ns (the file counts µs).
fn pressure_some_ns(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    let us: u64 = line
        .split_whitespace()
        .find_map(|f| f.strip_prefix("total="))?
        .parse()
        .ok()?;
    Some(us.saturating_mul(1000))
}

/// Real-time (SCHED_FIFO) priority for the calling thread, as flashbench takes for its
/// reads: a timed read is then not preempted by ordinary programs. Returns whether the
/// kernel granted it (root or CAP_SYS_NICE); callers run either way. The kernel's
/// real-time throttling still leaves other programs a share of each second.
pub(crate) fn try_realtime(priority: i32) -> bool {
    set_scheduler(libc::SCHED_FIFO, priority)
}

/// Back to the normal scheduler (SCHED_OTHER) for the calling thread.
pub(crate) fn normal_priority() {
    set_scheduler(libc::SCHED_OTHER, 0);
}

fn set_scheduler(policy: libc::c_int, priority: i32) -> bool {
    // musl's sched_param has more fields than glibc's, and musl's sched_setscheduler
    // wrapper always fails with ENOSYS: fill a zeroed struct and make the system call.
    // SAFETY: sched_param is plain old data; zeroed is a valid value.
    let mut param: libc::sched_param = unsafe { std::mem::zeroed() };
    param.sched_priority = priority;
    // SAFETY: `param` is a valid sched_param for the call; pid 0 is the calling thread.
    unsafe { libc::syscall(libc::SYS_sched_setscheduler, 0, policy, &param) == 0 }
}

// ----- signals -----

/// The last stop signal [`record_signals`]' handlers received (0: none).
static RECORDED_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn record(sig: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    RECORDED_SIGNAL.store(sig, Ordering::SeqCst);
}

extern "C" fn record_hangup(sig: libc::c_int) {
    // SAFETY: open, dup2 and close are async-signal-safe; the path is a static C string.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if null >= 0 {
            libc::dup2(null, 1);
            libc::dup2(null, 2);
            libc::close(null);
        }
    }
    RECORDED_SIGNAL.store(sig, Ordering::SeqCst);
}

/// Handle each of `signals` by recording it (read back with [`recorded_signal`]); the
/// handler of SIGHUP also points standard output and error at /dev/null, as the terminal is
/// gone. `reset_after_first`: a second delivery of the same signal takes the default action
/// (SA_RESETHAND). No SA_RESTART, so a blocking sleep returns early. rustix has no safe
/// sigaction, hence libc.
pub(crate) fn record_signals(signals: &[i32], reset_after_first: bool) {
    let flags = if reset_after_first {
        libc::SA_RESETHAND
    } else {
        0
    };
    for &sig in signals {
        if ignored_at_start(sig) {
            continue;
        }
        let handler = if sig == libc::SIGHUP {
            record_hangup as extern "C" fn(libc::c_int) as usize
        } else {
            record as extern "C" fn(libc::c_int) as usize
        };
        // SAFETY: a zeroed sigaction is valid; the handlers only store to an atomic and
        // call async-signal-safe functions; the old action is not needed (null).
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = handler;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = flags;
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// True when `sig` was ignored when this process started (`nohup` ignores SIGHUP; a
/// script's background job ignores SIGINT): such a signal stays ignored, as the one who
/// started flashscope asked. Read once per signal, before the first handler replaces it.
fn ignored_at_start(sig: i32) -> bool {
    use std::sync::atomic::AtomicU8;
    // 0: not read yet, 1: ignored, 2: not ignored. Signal numbers are below 65.
    static AT_START: [AtomicU8; 65] = [const { AtomicU8::new(0) }; 65];
    let Some(slot) = usize::try_from(sig).ok().and_then(|i| AT_START.get(i)) else {
        return false;
    };
    if slot.load(Ordering::SeqCst) == 0 {
        // SAFETY: a zeroed sigaction is valid to be written; a null new action only reads
        // the current one.
        let ignored = unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
        };
        let _ = slot.compare_exchange(
            0,
            if ignored { 1 } else { 2 },
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
    }
    slot.load(Ordering::SeqCst) == 1
}

/// The signal [`record_signals`]' handlers last recorded, if any.
pub(crate) fn recorded_signal() -> Option<i32> {
    match RECORDED_SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// Signals blocked in the calling thread (and in every thread it spawns afterwards), to be
/// taken with [`BlockedSignals::wait`]; dropping it restores the mask from before.
pub(crate) struct BlockedSignals {
    set: libc::sigset_t,
    previous: libc::sigset_t,
}

impl BlockedSignals {
    /// Block `signals` in the calling thread (`pthread_sigmask(SIG_BLOCK)`).
    pub(crate) fn block(signals: &[i32]) -> io::Result<Self> {
        // SAFETY: sigset_t is plain data; the libc calls only write into the sets given.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            let mut previous: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for &sig in signals {
                libc::sigaddset(&mut set, sig);
            }
            let rc = libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut previous);
            if rc != 0 {
                return Err(io::Error::from_raw_os_error(rc));
            }
            Ok(BlockedSignals { set, previous })
        }
    }

    /// Wait up to `timeout` for one of the blocked signals (`sigtimedwait`); the signal
    /// taken, or `None` when none came (or the wait was interrupted).
    pub(crate) fn wait(&self, timeout: std::time::Duration) -> Option<i32> {
        let ts = libc::timespec {
            // time_t is 64-bit on musl and 32-bit on armv7 glibc (libc deprecates naming it).
            tv_sec: timeout.as_secs().try_into().unwrap_or(i32::MAX as _),
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: `self.set` is an initialised sigset; a null siginfo pointer is allowed.
        let sig = unsafe { libc::sigtimedwait(&self.set, std::ptr::null_mut(), &ts) };
        (sig > 0).then_some(sig)
    }
}

impl Drop for BlockedSignals {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `block`.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.previous, std::ptr::null_mut()) };
    }
}

// ----- loop-device ioctls -----

// <linux/loop.h> numbers them plainly (0x4C = 'L'); each is `_IO('L', n)`.
const LOOP_CLR_FD: Opcode = opcode::none(b'L', 0x01);
const LOOP_GET_STATUS64: Opcode = opcode::none(b'L', 0x05);
const LOOP_CONFIGURE: Opcode = opcode::none(b'L', 0x0A);
const LOOP_CTL_GET_FREE: Opcode = opcode::none(b'L', 0x82);

/// `lo_flags`: detach when the last user closes the device.
pub(crate) const LO_FLAGS_AUTOCLEAR: u32 = 4;
/// `lo_flags`: the loop device reads and writes its backing file with direct I/O.
pub(crate) const LO_FLAGS_DIRECT_IO: u32 = 16;

/// `LOOP_CTL_GET_FREE`: no argument; the free device's number is the call's return value,
/// which none of rustix's ready-made patterns returns.
struct GetFree;

// SAFETY: the opcode is LOOP_CTL_GET_FREE, which takes no argument (a null pointer is
// passed) and writes no user memory; the output is the ioctl's non-negative return value.
unsafe impl rustix::ioctl::Ioctl for GetFree {
    type Output = u32;
    const IS_MUTATING: bool = false;
    fn opcode(&self) -> Opcode {
        LOOP_CTL_GET_FREE
    }
    fn as_ptr(&mut self) -> *mut std::ffi::c_void {
        std::ptr::null_mut()
    }
    unsafe fn output_from_ptr(
        out: rustix::ioctl::IoctlOutput,
        _: *mut std::ffi::c_void,
    ) -> rustix::io::Result<u32> {
        Ok(out as u32)
    }
}

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

/// `LOOP_CTL_GET_FREE` on `/dev/loop-control`: the number of a free loop device.
pub(crate) fn loop_get_free(control: &File) -> rustix::io::Result<u32> {
    // SAFETY: GetFree describes LOOP_CTL_GET_FREE exactly (see its impl).
    unsafe { rustix::ioctl::ioctl(control, GetFree) }
}

/// `LOOP_CONFIGURE` on an open loop device: attach `backing` with the logical
/// `block_size`, `lo_flags` and the name shown for it (at most 63 bytes of `name` are kept).
pub(crate) fn loop_configure(
    device: &File,
    backing: &File,
    block_size: u32,
    lo_flags: u32,
    name: &[u8],
) -> rustix::io::Result<()> {
    use std::os::fd::AsRawFd;
    let mut info = LoopInfo64::zeroed();
    info.lo_flags = lo_flags;
    let k = name.len().min(63);
    info.lo_file_name[..k].copy_from_slice(&name[..k]);
    let cfg = LoopConfig {
        fd: backing.as_raw_fd() as u32,
        block_size,
        info,
        reserved: [0; 8],
    };
    // SAFETY: LOOP_CONFIGURE reads one loop_config through the pointer `Setter` passes, to
    // a fully initialised value that outlives the call.
    unsafe { rustix::ioctl::ioctl(device, Setter::<LOOP_CONFIGURE, LoopConfig>::new(cfg)) }
}

/// `LOOP_GET_STATUS64` on an open loop device: its `lo_flags`.
pub(crate) fn loop_flags(device: &File) -> rustix::io::Result<u32> {
    // SAFETY: LOOP_GET_STATUS64 writes one loop_info64 through the pointer `Getter`
    // passes, to memory of that type it provides.
    let info =
        unsafe { rustix::ioctl::ioctl(device, Getter::<LOOP_GET_STATUS64, LoopInfo64>::new()) }?;
    Ok(info.lo_flags)
}

/// `LOOP_CLR_FD` on an open loop device: detach its backing file (the kernel defers it
/// until the device's other users close it).
pub(crate) fn loop_clear(device: &File) -> rustix::io::Result<()> {
    // SAFETY: LOOP_CLR_FD takes no argument.
    unsafe { rustix::ioctl::ioctl(device, rustix::ioctl::NoArg::<LOOP_CLR_FD>::new()) }
}

/// User and system CPU time of the calling thread (`getrusage(RUSAGE_THREAD)`), in ns;
/// `(0, 0)` where the call fails. rustix has no wrapper for getrusage, hence libc.
pub(crate) fn thread_cpu_ns() -> (u64, u64) {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `ru` is valid, writable memory for one rusage for the duration of the call.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, ru.as_mut_ptr()) } != 0 {
        return (0, 0);
    }
    // SAFETY: zeroed memory is a valid rusage (plain integers), filled in on success.
    let ru = unsafe { ru.assume_init() };
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

/// The calling thread's id (`gettid`), as `/proc/self/task` and the kernel's thread names
/// give it.
pub(crate) fn thread_id() -> u32 {
    rustix::thread::gettid().as_raw_nonzero().get() as u32
}

/// CPU time (user + system) the thread `tid` of this process has used, in ns, read from
/// its CPU clock; `None` when no thread of this process has that id (it has exited). The
/// clock id is the one glibc's and musl's `pthread_getcpuclockid` make for a thread id
/// (the kernel's `MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)`); the kernel serves it for
/// the threads of the caller's own process only. rustix names no such clock, hence libc.
pub(crate) fn task_cpu_ns(tid: u32) -> Option<u64> {
    let tid = i32::try_from(tid).ok()?;
    let clock: libc::clockid_t = (!tid << 3) | 6;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is valid, writable memory for one timespec for the duration of the call.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return None;
    }
    Some((ts.tv_sec as u64).saturating_mul(1_000_000_000) + ts.tv_nsec as u64)
}

/// The most threads [`own_threads`] lists: far above what this process runs (a thread per
/// job, io_uring's workers for each, a progress thread), a bound on the directory's read.
const MAX_OWN_THREADS: usize = 1 << 16;

/// The ids of this process's threads (`/proc/self/task`), io_uring's worker threads
/// among them; empty where /proc is not mounted.
pub(crate) fn own_threads() -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    dir.take(MAX_OWN_THREADS)
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// The name (`comm`, at most 15 bytes) of the thread `tid` of this process; `None` when
/// it has exited or /proc is not mounted.
pub(crate) fn own_thread_name(tid: u32) -> Option<String> {
    let text = proc_text(format!("/proc/self/task/{tid}/comm"), 64)?;
    Some(text.trim_end_matches('\n').to_string())
}

/// A /proc or /sys file's text, at most `cap` bytes of it (what is past them is left
/// unread: the callers parse the first lines); `None` when it cannot be read.
pub(crate) fn proc_text(path: impl AsRef<Path>, cap: u64) -> Option<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(cap)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Give the child `cmd` spawns the descriptor `fd` as its descriptor 3, kept across exec.
/// `fd` must stay open until the child is spawned (else the spawn fails with EBADF).
pub(crate) fn pass_as_fd3(cmd: &mut std::process::Command, fd: std::os::fd::RawFd) {
    use std::os::unix::process::CommandExt;
    // SAFETY: dup2 and fcntl are async-signal-safe, as code between fork and exec must be;
    // they give the child `fd` as descriptor 3. dup2 clears close-on-exec on the copy, but
    // dup2(3, 3) does nothing at all: when the descriptor already is 3, its close-on-exec
    // flag is cleared instead.
    unsafe {
        cmd.pre_exec(move || {
            let r = if fd == 3 {
                libc::fcntl(3, libc::F_SETFD, 0)
            } else {
                libc::dup2(fd, 3)
            };
            if r < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// SIGKILL to the process group `pgid` (a child started in its own group); errors (the
/// group is gone) are ignored.
pub(crate) fn kill_process_group(pgid: u32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pgid as i32) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

// ----- memory mappings -----

/// A new anonymous private mapping of `size` bytes (zeroed) aligned to `align` (a power of
/// two, a multiple of the page size), advised MADV_HUGEPAGE; `None` when it cannot be
/// made. The caller owns it and ends it with [`unmap`].
pub(crate) fn map_aligned(size: usize, align: usize) -> Option<std::ptr::NonNull<u8>> {
    // Map `align` bytes more than needed, then cut the unaligned head and the tail.
    let span = size.checked_add(align)?;
    // SAFETY: an anonymous private mapping with no address hint; checked below.
    let raw = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            span,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if raw == libc::MAP_FAILED {
        return None;
    }
    let start = raw as usize;
    let aligned = start.next_multiple_of(align);
    let head = aligned - start;
    let tail = span - head - size;
    // SAFETY: both ranges lie inside the mapping just made and outside [aligned,
    // aligned + size), which is all that is kept.
    unsafe {
        if head > 0 {
            libc::munmap(raw, head);
        }
        if tail > 0 {
            libc::munmap((aligned + size) as *mut libc::c_void, tail);
        }
        // Advice only: a kernel that cannot follow it leaves 4 KiB pages.
        libc::madvise(aligned as *mut libc::c_void, size, libc::MADV_HUGEPAGE);
    }
    std::ptr::NonNull::new(aligned as *mut u8)
}

/// End a mapping made by [`map_aligned`].
///
/// # Safety
/// `[ptr, ptr + size)` is a mapping [`map_aligned`] returned, with its `size`, that is not
/// used afterwards (no reference into it outlives this call).
pub(crate) unsafe fn unmap(ptr: std::ptr::NonNull<u8>, size: usize) {
    // SAFETY: the caller's promise above.
    unsafe { libc::munmap(ptr.as_ptr().cast(), size) };
}

/// Open `file` again with other flags (`O_DIRECT`, `O_SYNC`, read-only, `O_TRUNC`) through
/// its descriptor (`/proc/self/fd/N`): the same file, whatever was done to its name since.
pub(crate) fn reopen(
    file: &std::fs::File,
    opts: &mut std::fs::OpenOptions,
) -> std::io::Result<std::fs::File> {
    use std::os::fd::AsRawFd;
    opts.open(format!("/proc/self/fd/{}", file.as_raw_fd()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_pressure_total_is_read_in_ns() {
        let text = "some avg10=28.31 avg60=8.57 avg300=10.71 total=10593706021\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(pressure_some_ns(text), Some(10_593_706_021_000));
        assert_eq!(pressure_some_ns("full avg10=0.00 total=5\n"), None);
        assert_eq!(pressure_some_ns("some avg10=1 total=x\n"), None);
        assert_eq!(pressure_some_ns(""), None);
        // This kernel's own file, where it has one, parses.
        if std::path::Path::new("/proc/pressure/cpu").exists() {
            assert!(cpu_pressure_some_ns().is_some());
        }
    }

    #[test]
    fn cpu_time_is_counted() {
        let (u0, s0) = thread_cpu_ns();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        std::hint::black_box(x);
        let (u1, s1) = thread_cpu_ns();
        assert!(u1 + s1 >= u0 + s0);
    }

    #[test]
    fn loop_structures_match_the_kernel_abi() {
        assert_eq!(std::mem::size_of::<LoopInfo64>(), 232);
        assert_eq!(std::mem::size_of::<LoopConfig>(), 304);
    }

    // Opcode is u32 with rustix's linux_raw backend, another integer with its libc one.
    #[allow(clippy::unnecessary_cast)]
    #[test]
    fn blkgetsize64_has_the_kernels_number_for_this_pointer_width() {
        let expected = if cfg!(target_pointer_width = "64") {
            0x8008_1272u32
        } else {
            0x8004_1272
        };
        assert_eq!(BLKGETSIZE64 as u32, expected);
        assert_eq!(BLKDISCARD as u32, 0x1277);
    }

    // The layout of `struct mmc_ioc_cmd` (include/uapi/linux/mmc/ioctl.h): no eMMC here,
    // so the command structure is what is tested.
    #[allow(clippy::unnecessary_cast)]
    #[test]
    fn mmc_ioc_cmd_has_the_kernels_layout_and_number() {
        use std::mem::{offset_of, size_of};
        assert_eq!(size_of::<MmcIocCmd>(), 72);
        assert_eq!(offset_of!(MmcIocCmd, write_flag), 0);
        assert_eq!(offset_of!(MmcIocCmd, is_acmd), 4);
        assert_eq!(offset_of!(MmcIocCmd, opcode), 8);
        assert_eq!(offset_of!(MmcIocCmd, arg), 12);
        assert_eq!(offset_of!(MmcIocCmd, response), 16);
        assert_eq!(offset_of!(MmcIocCmd, flags), 32);
        assert_eq!(offset_of!(MmcIocCmd, blksz), 36);
        assert_eq!(offset_of!(MmcIocCmd, blocks), 40);
        assert_eq!(offset_of!(MmcIocCmd, postsleep_min_us), 44);
        assert_eq!(offset_of!(MmcIocCmd, postsleep_max_us), 48);
        assert_eq!(offset_of!(MmcIocCmd, data_timeout_ns), 52);
        assert_eq!(offset_of!(MmcIocCmd, cmd_timeout_ms), 56);
        assert_eq!(offset_of!(MmcIocCmd, pad), 60);
        assert_eq!(offset_of!(MmcIocCmd, data_ptr), 64);
        assert_eq!(MMC_IOC_CMD as u32, 0xc048_b300);
        let mut buf = [0u8; 512];
        let cmd = ext_csd_command(&mut buf);
        assert_eq!((cmd.opcode, cmd.arg, cmd.write_flag), (8, 0, 0));
        // MMC_RSP_SPI_R1 | MMC_RSP_R1 | MMC_CMD_ADTC = 0x80 | 0x15 | 0x20.
        assert_eq!(cmd.flags, 0xb5);
        assert_eq!((cmd.blksz, cmd.blocks), (512, 1));
        assert_eq!(cmd.data_ptr, buf.as_ptr() as usize as u64);
    }

    #[test]
    fn magic_names_and_memory_filesystems() {
        assert_eq!(fs_name(magic::RAMFS), Some("ramfs"));
        assert_eq!(fs_name(magic::F2FS), Some("f2fs"));
        assert_eq!(fs_name(magic::UBIFS), Some("ubifs"));
        assert_eq!(fs_name(0x1234), None);
        assert!(memory_fs(magic::TMPFS) && !memory_fs(magic::EXT4));
    }

    #[test]
    fn statfs_of_a_temp_dir_and_the_room_check() {
        let dir = tempfile::tempdir().unwrap();
        let st = fs_stats(dir.path()).unwrap();
        assert!(st.block_bytes > 0);
        assert_eq!(statfs_magic(dir.path()), Some(st.magic));
        let f = File::open(dir.path()).unwrap();
        assert_eq!(fs_stats_fd(&f).unwrap().magic, st.magic);
        assert!(check_room(dir.path(), None, "x", u64::MAX, 0, "r").is_ok());
        let e = check_room(
            dir.path(),
            Some(10 << 20),
            "this test",
            16 << 20,
            1 << 20,
            "r",
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("free but this test needs 16 MiB"),
            "{e}"
        );
        assert!(check_room(dir.path(), Some(10 << 20), "t", 8 << 20, 1 << 20, "r").is_ok());
    }

    #[test]
    fn cpus_and_clock() {
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty());
        pin_to(&cpus).unwrap();
        assert!(pin_to(&[usize::MAX]).is_err());
        let a = monotonic_ns();
        assert!(monotonic_ns() >= a);
    }

    #[test]
    fn punch_hole_works_beyond_4_gib_and_rejects_impossible_offsets() {
        use std::os::unix::fs::FileExt;
        let dir = tempfile::tempdir().unwrap();
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(dir.path().join("sparse.img"))
            .unwrap();
        let at = (5u64 << 30) + 8192;
        f.set_len(6 << 30).unwrap();
        f.write_all_at(&[0xa5; 8192], at).unwrap();
        match punch_hole(&f, at, 4096) {
            Ok(()) => {
                let mut back = [1u8; 8192];
                f.read_exact_at(&mut back, at).unwrap();
                assert!(back[..4096].iter().all(|&b| b == 0));
                assert!(back[4096..].iter().all(|&b| b == 0xa5));
            }
            // A filesystem without hole punching (e.g. some overlay set-ups) is an
            // answer, not a truncated offset.
            Err(e) => assert_eq!(e.raw_os_error(), Some(libc::EOPNOTSUPP), "{e}"),
        }
        let e = punch_hole(&f, u64::MAX - 10, 4096).unwrap_err();
        assert!(e.to_string().contains("beyond the largest file offset"));
    }

    #[test]
    fn statfs_magic_is_the_unsigned_kernel_constant() {
        // /proc is procfs (0x9fa0) wherever it is mounted; a temp dir gives some magic.
        if let Some(m) = statfs_magic(Path::new("/proc")) {
            assert_eq!(m, 0x9fa0);
        }
        assert!(statfs_magic(std::env::temp_dir().as_path()).is_some());
        assert_eq!(statfs_magic(Path::new("/nonexistent/flashscope")), None);
    }
}
