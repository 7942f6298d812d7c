//! Board builds: what breaks first on 32-bit targets (offsets above 4 GiB, `usize` vs
//! `u64`) and on trimmed kernels. CI runs this file, like every end-to-end test, under
//! qemu-user for aarch64 and armv7 (`scripts/ci-cross`), so a 32-bit build cannot
//! silently truncate an offset.

use crate::common;
use common::{flashscope, json};
use flashscope::backend::{AlignedBuf, Backend};
use flashscope::device::{self, OpenRequest};

/// A pattern that names its own offset, so an aliased (truncated) write is recognisable.
fn pattern(offset: u64, len: usize) -> AlignedBuf {
    let mut b = AlignedBuf::new(len);
    for (i, chunk) in b.chunks_mut(8).enumerate() {
        let v = offset + (i as u64) * 8;
        chunk.copy_from_slice(&v.to_le_bytes()[..chunk.len()]);
    }
    b
}

/// Write at offsets beyond 4 GiB and check that each reads back there, and that the
/// offset modulo 4 GiB (where a 32-bit truncation would have written) is untouched.
fn round_trip_beyond_4_gib(backend: &mut dyn Backend, offsets: &[u64]) {
    const FOUR_GIB: u64 = 1 << 32;
    let len = 64 << 10;
    for &off in offsets {
        assert!(off >= FOUR_GIB && off + len as u64 <= backend.size_bytes());
        backend.write_at(&pattern(off, len), off).unwrap();
    }
    for &off in offsets {
        let mut back = AlignedBuf::new(len);
        backend.read_at(&mut back, off).unwrap();
        assert!(back[..] == pattern(off, len)[..], "data at {off} differs");
        let mut low = AlignedBuf::new(len);
        backend.read_at(&mut low, off % FOUR_GIB).unwrap();
        assert!(
            low.iter().all(|&b| b == 0),
            "writing at {off} changed offset {} (a 32-bit truncation)",
            off % FOUR_GIB
        );
    }
}

#[test]
fn a_sim_card_keeps_data_above_4_gib_apart() {
    let mut t = device::open(
        &common::target_spec("sim:sd-16g,noise=0"),
        &OpenRequest::read_write(),
    )
    .unwrap();
    assert_eq!(t.backend.size_bytes(), 16 << 30);
    round_trip_beyond_4_gib(
        t.backend.as_mut(),
        &[
            (5 << 30) + 4096,
            (12 << 30) + (3 << 20),
            (16 << 30) - (64 << 10),
        ],
    );
}

#[test]
fn a_sparse_file_keeps_data_above_4_gib_apart_and_discards_there() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("card.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(6 << 30)
        .unwrap();
    let req = OpenRequest {
        write: true,
        require_direct: false,
    };
    let mut t = device::open(&common::target_spec(img.to_str().unwrap()), &req).unwrap();
    assert_eq!(t.info.size_bytes, 6 << 30);
    let off = (5 << 30) + (1 << 20);
    round_trip_beyond_4_gib(t.backend.as_mut(), &[off, (6 << 30) - (64 << 10)]);
    // Discard (hole punch) above 4 GiB must hit the same place, not 1 GiB + 1 MiB.
    match t.backend.discard(off, 64 << 10) {
        Ok(()) => {
            let mut back = AlignedBuf::new(64 << 10);
            t.backend.read_at(&mut back, off).unwrap();
            assert!(back.iter().all(|&b| b == 0), "discard missed {off}");
            let last = (6 << 30) - (64 << 10);
            t.backend.read_at(&mut back, last).unwrap();
            assert!(back[..] == pattern(last, 64 << 10)[..]);
        }
        Err(e) => assert_eq!(e.raw_os_error(), Some(libc::EOPNOTSUPP), "{e}"),
    }
}

#[test]
fn info_reports_sizes_above_4_gib_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("big.img");
    let size = (5u64 << 30) + 4096;
    std::fs::File::create(&img).unwrap().set_len(size).unwrap();
    let v = json(&["info", img.to_str().unwrap()]);
    assert_eq!(v["target"]["size_bytes"], size);
    let v = json(&["info", "sim:custom,size=1T"]);
    assert_eq!(v["target"]["size_bytes"], 1u64 << 40);
}

#[test]
fn the_static_binary_starts_and_names_itself() {
    // A smoke test that matters under emulation: the binary for this target starts.
    flashscope()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicates::str::starts_with("flashscope "));
}

#[test]
fn io_writes_and_verifies_above_4_gib_on_a_file_and_falls_back_from_io_uring_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("card.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(6 << 30)
        .unwrap();
    let out = flashscope()
        .args([
            "io",
            img.to_str().unwrap(),
            "--rw",
            "randwrite",
            "--blocksize",
            "64k",
        ])
        .args([
            "--offset",
            "5G",
            "--size",
            "8M",
            "--iodepth",
            "4",
            "--engine",
            "uring",
        ])
        .args(["--destructive", "--verify", "--json"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(v["bytes_written"], 8u64 << 20, "{v}");
    // Where this kernel (or qemu-user) has no io_uring, the run says so and goes on.
    let uring = flashscope::platform::io_uring(&flashscope::platform::Roots::system());
    if !uring.is_available() {
        let text = format!("{stderr}{v}");
        assert!(
            text.contains("io_uring") && text.contains("sync engine"),
            "{text}"
        );
    }
    // The data landed at 5 GiB, not at 1 GiB (a truncated offset).
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(&img).unwrap();
    let mut low = vec![0u8; 8 << 20];
    f.read_exact_at(&mut low, 1 << 30).unwrap();
    assert!(low.iter().all(|&b| b == 0), "io wrote below 4 GiB");
    let mut high = vec![0u8; 8 << 20];
    f.read_exact_at(&mut high, 5 << 30).unwrap();
    assert!(high.iter().any(|&b| b != 0), "io wrote nothing at 5 GiB");
}

#[test]
fn io_on_a_sim_card_verifies_above_4_gib() {
    flashscope()
        .args([
            "io",
            "sim:sd-16g,noise=0",
            "--rw",
            "randwrite",
            "--blocksize",
            "64k",
        ])
        .args(["--offset", "12G", "--size", "4M", "--write", "--verify"])
        .assert()
        .success();
}
