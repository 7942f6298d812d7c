//! The typed part of each command's document: what it ran on ([`Target`]) and its own
//! fields ([`Body`]: `command`, `parameters`, `samples` and the command's extra top-level
//! fields). [`super::Document`] flattens a `Body` into the top level, so the JSON keeps
//! schema `flashscope/1`'s field names while the program reads and writes Rust types.

use super::TargetInfo;
use crate::analysis::align::Step;
use crate::analysis::noise::Environment;
use crate::analysis::slc::SlcInterval;
use crate::capacity::probe::{AliasHit, SpanSample};
use crate::probe::{
    fat::{FatParams, FatProbeSample},
    open_au::{OpenAuParams, OpenAuSample},
    program::{ProgramParams, ProgramSample},
    scatter::ScatterPoint,
    slc::SlcParams,
};
use serde::{Deserialize, Serialize};

/// What a document's `target` describes.
///
/// Untagged: each shape is told apart by its fields, in this order, exactly as the
/// commands have always written them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum Target {
    /// A device, file or simulated card (most commands), with what `verify DIR` adds.
    Device(DeviceTarget),
    /// A directory's filesystem (`fs seq`, `fs files`, `fs matrix`).
    Filesystem(FilesystemTarget),
    /// flashbench logs (`analyze`).
    Logs(LogsTarget),
    /// The wear report's device (`health`).
    Health(HealthTarget),
    /// A datasheet (`model`).
    Datasheet(DatasheetTarget),
    /// A spec as given, nothing opened (`restore`, `sim serve`); the sides (`compare`).
    Spec(SpecTarget),
    /// The history database (`history list`, `history table`).
    History(HistoryTarget),
    /// No target (`sim list`).
    None,
}

impl Target {
    /// The device, file or simulated card, when the target is one.
    pub fn info(&self) -> Option<&TargetInfo> {
        match self {
            Target::Device(d) => Some(&d.info),
            _ => None,
        }
    }

    /// The block device's host path, when the target is one and it was read.
    pub fn host_path(&self) -> Option<&HostPath> {
        match self {
            Target::Device(d) => d.host_path.as_deref(),
            _ => None,
        }
    }

    /// What the target is called: its spec, the log files, the history database.
    pub fn name(&self) -> String {
        match self {
            Target::Device(t) => t.info.spec.clone(),
            Target::Filesystem(t) => t.spec.clone(),
            Target::Health(t) => t.spec.clone(),
            Target::Spec(t) => t.spec.clone(),
            Target::Logs(t) => t.files.join(", "),
            Target::History(t) => t.history.clone(),
            Target::Datasheet(_) | Target::None => "(unknown target)".to_string(),
        }
    }
}

impl From<&TargetInfo> for Target {
    fn from(info: &TargetInfo) -> Self {
        Target::Device(DeviceTarget {
            info: info.clone(),
            device: None,
            host_path: None,
        })
    }
}

/// A device, file or simulated card; for `verify DIR`, the directory's filesystem device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct DeviceTarget {
    #[serde(flatten)]
    pub info: TargetInfo,
    /// The block device under a directory `verify` filled (`verify DIR` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<crate::capacity::locate::BackingDevice>,
    /// The link between a block device and the machine (`commands::host_path::attach`);
    /// absent for simulated cards, files and directories.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_path: Option<Box<HostPath>>,
}

/// A directory on a mounted filesystem, with what its mount says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FilesystemTarget {
    pub spec: String,
    pub kind: crate::device::TargetKind,
    #[serde(flatten)]
    pub fs: crate::fs::env::FsInfo,
}

/// flashbench logs read by `analyze`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct LogsTarget {
    pub files: Vec<String>,
    /// "flashbench logs".
    pub kind: String,
}

/// The device `health` read, as given and as resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct HealthTarget {
    pub spec: String,
    pub device: String,
}

/// A datasheet `model` computes from (`flash` absent for `--reference`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct DatasheetTarget {
    /// "datasheet".
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flash: Option<String>,
}

/// A target spec as given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SpecTarget {
    pub spec: String,
}

/// The history database a `history` document read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct HistoryTarget {
    /// The database file.
    pub history: String,
}

/// What a writing test's session did for preserve mode (`journal`, `preserve`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct WriteRecord {
    /// The journal file, `null` when nothing was journaled.
    pub journal: Option<String>,
    pub preserve: PreserveRecord,
    /// The run's device time against its `--time-budget` (absent without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_budget: Option<TimeBudgetUse>,
}

impl WriteRecord {
    /// Its fields, which sit at a document's top level.
    pub const FIELDS: &'static [&'static str] = &["journal", "preserve", "time_budget"];
}

