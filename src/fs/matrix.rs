//! `fs matrix`: iozone's automatic mode (`-a`) — for every file size and record size
//! (record ≤ file), time write, rewrite, read, reread, random read and random write.
//! Like iozone, nothing is flushed between tests unless `--sync` (O_SYNC), `--fsync`
//! (fsync inside the write timings) or `--direct` (O_DIRECT) is given; the file-size > RAM
//! caveat applies.

use super::env;
use super::monitor::ProgressCounters;
use super::{io_err, powers_of_two_down, rate, Pattern, PatternBuf, TestFiles};
use crate::backend::{monotonic_ns, AlignedBuf};
use crate::sys::reopen;
use crate::vocab::units::format_bytes;
use crate::{Error, Result};
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The six tests of a cell, in iozone's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum MatrixTest {
    Write,
    Rewrite,
    Read,
    Reread,
    RandomRead,
    RandomWrite,
}

impl MatrixTest {
    /// Every test, in the order they run in each cell.
    pub const ALL: [MatrixTest; 6] = [
        MatrixTest::Write,
        MatrixTest::Rewrite,
        MatrixTest::Read,
        MatrixTest::Reread,
        MatrixTest::RandomRead,
        MatrixTest::RandomWrite,
    ];

    /// The test's name in tables, CSV headers, JSON keys and plot file names.
    pub fn name(self) -> &'static str {
        match self {
            MatrixTest::Write => "write",
            MatrixTest::Rewrite => "rewrite",
            MatrixTest::Read => "read",
            MatrixTest::Reread => "reread",
            MatrixTest::RandomRead => "random_read",
            MatrixTest::RandomWrite => "random_write",
        }
    }

    fn writes(self) -> bool {
        matches!(
            self,
            MatrixTest::Write | MatrixTest::Rewrite | MatrixTest::RandomWrite
        )
    }
}

/// Default file sizes: 64 KiB … 512 MiB (iozone -a).
pub fn default_file_sizes() -> Vec<u64> {
    let mut v = powers_of_two_down(512 << 20, 64 << 10);
    v.reverse();
    v
}

/// Default record sizes: 4 KiB … 16 MiB (iozone -a).
pub fn default_record_sizes() -> Vec<u64> {
    let mut v = powers_of_two_down(16 << 20, 4 << 10);
    v.reverse();
    v
}

/// What `fs matrix` is asked to do.
#[derive(Debug, Clone)]
pub struct MatrixConfig {
    pub dir: PathBuf,
    pub file_sizes: Vec<u64>,
    pub record_sizes: Vec<u64>,
    /// Open with O_SYNC for every test (iozone -o).
    pub sync: bool,
    /// Include fsync in the write timings (iozone -e).
    pub fsync: bool,
    /// Open with O_DIRECT for every test (iozone -I): no page cache, so files smaller than
    /// RAM show the medium too.
    pub direct: bool,
    pub pattern: Pattern,
    pub keep: bool,
    pub seed: u64,
}

/// One test's figure in one cell.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Measured {
    pub ns: u64,
    /// Whole bytes per second (so a CSV export reproduces the JSON exactly).
    pub bytes_per_s: u64,
}

/// One cell: a file size and a record size, with the six tests' figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct MatrixCell {
    pub file_bytes: u64,
    pub record_bytes: u64,
    pub write: Measured,
    pub rewrite: Measured,
    pub read: Measured,
    pub reread: Measured,
    pub random_read: Measured,
    pub random_write: Measured,
}

impl MatrixCell {
    /// The figure of one test.
    pub fn get(&self, test: MatrixTest) -> Measured {
        match test {
            MatrixTest::Write => self.write,
            MatrixTest::Rewrite => self.rewrite,
            MatrixTest::Read => self.read,
            MatrixTest::Reread => self.reread,
            MatrixTest::RandomRead => self.random_read,
            MatrixTest::RandomWrite => self.random_write,
        }
    }
}

/// Everything `fs matrix` measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct MatrixRun {
    pub cells: Vec<MatrixCell>,
    pub bytes_written: u64,
    pub elapsed_ns: u64,
}

/// The (file, record) pairs of the matrix: every record size not larger than the file.
pub fn cell_list(file_sizes: &[u64], record_sizes: &[u64]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for &f in file_sizes {
        for &r in record_sizes {
            if r <= f {
                out.push((f, r));
            }
        }
    }
    out
}

