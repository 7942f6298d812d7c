//! End-to-end tests of `flashscope sim serve`: the simulated card served through FUSE and
//! a direct-I/O loop device, timed in real time.
//!
//! Tests that mount or attach need root and /dev/fuse (CI has both); elsewhere they print
//! why they are skipped. Every server is wrapped in a guard that, even when the test
//! fails, kills it, detaches its loop device by exact name and unmounts its mountpoint.

#[path = "e2e/common.rs"]
mod common;

use assert_cmd::Command as AssertCommand;
use flashscope::backend::AlignedBuf;
use predicates::prelude::*;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{mpsc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Timing tests must not run beside each other (they share two CPUs).
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

const BIN: &str = env!("CARGO_BIN_EXE_flashscope");

/// A card with a known geometry and no noise: 1 MiB erase blocks, a 300 µs erase-block
/// boundary cost, no page-boundary cost, 100 µs per command, 22 MiB/s reads.
const CARD: &str = "sim:custom,size=256M,erase=1M,page=16K,cmd=100us,read_bw=22M,page_cost=0ns,erase_cost=300us,noise=0,outliers=0";
const CMD_NS: f64 = 100_000.0;
const READ_BW: f64 = 22.0 * 1048576.0;
const ERASE: u64 = 1 << 20;

use common::is_root;

/// Why this machine cannot run the mounting tests, if it cannot.
fn skip_reason() -> Option<String> {
    if !is_root() {
        return Some("not root (serving with --loop needs root; CI runs as root)".into());
    }
    if !Path::new("/dev/fuse").exists() {
        return Some("/dev/fuse is missing (no FUSE in this kernel or container)".into());
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some("/dev/loop-control is missing (no loop driver)".into());
    }
    None
}

macro_rules! require_root_fuse {
    () => {
        if let Some(why) = skip_reason() {
            common::skip(&why);
            return;
        }
    };
}

fn mounted(mountpoint: &Path) -> bool {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let want = mountpoint.to_string_lossy();
    info.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .any(|m| m == want)
}

/// The backing file of a loop device, or None when it is detached.
fn loop_backing(dev: &str) -> Option<String> {
    let name = dev.trim_start_matches("/dev/");
    std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file"))
        .ok()
        .map(|s| s.trim().to_string())
}

/// A running server and everything it set up, torn down by exact name on drop.
struct Server {
    child: Child,
    _stdout: Option<BufReader<ChildStdout>>,
    /// Removed after the cleanup (fields drop after `Drop::drop`).
    _dir: tempfile::TempDir,
    /// The copy of the binary a server run as nobody executes.
    _bin: Option<tempfile::TempDir>,
    mountpoint: PathBuf,
    device: String,
}

impl Server {
    /// Start `sim serve SPEC <tempdir> --loop` and wait for the loop device's path.
    fn start(spec: &str, extra: &[&str]) -> Server {
        let dir = tempfile::tempdir().expect("temp dir");
        let mountpoint = dir.path().join("card");
        std::fs::create_dir(&mountpoint).expect("mountpoint");
        let mountpoint = mountpoint.canonicalize().expect("canonical mountpoint");
        let mut cmd = Command::new(BIN);
        cmd.envs(common::HISTORY_OFF)
            .args(["sim", "serve", spec])
            .arg(&mountpoint)
            .arg("--loop")
            .args(extra);
        let server = Server::launch(cmd, dir, mountpoint);
        assert!(
            server.device.starts_with("/dev/loop"),
            "first stdout line is the loop device, got '{}'",
            server.device
        );
        server
    }

    /// Start `sim serve SPEC <tempdir>` (no loop device) as the user nobody, on a
    /// mountpoint nobody owns, and wait for the served file's path. `None` (after a skip
    /// line) where a normal user cannot serve here.
    fn start_as_nobody(spec: &str) -> Option<Server> {
        use std::os::unix::fs::PermissionsExt;
        if !common::has_tool("fusermount3") {
            common::skip("fusermount3 is not installed (apt-get install fuse3)");
            return None;
        }
        let dir = tempfile::Builder::new()
            .prefix("fs-serve-nobody")
            .tempdir_in("/tmp")
            .expect("temp dir");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let mountpoint = dir.path().join("card");
        std::fs::create_dir(&mountpoint).expect("mountpoint");
        std::os::unix::fs::chown(&mountpoint, Some(65534), Some(65534)).expect("chown");
        let mountpoint = mountpoint.canonicalize().expect("canonical mountpoint");
        let (bin_dir, cmd) =
            common::as_nobody(&["sim", "serve", spec, mountpoint.to_str().unwrap()])?;
        let mut server = Server::launch(cmd, dir, mountpoint);
        server._bin = Some(bin_dir);
        assert_eq!(
            Path::new(&server.device),
            server.image(),
            "first stdout line is the served file"
        );
        Some(server)
    }

    /// Spawn `cmd` (a `sim serve` on `mountpoint`, inside `dir`) and wait for its first
    /// line on stdout, kept in `device`.
    fn launch(mut cmd: Command, dir: tempfile::TempDir, mountpoint: PathBuf) -> Server {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(File::create(dir.path().join("server.log")).expect("server log"))
            .spawn()
            .expect("start flashscope sim serve");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut line = String::new();
            let _ = r.read_line(&mut line);
            let _ = tx.send((line, r));
        });
        let mut server = Server {
            child,
            _stdout: None,
            _dir: dir,
            _bin: None,
            mountpoint,
            device: String::new(),
        };
        match rx.recv_timeout(Duration::from_secs(20)) {
            Ok((line, reader)) => {
                server._stdout = Some(reader);
                server.device = line.trim().to_string();
            }
            Err(_) => panic!("the server did not print what to open within 20 s"),
        }
        server
    }

    fn image(&self) -> PathBuf {
        self.mountpoint.join("flash.img")
    }

    fn stats(&self) -> serde_json::Value {
        let text = std::fs::read_to_string(self.mountpoint.join("stats")).expect("read stats");
        serde_json::from_str(&text).expect("stats is JSON")
    }

    fn signal(&self, sig: libc::c_int) {
        // SAFETY: kill with our own child's pid.
        unsafe { libc::kill(self.child.id() as libc::pid_t, sig) };
    }

    /// Wait for the server to exit; its exit status.
    fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let t0 = Instant::now();
        while t0.elapsed() < timeout {
            if let Ok(Some(st)) = self.child.try_wait() {
                return Some(st);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// True when the loop device is still attached to this server's file.
    fn device_attached(&self) -> bool {
        loop_backing(&self.device)
            .is_some_and(|b| b.starts_with(&*self.mountpoint.to_string_lossy()))
    }

    /// The test's cleanup: kill, detach by exact name, unmount the exact mountpoint.
    /// Bounded in time: a server stuck in its own filesystem has its FUSE connection
    /// aborted (by the connection's exact number) so the test never hangs.
    fn cleanup(&mut self) {
        let connection = fuse_connection(&self.mountpoint);
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            if self.wait_exit(Duration::from_secs(5)).is_none() {
                if let Some(n) = connection {
                    abort_fuse_connection(n);
                }
                let _ = self.wait_exit(Duration::from_secs(5));
            }
        }
        if !self.device.is_empty() && self.device_attached() {
            let _ = Command::new("losetup").args(["-d", &self.device]).status();
        }
        if mounted(&self.mountpoint) {
            let _ = Command::new("umount")
                .arg("-l")
                .arg(&self.mountpoint)
                .stderr(Stdio::null())
                .status();
        }
        // Loop detach completes asynchronously.
        let t0 = Instant::now();
        while self.device_attached() && t0.elapsed() < Duration::from_secs(3) {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The FUSE connection number (the mount's minor device number) of a mountpoint.
fn fuse_connection(mountpoint: &Path) -> Option<u32> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let want = mountpoint.to_string_lossy();
    info.lines().find_map(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        if f.get(4) == Some(&&*want) {
            f.get(2)?.split_once(':')?.1.parse().ok()
        } else {
            None
        }
    })
}

/// Abort one FUSE connection through fusectl (mounting fusectl if needed).
fn abort_fuse_connection(n: u32) {
    let dir = Path::new("/sys/fs/fuse/connections");
    if !dir.join(n.to_string()).exists() {
        let _ = Command::new("mount")
            .args(["-t", "fusectl", "none"])
            .arg(dir)
            .stderr(Stdio::null())
            .status();
    }
    let _ = std::fs::write(dir.join(n.to_string()).join("abort"), "1");
}

impl Drop for Server {
    fn drop(&mut self) {
        self.cleanup();
        // The server's own lines ("serving …", "stopped by SIGTERM", its overhead) go
        // through the test harness's capture: shown when the test fails, quiet when green.
        if let Ok(log) = std::fs::read_to_string(self._dir.path().join("server.log")) {
            if !log.is_empty() {
                eprint!("--- sim serve's stderr ({}):\n{log}", self.device);
            }
        }
    }
}

/// Wall time of one 1 KiB O_DIRECT read at `offset`, in ns.
fn read_ns(dev: &File, buf: &mut AlignedBuf, offset: u64) -> f64 {
    let t0 = Instant::now();
    dev.read_exact_at(buf, offset).expect("O_DIRECT read");
    t0.elapsed().as_nanos() as f64
}

fn open_direct(path: &str, write: bool) -> File {
    OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .expect("open the loop device with O_DIRECT")
}

#[test]
fn the_loop_device_shows_the_erase_block_boundary_in_real_time() {
    require_root_fuse!();
    let _s = serial();
    let server = Server::start(CARD, &[]);
    let name = server.device.trim_start_matches("/dev/");
    let dio = std::fs::read_to_string(format!("/sys/block/{name}/loop/dio")).unwrap_or_default();
    assert_eq!(dio.trim(), "1", "the loop device must use direct I/O");

    let dev = open_direct(&server.device, false);
    let model_inside = CMD_NS + 1024.0 * 1e9 / READ_BW;
    realtime_for_this_thread();
    let mut failures = Vec::new();
    for attempt in 1..=ATTEMPTS {
        let m = boundary_medians(&dev);
        eprintln!(
            "attempt {attempt}: 1 KiB reads: beside {:.1} µs (model {:.1} µs, overhead {:.1} µs), across an erase-block boundary {:.1} µs, across a half-block point {:.1} µs",
            m.beside / 1e3,
            model_inside / 1e3,
            (m.beside - model_inside) / 1e3,
            m.across / 1e3,
            m.half / 1e3
        );
        // Replies leave the measured transport time (the lead) ahead of the model's
        // deadline, so a client sees about the model's time; no way back is faster than
        // nothing, so a read never beats the model by more than the lead, whatever the
        // load.
        let lead = server.stats()["lead_ns"].as_f64().expect("lead_ns");
        assert!(
            m.beside >= model_inside - lead,
            "a read beat the model by more than the lead ({lead} ns): {m:?}"
        );
        // The boundary step is the model's 300 µs, spent for real; half an erase block
        // is not a boundary (the geometry is 1 MiB); the overhead is bounded.
        let step = m.across - m.beside;
        let half_step = m.half - m.beside;
        let mut why = Vec::new();
        if (step - 300_000.0).abs() >= 60_000.0 {
            why.push(format!("boundary step {:.1} µs, model 300 µs", step / 1e3));
        }
        if half_step.abs() >= 60_000.0 {
            why.push(format!(
                "half-block step {:.1} µs, model 0",
                half_step / 1e3
            ));
        }
        if m.beside >= model_inside + 1_000_000.0 {
            why.push(format!("overhead above 1 ms: {:.1} µs", m.beside / 1e3));
        }
        if why.is_empty() {
            let stats = server.stats();
            assert!(stats["reads"].as_u64().unwrap_or(0) >= 288, "{stats}");
            return;
        }
        failures.push(why.join("; "));
    }
    panic!("timing off in every attempt: {failures:?}");
}

/// Busy machines only ever add time: a timing test measures again (up to this many times)
/// before it fails, and says so on stderr.
const ATTEMPTS: usize = 3;

/// Run the calling test thread (and the programs it starts) with real-time priority, so
/// other programs on the machine do not delay the measuring client. Below the server's
/// own priority (10), so the client never delays the server's replies. Best effort.
fn realtime_for_this_thread() {
    // A zeroed struct and the raw system call: musl's sched_param has more fields, and
    // its sched_setscheduler wrapper always fails.
    // SAFETY: sched_param is plain old data; zeroed is a valid value.
    let mut param: libc::sched_param = unsafe { std::mem::zeroed() };
    param.sched_priority = 5;
    // SAFETY: `param` is a valid sched_param for the call; pid 0 is the calling thread.
    let rc = unsafe { libc::syscall(libc::SYS_sched_setscheduler, 0, libc::SCHED_FIFO, &param) };
    if rc != 0 {
        eprintln!("note: no real-time priority for the measuring thread");
    }
}

#[derive(Debug)]
struct BoundaryMedians {
    across: f64,
    beside: f64,
    half: f64,
}

/// Read 1 KiB across, beside and half-way between erase-block boundaries of 32 blocks.
/// The three kinds are interleaved so drifting load affects them alike; each offset keeps
/// the fastest of three tries (access-time probes take the minimum), then the median
/// over the blocks.
fn boundary_medians(dev: &File) -> BoundaryMedians {
    let mut buf = AlignedBuf::new(1024);
    let (mut across, mut beside, mut half) = (Vec::new(), Vec::new(), Vec::new());
    for k in 8..40u64 {
        let offsets = [
            k * ERASE - 512,
            k * ERASE + 65536,
            k * ERASE + ERASE / 2 - 512,
        ];
        let mut best = [f64::MAX; 3];
        for _ in 0..3 {
            for (i, off) in offsets.into_iter().enumerate() {
                best[i] = best[i].min(read_ns(dev, &mut buf, off));
            }
        }
        across.push(best[0]);
        beside.push(best[1]);
        half.push(best[2]);
    }
    let med = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    BoundaryMedians {
        across: med(across),
        beside: med(beside),
        half: med(half),
    }
}

/// `flashscope align` on the loop device (the real sync backend, O_DIRECT) must infer the
/// served card's erase block. A 300 µs boundary cost must be found confidently; a 30 µs
/// one is reported, and must never be confidently wrong (on a machine whose CPUs other
/// programs keep busy, the kernel's own latency can drown a 30 µs step).
#[test]
fn align_on_the_loop_device_infers_the_served_erase_block() {
    require_root_fuse!();
    let _s = serial();
    realtime_for_this_thread();
    for (spec, erase, required) in [
        (
            "sim:custom,size=256M,erase=1M,page=16K,cmd=100us,page_cost=80us,erase_cost=300us,noise=0,outliers=0",
            1u64 << 20,
            true,
        ),
        (
            "sim:custom,size=256M,erase=4M,page=16K,cmd=100us,page_cost=0ns,erase_cost=30us,noise=0,outliers=0",
            4 << 20,
            false,
        ),
    ] {
        let server = Server::start(spec, &[]);
        let mut seen = Vec::new();
        for attempt in 1..=ATTEMPTS {
            // First the adaptive default; then more repetitions if it stayed unsure.
            let count: &[&str] = if attempt == 1 { &[] } else { &["--count", "8"] };
            let out = AssertCommand::new(BIN)
            .envs(common::HISTORY_OFF)
                .args(["align", &server.device, "--blocksize", "1K", "--json"])
                .args(count)
                .timeout(Duration::from_secs(60))
                .assert()
                .success()
                .get_output()
                .stdout
                .clone();
            let v: serde_json::Value = serde_json::from_slice(&out).expect("align JSON");
            assert_eq!(v["target"]["kind"], "block", "{}", v["target"]);
            assert_eq!(v["target"]["direct_io"], true);
            assert_eq!(v["bytes_written"], 0, "align is read-only");
            let inf = v["inferences"]["erase_block_bytes"].clone();
            eprintln!("attempt {attempt}: align on {} for {spec}: {inf}", server.device);
            // A confident answer must be right, on every attempt.
            if inf["status"] == "confident" {
                assert_eq!(inf["value"].as_u64(), Some(erase), "confidently wrong: {inf}");
                break;
            }
            seen.push(inf);
        }
        if required {
            assert!(seen.len() < ATTEMPTS, "align was never confident: {seen:?}");
        } else if seen.len() == ATTEMPTS {
            eprintln!("note: the 30 µs boundary stayed inconclusive on this (busy) machine");
        }
        assert_eq!(server.stats()["writes"], 0, "nothing was written to the card");
    }
}

#[test]
fn fio_at_queue_depth_32_gets_the_iops_the_model_predicts() {
    require_root_fuse!();
    if Command::new("fio").arg("--version").output().is_err() {
        common::skip("fio is not installed (apt-get install fio; .ci/run installs it)");
        return;
    }
    let _s = serial();
    let server = Server::start(CARD, &[]);
    let out = Command::new("fio")
        .args([
            "--name=qd32",
            "--direct=1",
            "--rw=randread",
            "--bs=4k",
            "--iodepth=32",
            "--ioengine=libaio",
            "--runtime=2",
            "--time_based",
            "--randrepeat=1",
            "--output-format=json",
        ])
        .arg(format!("--filename={}", server.device))
        .output()
        .expect("run fio");
    assert!(
        out.status.success(),
        "fio failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("fio JSON");
    let iops = v["jobs"][0]["read"]["iops"]
        .as_f64()
        .expect("fio read iops");
    let ios = v["jobs"][0]["read"]["total_ios"].as_u64().unwrap_or(0);
    // The card serves one command at a time: 4 KiB aligned reads cross no boundary.
    let model_ns = CMD_NS + 4096.0 * 1e9 / READ_BW;
    let predicted = 1e9 / model_ns;
    let stats = server.stats();
    eprintln!(
        "fio randread 4k QD32: {iops:.0} IOPS, model {predicted:.0} IOPS ({:.1}%); server late p50 {} ns p99 {} ns",
        100.0 * iops / predicted,
        stats["late_ns"]["p50_ns"],
        stats["late_ns"]["p99_ns"]
    );
    assert!(
        (iops - predicted).abs() <= 0.2 * predicted,
        "fio {iops:.0} IOPS vs model {predicted:.0}"
    );
    assert!(stats["reads"].as_u64().unwrap_or(0) >= ios, "{stats}");
    // The model time the server added is exactly the model's per-request time.
    let per_read =
        stats["model_ns"].as_f64().unwrap_or(0.0) / stats["reads"].as_f64().unwrap_or(1.0);
    assert!(
        (per_read - model_ns).abs() < 1_000.0,
        "{per_read} ns per read"
    );
}

/// fio's random 4 KiB read IOPS on `dev` at queue depth `qd` (libaio, direct).
/// fio's random 4 KiB read IOPS and median completion latency (ns) on `dev`.
fn fio_randread(dev: &str, qd: u32, secs: u32) -> (f64, f64) {
    let out = Command::new("fio")
        .args([
            "--name=qd",
            "--direct=1",
            "--rw=randread",
            "--bs=4k",
            "--ioengine=libaio",
            "--time_based",
            "--randrepeat=1",
            "--output-format=json",
        ])
        .arg(format!("--iodepth={qd}"))
        .arg(format!("--runtime={secs}"))
        .arg(format!("--filename={dev}"))
        .output()
        .expect("run fio");
    assert!(
        out.status.success(),
        "fio failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("fio JSON");
    read_iops_and_median(&v, "fio")
}

/// IOPS and median completion latency of the first job's reads in a fio-format document
/// (fio's own, or `flashscope io --json`'s).
fn read_iops_and_median(v: &serde_json::Value, what: &str) -> (f64, f64) {
    let read = &v["jobs"][0]["read"];
    (
        read["iops"]
            .as_f64()
            .unwrap_or_else(|| panic!("{what} read iops")),
        read["clat_ns"]["percentile"]["50.000000"]
            .as_f64()
            .unwrap_or_else(|| panic!("{what} read median latency")),
    )
}

/// `flashscope io`'s random 4 KiB read IOPS and median latency in-process on `spec` (the
/// model's own figures).
fn in_process_randread(spec: &str, qd: u32) -> (f64, f64) {
    let out = common::bin()
        .args([
            "io",
            spec,
            "--rw",
            "randread",
            "--runtime",
            "3",
            "--time-based",
        ])
        .args(["--iodepth", &qd.to_string(), "--json"])
        .output()
        .expect("run flashscope io");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("io JSON");
    read_iops_and_median(&v, "io")
}

/// Issue 45 point 5: a served card keeps the model's queue depth. The A2 preset's command
/// queue overlaps command time when requests are outstanding, so in-process QD32 does
/// about 1.7 times QD1; served through the loop device, fio at QD32 lands within 10 % of
/// the in-process IOPS and fio at QD1 within 10 % of the in-process median latency (a few
/// seconds each). Before, the served card did its QD1 figure at QD32, and the path's own
/// round trip came on top at QD1.
///
/// QD1's *mean* (its IOPS) is held to 10 % only while the hypervisor steals at most 5 %
/// of the CPUs during the runs: a stolen virtual CPU stalls the way through the loop
/// driver and FUSE for milliseconds, and on a VM whose host ran other guests fio's QD1
/// saw its median at the model's 293 µs and its mean at 475-540 µs (2026-11-28, 13-18 %
/// stolen while serving, 1 % while idle). No lead makes up for a stall without making
/// every other request faster than the card.
#[test]
fn fio_at_queue_depth_1_and_32_on_the_served_a2_card_matches_the_in_process_model() {
    require_root_fuse!();
    if !common::has_tool("fio") {
        common::skip("fio is not installed (apt-get install fio; .ci/run installs it)");
        return;
    }
    let spec = "sim:sd-a2-64g";
    let (qd1, qd32) = (in_process_randread(spec, 1), in_process_randread(spec, 32));
    assert!(
        qd32.0 > 1.5 * qd1.0,
        "the model's own queue gain is the premise: {qd1:?} {qd32:?}"
    );
    let _s = serial();
    let mut quiet = Quietness::default();
    quiet.measure("before fio");
    let server = Server::start(spec, &[]);
    let mut failures = Vec::new();
    for attempt in 1..=ATTEMPTS {
        let before = cpu_ticks();
        let served = [
            fio_randread(&server.device, 1, 3),
            fio_randread(&server.device, 32, 3),
        ];
        let stolen = before
            .zip(cpu_ticks())
            .map_or(0.0, |(a, b)| busy_between(a, b).1);
        let stats = server.stats();
        let pct = |s: f64, m: f64| 100.0 * (s / m - 1.0);
        eprintln!(
            "attempt {attempt}: fio randread 4 KiB on served {spec}: QD1 {:.0} IOPS (in-process {:.0}, {:+.1} %), median {:.0} µs (in-process {:.0}, {:+.1} %), QD32 {:.0} IOPS (in-process {:.0}, {:+.1} %); {:.0} % of the CPUs stolen meanwhile; lead {} ns, late p99 {} ns",
            served[0].0,
            qd1.0,
            pct(served[0].0, qd1.0),
            served[0].1 / 1e3,
            qd1.1 / 1e3,
            pct(served[0].1, qd1.1),
            served[1].0,
            qd32.0,
            pct(served[1].0, qd32.0),
            100.0 * stolen,
            stats["lead_ns"],
            stats["late_ns"]["p99_ns"],
        );
        // Always: never more than 10 % faster than the model (load only slows).
        for (what, s, m) in [
            ("QD1 IOPS", served[0].0, qd1.0),
            ("QD32 IOPS", served[1].0, qd32.0),
            ("QD1 median latency", qd1.1, served[0].1),
        ] {
            assert!(
                s <= 1.10 * m,
                "{what}: served beat the model: {s:.0} vs {m:.0}"
            );
        }
        let mut checks = vec![
            ("QD1 median latency (ns)", served[0].1, qd1.1),
            ("QD32 IOPS", served[1].0, qd32.0),
        ];
        if stolen <= 0.05 {
            checks.push(("QD1 IOPS", served[0].0, qd1.0));
        } else {
            eprintln!(
                "QD1 IOPS not held to the model in attempt {attempt}: the hypervisor stole {:.0} % of the CPUs meanwhile",
                100.0 * stolen
            );
        }
        let off: Vec<String> = checks
            .iter()
            .filter(|(_, s, m)| (s - m).abs() > 0.10 * m)
            .map(|(what, s, m)| format!("{what}: {s:.0} vs {m:.0}"))
            .collect();
        if off.is_empty() {
            return;
        }
        failures.push(off.join(", "));
    }
    quiet.measure("after fio");
    quiet.assert_power(
        "served figures within 10 % of the model",
        false,
        &format!("off in every attempt: {failures:?}"),
    );
}

#[test]
fn writes_round_trip_and_discard_reaches_the_model_as_an_erase() {
    require_root_fuse!();
    let _s = serial();
    let server = Server::start(CARD, &[]);
    let dev = open_direct(&server.device, true);
    let mut pattern = AlignedBuf::new(64 * 1024);
    for (i, b) in pattern.iter_mut().enumerate() {
        *b = (i % 251) as u8 + 1;
    }
    dev.write_all_at(&pattern, 3 * ERASE).expect("write");
    let mut back = AlignedBuf::new(64 * 1024);
    dev.read_exact_at(&mut back, 3 * ERASE).expect("read back");
    assert!(
        back[..] == pattern[..],
        "data written through the loop device reads back"
    );
    // The FUSE file is the same card, at the announced size.
    let size = std::fs::metadata(server.image())
        .map(|m| m.len())
        .unwrap_or(0);
    assert_eq!(size, 256 << 20, "flash.img has the announced size");
    let img = open_direct(&server.image().to_string_lossy(), false);
    let mut via_file = AlignedBuf::new(4096);
    img.read_exact_at(&mut via_file, 3 * ERASE)
        .expect("read flash.img");
    assert!(
        via_file[..] == pattern[..4096],
        "flash.img shows the data written through loop"
    );

    let st = Command::new("blkdiscard")
        .args(["-o", &(3 * ERASE).to_string(), "-l", &ERASE.to_string()])
        .arg(&server.device)
        .status()
        .expect("run blkdiscard");
    assert!(st.success(), "blkdiscard on the loop device");
    dev.read_exact_at(&mut back, 3 * ERASE)
        .expect("read after discard");
    assert!(
        back.iter().all(|&b| b == 0),
        "discarded data reads back erased"
    );
    let stats = server.stats();
    assert!(stats["discards"].as_u64().unwrap_or(0) >= 1, "{stats}");
    assert!(
        stats["bytes_written"].as_u64().unwrap_or(0) >= 64 * 1024,
        "{stats}"
    );
}

/// Issue 45 point 2: `verify --write` (preserve mode) on a served card with a bad area.
/// The finding about the card comes first: FAILED at the flipped bytes (exit 3), as
/// `--destructive` says, and the bytes the restore could not put back are part of it,
/// named by offset in the text and in the document, never a bare "restoring failed".
#[test]
fn verify_write_on_a_served_card_with_a_bad_area_reports_the_card_and_the_bytes_not_put_back() {
    require_root_fuse!();
    let _s = serial();
    let server = Server::start("sim:custom,size=256M,fault=flip@100M+512", &[]);
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("verify.fsjournal");
    let run = |json: bool| {
        let mut cmd = AssertCommand::new(BIN);
        cmd.envs(common::HISTORY_OFF)
            .args(["verify", &server.device, "--write", "--range", "96M+8M"])
            .arg("--journal")
            .arg(&journal);
        if json {
            cmd.arg("--json");
        }
        cmd.output().expect("run verify")
    };
    let out = run(true);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(!err.contains("restoring failed"), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["inferences"]["first_bad_offset"]["value"], 104857600u64);
    let unrestored = &doc["preserve"]["unrestored"];
    assert_eq!(
        unrestored,
        &serde_json::json!([{ "offset": 104857600u64, "length": 512 }]),
        "{doc}"
    );
    assert_eq!(doc["preserve"]["journal_removed"], false);
    let check = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "verify.restore")
        .unwrap_or_else(|| panic!("a check for the restore: {}", doc["checks"]));
    assert_eq!(check["passed"], false);
    // The journal stays (the only record of what those bytes held); it is removed here
    // so the text run below is not refused for it.
    assert!(journal.exists());
    std::fs::remove_file(&journal).unwrap();

    let out = run(false);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(3), "{text}{err}");
    assert!(text.starts_with("FAILED: 512 B in 1 extents"), "{text}");
    assert!(text.contains("104857600"), "{text}");
    assert!(text.contains("not put back"), "{text}");
}

#[test]
fn sigterm_detaches_the_loop_device_and_unmounts() {
    require_root_fuse!();
    let _s = serial();
    let mut server = Server::start(CARD, &[]);
    assert!(server.device_attached() && mounted(&server.mountpoint));
    server.signal(libc::SIGTERM);
    let status = server.wait_exit(Duration::from_secs(15));
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(0),
        "clean exit on SIGTERM"
    );
    // Checked before the guard's own cleanup runs.
    assert!(!mounted(&server.mountpoint), "still mounted after SIGTERM");
    assert!(
        !server.device_attached(),
        "{} still attached",
        server.device
    );
}

/// Issue 44 point 5: a normal user's server (no loop device, mounted through fusermount3)
/// stopped with SIGINT or SIGTERM unmounts its card and exits 0, as docs/serve.md says;
/// `umount2` is root's only, so it unmounts through the helper as its watchdog does.
#[test]
fn a_normal_users_server_unmounts_on_sigint_and_sigterm() {
    require_root_fuse!();
    let _s = serial();
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let Some(mut server) = Server::start_as_nobody("sim:sd-16g") else {
            return;
        };
        assert!(mounted(&server.mountpoint), "mounted before the signal");
        server.signal(sig);
        let status = server.wait_exit(Duration::from_secs(15));
        let log = std::fs::read_to_string(server._dir.path().join("server.log")).unwrap();
        assert_eq!(
            status.and_then(|s| s.code()),
            Some(0),
            "signal {sig}: clean exit\n{log}"
        );
        // Checked before the guard's own cleanup runs.
        assert!(
            !mounted(&server.mountpoint),
            "signal {sig}: still mounted\n{log}"
        );
        assert!(!log.contains("warning"), "signal {sig}: {log}");
    }
}

