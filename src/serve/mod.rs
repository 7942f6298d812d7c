//! `sim serve`: the simulated card as a real block device any program can open.
//!
//! The model is served as one file, `MOUNTPOINT/flash.img`, through FUSE (opened with
//! FOPEN_DIRECT_IO so the page cache never answers), optionally behind a loop device with
//! direct I/O. Every read, write, flush and discard goes through the same [`SimDevice`] as
//! `sim:` targets, told the host's queue depth as in-process; the model time each request
//! adds is spent for real, on a real-time copy of the card's timeline (see [`pacer`]),
//! and replies leave ahead by the served path's own round trip ([`measure_lead`]).
//! `MOUNTPOINT/stats` shows the counters and the server's own overhead.
//!
//! Clean-up does not depend on the server exiting cleanly: the loop device is attached
//! with autoclear and held open by the server, and a small watchdog process unmounts the
//! mountpoint if the server dies without saying goodbye (SIGKILL).

pub mod fs;
pub mod histogram;
pub mod loopdev;
pub mod pacer;
pub mod stats;

use crate::backend::sim::{SimConfig, SimDevice};
use crate::platform::mounts::parse_mountinfo;
use crate::{Error, Result};
use fs::{CardFs, Shared, CALIBRATE_BYTES, CALIBRATE_MODEL_NS, CALIBRATE_NAME, IMAGE_NAME};
use loopdev::LoopDevice;
use stats::ServeStats;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What to serve, where, and how.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub cfg: SimConfig,
    pub mountpoint: PathBuf,
    /// Attach a loop device with direct I/O over the served file.
    pub attach_loop: bool,
    /// Pin the server's threads to this CPU.
    pub cpu: Option<usize>,
    /// The last part of each wait that is spun instead of slept.
    pub spin_ns: u64,
    /// Try real-time (SCHED_FIFO) priority for the server's threads.
    pub realtime: bool,
}

/// What is being served, handed to the caller once the card is reachable.
#[derive(Debug, Clone)]
pub(crate) struct Ready {
    pub image: PathBuf,
    pub loop_device: Option<PathBuf>,
    /// Whether the server's threads run with real-time priority.
    pub realtime: bool,
    /// How far ahead of the model's deadline replies leave (the served path's own
    /// round trip, measured before the card was announced).
    pub lead_ns: u64,
}

/// How the server ended and what it did.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    pub stats: ServeStats,
    /// Why it stopped: the signal's name, or "unmounted".
    pub stopped_by: String,
    /// Problems met while cleaning up (the server still exits).
    pub cleanup_warnings: Vec<String>,
}

/// Refuse a mountpoint that does not exist, is not an empty directory, or already has
/// something mounted on it. Returns its canonical path.
pub(crate) fn check_mountpoint(path: &Path, mountinfo: &str) -> Result<PathBuf> {
    let meta = std::fs::metadata(path).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            Error::usage(format!(
                "mountpoint '{}' does not exist: create an empty directory first (mkdir -p {})",
                path.display(),
                path.display()
            ))
        } else if e.raw_os_error() == Some(libc::ENOTCONN) {
            Error::Refused(format!(
                "mountpoint '{}' is a dead FUSE mount (a server that was killed): unmount it with `umount -l {}` first",
                path.display(),
                path.display()
            ))
        } else {
            Error::io(format!("checking mountpoint '{}'", path.display()), e)
        }
    })?;
    if !meta.is_dir() {
        return Err(Error::usage(format!(
            "mountpoint '{}' is not a directory: give an empty directory",
            path.display()
        )));
    }
    let canonical = path
        .canonicalize()
        .map_err(|e| Error::io(format!("resolving '{}'", path.display()), e))?;
    let canonical_text = canonical.to_string_lossy();
    if parse_mountinfo(mountinfo)
        .iter()
        .any(|m| m.mount_point == canonical_text)
    {
        return Err(Error::Refused(format!(
            "mountpoint '{}' is busy: something is already mounted there (another `flashscope sim serve`?); stop it or choose another empty directory",
            canonical.display()
        )));
    }
    let mut entries = std::fs::read_dir(&canonical)
        .map_err(|e| Error::io(format!("reading mountpoint '{}'", canonical.display()), e))?;
    if entries.next().is_some() {
        return Err(Error::usage(format!(
            "mountpoint '{}' is not empty: serving over it would hide its files; give an empty directory",
            canonical.display()
        )));
    }
    Ok(canonical)
}