/// A run's plan against what it took (the document's `timing`): the plan stated before
/// the run (from rates read on the target, writes assumed), the plan worked out again once
/// the run's first measurement gave the device's own rates, each with its uncertainty, and
/// the device time the run took (virtual on `sim:`), which the plans are held against.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Timing {
    /// The plan stated before the run, device ns.
    pub planned_ns: u64,
    /// Its uncertainty, a share either way (0.5: ±50 %).
    pub planned_uncertainty: f64,
    /// The plan worked out again from the device's own rates, once the run measured them
    /// (absent when the run ended before its first measurement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replanned_ns: Option<u64>,
    /// Its uncertainty, a share either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replanned_uncertainty: Option<f64>,
    /// The device time into the run when it was worked out again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replanned_at_ns: Option<u64>,
    /// The run's device time, the plans' span: the test's I/O with preserve mode's saving
    /// and restoring (virtual on `sim:`, else the monotonic clock).
    pub device_ns: u64,
}

impl Timing {
    /// The plan the run held last: worked out again if it was, else the first.
    pub fn last_plan(&self) -> (u64, f64) {
        match (self.replanned_ns, self.replanned_uncertainty) {
            (Some(ns), Some(u)) => (ns, u),
            _ => (self.planned_ns, self.planned_uncertainty),
        }
    }
}

/// A writing test's device time (virtual on `sim:`) against its `--time-budget`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct TimeBudgetUse {
    pub budget_ns: u64,
    pub used_ns: u64,
    /// More than `session::TIME_BUDGET_SLACK` over the budget.
    pub over: bool,
}

/// The preserve-mode figures of a writing test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PreserveRecord {
    /// "preserve", "destructive" or "simulated".
    pub mode: String,
    pub bytes_saved: u64,
    pub test_bytes_written: u64,
    pub restore_bytes_written: u64,
    pub regions_restored: u64,
    pub regions_verified: u64,
    pub journal_removed: bool,
    /// Bytes the restore wrote back that read back different from the journal (the
    /// target does not hold them), in 512-byte units; the journal is kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unrestored: Vec<ByteRange>,
}

/// A range of a target's bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ByteRange {
    pub offset: u64,
    pub length: u64,
}

macro_rules! bodies {
    ($($(#[$doc:meta])* $name:literal => $variant:ident($ty:ty),)*) => {
        /// Each command's own fields, internally tagged by `command` (the subcommand as typed).
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[cfg_attr(test, derive(schemars::JsonSchema))]
        #[serde(tag = "command")]
        // Made once per run; boxing the large variants would only add allocations.
        #[allow(clippy::large_enum_variant)]
        pub enum Body {
            $($(#[$doc])* #[serde(rename = $name)] $variant($ty),)*
        }

        impl Body {
            /// Every `command` a document can carry.
            pub const COMMANDS: &'static [&'static str] = &[$($name),*];

            /// This command's `parameters` as JSON, for `auto`'s record of the steps it ran
            /// (each step's parameters have their own type).
            pub fn parameters_json(&self) -> serde_json::Value {
                let v = match self {
                    $(Body::$variant(b) => serde_json::to_value(b),)*
                };
                match v {
                    Ok(serde_json::Value::Object(mut m)) => {
                        m.remove("parameters").unwrap_or_else(|| serde_json::json!({}))
                    }
                    _ => serde_json::json!({}),
                }
            }

            /// The body of a `command` from a document's top-level fields (every field
            /// that is not the document's own), each read straight into its type.
            pub(crate) fn from_fields(
                command: &str,
                fields: &[(String, &serde_json::value::RawValue)],
            ) -> serde_json::Result<Body> {
                use serde::Deserialize as _;
                let entries = || {
                    serde::de::value::MapDeserializer::<_, serde_json::Error>::new(
                        fields.iter().map(|(k, v)| (k.as_str(), *v)),
                    )
                };
                match command {
                    $($name => Ok(Body::$variant(<$ty>::deserialize(entries())?)),)*
                    other => Err(serde::de::Error::unknown_variant(other, Self::COMMANDS)),
                }
            }

            /// The document's `command`.
            pub fn command(&self) -> &'static str {
                match self {
                    $(Body::$variant(_) => $name,)*
                }
            }
        }
    };
}

bodies! {
    "info" => Info(InfoResult),
    "health" => Health(HealthResult),
    "probe" => Probe(ProbeResult),
    "verify" => Verify(VerifyResult),
    "sim list" => SimList(SimListResult),
    "sim serve" => SimServe(ServeResult),
    "io" => Io(IoResult),
    "bench" => Bench(BenchResult),
    "align" => Align(AlignResult),
    "auto" => Auto(AutoResult),
    "scatter" => Scatter(ScatterResult),
    "interval" => Interval(IntervalResult),
    "analyze" => Analyze(AnalyzeResult),
    "fs seq" => FsSeq(FsSeqResult),
    "fs files" => FsFiles(FsFilesResult),
    "fs matrix" => FsMatrix(FsMatrixResult),
    "model" => Model(ModelResult),
    "restore" => Restore(RestoreResult),
    "open-au" => OpenAu(OpenAuResult),
    "fat" => Fat(FatResult),
    "program" => Program(ProgramResult),
    "slc" => Slc(SlcResult),
    "compare" => Compare(CompareResult),
    "history list" => HistoryList(HistoryListResult),
    "history table" => HistoryTable(HistoryTableResult),
}

/// `compare`'s parameters: the interval's level and the bootstrap's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CompareParameters {
    pub confidence: f64,
    pub bootstrap_resamples: usize,
    pub bootstrap_seed: u64,
    pub min_seconds: usize,
    pub force: bool,
}

/// `compare`: one row per figure and side, where each side came from, and the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CompareResult {
    pub parameters: CompareParameters,
    pub samples: Vec<crate::report::rows::Row>,
    pub sides: Vec<crate::report::rows::SideSummary>,
    /// One line per side against the baseline.
    pub verdict: String,
}