#[test]
fn sigkill_leaves_no_loop_device_or_mount_after_cleanup() {
    require_root_fuse!();
    let _s = serial();
    let mut server = Server::start(CARD, &[]);
    let (device, mountpoint) = (server.device.clone(), server.mountpoint.clone());
    server.signal(libc::SIGKILL);
    assert!(server.wait_exit(Duration::from_secs(10)).is_some());
    // The server's own safety nets clean up by themselves: the loop device was attached
    // with autoclear and only the server held it open; the watchdog unmounts lazily.
    let t0 = Instant::now();
    while (server.device_attached() || mounted(&mountpoint))
        && t0.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let (attached, still_mounted) = (server.device_attached(), mounted(&mountpoint));
    eprintln!(
        "after SIGKILL, before the test's cleanup: loop attached {attached}, mounted {still_mounted}"
    );
    // The test's cleanup runs regardless (and is what the issue asks to check) ...
    server.cleanup();
    assert!(
        !mounted(&mountpoint),
        "{} still mounted",
        mountpoint.display()
    );
    assert!(
        !loop_backing(&device).is_some_and(|b| b.starts_with(&*mountpoint.to_string_lossy())),
        "{device} still attached to the dead server's file"
    );
    // ... and the safety nets must have done it on their own.
    assert!(!attached, "autoclear did not detach {device} after SIGKILL");
    assert!(!still_mounted, "the watchdog did not unmount after SIGKILL");
}

