//! Helpers shared by the end-to-end tests. Each test file uses some of them.
#![allow(dead_code)]

use std::process::Command as StdCommand;

/// Make sure the partition's device node exists (no udev in minimal containers): ask the
/// kernel to add the partition, then create the node from sysfs if needed; removed on drop
/// only if this test created it.
pub struct PartitionNode {
    created: Option<String>,
}

impl PartitionNode {
    pub fn create(disk: &str, part: &str) -> Option<PartitionNode> {
        let _ = StdCommand::new("partx")
            .args(["-a", disk])
            .stderr(std::process::Stdio::null())
            .status();
        let name = part.trim_start_matches("/dev/");
        let sys = format!("/sys/class/block/{name}/dev");
        let mut dev = None;
        for _ in 0..100 {
            if let Ok(d) = std::fs::read_to_string(&sys) {
                dev = Some(d.trim().to_string());
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let dev = dev?;
        if std::path::Path::new(part).exists() {
            return Some(PartitionNode { created: None });
        }
        let (maj, min) = dev.split_once(':')?;
        let ok = StdCommand::new("mknod")
            .args([part, "b", maj, min])
            .status()
            .ok()?
            .success();
        ok.then(|| PartitionNode {
            created: Some(part.to_string()),
        })
    }
}

impl Drop for PartitionNode {
    fn drop(&mut self) {
        if let Some(p) = &self.created {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// The flashscope binary under test (through the cross runner when one is set).
pub fn flashscope() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("flashscope").unwrap()
}

/// Run flashscope with `args` and `--json`, expect success, parse stdout as one document.
pub fn json(args: &[&str]) -> serde_json::Value {
    let out = flashscope()
        .args(args)
        .arg("--json")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).expect("stdout is one JSON document")
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// SHA-256 of a file, as `sha256sum` prints it.
pub fn sha256_of(path: &std::path::Path) -> String {
    let out = StdCommand::new("sha256sum").arg(path).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_string()
}

/// A loop device with direct I/O over a file in a temporary directory under /var/tmp (a
/// real filesystem, not tmpfs), detached by its exact name on drop. `None` (with the
/// reason on stderr) when not root or losetup fails, so tests can skip.
pub struct Loop {
    pub dev: String,
    pub img: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Loop {
    /// Over a sparse file of `size` zero bytes; `extra` are more losetup options.
    pub fn attach(size: u64, extra: &[&str]) -> Option<Loop> {
        Self::attach_with(extra, |img| {
            std::fs::File::create(img)?.set_len(size)?;
            Ok(())
        })
    }

    /// Over a file of `size` pseudo-random bytes from `seed`.
    pub fn random(size: usize, seed: u64) -> Option<Loop> {
        use rand::{Rng, SeedableRng};
        Self::attach_with(&[], |img| {
            let mut data = vec![0u8; size];
            rand_pcg::Pcg64::seed_from_u64(seed).fill(&mut data[..]);
            std::fs::write(img, &data)
        })
    }

    fn attach_with(
        extra: &[&str],
        fill: impl FnOnce(&std::path::Path) -> std::io::Result<()>,
    ) -> Option<Loop> {
        if !is_root() {
            eprintln!("skipped: loop devices need root");
            return None;
        }
        let dir = tempfile::tempdir_in("/var/tmp").ok()?;
        let img = dir.path().join("card.img");
        fill(&img).ok()?;
        // A timeout: losetup can block on a busy loop-control under load.
        let out = StdCommand::new("timeout")
            .args(["30", "losetup", "--find", "--show", "--direct-io=on"])
            .args(extra)
            .arg(&img)
            .output()
            .ok()?;
        if !out.status.success() {
            eprintln!(
                "skipped: losetup failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            return None;
        }
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Some(Loop {
            dev,
            img,
            _dir: dir,
        })
    }

    /// The temporary directory that holds the backing file (room for journals and state).
    pub fn dir(&self) -> &std::path::Path {
        self._dir.path()
    }

    /// The first `n` bytes of the backing file.
    pub fn head(&self, n: usize) -> Vec<u8> {
        use std::io::Read;
        let mut buf = vec![0u8; n];
        std::fs::File::open(&self.img)
            .and_then(|mut f| f.read_exact(&mut buf))
            .unwrap();
        buf
    }

    /// SHA-256 of the backing file as seen through the device (flushes the loop's cache).
    pub fn hash(&self) -> String {
        let _ = StdCommand::new("blockdev")
            .args(["--flushbufs", &self.dev])
            .status();
        sha256_of(&self.img)
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = StdCommand::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// A mount on a temporary directory, unmounted by its exact path on drop.
pub struct Mounted {
    dir: tempfile::TempDir,
}

impl Mounted {
    /// `mount ARGS DIR`, e.g. `["-t", "tmpfs", "-o", "size=4m", "tmpfs"]` or `[dev]`.
    pub fn new(args: &[&str]) -> Option<Mounted> {
        let dir = tempfile::tempdir().ok()?;
        let st = StdCommand::new("mount")
            .args(args)
            .arg(dir.path())
            .status()
            .ok()?;
        if !st.success() {
            eprintln!("skipped: mount {args:?} failed");
            return None;
        }
        Some(Mounted { dir })
    }

    /// A fresh ext4 on `dev`, mounted with `opts` (e.g. "rw").
    pub fn ext4(dev: &str, opts: &str) -> Option<Mounted> {
        let ok = StdCommand::new("mkfs.ext4")
            .args(["-q", "-F", dev])
            .status()
            .ok()?
            .success();
        if !ok {
            eprintln!("skipped: mkfs.ext4 {dev} failed");
            return None;
        }
        Self::new(&["-o", opts, dev])
    }

    pub fn path(&self) -> &std::path::Path {
        self.dir.path()
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = StdCommand::new("umount").arg(self.dir.path()).status();
    }
}
