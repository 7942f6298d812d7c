//! A job: what to read or write, where, how much and how fast — fio's vocabulary where it
//! means the same thing (`rw`, `bs`, `iodepth`, `numjobs`, `size`, `runtime`, …).

use crate::vocab::units::parse_size;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// The access pattern (fio's `rw`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    Read,
    Write,
    RandRead,
    RandWrite,
    RandRw,
    Rw,
}

impl RwMode {
    /// Parse fio's names (`read`, `write`, `randread`, `randwrite`, `randrw`, `rw`/`readwrite`).
    pub fn parse(text: &str) -> Result<Self> {
        Ok(match text.trim().to_ascii_lowercase().as_str() {
            "read" => RwMode::Read,
            "write" => RwMode::Write,
            "randread" => RwMode::RandRead,
            "randwrite" => RwMode::RandWrite,
            "randrw" => RwMode::RandRw,
            "rw" | "readwrite" => RwMode::Rw,
            _ => {
                return Err(Error::usage(format!(
                    "--rw '{text}' is not a pattern: use read, write, randread, randwrite, randrw or rw"
                )))
            }
        })
    }

    /// fio's name.
    pub fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::RandRw => "randrw",
            RwMode::Rw => "rw",
        }
    }

    /// True when offsets are random rather than sequential.
    pub fn is_random(self) -> bool {
        matches!(self, RwMode::RandRead | RwMode::RandWrite | RwMode::RandRw)
    }

    /// True when the job writes at all.
    pub fn writes(self) -> bool {
        !matches!(self, RwMode::Read | RwMode::RandRead)
    }

    /// True when the job reads at all.
    pub fn reads(self) -> bool {
        !matches!(self, RwMode::Write | RwMode::RandWrite)
    }
}

/// Which I/O engine moves the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// pread/pwrite, one I/O at a time (fio's psync).
    Sync,
    /// io_uring with registered buffers and batched submission.
    Uring,
    /// No I/O at all: measures the harness (fio's null engine).
    Null,
}

impl EngineKind {
    pub fn parse(text: &str) -> Result<Self> {
        Ok(match text.trim().to_ascii_lowercase().as_str() {
            "sync" | "psync" => EngineKind::Sync,
            "uring" | "io_uring" => EngineKind::Uring,
            "null" => EngineKind::Null,
            _ => {
                return Err(Error::usage(format!(
                    "--engine '{text}' is not an engine: use sync, uring or null"
                )))
            }
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Sync => "sync",
            EngineKind::Uring => "uring",
            EngineKind::Null => "null",
        }
    }
}

/// Synchronous-write flags on open (fio's `sync=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum SyncMode {
    None,
    /// O_SYNC: data and metadata durable at each write.
    Sync,
    /// O_DSYNC: data durable at each write.
    Dsync,
}

impl SyncMode {
    pub fn parse(text: &str) -> Result<Self> {
        Ok(match text.trim().to_ascii_lowercase().as_str() {
            "0" | "none" | "off" => SyncMode::None,
            "1" | "sync" | "o_sync" => SyncMode::Sync,
            "dsync" | "o_dsync" => SyncMode::Dsync,
            _ => {
                return Err(Error::usage(format!(
                    "--sync '{text}' is not a mode: use none, sync (O_SYNC) or dsync (O_DSYNC)"
                )))
            }
        })
    }
}

/// What written blocks contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    Zeros,
    Ones,
    /// Every byte this value.
    Byte(u8),
    /// Pseudo-random bytes (incompressible), filled once per buffer.
    Random,
}

