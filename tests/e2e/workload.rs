//! End-to-end tests of `io` and `bench`: fio-shaped JSON, simulator figures, bad input,
//! write gating, verify, cut-short runs, and class verdicts.

use crate::common;
use common::{flashscope, json_code, Loop};

use predicates::prelude::*;

/// A scratch file on the crate's filesystem (not tmpfs, so O_DIRECT works).
fn scratch(len: u64) -> tempfile::NamedTempFile {
    let f = tempfile::NamedTempFile::new_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    f.as_file().set_len(len).unwrap();
    f
}

#[test]
fn io_json_uses_fios_names_and_the_simulator_model() {
    let v = json_code(
        &[
            "io",
            "sim:sd-16g,noise=0,outliers=0",
            "--rw",
            "randread",
            "--blocksize",
            "4k",
            "--runtime",
            "2s",
            "--time-based",
        ],
        0,
    );
    assert_eq!(v["command"], "io");
    let read = &v["jobs"][0]["read"];
    for key in ["io_bytes", "bw_bytes", "iops", "runtime", "total_ios"] {
        assert!(read.get(key).is_some(), "missing read.{key}");
    }
    for key in ["min", "max", "mean", "stddev"] {
        assert!(read["clat_ns"].get(key).is_some(), "missing clat_ns.{key}");
    }
    let p99 = read["clat_ns"]["percentile"]["99.000000"].as_u64().unwrap();
    // sd-16g: cmd 650 µs + 4096 B at 22 MiB/s = 827.6 µs per read.
    let service = 650e3 + 4096.0 * 1e9 / (22.0 * 1048576.0);
    assert!((p99 as f64 / service - 1.0).abs() < 0.03, "p99 {p99}");
    let iops = read["iops"].as_f64().unwrap();
    assert!((iops * service / 1e9 - 1.0).abs() < 0.03, "iops {iops}");
    assert_eq!(read["runtime"], 2000);
    assert_eq!(v["jobs"][0]["write"]["io_bytes"], 0);
    assert_eq!(v["samples"].as_array().unwrap().len(), 2);
    assert_eq!(v["bytes_written"], 0);
}

#[test]
fn io_writes_need_write_and_say_what_they_would_write() {
    flashscope()
        .args(["io", "sim:sd-16g", "--rw", "randwrite", "--size", "16M"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--write").and(predicate::str::contains("randwrite")));
    let v = json_code(
        &[
            "io",
            "sim:sd-16g",
            "--rw",
            "write",
            "--blocksize",
            "1M",
            "--size",
            "8M",
            "--write",
        ],
        0,
    );
    assert_eq!(v["bytes_written"], 8 << 20);
    assert_eq!(v["jobs"][0]["write"]["io_bytes"], 8 << 20);
}

#[test]
fn io_bad_input_is_a_usage_error_naming_the_value() {
    let cases: &[(&[&str], &str)] = &[
        (&["--iodepth", "0"], "--iodepth 0"),
        (&["--blocksize", "1000"], "logical sector"),
        (&["--size", "32G"], "does not fit"),
        (&["--engine", "aio"], "'aio'"),
        (&["--rw", "sideways"], "'sideways'"),
        (&["--rate", "0"], "--rate"),
        (&["--cpus", "4000"], "--cpus"),
        (&["--time-based"], "--runtime"),
        (
            &["--blocksize", "64M", "--iodepth", "4096"],
            "256 GiB of I/O buffers",
        ),
    ];
    for (extra, needle) in cases {
        flashscope()
            .args(["io", "sim:sd-16g"])
            .args(*extra)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(*needle));
    }
    // On a real file too, before anything is allocated (it would take 256 GiB).
    let f = scratch(128 << 20);
    flashscope()
        .args(["io"])
        .arg(f.path())
        .args([
            "--blocksize",
            "64M",
            "--iodepth",
            "4096",
            "--engine",
            "uring",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("use a smaller --iodepth"));
}

#[test]
fn a_short_runtime_is_not_spent_setting_up_large_buffers() {
    // 64 MiB blocks at depth 15 take a 1 GiB slab of buffers (128 MiB where the sync
    // engine stands in for io_uring), which takes a few hundred ms to fault in. The job's
    // clocks start after that: a 100 ms run does I/O, and its runtime and CPU figures are
    // the run's, not the set-up's.
    let f = scratch(256 << 20);
    let path = f.path().to_str().unwrap();
    let v = json_code(
        &[
            "io",
            path,
            "--blocksize",
            "64M",
            "--iodepth",
            "15",
            "--runtime",
            "100ms",
            "--time-based",
        ],
        0,
    );
    let j = &v["jobs"][0];
    assert!(j["read"]["total_ios"].as_u64().unwrap() >= 1, "{j}");
    let runtime = j["job_runtime"].as_u64().unwrap();
    assert!((100..1000).contains(&runtime), "runtime {runtime} ms");
    // Faulting the slab in costs several times the run's 100 ms of CPU (1300 % here when
    // counted), so one thread's figure near 100 % shows it was not; qemu-user's
    // accounting gave 116 %, hence the margin.
    let cpu = j["usr_cpu"].as_f64().unwrap() + j["sys_cpu"].as_f64().unwrap();
    assert!(
        cpu <= 200.0,
        "one thread used {cpu} % of the run's time: set-up counted"
    );
}

#[test]
fn io_on_a_vanishing_device_reports_what_it_measured_and_exits_1() {
    let v = json_code(
        &[
            "io",
            "sim:sd-16g,noise=0,fault=vanish@50",
            "--rw",
            "randread",
            "--iodepth",
            "4",
            "--runtime",
            "5s",
        ],
        1,
    );
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 50);
    assert!(v["error"].as_str().unwrap().contains("vanished"));
    assert!(v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "target_vanished"));
}