/// `history list`: the stored runs, newest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct HistoryListResult {
    /// None (`{}`).
    #[serde(default)]
    pub parameters: NoParameters,
    pub samples: Vec<crate::report::rows::RunSummary>,
}

/// A command without parameters, or an empty part of a document: `{}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct NoParameters {}

/// One column of `history table`: its key, the metric and the bench job it is from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct TableColumn {
    pub key: String,
    pub metric: String,
    pub job: String,
}

/// `history table`'s parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct HistoryTableParameters {
    /// "model" or "device".
    pub by: String,
    pub columns: Vec<TableColumn>,
}

/// `history table`: one row per part (or device) over its stored bench runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct HistoryTableResult {
    pub parameters: HistoryTableParameters,
    pub samples: Vec<crate::report::rows::PartRow>,
}

/// A writing test's parameters and where its erase block size came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct WithEraseSource<P> {
    #[serde(flatten)]
    pub params: P,
    /// `--erase-size`, or the align run that measured it.
    pub erase_size_source: String,
}

/// `fat`: one row per erase block and block size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FatResult {
    pub parameters: WithEraseSource<FatParams>,
    pub samples: Vec<FatProbeSample>,
}

/// `open-au`: one row per count of open erase blocks tried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct OpenAuResult {
    pub parameters: WithEraseSource<OpenAuParams>,
    pub samples: Vec<OpenAuSample>,
}

/// `program`'s parameters with the data patterns of its columns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ProgramParameters {
    #[serde(flatten)]
    pub params: ProgramParams,
    pub columns: Vec<String>,
}

/// `program`: one row per block size and data pattern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ProgramResult {
    pub parameters: ProgramParameters,
    pub samples: Vec<ProgramSample>,
}

/// `slc`: the write intervals, the write after idling and why the probe stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SlcResult {
    pub parameters: SlcParams,
    pub samples: Vec<SlcInterval>,
    pub recovery: Option<SlcInterval>,
    pub stopped: String,
    /// The `--plot` file written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plot: Option<String>,
}

/// `probe`'s parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ProbeParameters {
    pub max_cache_bytes: u64,
    pub time_budget_ns: Option<u64>,
    pub destructive: bool,
    pub guard_bytes: u64,
}

/// One step of the capacity probe, in the order they happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ProbeSample {
    /// A span written and read back.
    Span(SpanSample),
    /// An alias scan.
    Scan(ScanSummary),
}

/// One alias scan, summarised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ScanSummary {
    pub from: u64,
    pub to: u64,
    pub stride: u64,
    pub reads: u64,
    /// Reads that returned another offset's stamp.
    pub hits: usize,
    pub elapsed_ns: u64,
}

/// The capacity probe's totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ProbeSummary {
    /// The first 64 alias hits.
    pub alias_hits: Vec<AliasHit>,
    pub alias_hit_count: usize,
    pub filler_bytes: u64,
    pub flush_bytes: u64,
    pub complete: bool,
}

/// `probe`: the fake-capacity verdict and how it was reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ProbeResult {
    pub parameters: ProbeParameters,
    pub samples: Vec<ProbeSample>,
    pub probe: ProbeSummary,
    /// The one-line verdict.
    pub verdict: String,
    /// The sfdisk line that keeps a fake card's partition inside its real capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_command: Option<String>,
}

