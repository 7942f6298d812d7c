//! Stamp throughput: how fast one core generates and checks flashscope's block stamps.
//!
//! Run: `cargo run --release --example stamp_bench [MiB]` (default 1024 MiB per phase).
//! `verify` must be limited by the device, not the CPU: this prints GB/s for fill and
//! check so the figure can be compared with the device bandwidth.

use flashscope::pattern::Stamper;
use std::time::Instant;

fn main() {
    let mib: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1024);
    let chunk = 1 << 20;
    let rounds = mib.max(1);
    let stamper = Stamper::new(Stamper::random_salt());
    let mut buf = vec![0u8; chunk];

    let t = Instant::now();
    for i in 0..rounds {
        stamper.fill(&mut buf, (i * chunk) as u64);
        std::hint::black_box(&buf);
    }
    let fill_s = t.elapsed().as_secs_f64();

    let mut good = 0usize;
    let mut bad = 0usize;
    let t = Instant::now();
    for i in 0..rounds {
        // Check the buffer against the offset it was filled for on the last round and
        // against the others, so both the fast path and the miss path are exercised.
        let at = ((rounds - 1) * chunk) as u64;
        let off = if i % 64 == 63 { at + chunk as u64 } else { at };
        good += stamper.check(std::hint::black_box(&buf), off, |_, _| bad += 1);
    }
    let check_s = t.elapsed().as_secs_f64();
    let bytes = (rounds * chunk) as f64;
    println!(
        "stamp fill:  {:.2} GB/s ({} MiB in {:.3} s, one core)",
        bytes / fill_s / 1e9,
        rounds,
        fill_s
    );
    println!(
        "stamp check: {:.2} GB/s ({} MiB in {:.3} s, one core; {} units good, {} not)",
        bytes / check_s / 1e9,
        rounds,
        check_s,
        good,
        bad
    );
}