#[test]
fn io_verify_fails_a_card_that_loses_writes() {
    let args = [
        "io",
        "sim:custom,size=16M,real=8M,fake_mode=limbo,erase=1M,page=16K,noise=0",
        "--rw",
        "write",
        "--blocksize",
        "1M",
        "--write",
        "--verify",
    ];
    let v = json_code(&args, 3);
    let bad = v["verify"]["bad_units"].as_u64().unwrap();
    assert_eq!(bad, (8 << 20) / 512);
    assert_eq!(v["verify"]["first_bad_offset"], 8 << 20);
}

#[test]
fn io_on_a_file_with_uring_verifies_and_counts_the_disk() {
    let f = scratch(8 << 20);
    let p = f.path().to_str().unwrap();
    let v = json_code(
        &[
            "io",
            p,
            "--rw",
            "randrw",
            "--blocksize",
            "4k",
            "--iodepth",
            "8",
            "--engine",
            "uring",
            "--write",
            "--verify",
            "--numjobs",
            "2",
        ],
        0,
    );
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    assert!(["uring", "sync"].contains(&v["engine"].as_str().unwrap()));
    assert_eq!(v["verify"]["bad_units"], 0);
    assert!(v["verify"]["bytes_checked"].as_u64().unwrap() > 0);
    let total: u64 = jobs
        .iter()
        .map(|j| j["read"]["io_bytes"].as_u64().unwrap() + j["write"]["io_bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(total, 2 * (8 << 20));
    for j in jobs {
        assert!(j["usr_cpu"].as_f64().unwrap() >= 0.0);
    }
}

#[test]
fn io_buffered_run_records_the_page_cache() {
    let f = scratch(4 << 20);
    let p = f.path().to_str().unwrap();
    let v = json_code(
        &[
            "io",
            p,
            "--rw",
            "write",
            "--blocksize",
            "64k",
            "--direct=0",
            "--write",
        ],
        0,
    );
    assert!(v["page_cache"]["before"]["dirty_bytes"].is_u64());
    assert!(v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "buffered"));
}

#[test]
fn io_null_engine_runs_without_touching_the_device() {
    let v = json_code(
        &[
            "io",
            "sim:sd-16g,fault=vanish@0",
            "--engine",
            "null",
            "--runtime",
            "100ms",
            "--time-based",
        ],
        0,
    );
    assert_eq!(v["engine"], "null");
    assert!(v["jobs"][0]["read"]["iops"].as_f64().unwrap() > 10_000.0);
}

#[test]
fn bench_on_the_simulator_gives_classes_and_one_job_per_test() {
    let v = json_code(
        &[
            "bench",
            "sim:sd-16g,noise=0,outliers=0",
            "--write",
            "--runtime",
            "2s",
            "--size",
            "64M",
        ],
        0,
    );
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 8);
    assert_eq!(jobs[0]["test"], "SEQ1M Q8T1");
    // sd-16g writes at 12 MiB/s = 12.6 MB/s: C10 / U1 / V10, not U3.
    let sc = &v["inferences"]["speed_class"];
    assert_eq!(sc["value"], "V10", "{sc}");
    assert!(sc["evidence"].as_str().unwrap().contains("MiB/s"));
    // Random 4 KiB reads at ~1200 IOPS miss A1's 1500.
    let ac = &v["inferences"]["app_class"];
    assert_eq!(ac["value"], "none", "{ac}");
    assert!(ac["evidence"].as_str().unwrap().contains("IOPS"));
    let classes = v["classes"].as_array().unwrap();
    assert!(classes
        .iter()
        .any(|c| c["class"] == "U3" && c["pass"] == false));
    assert!(classes
        .iter()
        .any(|c| c["class"] == "C10" && c["pass"] == true));
}

