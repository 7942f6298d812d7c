//! Exporters: the result in the formats fleets and CI already read (hyperfine's
//! `src/export` shape). Each format is one [`Exporter`] that reads only the document's typed
//! `checks` and `metrics` and the typed target (`Document::target_info`), never its JSON.
//!
//! Export files are opened before anything is measured ([`Exports::open`]: a missing or
//! unwritable directory is a usage error, exit 2) as a temporary file beside the named
//! one, written when the result is ready and renamed into place, so a reader (a
//! Prometheus scrape, a CI step) sees the old file or the whole new one, never half.

pub mod junit;
pub mod lava;
pub mod prometheus;

use crate::report::output_file::OutputFile;
use crate::report::Document;
use crate::Result;
use std::io::{self, Write};
use std::path::Path;

/// One output format.
pub trait Exporter {
    /// Write `doc` in this format.
    fn write(&self, doc: &Document, out: &mut dyn Write) -> io::Result<()>;
}

/// The device labels of a document: `device` (the target as given), `model` and `serial`
/// where the target has them. Empty for a document without a device.
pub fn device_labels(doc: &Document) -> Vec<(&'static str, String)> {
    let Some(t) = doc.target_info() else {
        return Vec::new();
    };
    let mut labels = vec![("device", t.spec.clone())];
    if let Some(m) = &t.model {
        labels.push(("model", m.clone()));
    }
    if let Some(s) = &t.serial {
        labels.push(("serial", s.clone()));
    }
    labels
}

/// The file formats, each named by its option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    Prometheus,
    Junit,
}

impl FileFormat {
    /// The option that asks for it, for messages.
    pub fn option(self) -> &'static str {
        match self {
            FileFormat::Prometheus => "--prometheus",
            FileFormat::Junit => "--junit",
        }
    }

    fn exporter(self) -> Box<dyn Exporter> {
        match self {
            FileFormat::Prometheus => Box::new(prometheus::Prometheus),
            FileFormat::Junit => Box::new(junit::Junit),
        }
    }
}

/// An export file being prepared ([`OutputFile`]: a temporary file renamed into place
/// when complete, removed if the run ends without a result).
#[derive(Debug)]
struct Pending {
    format: FileFormat,
    file: Option<OutputFile>,
}

/// The export files a run was asked for, opened before it measures anything.
#[derive(Debug, Default)]
pub struct Exports {
    files: Vec<Pending>,
}

impl Exports {
    /// Create a temporary file beside each named file; a path whose directory is missing
    /// or not writable, or that names a directory, is a usage error naming the option.
    pub fn open(requests: &[(FileFormat, &Path)]) -> Result<Exports> {
        let mut files = Vec::new();
        for &(format, path) in requests {
            files.push(open_pending(format, path)?);
        }
        Ok(Exports { files })
    }

    /// Nothing was asked for.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Write `doc` to every file not written yet and rename each into place.
    pub fn finish(&mut self, doc: &Document) -> Result<()> {
        for p in &mut self.files {
            if let Some(file) = p.file.take() {
                let exporter = p.format.exporter();
                file.write_with(|w| exporter.write(doc, w))?;
            }
        }
        Ok(())
    }
}

fn open_pending(format: FileFormat, path: &Path) -> Result<Pending> {
    Ok(Pending {
        format,
        file: Some(OutputFile::create(format.option(), path)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::TargetInfo;
    use crate::report::Document;
    use crate::vocab::{Check, Metric};

    pub(crate) fn sample_doc() -> Document {
        let info = TargetInfo {
            spec: "sim:sd-16g".into(),
            model: Some("Card \"X\" \\ 1\nline".into()),
            serial: Some("0x1234".into()),
            ..TargetInfo::default()
        };
        use crate::report::results::{ProbeParameters, ProbeResult, ProbeSummary};
        let probe = ProbeResult {
            parameters: ProbeParameters {
                max_cache_bytes: 0,
                time_budget_ns: None,
                destructive: false,
                guard_bytes: 0,
            },
            samples: Vec::new(),
            probe: ProbeSummary {
                alias_hits: Vec::new(),
                alias_hit_count: 0,
                filler_bytes: 0,
                flush_bytes: 0,
                complete: true,
            },
            verdict: "OK".into(),
            partition_command: None,
        };
        let mut doc = Document::for_target(&info, crate::report::Body::Probe(probe));
        doc.metrics
            .push(Metric::new("usable_bytes", "Usable", 8e9, &[]));
        doc.metrics.push(Metric::new(
            "bench_iops",
            "IOPS",
            1208.5,
            &[("job", "rand_read")],
        ));
        doc.metrics.push(Metric::new(
            "bench_iops",
            "IOPS",
            3.0,
            &[("job", "rand_write")],
        ));
        doc.checks.push(Check {
            inconclusive: false,
            threshold: None,
            name: "probe.capacity".into(),
            passed: false,
            measurement: Some(8e9),
            units: Some("bytes".into()),
            message: "FAKE: announces 64 GiB, holds 8 GiB <&>".into(),
        });
        doc.checks.push(Check {
            inconclusive: false,
            threshold: None,
            name: "bench.expect.seq_write".into(),
            passed: true,
            measurement: None,
            units: None,
            message: "ok".into(),
        });
        doc
    }

    #[test]
    fn a_file_appears_whole_at_finish_and_not_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.prom");
        std::fs::write(&path, "old\n").unwrap();
        let mut ex = Exports::open(&[(FileFormat::Prometheus, path.as_path())]).unwrap();
        // Before the result: the old file untouched, the new one only as a hidden temp.
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old\n");
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(names
            .iter()
            .any(|n| n.starts_with(".out.prom.") && n.ends_with(".tmp")));
        ex.finish(&sample_doc()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("flashscope_usable_bytes{"), "{text}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_run_without_a_result_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.xml");
        let ex = Exports::open(&[(FileFormat::Junit, path.as_path())]).unwrap();
        drop(ex);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn bad_paths_are_usage_errors_naming_the_option() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no/such/dir/out.prom");
        for (format, path) in [
            (FileFormat::Prometheus, missing.as_path()),
            (FileFormat::Junit, dir.path()),
            (FileFormat::Junit, Path::new("")),
        ] {
            let e = Exports::open(&[(format, path)]).unwrap_err();
            assert_eq!(e.exit_code(), crate::vocab::error::EXIT_USAGE, "{e}");
            assert!(e.to_string().starts_with(format.option()), "{e}");
        }
    }
}