/// `align`'s parameters and how the run went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct AlignParameters {
    pub block_sizes: Vec<u64>,
    pub positions: usize,
    pub count: Option<u32>,
    pub time_budget_ns: u64,
    pub reads: u64,
    pub flashbench_reads: u64,
    pub rounds: u32,
    /// "confident", "time budget", "read budget" ...
    pub stop_reason: String,
    pub io_time_ns: u64,
    pub device_elapsed_ns: u64,
    pub realtime: bool,
    /// The first repeats were answered by a read cache, so the run was read again spread
    /// over all cells (absent in documents from before it existed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub spread_for_read_cache: bool,
}

/// One block size at one alignment: flashbench's three times and the boundary cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct AlignSample {
    pub block_bytes: u64,
    pub align_bytes: u64,
    pub pre_ns: i64,
    pub on_ns: i64,
    pub post_ns: i64,
    pub diff_ns: Option<i64>,
    pub diff_se_ns: Option<i64>,
    pub positions: Vec<u64>,
    pub reads: Vec<[u64; 4]>,
    /// The first access of each visit to a position, `[position index, ns]`: a read of
    /// `[P − block, P + block)` before the timed ones, kept apart from them (absent in
    /// documents from before it existed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub first_reads: Vec<[u64; 2]>,
}

/// `align`: boundary costs, the machine's state and the fitted staircase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct AlignResult {
    pub parameters: AlignParameters,
    pub samples: Vec<AlignSample>,
    pub environment: Environment,
    pub steps: Vec<Step>,
}

impl AlignResult {
    /// The boundary cost of each (block size, alignment) cell, computed from the stored
    /// reads exactly as the run computed it (for the text, the chart and `history show`).
    pub fn points(&self) -> Vec<crate::analysis::align::AlignPoint> {
        let cells: Vec<crate::analysis::align::AlignCell> = self
            .samples
            .iter()
            .map(|s| crate::analysis::align::AlignCell {
                block_bytes: s.block_bytes,
                align_bytes: s.align_bytes,
                positions: s.positions.clone(),
                reads: s.reads.clone(),
                first: s.first_reads.clone(),
            })
            .collect();
        crate::analysis::align::points(&cells)
    }
}

/// `scatter`'s parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ScatterParameters {
    pub block_bytes: u64,
    pub order: u32,
    pub span: u32,
    pub count: u32,
    pub reads: u64,
    pub io_time_ns: u64,
}

/// `scatter`: the fastest read time at each offset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ScatterResult {
    pub parameters: ScatterParameters,
    pub samples: Vec<ScatterPoint>,
    /// The TSV file `-o` wrote (absent without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// The SVG file `--plot` wrote (absent without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plot: Option<String>,
}

/// `interval`'s parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct IntervalParameters {
    pub order: u32,
    pub positions: u32,
    pub count: u32,
    pub reads: usize,
    pub io_time_ns: u64,
    pub fit_from_bytes: u64,
}

/// One request size: its read times and their summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct IntervalRow {
    pub bytes: u64,
    pub min_ns: u64,
    pub avg_ns: u64,
    pub max_ns: u64,
    pub offsets: Vec<u64>,
    pub times_ns: Vec<Vec<u64>>,
}

/// `interval`: read time against request size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct IntervalResult {
    pub parameters: IntervalParameters,
    pub samples: Vec<IntervalRow>,
    /// What the machine did during the run (load, steal, stalled reads), as align
    /// reports it; absent in documents from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<crate::analysis::noise::Environment>,
}

/// `health`'s parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct HealthParameters {
    pub max_wear_percent: f64,
}

/// `health`: the wear record of one device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct HealthResult {
    pub parameters: HealthParameters,
    pub health: crate::health::Health,
}

/// `info`: what the system says about the device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct InfoResult {
    pub identity: InfoIdentity,
}

/// `info`'s `identity`: its fields depend on what the target is.
///
/// Untagged: told apart by their fields, a block device's first (it has `name`), the
/// simulator's next (`model`), nothing last.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum InfoIdentity {
    /// A block device: what sysfs says, with the decoded MMC/SD registers.
    Block(Box<BlockInfo>),
    /// A simulated card.
    Sim(SimIdentity),
    /// A regular file: nothing to say (`{}`).
    None(NoParameters),
}

impl Default for InfoIdentity {
    /// Nothing (`{}`).
    fn default() -> Self {
        InfoIdentity::None(NoParameters {})
    }
}

impl InfoIdentity {
    /// The decoded MMC/SD registers, on a block device whose sysfs has them.
    pub fn mmc(&self) -> Option<&crate::device::mmc::MmcIdentity> {
        match self {
            InfoIdentity::Block(b) => b.mmc.as_ref(),
            _ => None,
        }
    }
}