#[test]
fn bench_expect_turns_figures_into_checks() {
    let base = [
        "bench",
        "sim:sd-16g,noise=0,outliers=0",
        "--runtime",
        "1s",
        "--size",
        "16M",
    ];
    flashscope()
        .args(base)
        .args(["--expect", "seq_read>=10MB/s,rand_read_iops>=1000"])
        .assert()
        .code(0);
    flashscope()
        .args(base)
        .args(["--expect", "rand_read_iops>=1500"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains("FAIL"));
    flashscope()
        .args(base)
        .args(["--expect", "rand_read_iops>=lots"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("rand_read_iops>=lots"));
    flashscope()
        .args(base)
        .args(["--expect", "seq_write>=10MB/s"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--write"));
}

#[test]
fn bench_without_write_runs_reads_and_says_the_classes_are_inconclusive() {
    let v = json_code(
        &[
            "bench",
            "sim:sd-16g",
            "--quick",
            "--runtime",
            "1s",
            "--size",
            "16M",
        ],
        0,
    );
    assert_eq!(v["jobs"].as_array().unwrap().len(), 4);
    assert_eq!(v["inferences"]["speed_class"]["status"], "inconclusive");
    assert!(v["inferences"]["speed_class"]["value"].is_null());
    assert_eq!(v["bytes_written"], 0);
}

#[test]
fn bench_in_a_directory_uses_and_removes_a_test_file() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let d = dir.path().to_str().unwrap();
    flashscope()
        .args(["bench", d, "--runtime", "200ms", "--size", "4M"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("test file"));
    let v = json_code(
        &["bench", d, "--write", "--runtime", "200ms", "--size", "4M"],
        0,
    );
    assert_eq!(v["jobs"].as_array().unwrap().len(), 8);
    assert!(v["bytes_written"].as_u64().unwrap() > 0);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "test file left behind"
    );
}

#[test]
fn bench_on_a_vanishing_device_keeps_the_finished_tests() {
    let v = json_code(
        &[
            "bench",
            "sim:sd-16g,noise=0,fault=vanish@400",
            "--runtime",
            "1s",
            "--size",
            "16M",
        ],
        1,
    );
    let jobs = v["jobs"].as_array().unwrap();
    assert!(!jobs.is_empty() && jobs.len() < 4, "{}", jobs.len());
    assert!(v["error"].as_str().unwrap().contains("vanished"));
}

#[test]
fn block_devices_refuse_io_writes_without_permission_and_report_disk_statistics() {
    let Some(lo) = Loop::random(32 << 20, 1) else {
        return;
    };
    // Writing needs --write (preserve mode) or --destructive; without either nothing is
    // written.
    flashscope()
        .args(["io", &lo.dev, "--rw", "write", "--size", "1M"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--write"));
    // bench's --journal belongs to preserve mode only.
    flashscope()
        .args([
            "bench",
            &lo.dev,
            "--journal",
            "/var/tmp/j",
            "--runtime",
            "100ms",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--journal"));
    let v = json_code(
        &[
            "io",
            &lo.dev,
            "--rw",
            "randread",
            "--iodepth",
            "8",
            "--runtime",
            "300ms",
            "--time-based",
        ],
        0,
    );
    let d = &v["disk_util"][0];
    assert!(d["name"].as_str().unwrap().starts_with("loop"), "{d}");
    assert!(d["read_ios"].as_u64().unwrap() > 0);
    let v = json_code(
        &[
            "io",
            &lo.dev,
            "--rw",
            "write",
            "--blocksize",
            "1M",
            "--size",
            "8M",
            "--destructive",
            "--verify",
        ],
        0,
    );
    assert_eq!(v["verify"]["bad_units"], 0);
    assert_eq!(v["bytes_written"], 8 << 20);
}

#[test]
fn bench_write_on_a_block_device_preserves_every_byte() {
    let Some(lo) = Loop::random(32 << 20, 2) else {
        return;
    };
    bench_write_preserves(&lo.dev, || lo.hash());
}

#[test]
fn bench_write_on_a_file_preserves_every_byte() {
    use rand::{Rng, SeedableRng};
    let f = scratch(0);
    let mut data = vec![0u8; 32 << 20];
    rand_pcg::Pcg64::seed_from_u64(4).fill(&mut data[..]);
    std::fs::write(f.path(), &data).unwrap();
    bench_write_preserves(f.path().to_str().unwrap(), || common::sha256_of(f.path()));
}

/// `bench TARGET --write` saves the test region, runs, restores and verifies it: the
/// target's hash is unchanged and the journal is gone.
fn bench_write_preserves(target: &str, hash: impl Fn() -> String) {
    let state = tempfile::tempdir().unwrap();
    let before = hash();
    let out = flashscope()
        .env("XDG_STATE_HOME", state.path())
        .args([
            "bench",
            target,
            "--write",
            "--size",
            "8M",
            "--runtime",
            "200ms",
            "--json",
        ])
        .assert()
        .code(0)
        .get_output()
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("preserve mode"), "{err}");
    assert_eq!(v["preserve"]["mode"], "preserve");
    assert_eq!(v["preserve"]["bytes_saved"], 8 << 20);
    assert_eq!(
        v["preserve"]["regions_restored"],
        v["preserve"]["regions_verified"]
    );
    assert!(v["preserve"]["test_bytes_written"].as_u64().unwrap() > 0);
    assert_eq!(v["jobs"].as_array().unwrap().len(), 8);
    let speed = &v["inferences"]["speed_class"];
    if target.starts_with("/dev/") {
        // A loop device over a disk file has no flash medium of its own: the figures are
        // measured, and no class is claimed for them (a class is a card's).
        assert_eq!(speed["status"], "inconclusive", "{speed}");
        assert!(
            speed["evidence"].as_str().unwrap().contains("loop device"),
            "{speed}"
        );
    } else {
        assert_ne!(speed["status"], "inconclusive", "{speed}");
    }
    assert_eq!(hash(), before, "bench --write changed {target}");
    let left: Vec<_> = std::fs::read_dir(state.path().join("flashscope"))
        .unwrap()
        .collect();
    assert!(left.is_empty(), "journal removed: {left:?}");
}

/// Start `bench --write` in preserve mode, wait until its write tests have overwritten
/// the start of the device, then send `sig`. Returns the exit code (None when killed by
/// the signal) and stderr.
fn signal_bench_mid_write(lo: &Loop, journal: &std::path::Path, sig: i32) -> (Option<i32>, String) {
    let original = lo.head(4096);
    let state = journal.parent().unwrap();
    let args = [
        "bench",
        &lo.dev,
        "--write",
        "--size",
        "8M",
        "--runtime",
        "1s",
        "--journal",
        journal.to_str().unwrap(),
    ];
    let stop = common::Stop {
        settle: std::time::Duration::from_millis(300),
        ..common::Stop::mid_test(sig)
    };
    common::signal_when(state, state, &args, &stop, || lo.head(4096) != original)
}

#[test]
fn bench_write_killed_mid_run_leaves_a_journal_that_restores_the_device() {
    let Some(lo) = Loop::random(32 << 20, 3) else {
        return;
    };
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let before = lo.hash();
    let j = dir.path().join("bench.fsjournal");
    let (code, err) = signal_bench_mid_write(&lo, &j, libc::SIGKILL);
    assert_eq!(code, None, "killed: {err}");
    assert!(j.exists(), "{err}");
    assert_ne!(lo.hash(), before, "the write tests had overwritten data");
    flashscope()
        .args(["restore", j.to_str().unwrap()])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("verified"));
    assert_eq!(lo.hash(), before);
    assert!(!j.exists());
    // Ctrl-C and SIGTERM stop the run, restore, and exit 130 / 143.
    for (sig, want) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let (code, err) = signal_bench_mid_write(&lo, &j, sig);
        assert_eq!(code, Some(want), "{err}");
        assert!(err.contains("restored and verified"), "{err}");
        assert!(!j.exists());
        assert_eq!(lo.hash(), before);
    }
}

/// Run flashscope with `args` under a seccomp filter that fails `io_uring_setup` with
/// `errno` (as a container's filter does, or — with ENOSYS — a kernel without io_uring).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn run_without_io_uring(args: &[&str], errno: i32) -> Option<std::process::Output> {
    use std::os::unix::process::CommandExt;
    #[cfg(target_arch = "x86_64")]
    const AUDIT_ARCH: u32 = 0xc000_003e;
    #[cfg(target_arch = "aarch64")]
    const AUDIT_ARCH: u32 = 0xc000_00b7;
    const NR_IO_URING_SETUP: u32 = 425;
    let stmt = |code: u16, k: u32| libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    };
    let jeq = |k: u32, jf: u8| libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        jt: 0,
        jf,
        k,
    };
    let ld = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    let ret = (libc::BPF_RET | libc::BPF_K) as u16;
    let filter = [
        stmt(ld, 4), // seccomp_data.arch
        jeq(AUDIT_ARCH, 3),
        stmt(ld, 0), // seccomp_data.nr
        jeq(NR_IO_URING_SETUP, 1),
        stmt(ret, libc::SECCOMP_RET_ERRNO | errno as u32),
        stmt(ret, libc::SECCOMP_RET_ALLOW),
    ];
    let mut cmd = common::bin();
    cmd.args(args);
    // SAFETY: between fork and exec the closure only calls prctl with a filter built
    // before the fork (no allocation); both calls are async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            let prog = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_ptr() as *mut libc::sock_filter,
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    &prog as *const libc::sock_fprog,
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    match cmd.output() {
        // No seccomp filters here: qemu-user (CI's emulated boards) refuses them.
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            eprintln!("skipped: seccomp filters are not available here ({e})");
            None
        }
        r => Some(r.unwrap()),
    }
}

