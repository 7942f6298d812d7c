//! Warnings for filesystem results, in words: what was seen, why it matters, what to do.
//! Each is one variant whose `Display` carries cause and remedy, in the manner of
//! hyperfine's warnings.

use crate::report::Warning;
use crate::units::{format_bytes, format_rate};
use std::fmt;

/// Something about a filesystem measurement that a reader must know to trust the figures.
#[derive(Debug, Clone, PartialEq)]
pub enum FsWarning {
    /// The test file fits in RAM, so buffered figures can be the page cache's speed.
    SmallerThanRam { file_bytes: u64, ram_bytes: u64 },
    /// Buffered writes reported more than twice the synced rate.
    BufferedInflated {
        ratio: f64,
        buffered_bytes_per_s: f64,
        synced_bytes_per_s: f64,
    },
    /// Some CPU frequency policy is not `performance`.
    CpuGovernor { policies: Vec<(String, String)> },
    /// The directory is on tmpfs, ramfs or a RAM-backed block device.
    MemoryFilesystem { fs_type: String },
    /// The filesystem compresses and the pattern is compressible.
    CompressingFilesystem { fs_type: String, pattern: String },
    /// The filesystem may compress and that could not be checked.
    MaybeCompressing { fs_type: String, pattern: String },
    /// O_DIRECT was refused, so that mode has no figure.
    DirectUnsupported { reason: String },
    /// `--drop-caches` failed; the per-file drop was used instead.
    DropCachesFailed { reason: String },
    /// Matrix cells with files smaller than RAM measure the page cache (iozone's caveat).
    MatrixCache {
        largest_file_bytes: u64,
        ram_bytes: u64,
    },
    /// The "cold" read began with much of the file still cached (the filesystem keeps
    /// its data in memory, or posix_fadvise was ignored).
    ColdReadNotCold {
        mode: String,
        cached_bytes: u64,
        file_bytes: u64,
    },
    /// Fewer files than asked because `--total` is smaller than the file size.
    TotalBelowSize { file_bytes: u64, total_bytes: u64 },
}

impl FsWarning {
    /// A stable machine-readable name for the JSON `kind` field.
    pub fn kind(&self) -> &'static str {
        match self {
            FsWarning::SmallerThanRam { .. } => "file_smaller_than_ram",
            FsWarning::BufferedInflated { .. } => "buffered_inflated_by_cache",
            FsWarning::CpuGovernor { .. } => "cpu_governor",
            FsWarning::MemoryFilesystem { .. } => "memory_filesystem",
            FsWarning::CompressingFilesystem { .. } => "compressing_filesystem",
            FsWarning::MaybeCompressing { .. } => "maybe_compressing_filesystem",
            FsWarning::DirectUnsupported { .. } => "direct_unsupported",
            FsWarning::DropCachesFailed { .. } => "drop_caches_failed",
            FsWarning::MatrixCache { .. } => "file_smaller_than_ram",
            FsWarning::TotalBelowSize { .. } => "total_below_file_size",
            FsWarning::ColdReadNotCold { .. } => "cold_read_not_cold",
        }
    }

    /// As a report warning.
    pub fn to_warning(&self) -> Warning {
        Warning::new(self.kind(), self.to_string())
    }
}

impl fmt::Display for FsWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FsWarning::SmallerThanRam {
                file_bytes,
                ram_bytes,
            } => write!(
                f,
                "the test file ({}) is smaller than RAM ({}): the kernel can hold all of it in the page cache, so a buffered write may finish before the data reaches the flash and a warm read never touches it. Trust the synced rows (fdatasync, dsync, sync, direct) and the cold reads, or give --size {} or more for an honest buffered figure",
                format_bytes(*file_bytes),
                format_bytes(*ram_bytes),
                format_bytes(ram_bytes.saturating_mul(2)),
            ),
            FsWarning::BufferedInflated {
                ratio,
                buffered_bytes_per_s,
                synced_bytes_per_s,
            } => write!(
                f,
                "buffered writes reported {} but with fdatasync at the end only {} ({ratio:.1} x): the difference is the page cache, not the flash. The synced figure is what the medium sustains; quote that one, and use conv=fdatasync or oflag=direct when you measure with dd",
                format_rate(*buffered_bytes_per_s),
                format_rate(*synced_bytes_per_s),
            ),
            FsWarning::CpuGovernor { policies } => {
                let list: Vec<String> = policies.iter().map(|(p, g)| format!("{p}={g}")).collect();
                write!(
                    f,
                    "the CPU frequency governor is not 'performance' ({}): a slow or changing clock lowers small-block and synced figures and makes runs disagree. For comparable numbers set it with 'echo performance | tee /sys/devices/system/cpu/cpufreq/policy*/scaling_governor' (as root) before measuring",
                    list.join(", ")
                )
            }
            FsWarning::MemoryFilesystem { fs_type } => write!(
                f,
                "the directory is on {fs_type}, which lives in RAM: every figure is the speed of memory, not of flash. Give a directory on the flash filesystem you want to measure"
            ),
            FsWarning::CompressingFilesystem { fs_type, pattern } => write!(
                f,
                "{fs_type} compresses data and the pattern '{pattern}' compresses to almost nothing: the figures count bytes the flash never received. Use --pattern random (the default) for the medium's speed"
            ),
            FsWarning::MaybeCompressing { fs_type, pattern } => write!(
                f,
                "{fs_type} may compress data (a property that cannot be read from the mount options) and the pattern '{pattern}' is compressible: use --pattern random unless compression is known to be off"
            ),
            FsWarning::DirectUnsupported { reason } => write!(
                f,
                "the filesystem refused O_DIRECT ({reason}), so the 'direct' mode has no figure; the other modes ran. Filesystems in RAM and some FUSE or network filesystems do this"
            ),
            FsWarning::DropCachesFailed { reason } => write!(
                f,
                "--drop-caches could not write /proc/sys/vm/drop_caches ({reason}); each test file's own pages were dropped with posix_fadvise instead, which is enough for that file but leaves metadata cached. Run as root, or leave out --drop-caches"
            ),
            FsWarning::MatrixCache {
                largest_file_bytes,
                ram_bytes,
            } => write!(
                f,
                "the largest file in the matrix ({}) is smaller than RAM ({}): like iozone, the matrix does not flush between tests, so its read and reread cells (and its write cells unless --sync or --fsync is given) show the page cache rather than the flash. For the medium's figures use files larger than RAM, --sync or --fsync, or fs seq for cold reads",
                format_bytes(*largest_file_bytes),
                format_bytes(*ram_bytes),
            ),
            FsWarning::ColdReadNotCold {
                mode,
                cached_bytes,
                file_bytes,
            } => write!(
                f,
                "the cold read of mode {mode} began with {} of the {} file still in the page cache (mincore): its figure is partly the cache's. The filesystem keeps data in memory or ignored posix_fadvise; try --drop-caches as root, or a filesystem on the flash itself",
                format_bytes(*cached_bytes),
                format_bytes(*file_bytes),
            ),
            FsWarning::TotalBelowSize {
                file_bytes,
                total_bytes,
            } => write!(
                f,
                "--total {} is smaller than the file size {}: one file of that size was written instead. Raise --total for more than one file per size",
                format_bytes(*total_bytes),
                format_bytes(*file_bytes),
            ),
        }
    }
}