/// A block device's identity as sysfs gives it, its discard support and its MMC/SD
/// registers when it is a card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct BlockInfo {
    #[serde(flatten)]
    pub sysfs: crate::device::sysfs::BlockIdentity,
    /// A non-zero `discard_max_bytes` (absent when sysfs does not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discard_supported: Option<bool>,
    /// One line: the card's maker, product, date and class marks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mmc_summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mmc: Option<crate::device::mmc::MmcIdentity>,
    /// The link between the medium and the machine (MMC/SD or USB disks; absent for
    /// other buses and for simulated and file targets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_path: Option<HostPath>,
}

/// What the host path negotiated, what it can carry at most, and whether it runs below
/// what the card can do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct HostPath {
    /// "mmc", "usb", "nvme", "sata"; "virtual" (loop, zram, device-mapper) or "other" (a
    /// bus not read), with the reason in `unknown`.
    pub bus: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mmc: Option<crate::device::hostpath::MmcLink>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usb: Option<crate::device::hostpath::UsbLink>,
    /// An NVMe disk's PCIe link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvme: Option<crate::device::hostpath::PcieLink>,
    /// A SATA disk's link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sata: Option<crate::device::hostpath::SataLink>,
    /// The path's ceiling: theory as an upper bound, a measured figure where one applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<crate::analysis::hostpath::Ceiling>,
    /// "Negotiated below what card and host can do", as an inference with its reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub negotiated_below: Option<crate::vocab::Inference>,
    /// Facts that could not be read, each "… unknown, because …".
    pub unknown: Vec<String>,
}

impl HostPath {
    /// A host path with nothing known yet (no bus named).
    pub fn none() -> Self {
        HostPath {
            bus: String::new(),
            mmc: None,
            usb: None,
            nvme: None,
            sata: None,
            ceiling: None,
            negotiated_below: None,
            unknown: Vec::new(),
        }
    }
}

/// A simulated card's identity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SimIdentity {
    /// `target::SIM_MODEL`.
    pub model: String,
    pub discard_supported: bool,
    /// The simulated host path (`host_timing`, `usb`), as a kernel would present it;
    /// absent for a card without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_path: Option<Box<HostPath>>,
}

/// One simulator preset and the keys it sets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PresetEntry {
    pub name: String,
    pub about: String,
    /// Key to value as `sim:` specs write them (`size` = `16 GiB`).
    pub keys: std::collections::BTreeMap<String, String>,
}

/// One simulator key and what it means.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct KeyEntry {
    pub key: String,
    pub meaning: String,
}

/// `sim list`: the presets and the keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SimListResult {
    pub presets: Vec<PresetEntry>,
    pub keys: Vec<KeyEntry>,
}

/// `verify`'s parameters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct VerifyParameters {
    pub range_offset: u64,
    pub range_length: u64,
    pub chunk_bytes: u64,
    pub iodepth: usize,
    pub resumed: bool,
}

/// `verify`: throughput while writing and reading back, and how much was checked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct VerifyResult {
    pub parameters: VerifyParameters,
    pub samples: Vec<crate::capacity::verify::ThroughputSample>,
    pub checked_bytes: u64,
    pub planned_bytes: u64,
    /// `verify DIR`: every file left in place (so `--resume` can continue).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_kept: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_files: Option<Vec<String>>,
    /// The `--plot` file written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plot: Option<String>,
    /// The write pass ended where the filesystem had no more room (a full filesystem or a
    /// spent quota, not a bad medium): only what was written before was read back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_of_space: Option<OutOfSpaceRecord>,
}

/// Where a filesystem ran out of room under `verify`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct OutOfSpaceRecord {
    /// Bytes of the range written before the filesystem refused more.
    pub written_bytes: u64,
    /// What the system said: "no space left on device" or "disk quota exceeded".
    pub reason: String,
}

/// `auto`'s parameters: the budgets as given and as the whole run had them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct AutoParameters {
    /// align's `--time-budget` (auto's, or align's default).
    pub time_budget: String,
    pub run_time_budget_ns: Option<u64>,
    pub write_budget: Option<u64>,
    pub write: bool,
    pub destructive: bool,
    pub label: Option<String>,
}

/// One step auto ran: its command, time, bytes written and parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct StepRecord {
    pub command: String,
    pub elapsed_ns: u64,
    /// The step's own `parameters`, as its document has them: each command's parameters
    /// have their own type, so this record of several commands keeps them as JSON.
    #[cfg_attr(test, schemars(schema_with = "crate::report::schema::json_object"))]
    pub parameters: serde_json::Value,
    /// Absent for align (it writes nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_written: Option<u64>,
}