#[test]
fn a_busy_mountpoint_is_refused() {
    require_root_fuse!();
    let _s = serial();
    let server = Server::start(CARD, &[]);
    AssertCommand::new(BIN)
        .envs(common::HISTORY_OFF)
        .args(["sim", "serve", "sim:sd-16g"])
        .arg(&server.mountpoint)
        .timeout(Duration::from_secs(20))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("busy"));
    let other = tempfile::tempdir().unwrap();
    AssertCommand::new(BIN)
        .envs(common::HISTORY_OFF)
        .args(["sim", "serve", "sim:sd-16g"])
        .arg(other.path())
        .args(["--cpus", "4096"])
        .timeout(Duration::from_secs(20))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--cpus '4096'"));
    assert!(!mounted(&other.path().canonicalize().unwrap()));
}

#[test]
fn bad_input_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    AssertCommand::new(BIN)
        .envs(common::HISTORY_OFF)
        .args(["sim", "serve", "sim:sd-16g"])
        .arg(&missing)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("does not exist"));

    let full = dir.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("keep"), b"x").unwrap();
    if is_root() && Path::new("/dev/fuse").exists() {
        AssertCommand::new(BIN)
            .envs(common::HISTORY_OFF)
            .args(["sim", "serve", "sim:sd-16g"])
            .arg(&full)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("not empty"));
    }

    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    AssertCommand::new(BIN)
        .envs(common::HISTORY_OFF)
        .args(["sim", "serve", "sim:no-such-card"])
        .arg(&empty)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown simulator preset"));
    AssertCommand::new(BIN)
        .envs(common::HISTORY_OFF)
        .args(["sim", "serve", "/dev/sda"])
        .arg(&empty)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a simulated card"));
    assert!(!mounted(&empty.canonicalize().unwrap()));
}