impl Pattern {
    pub fn parse(text: &str) -> Result<Self> {
        let t = text.trim().to_ascii_lowercase();
        Ok(match t.as_str() {
            "zeros" | "zero" => Pattern::Zeros,
            "ones" | "0xff" => Pattern::Ones,
            "random" => Pattern::Random,
            _ => match t.strip_prefix("0x").map(|h| u8::from_str_radix(h, 16)) {
                Some(Ok(b)) => Pattern::Byte(b),
                _ => {
                    return Err(Error::usage(format!(
                        "--pattern '{text}' is not a pattern: use zeros, ones, random or a byte like 0x5a"
                    )))
                }
            },
        })
    }

    /// The pattern's name on the command line.
    pub fn name(self) -> String {
        match self {
            Pattern::Zeros => "zeros".into(),
            Pattern::Ones => "ones".into(),
            Pattern::Byte(b) => format!("0x{b:02x}"),
            Pattern::Random => "random".into(),
        }
    }

    /// Whether a compressing filesystem shrinks this data (every pattern but random).
    pub fn compressible(self) -> bool {
        self != Pattern::Random
    }

    /// Fill a buffer with this pattern (random from `seed`).
    pub fn fill(self, buf: &mut [u8], seed: u64) {
        match self {
            Pattern::Zeros => buf.fill(0),
            Pattern::Ones => buf.fill(0xff),
            Pattern::Byte(b) => buf.fill(b),
            Pattern::Random => {
                let mut x = seed | 1;
                for chunk in buf.chunks_mut(8) {
                    // xorshift64*: fast, good enough to defeat compression.
                    x ^= x >> 12;
                    x ^= x << 25;
                    x ^= x >> 27;
                    let v = x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes();
                    chunk.copy_from_slice(&v[..chunk.len()]);
                }
            }
        }
    }
}

/// A rate cap in bytes per second, per direction (fio's `rate=read,write`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RateLimit {
    pub read: Option<u64>,
    pub write: Option<u64>,
}

impl RateLimit {
    /// `10M` caps both directions; `10M,2M` reads and writes apart; an empty side is no cap.
    pub fn parse(text: &str) -> Result<Self> {
        let one = |s: &str| -> Result<Option<u64>> {
            let s = s.trim();
            if s.is_empty() {
                return Ok(None);
            }
            let s = s.strip_suffix("/s").unwrap_or(s);
            let v = parse_size(s).map_err(|_| {
                Error::usage(format!(
                    "--rate '{text}': '{s}' is not a rate in bytes per second, e.g. 10M"
                ))
            })?;
            if v == 0 {
                return Err(Error::usage(format!(
                    "--rate '{text}': a rate of 0 would never finish; leave the side empty for no cap"
                )));
            }
            Ok(Some(v))
        };
        match text.split_once(',') {
            Some((r, w)) => Ok(RateLimit {
                read: one(r)?,
                write: one(w)?,
            }),
            None => {
                let v = one(text)?;
                Ok(RateLimit { read: v, write: v })
            }
        }
    }
}

/// Parse a CPU list like `0`, `0-1` or `0,2-3` (fio's `cpus_allowed`).
pub fn parse_cpus(text: &str) -> Result<Vec<usize>> {
    let bad = || {
        Error::usage(format!(
            "--cpus '{text}' is not a CPU list: use numbers and ranges like 0 or 0-1,3"
        ))
    };
    let mut out = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let a: usize = a.parse().map_err(|_| bad())?;
        let b: usize = b.parse().map_err(|_| bad())?;
        if a > b {
            return Err(bad());
        }
        if b >= 1024 {
            return Err(Error::usage(format!(
                "--cpus '{text}': CPU {b} is beyond the 1024 CPUs a list may name; give CPUs this machine has (0 to `nproc --all` less 1)"
            )));
        }
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// One job, as the engine runs it. Sizes and offsets are in bytes, times in ns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct JobSpec {
    pub name: String,
    pub rw: RwMode,
    /// Percentage of reads in mixed modes (fio's `rwmixread`).
    pub rwmixread: u32,
    /// Smallest and largest block size (equal unless `--blocksize-range`).
    pub bs_min: u64,
    pub bs_max: u64,
    pub iodepth: u32,
    pub numjobs: u32,
    /// Region start and length on the target.
    pub offset: u64,
    pub size: u64,
    /// Stop after this long (after the ramp); `None` runs until `size` bytes are done.
    pub runtime_ns: Option<u64>,
    /// Keep going over the region until `runtime` ends.
    pub time_based: bool,
    /// Run this long before counting (fio's `ramp_time`).
    pub ramp_ns: u64,
    pub direct: bool,
    pub sync: SyncMode,
    /// fsync after every N writes (0 = never).
    pub fsync: u32,
    pub engine: EngineKind,
    pub rate: RateLimit,
    pub verify: bool,
    pub pattern: Pattern,
    /// CPUs the job threads may run on (empty = any).
    pub cpus: Vec<usize>,
    pub seed: u64,
    /// Stop issuing once SIGINT or SIGTERM was recorded (`crate::signals`), so a
    /// preserve-mode run can restore before exiting.
    #[serde(skip)]
    pub stop_on_signal: bool,
}