fn on_path(program: &str) -> bool {
    crate::sys::find_on_path(program).is_some()
}

/// Check that FUSE can be used by this process: /dev/fuse exists and opens, and a
/// non-root user has the fusermount3 helper. `--loop` needs root.
pub(crate) fn check_fuse(attach_loop: bool) -> Result<()> {
    let root = crate::sys::is_root();
    if attach_loop && !root {
        return Err(Error::Refused(
            "--loop needs root: attaching a loop device needs CAP_SYS_ADMIN. Rerun as root, or drop --loop and use MOUNTPOINT/flash.img directly".into(),
        ));
    }
    match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/fuse")
    {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(Error::runtime(
                "FUSE is missing: /dev/fuse does not exist. Load the kernel module (`modprobe fuse`); in a container, pass the device in (e.g. --device /dev/fuse)",
            ))
        }
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            return Err(Error::Refused(format!(
                "no permission to open /dev/fuse ({e}): run as root, or give this user access to /dev/fuse"
            )))
        }
        Err(e) => return Err(Error::io("opening /dev/fuse", e)),
    }
    if !root && !on_path("fusermount3") && !on_path("fusermount") {
        return Err(Error::Refused(
            "mounting FUSE as a normal user needs the fusermount3 helper, which is not installed: install the `fuse3` package, or run as root".into(),
        ));
    }
    Ok(())
}

/// Pin the calling thread (and the threads it spawns afterwards) to one CPU.
fn pin_to_cpu(cpu: usize) -> Result<()> {
    let allowed = crate::sys::allowed_cpus();
    if !allowed.contains(&cpu) {
        let list: Vec<String> = allowed.iter().map(|c| c.to_string()).collect();
        return Err(Error::usage(format!(
            "--cpus {cpu}: this process may only run on CPUs {}",
            list.join(",")
        )));
    }
    crate::sys::pin_to(&[cpu]).map_err(|e| Error::io(format!("pinning to CPU {cpu}"), e))
}

/// The mountpoint as its parent directory, opened when the server starts, and its name
/// there: every unmount goes through the descriptor (`/proc/self/fd/N/NAME`), so whoever
/// controls a directory above it cannot swap in a link to another mount and have root
/// unmount that; the last component is not followed either (`UMOUNT_NOFOLLOW`), and a
/// mounted directory cannot be renamed or replaced.
///
/// Root unmounts with `umount2`; a normal user may not, and unmounts through the setuid
/// `fusermount3` helper, handed the parent as its descriptor 3 (the same command line the
/// watchdog runs, from [`MountAnchor::helper_argv`]).
struct MountAnchor {
    parent: std::fs::File,
    name: std::ffi::OsString,
}

/// The mountpoint as a program started with the anchor's parent as descriptor 3 sees it.
const FD3_DIR: &str = "/proc/self/fd/3";

impl MountAnchor {
    fn open(mountpoint: &Path) -> Result<MountAnchor> {
        let bad = || {
            Error::usage(format!(
                "mountpoint '{}' names no directory",
                mountpoint.display()
            ))
        };
        let name = mountpoint.file_name().ok_or_else(bad)?.to_os_string();
        let parent = mountpoint.parent().ok_or_else(bad)?;
        let parent = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(parent)
            .map_err(|e| Error::io(format!("opening '{}'", parent.display()), e))?;
        Ok(MountAnchor { parent, name })
    }