#[test]
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn without_io_uring_the_warning_names_the_cause_and_the_sync_fallback() {
    let f = scratch(4 << 20);
    let path = f.path().to_str().unwrap();
    let args = [
        "io",
        path,
        "--rw",
        "randread",
        "--iodepth",
        "8",
        "--engine",
        "uring",
        "--size",
        "1M",
        "--json",
    ];
    for (errno, cause) in [(libc::ENOSYS, "no io_uring"), (libc::EPERM, "seccomp")] {
        let Some(out) = run_without_io_uring(&args, errno) else {
            return;
        };
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["jobs"][0]["job options"]["ioengine"], "sync", "{v}");
        assert_eq!(v["jobs"][0]["read"]["io_bytes"], 1 << 20);
        let w = v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["kind"] == "uring_unavailable")
            .unwrap_or_else(|| panic!("no uring_unavailable warning: {v}"));
        let msg = w["message"].as_str().unwrap();
        assert!(msg.contains(cause), "{msg}");
        assert!(msg.contains("sync engine"), "{msg}");
        assert!(msg.contains("--iodepth 8"), "{msg}");
    }
}

#[test]
fn io_options_in_fios_words_do_what_fio_does() {
    // --offset/--size bound the region, --pattern fills it, --blocksize-range varies the block
    // size, --sync/--fsync/--cpus/--ramp-time are accepted and reported.
    let f = scratch(8 << 20);
    let p = f.path().to_str().unwrap();
    let v = json_code(
        &[
            "io",
            p,
            "--rw",
            "write",
            "--offset",
            "1M",
            "--size",
            "2M",
            "--blocksize-range",
            "4k-64k",
            "--pattern",
            "0x5a",
            "--sync",
            "dsync",
            "--fsync",
            "4",
            "--cpus",
            "0",
            "--destructive",
        ],
        0,
    );
    let w = &v["jobs"][0]["write"];
    assert_eq!(w["io_bytes"], 2 << 20);
    let avg = 2.0 * 1048576.0 / w["total_ios"].as_f64().unwrap();
    assert!(avg > 4096.0 && avg < 65536.0, "mean block {avg}");
    assert_eq!(v["jobs"][0]["job options"]["bs"], "4096-65536");
    let data = std::fs::read(f.path()).unwrap();
    assert!(
        data[..1 << 20].iter().all(|&b| b == 0),
        "nothing before --offset"
    );
    assert!(
        data[1 << 20..3 << 20].iter().all(|&b| b == 0x5a),
        "--pattern 0x5a"
    );
    assert!(
        data[3 << 20..].iter().all(|&b| b == 0),
        "nothing after --size"
    );

    // --rwmixread on the simulator's clock; --ramp-time is not counted.
    let v = json_code(
        &[
            "io",
            "sim:sd-16g,noise=0",
            "--rw",
            "randrw",
            "--rwmixread",
            "70",
            "--runtime",
            "2s",
            "--ramp-time",
            "1s",
            "--write",
        ],
        0,
    );
    let j = &v["jobs"][0];
    let (r, w) = (
        j["read"]["total_ios"].as_f64().unwrap(),
        j["write"]["total_ios"].as_f64().unwrap(),
    );
    assert!((r / (r + w) - 0.7).abs() < 0.05, "reads {r}, writes {w}");
    // The ramp second is not counted (the last slow random write may end a little late).
    let runtime = j["read"]["runtime"].as_u64().unwrap();
    assert!((2000..2200).contains(&runtime), "runtime {runtime} ms");

    // A --rate cap holds; one the device cannot reach is reported, not an error.
    let v = json_code(
        &[
            "io",
            "sim:sd-16g,noise=0",
            "--rw",
            "read",
            "--blocksize",
            "64k",
            "--rate",
            "5M",
            "--runtime",
            "2s",
        ],
        0,
    );
    let bw = v["jobs"][0]["read"]["bw_bytes"].as_f64().unwrap();
    assert!(
        (bw / (5.0 * 1048576.0) - 1.0).abs() < 0.05,
        "capped at {bw}"
    );
    let v = json_code(
        &[
            "io",
            "sim:sd-16g,noise=0",
            "--rw",
            "read",
            "--blocksize",
            "64k",
            "--rate",
            "500M",
            "--runtime",
            "1s",
        ],
        0,
    );
    assert!(v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "rate_not_met" && w["message"].as_str().unwrap().contains("500")));
}