impl Default for JobSpec {
    fn default() -> Self {
        JobSpec {
            name: "job".into(),
            rw: RwMode::Read,
            rwmixread: 50,
            bs_min: 4096,
            bs_max: 4096,
            iodepth: 1,
            numjobs: 1,
            offset: 0,
            size: 0,
            runtime_ns: None,
            time_based: false,
            ramp_ns: 0,
            direct: true,
            sync: SyncMode::None,
            fsync: 0,
            engine: EngineKind::Sync,
            rate: RateLimit::default(),
            verify: false,
            pattern: Pattern::Random,
            cpus: Vec::new(),
            seed: 0x5eed_f1a5,
            stop_on_signal: false,
        }
    }
}

/// The most memory a job's I/O buffers may take, whatever the machine (see
/// `JobSpec::buffer_bytes`): ten times what fio-sized jobs need (1 MiB × QD32 × 8 jobs
/// is 264 MiB), and no more, so a typo in `--blocksize` or `--iodepth` cannot exhaust memory.
pub const MAX_BUFFER_BYTES: u64 = 1 << 30;

impl JobSpec {
    /// The memory the engine holds for I/O buffers, at most: per job one buffer of the
    /// largest block size for each slot of the queue and one for the write pattern (none
    /// for the null engine).
    pub fn buffer_bytes(&self) -> u64 {
        if self.engine == EngineKind::Null {
            return 0;
        }
        self.bs_max
            .saturating_mul(u64::from(self.iodepth) + 1)
            .saturating_mul(u64::from(self.numjobs))
    }

    /// Refuse a job whose buffers would not fit in memory: more than `MAX_BUFFER_BYTES`,
    /// or more than half of `available` bytes (MemAvailable; 0 when unknown).
    pub fn check_buffer_memory(&self, available: u64) -> Result<()> {
        let need = self.buffer_bytes();
        let limit = if available > 0 {
            MAX_BUFFER_BYTES.min(available / 2)
        } else {
            MAX_BUFFER_BYTES
        };
        if need <= limit {
            return Ok(());
        }
        let why = if limit == MAX_BUFFER_BYTES {
            format!(
                "at most {} are allowed",
                crate::vocab::units::format_bytes(limit)
            )
        } else {
            format!(
                "this machine has {} available and a job may take half",
                crate::vocab::units::format_bytes(available)
            )
        };
        Err(Error::usage(format!(
            "--blocksize {} x (--iodepth {} + 1) x --numjobs {} needs {} of I/O buffers; {why}: use a smaller --iodepth, --blocksize or --numjobs",
            crate::vocab::units::format_bytes(self.bs_max),
            self.iodepth,
            self.numjobs,
            crate::vocab::units::format_bytes(need),
        )))
    }