/// Warnings about the environment that apply to every filesystem test: memory filesystem,
/// compression with a compressible pattern, CPU governor.
pub fn environment_warnings(
    fs: &super::env::FsInfo,
    pattern: super::Pattern,
    governors: &[(String, String)],
) -> Vec<FsWarning> {
    let mut out = Vec::new();
    if fs.memory_backed {
        out.push(FsWarning::MemoryFilesystem {
            fs_type: fs.fs_type.clone(),
        });
    }
    if pattern.compressible() {
        match fs.compresses {
            Some(true) => out.push(FsWarning::CompressingFilesystem {
                fs_type: fs.fs_type.clone(),
                pattern: pattern.name(),
            }),
            None => out.push(FsWarning::MaybeCompressing {
                fs_type: fs.fs_type.clone(),
                pattern: pattern.name(),
            }),
            Some(false) => {}
        }
    }
    let slow: Vec<(String, String)> = governors
        .iter()
        .filter(|(_, g)| g != "performance")
        .cloned()
        .collect();
    if !slow.is_empty() {
        out.push(FsWarning::CpuGovernor { policies: slow });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::env::FsInfo;
    use super::super::Pattern;
    use super::*;

    fn fs(fs_type: &str, memory: bool, compresses: Option<bool>) -> FsInfo {
        FsInfo {
            dir: "/x".into(),
            magic: 0,
            fs_type: fs_type.into(),
            mount_point: None,
            mount_source: None,
            mount_options: String::new(),
            free_bytes: None,
            block_bytes: 4096,
            memory_backed: memory,
            compresses,
        }
    }

    #[test]
    fn environment_warnings_name_cause_and_remedy() {
        let w = environment_warnings(
            &fs("tmpfs", true, Some(false)),
            Pattern::Random,
            &[("policy0".into(), "performance".into())],
        );
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].kind(), "memory_filesystem");
        assert!(w[0].to_string().contains("RAM"));

        let w = environment_warnings(
            &fs("btrfs", false, Some(true)),
            Pattern::Zeros,
            &[("policy0".into(), "powersave".into())],
        );
        let kinds: Vec<&str> = w.iter().map(|w| w.kind()).collect();
        assert_eq!(kinds, vec!["compressing_filesystem", "cpu_governor"]);
        assert!(w[0].to_string().contains("--pattern random"));
        assert!(w[1].to_string().contains("policy0=powersave"));

        // A compressing filesystem with random data needs no warning.
        assert!(
            environment_warnings(&fs("ubifs", false, Some(true)), Pattern::Random, &[]).is_empty()
        );
        assert_eq!(
            environment_warnings(&fs("zfs", false, None), Pattern::Zeros, &[])[0].kind(),
            "maybe_compressing_filesystem"
        );
    }

    #[test]
    fn inflated_warning_quotes_both_rates() {
        let w = FsWarning::BufferedInflated {
            ratio: 4.0,
            buffered_bytes_per_s: 400.0 * 1048576.0,
            synced_bytes_per_s: 100.0 * 1048576.0,
        };
        let s = w.to_string();
        assert!(s.contains("400 MiB/s") && s.contains("100 MiB/s") && s.contains("4.0 x"));
        assert_eq!(w.to_warning().kind, "buffered_inflated_by_cache");
    }
}