/// Issue 31 point 1: a check that cannot fail. A rate or latency without a unit and a
/// cache size without one are refused (exit 2, naming the option and the fix); every
/// check states its threshold in its text, its JSON and its JUnit message.
#[test]
fn checks_need_units_and_state_their_threshold() {
    for (args, needle) in [
        (
            vec![
                "bench",
                "sim:sd-16g",
                "--runtime",
                "1",
                "--expect",
                "seq_read>=30",
            ],
            "'30' has no unit; write e.g. seq_read>=30MB/s",
        ),
        (
            vec![
                "bench",
                "sim:sd-16g",
                "--runtime",
                "1",
                "--expect",
                "seq_read_p99<=5",
            ],
            "'5' has no unit",
        ),
        (
            vec![
                "probe",
                "sim:custom,size=4G,real=1G,fake_mode=limbo,cache=256M",
                "--write",
                "--max-cache",
                "512",
            ],
            "--max-cache '512' has no unit",
        ),
    ] {
        let out = flashscope().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("j.xml");
    let out = flashscope()
        .args([
            "bench",
            "sim:sd-16g",
            "--runtime",
            "1",
            "--expect",
            "seq_read>=1000MB/s",
            "--json",
            "--junit",
        ])
        .arg(&junit)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = &doc["checks"][0];
    assert_eq!(check["threshold"], 1e9, "{check}");
    assert_eq!(check["units"], "bytes/s");
    let msg = check["message"].as_str().unwrap();
    // The threshold as written (10^6 B/s) after the tool's unit.
    assert!(msg.contains("fails >= 954 MiB/s (1000 MB/s)"), "{msg}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("954 MiB/s (1000 MB/s)"), "{xml}");
}

/// Issue 31 point 6: a sparse or preallocated file is measured at memory speed; bench says
/// why and how to fix it. A filled file gets no such warning.
#[test]
fn a_sparse_file_gets_a_warning_naming_the_cause() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let sparse = dir.path().join("sparse.img");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let filled = dir.path().join("filled.img");
    std::fs::write(&filled, common::random_bytes(64 << 20, 3)).unwrap();
    for (f, want) in [(&sparse, true), (&filled, false)] {
        let v = json_code(
            &[
                "bench",
                f.to_str().unwrap(),
                "--runtime",
                "0.2",
                "--size",
                "64M",
            ],
            0,
        );
        let kinds = common::warning_kinds(&v);
        assert_eq!(
            kinds.iter().any(|k| k == "sparse_target"),
            want,
            "{}: {kinds:?}",
            f.display()
        );
    }
}

/// The bench's random 4 KiB IOPS at QD32 (read, write) from its document.
fn rand_q32_iops(v: &serde_json::Value) -> (f64, f64) {
    let jobs = v["jobs"].as_array().unwrap();
    let iops = |dir: &str| {
        jobs.iter()
            .find(|j| j["test"] == "RND4K Q32T1" && j[dir]["total_ios"].as_u64() > Some(0))
            .and_then(|j| j[dir]["iops"].as_f64())
            .unwrap_or_else(|| panic!("no RND4K Q32T1 {dir} figure"))
    };
    (iops("read"), iops("write"))
}

fn app_class_row<'a>(v: &'a serde_json::Value, class: &str) -> &'a serde_json::Value {
    v["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["class"] == class)
        .unwrap_or_else(|| panic!("no {class} row: {}", v["classes"]))
}