/// One writing step of auto's plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PlannedStep {
    pub command: String,
    /// `null` for bench: it writes for a time, not a size.
    pub max_bytes: Option<u64>,
    pub typical_bytes: Option<u64>,
    pub region_bytes: u64,
    pub estimated_ns: u64,
    /// Preserve mode's cost on top of `estimated_ns`: saving what the step overwrites and
    /// writing it back and verifying it; absent when nothing is journaled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preserve_ns: Option<u64>,
    /// `estimated_ns` if the card writes 4 times slower than it reads (the rates a plan
    /// assumes are measured reads; see `session::estimate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_slow_ns: Option<u64>,
}

/// What auto plans to write before it writes: the steps and the totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct AutoPlan {
    pub steps: Vec<PlannedStep>,
    pub typical_bytes: u64,
    /// The whole plan's time, preserve mode's saving and restoring included.
    pub estimated_ns: u64,
    /// The most journal space preserve mode needs (one step's region); `null` when
    /// nothing is journaled (a simulated card, `--destructive`).
    pub journal_bytes: Option<u64>,
    /// `estimated_ns` if the card writes 4 times slower than it reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_slow_ns: Option<u64>,
    /// The read rate the estimates are worked out from, measured before the plan
    /// (bytes/s); absent when nothing could be measured (then a 10 MiB/s card is assumed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes_per_s: Option<f64>,
}

/// auto's plan as it is announced on stderr before the first write
/// (`output::auto::plan_text`): the plan and what the announcement adds to it.
#[derive(Debug, Clone, Copy)]
pub struct PlanAnnounced<'a> {
    pub target: &'a str,
    pub plan: &'a AutoPlan,
    /// align's device time, spent before the plan.
    pub spent_ns: u64,
    /// The whole run's write budget (bytes) and time budget (device ns).
    pub write_budget: Option<u64>,
    pub time_budget_ns: Option<u64>,
    /// open-au and fat run: align was confident about the erase block.
    pub erase_known: bool,
    /// `--destructive`: nothing is saved.
    pub destructive: bool,
    /// How long bench writes (its step's time adds its read tests).
    pub bench_write_ns: u64,
    /// The plan's whole time and the rates it assumes, as the write session words them.
    pub time_text: &'a str,
    pub assumption: &'a str,
}

/// A step auto did not run, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SkippedStep {
    pub command: String,
    pub why: String,
}

/// The class marks claimed for the card (and by whom) and those the bench met.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ClassesRecord {
    pub claimed: Vec<String>,
    /// "label" (`--label`), "ssr" (the card's SD Status register) or `null`.
    pub claimed_by: Option<String>,
    pub met: Option<Vec<String>>,
    /// Why the bench stopped early, when it did (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

/// The most auto's write-cache test writes: enough to see a small cache end, bounded so
/// auto stays short (`flashscope slc` goes further). Here, beside auto's document, as its
/// text names it.
pub const AUTO_SLC_BYTES: u64 = 256 << 20;

/// `auto`: the steps it ran, its plan, the verdict, the classes and the advice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct AutoResult {
    pub parameters: AutoParameters,
    pub steps: Vec<StepRecord>,
    /// Only on a writing run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<AutoPlan>,
    /// The capacity probe's verdict line (a writing run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    pub skipped: Vec<SkippedStep>,
    pub classes: ClassesRecord,
    pub advice: Vec<crate::analysis::advice::Advice>,
}

/// `bench`'s parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct BenchParameters {
    pub size: u64,
    pub runtime_ns_per_test: u64,
    pub ramp_ns_per_test: u64,
    pub engine: String,
    pub write: bool,
    pub quick: bool,
    pub cpus: Vec<usize>,
    /// "virtual" (a simulated card) or "monotonic".
    pub clock: String,
    /// `--runs`: how many interleaved runs each figure is over (1 in documents saved
    /// before it existed).
    #[serde(default = "one_run")]
    pub runs: usize,
}

fn one_run() -> usize {
    1
}

/// `bench`: one figure per test, the fio-shaped jobs, the class verdicts and `--expect`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct BenchResult {
    pub parameters: BenchParameters,
    pub samples: Vec<crate::workload::bench::BenchFigure>,
    /// One fio `--output-format=json` job per test (with its `test` and `metric`): kept as
    /// fio's JSON, free-form by design, for tools that read fio's output.
    #[cfg_attr(test, schemars(schema_with = "crate::report::schema::fio_jobs"))]
    pub jobs: Vec<serde_json::Value>,
    pub classes: Vec<crate::workload::bench::ClassCheck>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Vec<crate::workload::bench::ExpectResult>>,
    /// Why the tests stopped early, if they did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `--runs N` above 1: each run's figures, in run order (the samples are over all runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<Vec<Vec<crate::workload::bench::BenchFigure>>>,
}