    /// Check the job against the target's size and sector; errors name the value and the fix.
    pub fn validate(&self, target_size: u64, sector: u32) -> Result<()> {
        let sector = u64::from(sector.max(1));
        if self.iodepth == 0 {
            return Err(Error::usage(
                "--iodepth 0: the queue depth must be at least 1",
            ));
        }
        if self.iodepth > 4096 {
            return Err(Error::usage(format!(
                "--iodepth {}: at most 4096 I/Os can be in flight",
                self.iodepth
            )));
        }
        if self.numjobs == 0 || self.numjobs > 256 {
            return Err(Error::usage(format!(
                "--numjobs {}: use 1 to 256 jobs",
                self.numjobs
            )));
        }
        if self.rwmixread > 100 {
            return Err(Error::usage(format!(
                "--rwmixread {}: a percentage from 0 to 100",
                self.rwmixread
            )));
        }
        if self.bs_min == 0 || self.bs_min > self.bs_max {
            return Err(Error::usage(format!(
                "block size {}-{}: the smallest must be at least 1 byte and not above the largest",
                self.bs_min, self.bs_max
            )));
        }
        if self.bs_max > 64 << 20 {
            return Err(Error::usage(format!(
                "--blocksize {}: at most 64 MiB per I/O",
                crate::vocab::units::format_bytes(self.bs_max)
            )));
        }
        if self.direct && (self.bs_min % sector != 0 || self.bs_max % sector != 0) {
            return Err(Error::usage(format!(
                "--blocksize {}: with --direct the block size must be a multiple of the logical sector size ({} bytes); use e.g. --blocksize {} or --direct=0",
                self.bs_text(),
                sector,
                self.bs_min.div_ceil(sector) * sector
            )));
        }
        if self.direct && self.offset % sector != 0 {
            return Err(Error::usage(format!(
                "--offset {}: with --direct it must be a multiple of the logical sector size ({sector} bytes)",
                self.offset
            )));
        }
        if self.offset >= target_size {
            return Err(Error::usage(format!(
                "--offset {} is at or beyond the end of the target ({} bytes)",
                self.offset, target_size
            )));
        }
        let end = self.offset.checked_add(self.size);
        if self.size == 0 || end.is_none_or(|e| e > target_size) {
            return Err(Error::usage(format!(
                "--size {} at --offset {} does not fit the target ({} = {} bytes); use a smaller --size",
                crate::vocab::units::format_bytes(self.size),
                self.offset,
                crate::vocab::units::format_bytes(target_size),
                target_size
            )));
        }
        if self.size < self.bs_max {
            return Err(Error::usage(format!(
                "--size {} is smaller than one block ({}); use a larger --size or a smaller --blocksize",
                self.size, self.bs_max
            )));
        }
        if self.time_based && self.runtime_ns.is_none() {
            return Err(Error::usage(
                "--time-based needs --runtime (how long to run)",
            ));
        }
        self.check_buffer_memory(0)
    }

    fn bs_text(&self) -> String {
        if self.bs_min == self.bs_max {
            self.bs_min.to_string()
        } else {
            format!("{}-{}", self.bs_min, self.bs_max)
        }
    }