#[test]
fn loop_without_root_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mp = dir.path().join("card");
    std::fs::create_dir(&mp).unwrap();
    let mp = mp.to_str().unwrap();
    let Some((_bin, mut cmd)) = common::as_nobody(&["sim", "serve", "sim:sd-16g", mp, "--loop"])
    else {
        return;
    };
    let out = cmd.output().expect("run setpriv");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--loop needs root"), "{err}");

    // Without --loop a normal user still needs access to /dev/fuse and, to mount, the
    // fusermount3 helper: whichever is missing is named.
    let Some((_bin, mut cmd)) = common::as_nobody(&["sim", "serve", "sim:sd-16g", mp]) else {
        return;
    };
    let out = cmd.output().expect("run setpriv");
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(2) {
        assert!(
            err.contains("/dev/fuse") || err.contains("fusermount3"),
            "{err}"
        );
    } else {
        eprintln!("an unprivileged user may mount FUSE here: {err}");
    }
}

/// The set-up of a suite that measures quiet and beside a CPU hog: root, FUSE and taskset
/// (else one skip line and `None`), the timing lock, and the server's arguments: on CPU 1
/// (as docs/serve.md runs it) when there are two, leaving CPU 0 to the measurement and
/// the hog.
fn beside_a_hog() -> Option<(MutexGuard<'static, ()>, &'static [&'static str])> {
    if let Some(why) = skip_reason() {
        common::skip(&why);
        return None;
    }
    if !common::has_tool("taskset") {
        common::skip("taskset is not installed (util-linux)");
        return None;
    }
    let guard = serial();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    Some((guard, if cpus >= 2 { &["--cpus", "1"] } else { &[] }))
}

/// The whole machine's CPU time from /proc/stat: (total, busy, stolen) in ticks.
fn cpu_ticks() -> Option<(u64, u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let f: Vec<u64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal
    let total: u64 = f.iter().take(8).sum();
    let idle = f.get(3)? + f.get(4)?;
    Some((total, total - idle, *f.get(7)?))
}

/// The share of all CPUs' time spent busy (steal included) and stolen between two
/// [`cpu_ticks`] samples.
fn busy_between(a: (u64, u64, u64), b: (u64, u64, u64)) -> (f64, f64) {
    let total = b.0.saturating_sub(a.0).max(1) as f64;
    (
        b.1.saturating_sub(a.1) as f64 / total,
        b.2.saturating_sub(a.2) as f64 / total,
    )
}

/// How busy the machine is with other programs' work over `window` while this test waits:
/// the share of all CPUs' time spent busy (steal included) and stolen, from /proc/stat.
fn others_busy(window: Duration) -> Option<(f64, f64)> {
    let a = cpu_ticks()?;
    std::thread::sleep(window);
    Some(busy_between(a, cpu_ticks()?))
}

/// Whether the machine is quiet enough for a real-time suite's power assertions
/// (detections, speed), measured before and after it: `None` when quiet, else why not.
/// Other programs keeping more than a quarter of the CPUs busy, or a hypervisor stealing
/// more than 5 %, drown timing differences the suites must find on a quiet machine; what
/// must always hold (nothing confidently wrong, honest intervals) is asserted either way.
#[derive(Default)]
struct Quietness {
    busy: Vec<String>,
}

impl Quietness {
    fn measure(&mut self, when: &str) {
        let Some((busy, steal)) = others_busy(Duration::from_secs(1)) else {
            return;
        };
        if busy > 0.25 || steal > 0.05 {
            self.busy.push(format!(
                "{when}: other programs kept {:.0} % of the CPUs busy ({:.0} % stolen)",
                100.0 * busy,
                100.0 * steal
            ));
        }
    }

    /// Assert `power` where the machine was quiet; elsewhere say in a skip line that it
    /// was not asserted and why (under FLASHSCOPE_NO_SKIP, as in CI, whose machine is
    /// quiet, that is a failure).
    fn assert_power(&self, what: &str, power: bool, detail: &str) {
        if self.busy.is_empty() {
            assert!(power, "{what}: {detail}");
        } else if !power {
            common::skip(&format!(
                "{what} not asserted, the machine was busy ({}): {detail}",
                self.busy.join("; ")
            ));
        }
    }
}

/// A CPU hog pinned to one CPU, started by a test and killed by its pid on drop: a shell
/// loop that starts a short-lived process after another (as a compiler run does: new
/// address spaces, page faults, wake-ups), harsher on a measurement than a plain spin.
struct CpuHog {
    child: Child,
}

impl CpuHog {
    fn on_cpu(cpu: usize) -> CpuHog {
        let child = Command::new("taskset")
            .envs(common::HISTORY_OFF)
            .args([
                "-c",
                &cpu.to_string(),
                "sh",
                "-c",
                "while :; do /bin/true; done",
            ])
            .stdout(Stdio::null())
            .spawn()
            .expect("start a CPU hog with taskset");
        CpuHog { child }
    }
}

impl Drop for CpuHog {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The align truth suite on the real I/O path (issue 18 point 7): honest geometries,
/// 2^n and 3 × 2^n, served through `sim serve --loop` and measured by `flashscope align`
/// at normal priority, quiet and with a CPU hog pinned to the CPU the measurement runs
/// on. No answer may be confidently wrong; the erase block must be right in 2 of 3 runs
/// and the page in more than half.
/// Cards are made fast (bandwidth and command keys) so the suite takes about a minute.
#[test]
fn align_truth_on_served_cards_quiet_and_beside_a_cpu_hog() {
    let Some((_s, server_args)) = beside_a_hog() else {
        return;
    };
    // Fast cards (100 µs commands, 200 MiB/s): boundary costs from clear to small, and
    // one card whose own reads stall (3 % of them, up to 20 ms).
    let fast = "cmd=100us,read_bw=200M";
    let cards: [(&str, u64, u64); 6] = [
        ("size=512M,erase=4M,page=16K,page_cost=60us,erase_cost=200us", 4 << 20, 16 << 10),
        ("size=768M,erase=12M,page=24K,page_cost=60us,erase_cost=200us", 12 << 20, 24 << 10),
        ("size=384M,erase=3M,page=8K,page_cost=40us,erase_cost=120us", 3 << 20, 8 << 10),
        ("size=1G,erase=8M,page=16K,page_cost=30us,erase_cost=80us", 8 << 20, 16 << 10),
        ("size=1536M,erase=6M,page=12K,page_cost=50us,erase_cost=150us", 6 << 20, 12 << 10),
        (
            "size=512M,erase=4M,page=16K,page_cost=60us,erase_cost=200us,outliers=0.03,outlier_max=20ms",
            4 << 20,
            16 << 10,
        ),
    ];
    let (mut runs, mut erase_right, mut page_right) = (0, 0, 0);
    let mut wrong = Vec::new();
    let t0 = Instant::now();
    for (geometry, erase, page) in cards {
        let spec = format!("sim:custom,{geometry},{fast}");
        let server = Server::start(&spec, server_args);
        for hogged in [false, true, false, true] {
            let _hog = hogged.then(|| CpuHog::on_cpu(0));
            let out = AssertCommand::new("taskset")
                .envs(common::HISTORY_OFF)
                .args(["-c", "0", BIN, "align", &server.device, "--json"])
                .timeout(Duration::from_secs(120))
                .assert()
                .success()
                .get_output()
                .stdout
                .clone();
            let v: serde_json::Value = serde_json::from_slice(&out).expect("align JSON");
            runs += 1;
            let inf = &v["inferences"];
            let warnings: Vec<&str> = v["warnings"]
                .as_array()
                .map(|w| w.iter().filter_map(|w| w["kind"].as_str()).collect())
                .unwrap_or_default();
            eprintln!(
                "{spec}{}: erase {} ({}), page {} ({}), multi-plane {} ({}), {} reads, warnings {warnings:?}",
                if hogged { " + CPU hog" } else { "" },
                inf["erase_block_bytes"]["value"],
                inf["erase_block_bytes"]["status"],
                inf["page_bytes"]["value"],
                inf["page_bytes"]["status"],
                inf["multi_plane_bytes"]["value"],
                inf["multi_plane_bytes"]["status"],
                v["parameters"]["reads"],
            );
            for (what, want) in [
                ("erase_block_bytes", Some(erase)),
                ("page_bytes", Some(page)),
            ]
            .into_iter()
            .chain(std::iter::once(("multi_plane_bytes", None)))
            {
                let i = &inf[what];
                if i["status"] == "confident" && i["value"].as_u64() != want {
                    // Keep the whole document (every read) for the diagnosis.
                    let keep = std::env::temp_dir()
                        .join(format!("align-truth-wrong-{}.json", std::process::id()));
                    let _ = std::fs::write(&keep, &out);
                    wrong.push(format!(
                        "{spec} (hog: {hogged}): {what} {i} (samples in {})",
                        keep.display()
                    ));
                }
            }
            erase_right += usize::from(inf["erase_block_bytes"]["value"].as_u64() == Some(erase));
            page_right += usize::from(inf["page_bytes"]["value"].as_u64() == Some(page));
        }
        assert_eq!(server.stats()["writes"], 0, "align wrote nothing");
    }
    eprintln!(
        "align truth suite: {runs} runs, erase right {erase_right}, page right {page_right}, confidently wrong {}, {:.0} s",
        wrong.len(),
        t0.elapsed().as_secs_f64()
    );
    assert!(wrong.is_empty(), "confidently wrong:\n{}", wrong.join("\n"));
    // Most runs right: on a shared VM whose other jobs keep the CPUs busy, a quiet run
    // (the measuring CPU idling between reads, waking late) can run out of its read
    // budget and stay inconclusive; that is allowed, a wrong answer is not.
    assert!(
        erase_right * 3 >= runs * 2,
        "the erase block was right in only {erase_right} of {runs} runs"
    );
    assert!(
        page_right * 2 > runs,
        "the page was right in only {page_right} of {runs} runs"
    );
}

/// `flashscope ARGS --json` pinned to CPU 0 (where the hog runs), on a served card: exit 0
/// or 3 (a check failed is an answer too), one JSON document; returns it and the wall time.
fn json_on_cpu0(spec: &str, args: &[&str], timeout: Duration) -> (serde_json::Value, f64) {
    let t = Instant::now();
    let out = AssertCommand::new("taskset")
        .envs(common::HISTORY_OFF)
        .args(["-c", "0", BIN])
        .args(args)
        .arg("--json")
        .timeout(timeout)
        .output()
        .unwrap();
    let code = out.status.code();
    assert!(
        matches!(code, Some(0) | Some(3)),
        "{spec}: {args:?}: exit {code:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{spec}: {args:?}: not one JSON document: {e}"));
    (v, t.elapsed().as_secs_f64())
}

/// The probe truth suite on the real I/O path (issue 18 point 7): honest cards, wrap and
/// limbo fakes of 2^n and odd real sizes, fakes behind write caches smaller and larger than
/// the default `--max-cache` (1 GiB), served through `sim serve --loop` and probed by
/// `flashscope probe --destructive`, quiet and with a CPU hog on the probe's CPU. No
/// inference may be confidently wrong; the kind and the usable size (exact to the byte)
/// must be right in every case the probe can see (caches below `--max-cache`).
/// Cards are fast (1 GB/s, 20 µs commands): the suite is about the search, not the medium.
#[test]
fn probe_truth_on_served_fakes_quiet_and_beside_a_cpu_hog() {
    let Some((_s, server_args)) = beside_a_hog() else {
        return;
    };
    let fast = "read_bw=1G,write_bw=1G,native_bw=1G,page_cost=0ns,erase_cost=0ns,noise=0";
    const G: u64 = 1 << 30;
    const M: u64 = 1 << 20;
    // (card, the kind, the usable bytes, whether the probe can see it, more options).
    // The last two: a 1.5 GiB cache at the medium's speed, which the default --max-cache
    // (1 GiB) cannot push out; and a 400 MiB cache answering from RAM (reads 2 GB/s, no
    // command time, against 300 µs for the medium), followed past --max-cache 256M.
    let cards: [(&str, &str, u64, bool, &[&str]); 11] = [
        ("size=1G", "none", G, true, &[]),
        ("size=3G", "none", 3 * G, true, &[]),
        ("size=4G,real=1G,fake_mode=wrap", "wrap", G, true, &[]),
        (
            "size=2G,real=699999744,fake_mode=wrap",
            "wrap",
            699_999_744,
            true,
            &[],
        ),
        ("size=4G,real=1G,fake_mode=limbo", "limbo", G, true, &[]),
        (
            "size=2G,real=512M,fake_mode=limbo,cache=64M",
            "limbo",
            512 * M,
            true,
            &[],
        ),
        (
            "size=4G,real=1G,fake_mode=wrap,cache=256M",
            "wrap",
            G,
            true,
            &[],
        ),
        (
            "size=4G,real=1G,fake_mode=limbo,cache=1536M",
            "limbo",
            G,
            false,
            &[],
        ),
        (
            "size=2G,real=768M,fake_mode=limbo,cache=400M,cache_bw=2G,cmd=300us",
            "limbo",
            768 * M,
            true,
            &["--max-cache", "256M"],
        ),
        // Issue 33 point 7: a 1.5 GiB RAM cache with the defaults (it read as an OK in
        // one run of three), and one of 3.5 GiB, near the 4 GiB the default follows.
        (
            "size=16G,real=4G,fake_mode=limbo,cache=1536M,cache_bw=2G,cmd=300us",
            "limbo",
            4 * G,
            true,
            &[],
        ),
        (
            "size=16G,real=2G,fake_mode=limbo,cache=3584M,cache_bw=2G,cmd=300us",
            "limbo",
            2 * G,
            true,
            &[],
        ),
    ];
    let (mut runs, mut seen, mut right) = (0, 0, 0);
    let mut wrong = Vec::new();
    let t0 = Instant::now();
    let mut quiet = Quietness::default();
    quiet.measure("before the suite");
    for (card, kind, usable, visible, extra) in cards {
        // 20 µs commands unless the card says otherwise.
        let cmd = if card.contains("cmd=") {
            ""
        } else {
            ",cmd=20us"
        };
        let spec = format!("sim:custom,{card},{fast}{cmd}");
        for hogged in [false, true] {
            // A fresh card each run: a probed card keeps the stamps of the last run.
            let server = Server::start(&spec, server_args);
            let _hog = hogged.then(|| CpuHog::on_cpu(0));
            let mut args = vec!["probe", server.device.as_str(), "--destructive"];
            args.extend(extra);
            let (v, secs) = json_on_cpu0(&spec, &args, Duration::from_secs(300));
            let inf = &v["inferences"];
            runs += 1;
            eprintln!(
                "{card}{}: {} ({}), usable {} ({}), {:.1} s, {} written",
                if hogged { " + CPU hog" } else { "" },
                inf["fake_kind"]["value"],
                inf["fake_kind"]["status"],
                inf["usable_bytes"]["value"],
                inf["usable_bytes"]["status"],
                secs,
                v["bytes_written"]
            );
            let kind_ok = inf["fake_kind"]["value"].as_str() == Some(kind);
            let usable_ok = inf["usable_bytes"]["value"].as_u64() == Some(usable);
            for (what, ok) in [("fake_kind", kind_ok), ("usable_bytes", usable_ok)] {
                if inf[what]["status"] == "confident" && !ok {
                    wrong.push(format!("{spec} (hog: {hogged}): {what} {}", inf[what]));
                }
            }
            // An honest card's OK is never confident: a cache above --max-cache could hide
            // a fake.
            if kind == "none" && inf["fake_kind"]["status"] == "confident" {
                wrong.push(format!("{spec}: a confident OK"));
            }
            if visible {
                seen += 1;
                right += usize::from(kind_ok && usable_ok);
            }
        }
    }
    eprintln!(
        "probe truth suite: {runs} runs, right {right} of {seen} visible, confidently wrong {}, {:.0} s",
        wrong.len(),
        t0.elapsed().as_secs_f64()
    );
    quiet.measure("after the suite");
    // Always: nothing confidently wrong. Power (every fake found exactly) where quiet.
    assert!(wrong.is_empty(), "confidently wrong:\n{}", wrong.join("\n"));
    quiet.assert_power(
        "every fake within --max-cache found exactly",
        right == seen,
        &format!("right in {right} of {seen}"),
    );
}

/// The open-AU truth suite on the real I/O path (issue 18 point 7): how many erase blocks a
/// served card keeps open, linear and random, 2^n and 3 × 2^n erase blocks, one card whose
/// own writes stall (3 %, up to 20 ms), and one whose erase block `open-au` first measures
/// with align (read-only) instead of being told; quiet and with a CPU hog on the CPU the
/// test runs on. No count may be confidently wrong; the count must be right in most runs.
/// Cards are fast (100 MB/s, 50 µs commands) with small erase blocks, so a collapsed count
/// (each 16 KiB write copying the rest of an erase block) still takes seconds, not minutes.
#[test]
fn open_au_truth_on_served_cards_quiet_and_beside_a_cpu_hog() {
    let Some((_s, server_args)) = beside_a_hog() else {
        return;
    };
    let fast = "cmd=50us,read_bw=200M,write_bw=100M,native_bw=100M,size=512M,page=16K";
    // (card, --erase-size or None to measure it, the linear count, the random count when
    // --random is asked).
    let cards: [(&str, Option<&str>, u64, Option<u64>); 6] = [
        ("erase=2M,open_au=3,open_au_random=0", Some("2M"), 3, None),
        ("erase=1M,open_au=1,open_au_random=0", Some("1M"), 1, None),
        (
            "erase=1M,open_au=6,open_au_random=2",
            Some("1M"),
            6,
            Some(2),
        ),
        ("erase=3M,open_au=2,open_au_random=0", Some("3M"), 2, None),
        (
            "erase=1M,open_au=5,open_au_random=0,outliers=0.03,outlier_max=20ms",
            Some("1M"),
            5,
            None,
        ),
        (
            "erase=2M,open_au=4,open_au_random=0,page_cost=60us,erase_cost=300us,noise=0",
            None,
            4,
            None,
        ),
    ];
    let (mut runs, mut right, mut checked) = (0, 0, 0);
    let mut wrong = Vec::new();
    let t0 = Instant::now();
    for (card, erase, linear, random) in cards {
        let spec = format!("sim:custom,{fast},{card}");
        for hogged in [false, true] {
            // A fresh card each run: a written card keeps its open blocks.
            let server = Server::start(&spec, server_args);
            let _hog = hogged.then(|| CpuHog::on_cpu(0));
            let mut args = vec!["open-au", server.device.as_str(), "--destructive"];
            if let Some(e) = erase {
                args.extend(["--erase-size", e]);
            }
            if random.is_some() {
                args.push("--random");
            }
            let (v, secs) = json_on_cpu0(&spec, &args, Duration::from_secs(300));
            let inf = &v["inferences"];
            runs += 1;
            eprintln!(
                "{card}{}: open {} ({}), random {} ({}), {:.1} s, {} written",
                if hogged { " + CPU hog" } else { "" },
                inf["open_au"]["value"],
                inf["open_au"]["status"],
                inf["open_au_random"]["value"],
                inf["open_au_random"]["status"],
                secs,
                v["bytes_written"]
            );
            let mut all_right = true;
            for (what, want) in [("open_au", Some(linear)), ("open_au_random", random)] {
                let Some(want) = want else { continue };
                checked += 1;
                let i = &inf[what];
                let ok = i["value"].as_u64() == Some(want);
                all_right &= ok;
                if i["status"] == "confident" && !ok {
                    wrong.push(format!("{spec} (hog: {hogged}): {what} {i}, want {want}"));
                } else if !ok {
                    eprintln!("  {what}: {}", i["evidence"]);
                }
            }
            right += usize::from(all_right);
        }
    }
    eprintln!(
        "open-au truth suite: {runs} runs ({checked} counts), all right in {right}, confidently wrong {}, {:.0} s",
        wrong.len(),
        t0.elapsed().as_secs_f64()
    );
    assert!(wrong.is_empty(), "confidently wrong:\n{}", wrong.join("\n"));
    // Most runs right (the bar). Quiet runs on a loaded 2-CPU machine are the
    // ones that come out inconclusive ("throughput degrades gradually"): 2 to 5 of 12
    // while other builds ran, never a wrong count.
    assert!(
        right * 2 > runs,
        "the counts were right in only {right} of {runs} runs"
    );
}

/// bench says when its figures are noise (issue 18 point 6), on the real I/O path: the
/// read tests on a served card, quiet and beside a CPU hog on bench's own CPU. A figure
/// that comes out more than 10 % below the quiet run's must carry a warning in the run
/// that measured it (`noisy_figure` for that test, or `noisy_environment`): a slowed run
/// may not pass for a steady one.
#[test]
fn bench_flags_figures_a_cpu_hog_slowed_on_a_served_card() {
    let Some((_s, server_args)) = beside_a_hog() else {
        return;
    };
    let server = Server::start(
        "sim:custom,size=1G,cmd=500us,read_bw=40M,page_cost=0ns,erase_cost=0ns",
        server_args,
    );
    let bench = |hogs: usize| {
        let _hogs: Vec<CpuHog> = (0..hogs).map(|_| CpuHog::on_cpu(0)).collect();
        let out = AssertCommand::new(BIN)
            .envs(common::HISTORY_OFF)
            .args(["bench", &server.device, "--runtime", "2", "--size", "64M"])
            .args(["--cpus", "0", "--json"])
            .timeout(Duration::from_secs(120))
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        serde_json::from_slice::<serde_json::Value>(&out).expect("bench JSON")
    };
    let figures = |v: &serde_json::Value| -> Vec<(String, f64)> {
        v["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    format!(
                        "{} {}",
                        s["label"].as_str().unwrap(),
                        s["dir"].as_str().unwrap()
                    ),
                    s["bw_bytes"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let quiet = figures(&bench(0));
    let mut unflagged = Vec::new();
    for hogs in [1, 2] {
        let v = bench(hogs);
        let warnings: Vec<(String, String)> = v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                (
                    w["kind"].as_str().unwrap_or("").to_string(),
                    w["message"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        let environment = warnings.iter().any(|(k, _)| k == "noisy_environment");
        for ((label, q), (_, h)) in quiet.iter().zip(figures(&v)) {
            let flagged = environment
                || warnings
                    .iter()
                    .any(|(k, m)| k == "noisy_figure" && m.starts_with(label.as_str()));
            eprintln!(
                "{label}: quiet {:.2} MB/s, {hogs} hog(s) {:.2} MB/s ({:+.0} %), flagged: {flagged}",
                q / 1e6,
                h / 1e6,
                (h / q - 1.0) * 100.0
            );
            if h < q * 0.9 && !flagged {
                unflagged.push(format!(
                    "{label} with {hogs} hog(s): {h:.0} against {q:.0} B/s"
                ));
            }
        }
    }
    assert!(
        unflagged.is_empty(),
        "slowed figures with no warning:\n{}",
        unflagged.join("\n")
    );
}

/// `compare` through the real I/O path (issue 21 point 4, fewer cases than on the virtual
/// clock in tests/e2e/compare.rs): 1 MiB sequential writes for 6 s on served cards whose
/// `write_bw` differs by 10 %, and on two seeds of one card. The difference must be
/// significant with the right sign every time and its interval hold the true ratio (from
/// noise-free runs of the same test on the virtual clock) in at least 2 of 3; the same
/// card must show no significant difference in at least 2 of 3.
#[test]
fn compare_on_served_cards_finds_a_10_percent_write_difference_and_none_between_seeds() {
    require_root_fuse!();
    let _s = serial();
    let base = "sim:custom,size=256M,erase=1M,page=16K,cmd=200us,read_bw=40M";
    let slow = format!("{base},write_bw=24M,native_bw=24M");
    let fast = format!("{base},write_bw=26.4M,native_bw=26.4M");
    let io = |target: &str, extra: &str| -> Vec<String> {
        let mut v: Vec<String> = [
            "io",
            target,
            "--rw",
            "write",
            "--blocksize",
            "1M",
            "--size",
            "128M",
            "--runtime",
            "6s",
            "--time-based",
        ]
        .map(String::from)
        .to_vec();
        v.push(extra.to_string());
        v
    };
    let truth_bw = |card: &str| {
        let spec = format!("{card},noise=0,outliers=0");
        let args = io(&spec, "--write");
        let v = common::json(&args.iter().map(String::as_str).collect::<Vec<_>>());
        v["jobs"][0]["write"]["bw_bytes"].as_f64().unwrap()
    };
    let truth = truth_bw(&fast) / truth_bw(&slow);
    let dir = tempfile::tempdir().unwrap();
    let mut quiet = Quietness::default();
    quiet.measure("before the runs");
    // Three runs on each of three served cards: the slow one (seed 1), the fast one, and
    // the slow one again with another seed.
    let mut saved: Vec<Vec<PathBuf>> = Vec::new();
    for (k, card) in [
        format!("{slow},seed=1"),
        format!("{fast},seed=2"),
        format!("{slow},seed=3"),
    ]
    .iter()
    .enumerate()
    {
        let mut server = Server::start(card, &[]);
        let mut runs = Vec::new();
        for i in 0..3 {
            let args = io(&server.device, "--destructive");
            let (v, _) = json_on_cpu0(
                card,
                &args.iter().map(String::as_str).collect::<Vec<_>>(),
                Duration::from_secs(60),
            );
            let path = dir.path().join(format!("card{k}-run{i}.json"));
            std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
            runs.push(path);
        }
        server.cleanup();
        saved.push(runs);
    }
    quiet.measure("after the runs");
    let compare = |a: &Path, b: &Path| -> serde_json::Value {
        let v = common::json(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
        v["samples"][0].clone()
    };
    let (mut right, mut covered, mut same, mut wrong_sign) = (0, 0, 0, 0);
    let mut lines = Vec::new();
    for (i, slow_run) in saved[0].iter().enumerate() {
        let r = compare(slow_run, &saved[1][i]);
        let (lo, hi) = (
            1.0 + r["ci_low"].as_f64().unwrap_or(f64::NAN),
            1.0 + r["ci_high"].as_f64().unwrap_or(f64::NAN),
        );
        right += usize::from(r["significant"] == true && r["difference"].as_f64() > Some(0.0));
        wrong_sign += usize::from(r["significant"] == true && r["difference"].as_f64() < Some(0.0));
        covered += usize::from(lo <= truth && truth <= hi);
        lines.push(format!(
            "10 % apart, run {i}: [{lo:.4}, {hi:.4}] (truth {truth:.4}): {}",
            r["sentence"]
        ));
        let r = compare(slow_run, &saved[2][i]);
        same += usize::from(r["significant"] == false);
        lines.push(format!("same card, run {i}: {}", r["sentence"]));
    }
    let report = lines.join("\n  ");
    eprintln!("served compare:\n  {report}");
    // Always: honest intervals, no difference with the wrong sign, none between seeds.
    assert_eq!(wrong_sign, 0, "significant the wrong way:\n  {report}");
    assert!(
        covered >= 2,
        "interval held the truth in {covered} of 3:\n  {report}"
    );
    assert!(
        same >= 2,
        "no significant difference in {same} of 3:\n  {report}"
    );
    // Power where the machine is quiet: other programs' load widens the intervals.
    quiet.assert_power(
        "the 10 % difference significant in 3 of 3",
        right == 3,
        &format!("significant with the right sign in {right} of 3:\n  {report}"),
    );
}

/// Issue 30 point 5: whoever controls a directory above the mountpoint swaps it for a
/// link to another mount while the card is served; at SIGTERM the server, and at SIGKILL
/// its watchdog (`umount --no-canonicalize` through a descriptor), unmounts its own card,
/// never the mount the link points at.
#[test]
fn a_swapped_parent_directory_does_not_make_the_server_unmount_another_mount() {
    require_root_fuse!();
    let _s = serial();
    for sig in [libc::SIGTERM, libc::SIGKILL] {
        swapped_parent_case(sig);
    }
    eprintln!("swapped parent directory: 2 cases (SIGTERM, SIGKILL), 0 other mounts unmounted");
}

fn swapped_parent_case(sig: libc::c_int) {
    let mut server = Server::start(CARD, &[]);
    let parent = server.mountpoint.parent().unwrap().to_path_buf();
    // Another mount, the test's own: a tmpfs at OTHER/card.
    let other = tempfile::tempdir().unwrap();
    let victim = other.path().join("card");
    std::fs::create_dir(&victim).unwrap();
    let st = Command::new("mount")
        .args(["-t", "tmpfs", "none"])
        .arg(&victim)
        .status()
        .unwrap();
    assert!(st.success(), "mount a tmpfs");
    let victim = victim.canonicalize().unwrap();
    assert!(mounted(&victim), "the other mount is there before the swap");
    // The swap: the served card's parent moves away, a link to OTHER takes its name.
    let moved = parent.with_extension("moved");
    std::fs::rename(&parent, &moved).unwrap();
    std::os::unix::fs::symlink(other.path(), &parent).unwrap();
    assert!(mounted(&victim), "the other mount is there after the swap");
    assert!(
        mounted(&moved.join("card")),
        "the card is mounted at its moved place before the signal (else the test checks nothing)"
    );
    server.signal(sig);
    let exited = server.wait_exit(Duration::from_secs(20));
    // After SIGKILL the watchdog acts once the server is gone: give it time.
    let own = moved.join("card");
    let t0 = Instant::now();
    while mounted(&own) && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let victim_mounted = mounted(&victim);
    let card_mounted = mounted(&own);
    // Put things back for the cleanup, whatever happened.
    std::fs::remove_file(&parent).unwrap();
    std::fs::rename(&moved, &parent).unwrap();
    if victim_mounted {
        let _ = Command::new("umount").arg(&victim).status();
    }
    if card_mounted {
        server.cleanup();
    }
    assert!(exited.is_some(), "signal {sig}: the server did not stop");
    assert!(
        victim_mounted,
        "signal {sig}: the other mount was unmounted through the link"
    );
    assert!(
        !card_mounted,
        "signal {sig}: its own card was not unmounted"
    );
}

/// Issue 43.5: `interval` on a loop over a disk file (direct I/O) gave 879 to 3,424 MB/s
/// in six runs, five "confident" at ± 1–5 %. Five runs on a loop over a file in /var/tmp:
/// each run's stated interval (the throughput ± its evidence gives) overlaps every other
/// run's, or the run says its ± covers this run only because the device was not steady.
/// That is honesty, asserted on any machine; the machine's quietness is reported beside.
///
/// On this VM (2026-11-28) five runs gave 1.71, 1.00, 1.06, 1.52 and 1.18 GB/s, each at
/// ± 1–2 %, and only the fourth saw its halves differ: a run lasts milliseconds, and the
/// device changes speed between runs, which a run's halves cannot see. A run shorter than
/// a second now says its ± covers this run only and that run-to-run spread was not
/// measured (at most tentative).
#[test]
fn interval_on_a_loop_over_a_disk_file_overlaps_or_says_not_steady() {
    if !is_root() {
        common::skip("loop devices need root (CI runs the tests as root)");
        return;
    }
    let _s = serial();
    let Some(lo) = common::Loop::random(64 << 20, 43) else {
        return;
    };
    let mut quiet = Quietness::default();
    quiet.measure("before interval");
    let mut runs: Vec<(f64, f64, f64, bool, String)> = Vec::new();
    for _ in 0..5 {
        let out = AssertCommand::new(BIN)
            .envs(common::HISTORY_OFF)
            .args(["interval", &lo.dev, "--order", "11", "--json"])
            .timeout(Duration::from_secs(120))
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let v: serde_json::Value = serde_json::from_slice(&out).expect("interval JSON");
        let t = &v["inferences"]["throughput_bytes_per_s"];
        let ev = t["evidence"].as_str().unwrap_or("").to_string();
        let Some(bps) = t["value"].as_f64() else {
            eprintln!("interval on {}: inconclusive: {ev}", lo.dev);
            continue;
        };
        // "… per byte (± N%)": the slope's relative standard error, whole percent.
        let rel = ev
            .split("(± ")
            .nth(1)
            .and_then(|r| r.split('%').next())
            .and_then(|r| r.trim().parse::<f64>().ok())
            .unwrap_or(0.0)
            .max(0.5)
            / 100.0;
        let unsteady = ev.contains("covers this run only");
        eprintln!(
            "interval on {}: {:.0} MB/s ± {:.1} % ({}){}",
            lo.dev,
            bps / 1e6,
            100.0 * rel,
            t["status"],
            if unsteady { ", not steady" } else { "" }
        );
        runs.push((
            bps / (1.0 + rel),
            bps / (1.0 - rel).max(0.01),
            bps,
            unsteady,
            ev,
        ));
    }
    quiet.measure("after interval");
    let steady: Vec<_> = runs.iter().filter(|r| !r.3).collect();
    let mut apart = Vec::new();
    for (i, a) in steady.iter().enumerate() {
        for b in &steady[i + 1..] {
            if a.1 < b.0 || b.1 < a.0 {
                apart.push(format!(
                    "{:.0} MB/s [{:.0}, {:.0}] and {:.0} MB/s [{:.0}, {:.0}]",
                    a.2 / 1e6,
                    a.0 / 1e6,
                    a.1 / 1e6,
                    b.2 / 1e6,
                    b.0 / 1e6,
                    b.1 / 1e6
                ));
            }
        }
    }
    eprintln!(
        "interval on a loop over a disk file: {} runs, {} not steady, {} pairs apart; {}",
        runs.len(),
        runs.len() - steady.len(),
        apart.len(),
        if quiet.busy.is_empty() {
            "the machine was quiet".to_string()
        } else {
            quiet.busy.join("; ")
        }
    );
    assert!(
        apart.is_empty(),
        "stated intervals that neither overlap nor say the device was not steady:\n{}",
        apart.join("\n")
    );
}