/// `io`: the job spec, per-second samples, fio-shaped `jobs`, disk and page-cache state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct IoResult {
    pub parameters: crate::workload::JobSpec,
    pub samples: Vec<crate::workload::SecondSample>,
    /// The engine that ran ("sim" when the simulator's queue model did).
    pub engine: String,
    /// "virtual" (a simulated card) or "monotonic".
    pub clock: String,
    /// One fio `--output-format=json` job per job: kept as fio's JSON, free-form by
    /// design, for tools that read fio's output.
    #[cfg_attr(test, schemars(schema_with = "crate::report::schema::fio_jobs"))]
    pub jobs: Vec<serde_json::Value>,
    /// The block device's statistics (fio's one-element `disk_util` list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_util: Option<Vec<crate::workload::sysstat::DiskUtil>>,
    /// Buffered runs: the page cache before and after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_cache: Option<PageCacheChange>,
    /// `--verify`: what reading back found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<crate::workload::verify::VerifyReport>,
    /// Why the jobs stopped early, if they did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// All jobs together (fio's group reporting): the figures the text prints. Absent in
    /// documents saved before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub totals: Option<crate::workload::GroupTotals>,
}

/// The page cache before and after a buffered run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PageCacheChange {
    pub before: crate::workload::sysstat::PageCache,
    pub after: crate::workload::sysstat::PageCache,
}

/// One CPU frequency policy and its governor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CpuGovernor {
    pub policy: String,
    pub governor: String,
}

/// `fs seq`'s parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FsSeqParameters {
    pub file_bytes: u64,
    pub block_bytes: u64,
    pub modes: Vec<crate::fs::seq::SeqMode>,
    pub pattern: crate::workload::Pattern,
    pub drop_caches: bool,
    pub keep: bool,
    pub sample_interval_ns: u64,
    pub runs: u32,
    pub warmup_bytes: u64,
    pub ram_bytes: u64,
    pub cpu_governors: Vec<CpuGovernor>,
}

/// `fs seq`: one row per dd mode, the page cache over time and its peaks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FsSeqResult {
    pub parameters: FsSeqParameters,
    pub samples: Vec<crate::fs::seq::SeqModeResult>,
    /// /proc/meminfo and /proc/vmstat every sample interval.
    pub timeline: Vec<crate::fs::monitor::MemSample>,
    /// The highest dirty + writeback bytes in each phase.
    pub dirty_peak_bytes: std::collections::BTreeMap<String, u64>,
    /// The `--plot` file written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plot: Option<String>,
}

/// `fs files`' parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FsFilesParameters {
    pub sizes: Vec<u64>,
    pub total_bytes: u64,
    pub pattern: crate::workload::Pattern,
    pub drop_caches: bool,
    pub keep: bool,
}

/// `fs files`: one row per file size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FsFilesResult {
    pub parameters: FsFilesParameters,
    pub samples: Vec<crate::fs::files::FilesSizeResult>,
    /// The `--plot` file written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plot: Option<String>,
}

/// `fs matrix`' parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FsMatrixParameters {
    pub file_sizes: Vec<u64>,
    pub record_sizes: Vec<u64>,
    pub sync: bool,
    pub fsync: bool,
    pub direct: bool,
    pub pattern: crate::workload::Pattern,
    pub keep: bool,
    pub ram_bytes: u64,
}

/// `fs matrix`: one cell per file size and record size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FsMatrixResult {
    pub parameters: FsMatrixParameters,
    pub samples: Vec<crate::fs::matrix::MatrixCell>,
    /// The `--csv` file written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csv: Option<String>,
    /// The `--plot` heat maps written, one per test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plots: Option<Vec<String>>,
}

impl FsMatrixResult {
    /// One test's rates, a row per file size and a column per record size (`None`: no cell).
    pub fn grid(&self, t: crate::fs::matrix::MatrixTest) -> Vec<Vec<Option<f64>>> {
        let p = &self.parameters;
        p.file_sizes
            .iter()
            .map(|f| {
                p.record_sizes
                    .iter()
                    .map(|r| {
                        self.samples
                            .iter()
                            .find(|c| c.file_bytes == *f && c.record_bytes == *r)
                            .map(|c| c.get(t).bytes_per_s as f64)
                    })
                    .collect()
            })
            .collect()
    }
}

/// One term of the datasheet model and the phase (`write`, `read`) it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ModelTerm {
    pub phase: String,
    #[serde(flatten)]
    pub term: crate::model::Term,
}

/// `model`: the datasheet estimate, the reference table, or both.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ModelResult {
    /// The datasheet (`{}` for `--reference` alone).
    #[serde(default)]
    pub parameters: ModelParameters,
    /// The estimate's terms, write then read (`[]` for `--reference` alone).
    #[serde(default)]
    pub samples: Vec<ModelTerm>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate: Option<crate::model::Estimate>,
    /// `--reference`: the measured rows that match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<Vec<crate::model::reference::EmpiricalRow>>,
}