    /// The mountpoint through the parent's descriptor, as this process sees it.
    fn path(&self) -> PathBuf {
        use std::os::fd::AsRawFd;
        Path::new(&format!("/proc/self/fd/{}", self.parent.as_raw_fd())).join(&self.name)
    }

    /// Unmount the card; `lazy` detaches it even while it is in use. As root by the system
    /// call; where that is not permitted (a normal user's mount), through the helper.
    fn umount(&self, lazy: bool) -> io::Result<()> {
        use rustix::mount::UnmountFlags;
        let flags = if lazy {
            UnmountFlags::DETACH | UnmountFlags::NOFOLLOW
        } else {
            UnmountFlags::NOFOLLOW
        };
        match rustix::mount::unmount(self.path(), flags) {
            Err(rustix::io::Errno::PERM) if !crate::sys::is_root() => self.umount_by_helper(lazy),
            r => r.map_err(io::Error::from),
        }
    }

    /// The command line a normal user unmounts this card with (`fusermount3 -u [-z] --
    /// /proc/self/fd/3/NAME`), for a process given the parent as descriptor 3; `None`
    /// when neither `fusermount3` nor `fusermount` is installed.
    fn helper_argv(&self, lazy: bool) -> Option<Vec<std::ffi::OsString>> {
        let helper = crate::sys::find_on_path("fusermount3")
            .or_else(|| crate::sys::find_on_path("fusermount"))?;
        let mut argv = vec![helper.into_os_string(), "-u".into()];
        if lazy {
            argv.push("-z".into());
        }
        argv.push("--".into());
        argv.push(Path::new(FD3_DIR).join(&self.name).into_os_string());
        Some(argv)
    }

    /// Run [`Self::helper_argv`]; its failure carries the helper's own words, as the
    /// system call's would: "busy" as EBUSY, a card no longer mounted as EINVAL.
    fn umount_by_helper(&self, lazy: bool) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let argv = self.helper_argv(lazy).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "not permitted, and the fusermount3 helper is not installed (package fuse3)",
            )
        })?;
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        crate::sys::pass_as_fd3(&mut cmd, self.parent.as_raw_fd());
        let out = cmd.output()?;
        if out.status.success() {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&out.stderr);
        if said.contains("Device or resource busy") {
            Err(io::Error::from_raw_os_error(libc::EBUSY))
        } else if said.contains("not found in") || said.contains("Invalid argument") {
            Err(io::Error::from_raw_os_error(libc::EINVAL))
        } else {
            Err(io::Error::other(format!(
                "{} -u failed: {}",
                Path::new(&argv[0]).display(),
                crate::input::printable(said.trim())
            )))
        }
    }
}