    /// Parse `--blocksize-range 4k-64k`.
    pub fn parse_bsrange(text: &str) -> Result<(u64, u64)> {
        let (a, b) = text.split_once('-').ok_or_else(|| {
            Error::usage(format!(
                "--blocksize-range '{text}' is not a range: use LOW-HIGH, e.g. 4k-64k"
            ))
        })?;
        let side = |v: &str| {
            parse_size(v).map_err(|e| Error::usage(format!("--blocksize-range '{text}': {e}")))
        };
        Ok((side(a)?, side(b)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_words_parse() {
        assert_eq!(RwMode::parse("randrw").unwrap(), RwMode::RandRw);
        assert!(RwMode::parse("sideways").is_err());
        assert_eq!(EngineKind::parse("io_uring").unwrap(), EngineKind::Uring);
        assert_eq!(Pattern::parse("0x5a").unwrap(), Pattern::Byte(0x5a));
        assert!(Pattern::parse("0xzz").is_err());
        assert_eq!(
            RateLimit::parse("10M,").unwrap(),
            RateLimit {
                read: Some(10 << 20),
                write: None
            }
        );
        assert!(RateLimit::parse("0").is_err());
        assert_eq!(parse_cpus("0,2-3").unwrap(), vec![0, 2, 3]);
        assert!(parse_cpus("3-1").is_err());
        let far = parse_cpus("4096").unwrap_err().to_string();
        assert!(
            far.contains("--cpus '4096'") && far.contains("beyond"),
            "{far}"
        );
        assert_eq!(JobSpec::parse_bsrange("4k-64k").unwrap(), (4096, 65536));
    }

    #[test]
    fn validation_names_the_bad_value() {
        let base = JobSpec {
            size: 1 << 20,
            ..JobSpec::default()
        };
        let e = JobSpec {
            iodepth: 0,
            ..base.clone()
        }
        .validate(1 << 30, 512)
        .unwrap_err();
        assert!(e.to_string().contains("--iodepth 0"));
        let e = JobSpec {
            bs_min: 1000,
            bs_max: 1000,
            ..base.clone()
        }
        .validate(1 << 30, 512)
        .unwrap_err();
        assert!(
            e.to_string().contains("multiple of the logical sector"),
            "{e}"
        );
        let e = JobSpec {
            size: 2 << 30,
            ..base.clone()
        }
        .validate(1 << 30, 512)
        .unwrap_err();
        assert!(e.to_string().contains("does not fit"), "{e}");
        assert!(base.validate(1 << 30, 512).is_ok());
        // Without O_DIRECT any block size is fine.
        assert!(JobSpec {
            bs_min: 1000,
            bs_max: 1000,
            direct: false,
            ..base
        }
        .validate(1 << 30, 512)
        .is_ok());
    }

    #[test]
    fn buffers_beyond_the_memory_cap_are_refused_before_anything_is_allocated() {
        let job = |bs: u64, iodepth: u32, numjobs: u32| JobSpec {
            bs_min: bs,
            bs_max: bs,
            iodepth,
            numjobs,
            size: 1 << 30,
            ..JobSpec::default()
        };
        // fio-sized jobs pass: 1 MiB x (32 + 1) x 8 = 264 MiB.
        assert_eq!(job(1 << 20, 32, 8).buffer_bytes(), 264 << 20);
        assert!(job(1 << 20, 32, 8).validate(1 << 40, 512).is_ok());
        let e = job(64 << 20, 4096, 1).validate(1 << 40, 512).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("--blocksize 64 MiB x (--iodepth 4096 + 1) x --numjobs 1")
                && text.contains("256 GiB")
                && text.contains("at most 1 GiB"),
            "{text}"
        );
        assert_eq!(e.exit_code(), 2);
        // Half of what the machine has is the limit where that is less.
        assert!(job(1 << 20, 32, 1).check_buffer_memory(512 << 20).is_ok());
        let e = job(1 << 20, 255, 1)
            .check_buffer_memory(256 << 20)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("256 MiB of I/O buffers") && e.contains("256 MiB available"),
            "{e}"
        );
        // Unknown memory (0): only the fixed cap.
        assert!(job(1 << 20, 255, 1).check_buffer_memory(0).is_ok());
        // The null engine moves nothing and holds no buffers.
        let null = JobSpec {
            engine: EngineKind::Null,
            ..job(64 << 20, 4096, 1)
        };
        assert!(null.validate(1 << 40, 512).is_ok());
    }

    #[test]
    fn random_pattern_is_not_constant() {
        let mut b = vec![0u8; 64];
        Pattern::Random.fill(&mut b, 7);
        assert!(b.iter().any(|&x| x != b[0]));
    }
}