/// `model`'s parameters: the datasheet, or none (`{}`) for `--reference` alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum ModelParameters {
    Datasheet(crate::model::Datasheet),
    None(NoParameters),
}

impl Default for ModelParameters {
    /// None (`{}`).
    fn default() -> Self {
        ModelParameters::None(NoParameters {})
    }
}

/// `analyze`'s parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct AnalyzeParameters {
    /// Each log's kind, in the order given.
    pub kinds: Vec<crate::analysis::flashbench::LogKind>,
    pub blocksize: Option<u64>,
    pub erasesize: Option<u64>,
    pub open_au_nr: Option<Vec<u32>>,
}

pub use crate::analysis::logs::LogSample;

/// `analyze`: the logs as read and, for align logs, the fitted staircase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct AnalyzeResult {
    pub parameters: AnalyzeParameters,
    pub samples: Vec<LogSample>,
    /// The align logs' staircase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<Step>>,
    /// Pasted results of other capacity tests (a probe's geometry block, a read-back
    /// check, a fill-and-verify window), each restated with where that tool is blind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capacity_reports: Vec<CapacityReportSample>,
}

/// One file holding another capacity test's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CapacityReportSample {
    pub file: String,
    /// "capacity-test-output": what kind of input this is (flashbench logs are samples).
    pub kind: String,
    pub report: crate::analysis::capacity_tools::CapacityToolReport,
}

/// `restore`'s parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RestoreParameters {
    pub journal: String,
    pub ignore_identity: bool,
    pub keep: bool,
    pub list: bool,
}

/// One region the journal saved.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct JournalRegion {
    pub offset_bytes: u64,
    pub length_bytes: u64,
}

/// `restore`: the journal's regions and target, and what putting them back did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RestoreResult {
    pub parameters: RestoreParameters,
    pub samples: Vec<JournalRegion>,
    /// The journal file.
    pub journal: String,
    /// The target the journal was written for.
    pub journal_identity: crate::journal::Identity,
    /// False for `--list`.
    pub restored: bool,
    /// What the restore wrote and verified (absent for `--list`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<crate::journal::RestoreSummary>,
    /// Absent for `--list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal_removed: Option<bool>,
    /// Another restore of the same journal ended while this one waited for it: the
    /// regions were read back and compared with the journal, nothing written (`summary`
    /// counts them as verified, 0 bytes). Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub restored_meanwhile: bool,
}

/// `sim serve`'s parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ServeParameters {
    pub mountpoint: String,
    #[serde(rename = "loop")]
    pub attach_loop: bool,
    pub cpu: Option<usize>,
    pub spin_ns: u64,
}

/// `sim serve`: what the server did until it stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ServeResult {
    pub parameters: ServeParameters,
    pub stats: crate::serve::stats::ServeStats,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Document;

    /// `sim serve`'s document needs FUSE to make (tests/serve.rs); here one built from a
    /// value reads back into the same value, under the names the command writes.
    #[test]
    fn a_sim_serve_document_reads_back_into_the_same_value() {
        let p = crate::serve::histogram::Percentiles {
            count: 3,
            mean_ns: 2,
            p50_ns: 2,
            p90_ns: 3,
            p99_ns: 3,
            p999_ns: 3,
            max_ns: 3,
        };
        let doc = Document::new(
            Target::Spec(SpecTarget {
                spec: "sim:sd-16g".into(),
            }),
            Body::SimServe(ServeResult {
                parameters: ServeParameters {
                    mountpoint: "/mnt/card".into(),
                    attach_loop: true,
                    cpu: Some(1),
                    spin_ns: 50_000,
                },
                stats: crate::serve::stats::ServeStats {
                    requests: 3,
                    reads: 2,
                    writes: 1,
                    flushes: 0,
                    discards: 0,
                    errors: 0,
                    bytes_read: 8192,
                    bytes_written: 4096,
                    bytes_discarded: 0,
                    model_ns: 1_000,
                    uptime_ns: 5_000,
                    handler_ns: p,
                    late_ns: p,
                    lead_ns: 0,
                },
            }),
        );
        let text = doc.to_json();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["command"], "sim serve");
        assert_eq!(v["parameters"]["loop"], true);
        assert_eq!(v["samples"], serde_json::json!([]));
        assert_eq!(v["stats"]["late_ns"]["p99_ns"], 3);
        let again = Document::from_json("serve.json", text.as_bytes()).unwrap();
        assert_eq!(again, doc);
        assert_eq!(again.to_json(), text);
    }
}