/// Check a configuration before anything is written.
pub fn validate(cfg: &MatrixConfig) -> Result<()> {
    if cfg.file_sizes.is_empty() || cfg.record_sizes.is_empty() {
        return Err(Error::usage(
            "the matrix is empty: give at least one file size and one record size",
        ));
    }
    if cfg.file_sizes.contains(&0) || cfg.record_sizes.contains(&0) {
        return Err(Error::usage(
            "file and record sizes must be at least 1 byte",
        ));
    }
    if cfg.direct && cfg.record_sizes.iter().any(|r| r % 4096 != 0) {
        return Err(Error::usage(
            "--direct needs record sizes that are multiples of 4 KiB",
        ));
    }
    if cfg.record_sizes.iter().any(|r| *r > 1 << 30) {
        return Err(Error::usage(
            "record sizes above 1 GiB are not supported: give a smaller one",
        ));
    }
    if cell_list(&cfg.file_sizes, &cfg.record_sizes).is_empty() {
        return Err(Error::usage(format!(
            "no record size is at most a file size (largest file {}, smallest record {}): lower the record sizes or raise --max-file",
            format_bytes(cfg.file_sizes.iter().copied().max().unwrap_or(0)),
            format_bytes(cfg.record_sizes.iter().copied().min().unwrap_or(0))
        )));
    }
    Ok(())
}

/// Run every cell in `cfg.dir`, one test file at a time (removed after each cell unless
/// `keep`, then kept under a name with the cell's sizes).
pub fn run(cfg: &MatrixConfig, progress: Arc<ProgressCounters>) -> Result<MatrixRun> {
    validate(cfg)?;
    let mut files = TestFiles::new(env::check_dir(&cfg.dir)?, cfg.keep);
    let fs = env::fs_info(files.dir_path())?;
    let cells = cell_list(&cfg.file_sizes, &cfg.record_sizes);
    let need = if cfg.keep {
        cells.iter().map(|(f, _)| *f).sum()
    } else {
        cfg.file_sizes.iter().copied().max().unwrap_or(0)
    };
    env::check_free_space(&fs, need, "lower --max-file or use another directory")?;
    // Per cell the tests move about 6 × the file size: write, rewrite, read, reread,
    // random read, random write.
    progress.set_total(cells.iter().map(|(f, _)| 6 * f).sum());
    let t0 = monotonic_ns();
    let max_record = cells.iter().map(|(_, r)| *r).max().unwrap_or(4096);
    let mut wbuf = PatternBuf::new(max_record as usize, cfg.pattern, cfg.seed);
    let mut rbuf = AlignedBuf::new(max_record as usize);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(cfg.seed);
    let mut out = Vec::new();
    let mut bytes_written = 0u64;
    for (file_bytes, record_bytes) in cells {
        // Created new; each test opens it again through this descriptor, never the name.
        let (path, anchor) = files.create(&format!("matrix-{file_bytes}-{record_bytes}"))?;
        let mut cell = Cell {
            cfg,
            path: &path,
            anchor: &anchor,
            file_bytes,
            record_bytes,
            wbuf: &mut wbuf,
            rbuf: &mut rbuf,
            progress: &progress,
            bytes_written: &mut bytes_written,
        };
        let mut figures = [Measured {
            ns: 0,
            bytes_per_s: 0,
        }; 6];
        for (i, test) in MatrixTest::ALL.into_iter().enumerate() {
            progress.set_phase(&format!(
                "{} file {} record {}",
                test.name(),
                format_bytes(file_bytes),
                format_bytes(record_bytes)
            ));
            let ns = cell.run_test(test, &mut rng)?;
            figures[i] = Measured {
                ns,
                bytes_per_s: rate(cell.bytes_moved(), ns).round() as u64,
            };
        }
        files.remove_now();
        let [write, rewrite, read, reread, random_read, random_write] = figures;
        out.push(MatrixCell {
            file_bytes,
            record_bytes,
            write,
            rewrite,
            read,
            reread,
            random_read,
            random_write,
        });
    }
    Ok(MatrixRun {
        cells: out,
        bytes_written,
        elapsed_ns: monotonic_ns() - t0,
    })
}

struct Cell<'a> {
    cfg: &'a MatrixConfig,
    path: &'a Path,
    /// The test file as created: every test opens it again through this descriptor.
    anchor: &'a File,
    file_bytes: u64,
    record_bytes: u64,
    wbuf: &'a mut PatternBuf,
    rbuf: &'a mut AlignedBuf,
    progress: &'a ProgressCounters,
    bytes_written: &'a mut u64,
}

