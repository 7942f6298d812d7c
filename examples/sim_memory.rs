//! Peak memory of the simulator's sparse store: write 16 MiB of random data across a
//! simulated 1 TiB card and print the process's peak RSS (VmHWM).
//!
//! Run: `cargo run --release --example sim_memory`

use flashscope::backend::sim::{SimConfig, SimDevice};
use flashscope::backend::{AlignedBuf, Backend};
use rand::{Rng, SeedableRng};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cfg = SimConfig::parse("custom,size=1T")?;
    let mut dev = SimDevice::new(cfg);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
    let mut buf = AlignedBuf::new(1 << 20);
    for i in 0..16u64 {
        rng.fill(&mut buf[..]);
        // Spread the writes over the whole terabyte.
        let offset = (i * 61 * (1 << 30)) % (1 << 40);
        dev.write_at(&buf, offset)?;
    }
    let status = std::fs::read_to_string("/proc/self/status")?;
    let hwm = status
        .lines()
        .find(|l| l.starts_with("VmHWM"))
        .unwrap_or("VmHWM: unknown");
    println!(
        "sim:custom,size=1T after writing 16 MiB: store holds {} bytes; peak RSS {}",
        dev.resident_bytes(),
        hwm.trim_start_matches("VmHWM:").trim()
    );
    Ok(())
}