/// `sim:sd-a2-64g` is an A2 card as bench measures it: the command queue and the
/// small-write area carry random 4 KiB at QD32 past 4000 / 2000 IOPS (issue 31 point 7).
#[test]
fn bench_finds_the_a2_preset_meets_a2() {
    let v = json_code(&["bench", "sim:sd-a2-64g", "--quick", "--write"], 0);
    let (read, write) = rand_q32_iops(&v);
    assert!(read >= 4000.0 && write >= 2000.0, "{read} / {write}");
    let ac = &v["inferences"]["app_class"];
    assert_eq!(ac["value"], "A2", "{ac}");
    assert_eq!(app_class_row(&v, "A2")["pass"], true);
    assert_eq!(app_class_row(&v, "A1")["pass"], true);
}

/// `sim:sd-a2-fake-64g`, labelled A2, is not: bench says so, and the figure that fails is
/// random 4 KiB write (the A2 row's margin is that figure's), while reads meet A1.
#[test]
fn bench_finds_the_fake_a2_preset_fails_a2_on_random_write() {
    let v = json_code(&["bench", "sim:sd-a2-fake-64g", "--quick", "--write"], 0);
    let (read, write) = rand_q32_iops(&v);
    assert!(read >= 1500.0, "{read}");
    assert!(write < 500.0, "{write}");
    let ac = &v["inferences"]["app_class"];
    assert_ne!(ac["value"], "A2", "{ac}");
    assert_ne!(ac["value"], "A1", "{ac}");
    let a2 = app_class_row(&v, "A2");
    assert_eq!(a2["pass"], false, "{a2}");
    let margin = a2["margin"].as_f64().unwrap();
    assert!(
        (margin - (write / 2000.0 - 1.0)).abs() < 1e-6,
        "A2 fails on random write: margin {margin}, write {write} IOPS"
    );
}