impl Cell<'_> {
    /// Records per pass (whole records only; a file smaller than a record is not a cell).
    fn records(&self) -> u64 {
        self.file_bytes / self.record_bytes
    }

    fn bytes_moved(&self) -> u64 {
        self.records() * self.record_bytes
    }

    fn open(&self, test: MatrixTest) -> Result<File> {
        let mut o = OpenOptions::new();
        if test.writes() {
            o.write(true);
            if test == MatrixTest::Write {
                o.truncate(true);
            }
        } else {
            o.read(true);
        }
        let mut flags = 0;
        if self.cfg.sync {
            flags |= libc::O_SYNC;
        }
        if self.cfg.direct {
            flags |= crate::sys::O_DIRECT;
        }
        o.custom_flags(flags);
        reopen(self.anchor, &mut o).map_err(|e| {
            if self.cfg.direct && e.raw_os_error() == Some(libc::EINVAL) {
                Error::Runtime(format!(
                    "the filesystem of {} refused O_DIRECT ({e}): leave out --direct (and use --sync or --fsync for synced figures)",
                    self.path.display()
                ))
            } else {
                Error::io(format!("opening {}", self.path.display()), e)
            }
        })
    }

    /// Run one test and return its duration in ns (open and close included, as iozone).
    fn run_test(&mut self, test: MatrixTest, rng: &mut rand_pcg::Pcg64) -> Result<u64> {
        let n = self.records();
        let rec = self.record_bytes;
        let start = monotonic_ns();
        let file = self.open(test)?;
        for i in 0..n {
            if i % 64 == 0 {
                crate::signals::check()?;
            }
            let offset = match test {
                MatrixTest::RandomRead | MatrixTest::RandomWrite => rng.gen_range(0..n) * rec,
                _ => i * rec,
            };
            if test.writes() {
                let chunk = self.wbuf.chunk(i, rec as usize);
                file.write_all_at(chunk, offset).map_err(|e| {
                    Error::io(
                        format!("writing {} at offset {offset}", self.path.display()),
                        e,
                    )
                })?;
                *self.bytes_written += rec;
            } else {
                file.read_exact_at(&mut self.rbuf[..rec as usize], offset)
                    .map_err(|e| {
                        Error::io(
                            format!("reading {} at offset {offset}", self.path.display()),
                            e,
                        )
                    })?;
            }
            self.progress.add(rec);
        }
        if test.writes() && self.cfg.fsync {
            file.sync_all().map_err(io_err("fsync on", self.path))?;
        }
        drop(file);
        Ok(monotonic_ns() - start)
    }
}

/// The matrix as CSV, one row per cell: file and record size, then bytes per second of
/// each test (header `file_bytes,record_bytes,write,rewrite,read,reread,random_read,random_write`).
pub fn to_csv(cells: &[MatrixCell]) -> String {
    let mut s = String::from("file_bytes,record_bytes");
    for t in MatrixTest::ALL {
        s.push(',');
        s.push_str(t.name());
    }
    s.push('\n');
    for c in cells {
        s.push_str(&format!("{},{}", c.file_bytes, c.record_bytes));
        for t in MatrixTest::ALL {
            s.push_str(&format!(",{}", c.get(t).bytes_per_s));
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_keep_record_at_most_file() {
        let c = cell_list(&[4096, 16384], &[4096, 8192, 32768]);
        assert_eq!(c, vec![(4096, 4096), (16384, 4096), (16384, 8192)]);
        assert_eq!(default_file_sizes().len(), 14);
        assert_eq!(default_record_sizes().len(), 13);
        assert_eq!(default_record_sizes()[0], 4096);
    }

    #[test]
    fn small_matrix_runs_and_csv_has_one_row_per_cell() {
        let d = tempfile::tempdir().unwrap();
        let cfg = MatrixConfig {
            dir: d.path().to_path_buf(),
            file_sizes: vec![64 << 10, 256 << 10],
            record_sizes: vec![4 << 10, 64 << 10],
            sync: false,
            fsync: true,
            direct: false,
            pattern: Pattern::Random,
            keep: false,
            seed: 9,
        };
        let run = run(&cfg, ProgressCounters::new()).unwrap();
        assert_eq!(run.cells.len(), 4);
        // write, rewrite and random write each write the whole file once.
        assert_eq!(run.bytes_written, 3 * (2 * (64 << 10) + 2 * (256 << 10)));
        for c in &run.cells {
            for t in MatrixTest::ALL {
                assert!(c.get(t).bytes_per_s > 0, "{c:?} {t:?}");
            }
        }
        let csv = to_csv(&run.cells);
        assert_eq!(csv.lines().count(), 5);
        assert!(csv.starts_with(
            "file_bytes,record_bytes,write,rewrite,read,reread,random_read,random_write\n"
        ));
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn empty_matrix_is_a_usage_error() {
        let cfg = MatrixConfig {
            dir: "/tmp".into(),
            file_sizes: vec![4096],
            record_sizes: vec![8192],
            sync: false,
            fsync: false,
            direct: false,
            pattern: Pattern::Random,
            keep: false,
            seed: 0,
        };
        assert_eq!(validate(&cfg).unwrap_err().exit_code(), 2);
    }
}
