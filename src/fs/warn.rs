//! The warnings every filesystem test shares: the environment it measured in. Each is a
//! variant of the crate's one [`Warning`] enum, whose `Display` gives cause and remedy.

use crate::vocab::warning::MemoryPlace;
use crate::vocab::Warning;

/// Warnings about the environment that apply to every filesystem test: memory filesystem,
/// compression with a compressible pattern, CPU governor.
pub fn environment_warnings(
    fs: &super::env::FsInfo,
    pattern: super::Pattern,
    governors: &[(String, String)],
) -> Vec<Warning> {
    let mut out = Vec::new();
    if fs.memory_backed {
        out.push(Warning::MemoryFilesystem {
            fs_type: fs.fs_type.clone(),
            place: MemoryPlace::MeasuredDirectory,
        });
    }
    if pattern.compressible() {
        match fs.compresses {
            Some(true) => out.push(Warning::CompressingFilesystem {
                fs_type: fs.fs_type.clone(),
                pattern: pattern.name(),
            }),
            None => out.push(Warning::MaybeCompressing {
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
        out.push(Warning::CpuGovernor { policies: slow });
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
        let w = Warning::BufferedInflated {
            ratio: 4.0,
            buffered_bytes_per_s: 400.0 * 1048576.0,
            synced_bytes_per_s: 100.0 * 1048576.0,
        };
        let s = w.to_string();
        assert!(s.contains("400 MiB/s") && s.contains("100 MiB/s") && s.contains("4.0 x"));
        assert_eq!(w.kind(), "buffered_inflated_by_cache");
    }
}