/// `io`'s CPU share counts the kernel's io_uring worker threads (issue 31 point 10). zram
/// cannot take a request without blocking, so io_uring hands every read to a worker
/// thread of flashscope's process, which does the decompression: most of the CPU the
/// process uses. The share `io` reports (`totals`: user + system time over the job's
/// counting time) must account for the process's own CPU time as the kernel counts it
/// (`wait4`'s rusage: every thread, those that exited included), less what the process
/// spends outside the job (start, set-up, the document). Counting the submitting thread
/// alone, it said 38 % where the process used 88 % of a CPU.
#[test]
fn io_cpu_counts_io_urings_worker_threads() {
    let Some(zram) = common::Zram::new(128) else {
        return;
    };
    let dev = zram.dev();
    let mut cmd = common::bin();
    cmd.args([
        "io",
        &dev,
        "--rw",
        "randread",
        "--iodepth",
        "32",
        "--engine",
        "uring",
        "--runtime",
        "2s",
        "--time-based",
        "--json",
    ])
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::null());
    // Reaped by wait4 below, which also gives its CPU time (std's wait does not).
    #[allow(clippy::zombie_processes)]
    let mut child = cmd.spawn().unwrap();
    let mut out = Vec::new();
    std::io::Read::read_to_end(child.stdout.as_mut().unwrap(), &mut out).unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `status` and `ru` are valid, writable memory for the call; `pid` is this
    // test's own child, not yet waited for.
    let r = unsafe { libc::wait4(pid, &mut status, 0, ru.as_mut_ptr()) };
    assert_eq!(r, pid, "wait4: {}", std::io::Error::last_os_error());
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    // SAFETY: filled in by a successful wait4 (zeroed memory is a valid rusage anyway).
    let ru = unsafe { ru.assume_init() };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let process_s = tv(ru.ru_utime) + tv(ru.ru_stime);
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["engine"], "uring", "{}", v["warnings"]);
    let t = &v["totals"];
    let reported_s = (t["usr_ns"].as_u64().unwrap() + t["sys_ns"].as_u64().unwrap()) as f64 / 1e9;
    let runtime_s = t["runtime_ns"].as_u64().unwrap() as f64 / 1e9;
    // The job's share cannot be more than the process's, nor much less: start-up, the ring
    // and buffers, the document take tens of ms here (0.25 s allowed, for a busy machine).
    assert!(
        reported_s <= process_s + 0.02,
        "io says {reported_s:.3} s of CPU, more than the process's {process_s:.3} s"
    );
    assert!(
        reported_s >= 0.9 * process_s - 0.25,
        "io says {reported_s:.3} s of CPU ({:.0} % of its {runtime_s:.2} s), the process used {process_s:.3} s ({:.0} %)",
        reported_s / runtime_s * 100.0,
        process_s / runtime_s * 100.0
    );
}