/// A shell process that lazily unmounts the mountpoint if the server dies without
/// telling it "done" first (its stdin closes when the server's process ends). It holds
/// the mountpoint's parent directory as its descriptor 3 and unmounts through it
/// (`umount --no-canonicalize`, which does not turn the path back into a name).
struct Watchdog {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Watchdog {
    fn spawn(anchor: &MountAnchor) -> io::Result<Self> {
        use std::os::fd::AsRawFd;
        let parent = anchor.parent.as_raw_fd();
        let mut cmd = Command::new("sh");
        // After the mountpoint's name, the helper's command line (none when it is not
        // installed: root's `umount` is then the only way).
        cmd.arg("-c")
            .arg(r#"trap '' INT TERM HUP; read -r word; [ "$word" = done ] || umount -l --no-canonicalize -- "/proc/self/fd/3/$1" || { shift; [ $# -eq 0 ] || "$@"; }"#)
            .arg("flashscope-serve-watchdog")
            .arg(&anchor.name)
            .args(anchor.helper_argv(true).unwrap_or_default())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // The parent directory as descriptor 3, kept across exec.
        crate::sys::pass_as_fd3(&mut cmd, parent);
        let mut child = cmd.spawn()?;
        let stdin = child.stdin.take();
        Ok(Watchdog { child, stdin })
    }

    fn stand_down(mut self) {
        if let Some(mut s) = self.stdin.take() {
            let _ = s.write_all(b"done\n");
        }
        let _ = self.child.wait();
    }
}

fn wait_finished<T>(h: &std::thread::JoinHandle<T>, timeout: Duration) -> bool {
    let t0 = Instant::now();
    while !h.is_finished() {
        if t0.elapsed() > timeout {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// Attach a direct-I/O loop device to the served image. The server keeps no descriptor of
/// its own file open afterwards: if it is killed, the kernel closes its descriptors from
/// the dying server's last thread, and closing a FUSE file there would wait forever for
/// a reply that thread can no longer send.
fn attach_loop(through: &Path, image: &Path, sector: u32) -> Result<LoopDevice> {
    let backing = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(crate::sys::O_DIRECT)
        .open(through)
        .map_err(|e| Error::io(format!("opening {}", image.display()), e))?;
    let dev = LoopDevice::attach_direct(&backing, sector, image)
        .map_err(|e| Error::io(format!("attaching a loop device to {}", image.display()), e))?;
    drop(backing); // the loop device holds its own reference
    Ok(dev)
}

/// Timed reads of the calibration file (after a few untimed ones that warm the path).
const CALIBRATE_READS: usize = 200;
const CALIBRATE_WARMUP: usize = 20;

/// The lead from the overheads of the calibration reads: their lower quartile. Most
/// requests then take the model's time or a little more, few a little less, and a
/// client's mean latency at queue depth one stays within a few per cent of the model's.
fn lead_from(mut overheads: Vec<u64>) -> u64 {
    if overheads.is_empty() {
        return 0;
    }
    overheads.sort_unstable();
    overheads[overheads.len() / 4]
}

/// Measure what the served path adds to a request (the loop driver with `--loop`, FUSE,
/// and the wake-ups of client and server): time 4 KiB direct reads of the calibration
/// file, which the server answers `CALIBRATE_MODEL_NS` after they arrive without
/// touching the card, from a thread that runs as a client would (normal priority, any
/// CPU the process was allowed). The calibration file is reachable only meanwhile, and
/// its loop device is detached again before the card's is attached.
fn measure_lead(
    shared: &Shared,
    anchor: &MountAnchor,
    attach: bool,
    sector: u32,
    cpus: &[usize],
) -> Result<u64> {
    use std::os::unix::fs::FileExt;
    shared.set_calibrating(true);
    let measured = (|| {
        let path = anchor.path().join(CALIBRATE_NAME);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(crate::sys::O_DIRECT)
            .open(&path)
            .map_err(|e| Error::io("opening the calibration file", e))?;
        let device = if attach {
            Some(
                LoopDevice::attach_direct(&file, sector, Path::new(CALIBRATE_NAME))
                    .map_err(|e| Error::io("attaching a loop device to calibrate", e))?,
            )
        } else {
            None
        };
        let reader = match &device {
            Some(d) => std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(crate::sys::O_DIRECT)
                .open(d.path())
                .map_err(|e| Error::io(format!("opening {}", d.path().display()), e))?,
            None => file,
        };
        let overheads = std::thread::scope(|s| {
            s.spawn(|| {
                crate::sys::normal_priority();
                let _ = crate::sys::pin_to(cpus);
                let mut buf = crate::backend::AlignedBuf::new(4096);
                let mut overheads = Vec::with_capacity(CALIBRATE_READS);
                for i in 0..CALIBRATE_WARMUP + CALIBRATE_READS {
                    let offset = (i as u64 * 4096) % CALIBRATE_BYTES;
                    let t0 = crate::backend::monotonic_ns();
                    reader.read_exact_at(&mut buf, offset)?;
                    let took = crate::backend::monotonic_ns().saturating_sub(t0);
                    if i >= CALIBRATE_WARMUP {
                        overheads.push(took.saturating_sub(CALIBRATE_MODEL_NS));
                    }
                }
                Ok::<_, io::Error>(overheads)
            })
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the calibration thread panicked")))
        })
        .map_err(|e| Error::io("timing reads of the calibration file", e))?;
        drop(reader);
        if let Some(d) = device {
            d.detach()
                .map_err(|e| Error::io("detaching the calibration loop device", e))?;
        }
        Ok(lead_from(overheads))
    })();
    shared.set_calibrating(false);
    measured
}

/// Serve the card until SIGINT/SIGTERM/SIGHUP (or an unmount from outside), then detach
/// the loop device, unmount, and return the counters. `ready` is called once the card
/// is reachable (and the loop device attached).
pub(crate) fn serve(opts: &ServeOptions, ready: impl FnOnce(&Ready)) -> Result<Outcome> {
    // The user's own arguments first (a mountpoint that does not exist), then what the
    // machine lacks (FUSE, its helper, root for --loop).
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mountpoint = check_mountpoint(&opts.mountpoint, &mountinfo)?;
    check_fuse(opts.attach_loop)?;
    let anchor = MountAnchor::open(&mountpoint)?;
    let client_cpus = crate::sys::allowed_cpus();
    if let Some(cpu) = opts.cpu {
        pin_to_cpu(cpu)?;
    }
    let realtime = opts.realtime && crate::sys::try_realtime(10);
    // Before any thread exists, so every thread inherits the blocked mask.
    let signals = crate::signals::StopSignals::block()
        .map_err(|e| Error::io("blocking SIGINT/SIGTERM", e))?;

    let shared = Arc::new(Shared::new(SimDevice::new(opts.cfg.clone())));
    let (fs, completer) = CardFs::new(shared.clone(), opts.spin_ns)
        .map_err(|e| Error::io("starting the reply thread", e))?;
    let mut config = fuser::Config::default();
    config.mount_options = vec![
        fuser::MountOption::FSName(format!("flashscope:{}", opts.cfg.preset)),
        fuser::MountOption::Subtype("flashscope".into()),
    ];
    config.n_threads = Some(1);
    // Mounted through the parent's descriptor too: fuser keeps the path it was given and
    // unmounts it when its session ends, and this path always leads to this card.
    let session = fuser::Session::new(fs, anchor.path(), &config).map_err(|e| {
        Error::io(
            format!("mounting the FUSE filesystem on '{}'", mountpoint.display()),
            e,
        )
    })?;
    let watchdog = Watchdog::spawn(&anchor).ok();
    // Never dropped: fuser's session unmounts, when dropped, the canonical path it
    // resolved at mount time, and by then a swapped directory above could lead that path
    // to another mount. The card is unmounted through the anchor below; the session's
    // thread is joined through its public handle, and the rest is left to the process's
    // exit, which closes the FUSE device.
    let background = match session.spawn() {
        Ok(b) => std::mem::ManuallyDrop::new(b),
        Err(e) => {
            let _ = anchor.umount(true);
            return Err(Error::io("starting the FUSE session", e));
        }
    };
    let image = mountpoint.join(IMAGE_NAME);
    let mut cleanup_warnings = Vec::new();

    // Everything below must unmount on the way out, whatever fails.
    let attached: Result<Option<LoopDevice>> = measure_lead(
        &shared,
        &anchor,
        opts.attach_loop,
        opts.cfg.sector,
        &client_cpus,
    )
    .and_then(|lead| {
        shared.set_lead(lead);
        if opts.attach_loop {
            attach_loop(&anchor.path().join(IMAGE_NAME), &image, opts.cfg.sector).map(Some)
        } else {
            Ok(None)
        }
    });

    let stopped_by = match &attached {
        Ok(a) => {
            ready(&Ready {
                image: image.clone(),
                loop_device: a.as_ref().map(|d| d.path().to_path_buf()),
                realtime,
                lead_ns: shared.stats().lead_ns,
            });
            loop {
                if let Some(sig) = signals.wait(Duration::from_millis(200)) {
                    break crate::signals::name(sig).to_string();
                }
                if background.guard.is_finished() {
                    break "unmounted".to_string();
                }
            }
        }
        Err(_) => String::new(),
    };

    let (attach_error, attached) = match attached {
        Ok(a) => (None, a),
        Err(e) => (Some(e), None),
    };
    if let Some(dev) = attached {
        let path = dev.path().display().to_string();
        if let Err(e) = dev.detach() {
            cleanup_warnings.push(format!("{e}"));
        }
        // The kernel finishes the detach asynchronously; wait for it briefly so the
        // caller sees a free device when we return.
        // (Another program may attach the freed device at once: only a backing file of
        // ours counts.)
        let name = path.trim_start_matches("/dev/");
        let backing_attr = format!("/sys/block/{name}/loop/backing_file");
        let ours = || {
            std::fs::read_to_string(&backing_attr)
                .is_ok_and(|b| Path::new(b.trim()).starts_with(&mountpoint))
        };
        let t0 = Instant::now();
        while ours() && t0.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(10));
        }
        if ours() {
            cleanup_warnings.push(format!(
                "{path} is still attached (another program has it open); the kernel detaches it when that program closes it"
            ));
        }
    }
    if let Err(e) = anchor.umount(false) {
        if e.raw_os_error() == Some(libc::EBUSY) {
            cleanup_warnings.push(format!(
                "{} was busy; unmounted lazily (it disappears once the last user closes it)",
                mountpoint.display()
            ));
            if let Err(e) = anchor.umount(true) {
                cleanup_warnings.push(format!("unmounting {}: {e}", mountpoint.display()));
            }
        } else if e.raw_os_error() != Some(libc::EINVAL) {
            cleanup_warnings.push(format!("unmounting {}: {e}", mountpoint.display()));
        }
    }
    if wait_finished(&background.guard, Duration::from_secs(3)) {
        // SAFETY: the handle is moved out of the session once, here, and the session is
        // never dropped or used again (ManuallyDrop), so it is not joined or freed twice.
        let guard = unsafe { std::ptr::read(&background.guard) };
        match guard.join() {
            Ok(Err(e)) => cleanup_warnings.push(format!("FUSE session: {e}")),
            Err(_) => cleanup_warnings.push("FUSE session: its thread panicked".into()),
            Ok(Ok(())) => {}
        }
        let _ = wait_finished(&completer, Duration::from_secs(2));
    }
    if let Some(w) = watchdog {
        w.stand_down();
    }
    drop(signals);
    if let Some(e) = attach_error {
        return Err(e);
    }
    Ok(Outcome {
        stats: shared.stats(),
        stopped_by,
        cleanup_warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountpoint_must_exist_be_an_empty_directory_and_not_be_mounted() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        let e = check_mountpoint(&missing, "").unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        assert_eq!(e.exit_code(), 2);

        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        let e = check_mountpoint(&file, "").unwrap_err();
        assert!(e.to_string().contains("not a directory"), "{e}");

        let full = dir.path().join("full");
        std::fs::create_dir(&full).unwrap();
        std::fs::write(full.join("a"), b"x").unwrap();
        let e = check_mountpoint(&full, "").unwrap_err();
        assert!(e.to_string().contains("not empty"), "{e}");

        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        let canon = check_mountpoint(&empty, "").unwrap();
        let line = format!(
            "99 1 0:55 / {} rw,nosuid,nodev - fuse.flashscope flashscope:sd-16g rw\n",
            canon.display()
        );
        let e = check_mountpoint(&empty, &line).unwrap_err();
        assert!(e.to_string().contains("busy"), "{e}");
    }
}