/// Issue 31.3: io and verify's `elapsed_ns` is the device time of their own I/O (virtual
/// on `sim:`), as bench and probe report it, never the session's wall time: the saving
/// and restoring of preserve mode (or, on `sim:`, the milliseconds the whole run took on
/// the host) are not in it.
#[test]
fn io_and_verify_report_the_device_time_of_their_own_io() {
    let start = std::time::Instant::now();
    let io = json_code(
        &[
            "io",
            "sim:sd-16g",
            "--rw",
            "randwrite",
            "--size",
            "16M",
            "--runtime",
            "2s",
            "--time-based",
            "--write",
        ],
        0,
    );
    let verify = json_code(
        &["verify", "sim:fake-64g,size=256M,real=128M", "--write"],
        3,
    );
    let wall = start.elapsed().as_nanos() as u64;
    let io_ns = io["elapsed_ns"].as_u64().unwrap();
    // Its --runtime on the simulated clock (the job's own), far more than the host took.
    assert!((2_000_000_000..2_500_000_000).contains(&io_ns), "{io_ns}");
    let verify_ns = verify["elapsed_ns"].as_u64().unwrap();
    assert!(verify_ns > 1_000_000_000, "{verify_ns}");
    assert!(
        io_ns + verify_ns > wall,
        "device times {io_ns} + {verify_ns} ns, host {wall} ns"
    );
}

#[test]
fn less_than_one_block_names_the_block_size_option_given() {
    // A 4 MiB card, 6 KiB left from --offset: less than one 8 KiB block.
    for (option, value) in [("--blocksize", "8k"), ("--blocksize-range", "4k-8k")] {
        flashscope()
            .args([
                "io",
                "sim:custom,size=4M",
                "--offset",
                "4188160",
                option,
                value,
            ])
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains(format!("({option} {value}); give a smaller {option}"))
                    .and(predicate::str::contains("less than one block")),
            );
    }
}

/// Issue 45 point 7: a test removes the zram device it hot-added, waiting while another
/// holder still has it open (as io_uring's workers do for a moment after the child that
/// queued on them exited), and is not left with a device that holds RAM until a reboot.
#[test]
fn a_zram_device_a_test_adds_is_removed_even_while_briefly_held() {
    let Some(zram) = common::Zram::new(16) else {
        return;
    };
    let n = zram.dev().trim_start_matches("/dev/zram").to_string();
    let held = std::fs::File::open(zram.dev()).expect("open the zram device");
    let holder = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(400));
        drop(held);
    });
    drop(zram);
    holder.join().unwrap();
    assert!(
        !std::path::Path::new(&format!("/sys/block/zram{n}")).exists(),
        "zram{n} was left behind"
    );
}

/// `bench --write`'s random-write sample (the 4 KiB writes that replan the run) is taken
/// before the first random write test, not before the first write test: taken before
/// SEQ1M Q8T1 write, its random writes left the card's allocation units to be cleaned up
/// as random writes do, and that test measured the aftermath (`bench --quick --write`:
/// sim:sd-16g 11.4 MB/s and sim:usb-32g 8.8 MB/s against 12.7 and 10.7 for the same job on
/// the untouched card). The first sequential write test measures what `io` measures with
/// the same job on a fresh card.
#[test]
fn bench_sequential_write_is_not_measured_after_its_random_write_sample() {
    for preset in ["sd-16g", "sd-a2-64g", "emmc-8g", "usb-32g"] {
        let target = format!("sim:{preset}");
        let b = json_code(&["bench", &target, "--write", "--quick"], 0);
        let p = &b["parameters"];
        let (runtime, ramp, size) = (
            p["runtime_ns_per_test"].as_u64().unwrap(),
            p["ramp_ns_per_test"].as_u64().unwrap(),
            p["size"].as_u64().unwrap(),
        );
        let bench_bw = b["samples"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["dir"] == "write" && s["label"] == "SEQ1M Q8T1")
            .expect("a SEQ1M Q8T1 write figure")["bw_bytes"]
            .as_f64()
            .unwrap();
        let (runtime, ramp, size) = (
            format!("{}us", runtime / 1000),
            format!("{}us", ramp / 1000),
            size.to_string(),
        );
        let io = json_code(
            &[
                "io",
                &target,
                "--rw",
                "write",
                "--blocksize",
                "1M",
                "--iodepth",
                "8",
                "--size",
                &size,
                "--runtime",
                &runtime,
                "--ramp-time",
                &ramp,
                "--time-based",
                "--write",
                "--pattern",
                "zeros",
            ],
            0,
        );
        let io_bw = io["jobs"][0]["write"]["bw_bytes"].as_f64().unwrap();
        let off = bench_bw / io_bw - 1.0;
        eprintln!(
            "{preset}: bench {bench_bw:.0} B/s, io {io_bw:.0} B/s ({:+.1} %)",
            off * 100.0
        );
        assert!(
            off.abs() <= 0.03,
            "{preset}: bench's SEQ1M Q8T1 write {bench_bw:.0} B/s is {:+.1} % from io's {io_bw:.0} B/s for the same job on a fresh card",
            off * 100.0
        );
    }
}
