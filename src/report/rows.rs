//! The rows of the commands that read documents rather than devices: `compare`'s
//! figure-against-figure rows and the sides they came from, and `history`'s stored runs
//! and parts. They are defined here, beside the other samples, because the document holds
//! them; `compare` and `history` sit above the document and fill them.

use serde::{Deserialize, Serialize};

/// One figure of one side against the same figure of the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Row {
    /// bench's metric name or the workload's (`Workload::metric`).
    pub metric: String,
    /// The workload in words.
    pub test: String,
    /// The baseline's label ("A") and this side's ("B", "C", …).
    pub baseline: String,
    pub side: String,
    /// The two figures, bytes per second.
    pub a_bytes_per_s: f64,
    pub b_bytes_per_s: f64,
    /// B / A − 1 of the two figures.
    pub difference: f64,
    /// The 95 % interval of B / A − 1; None when the data cannot give one (`method` says why).
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// True when the interval excludes 0; None without an interval.
    pub significant: Option<bool>,
    /// What the interval comes from: "per_second", "runs", or "none".
    pub basis: String,
    /// How many samples (seconds or runs) of A and of B it used.
    pub a_samples: usize,
    pub b_samples: usize,
    /// How the interval was found, or why there is none.
    pub method: String,
    /// What differs between the two workloads, compared anyway because of `--force`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forced: Vec<String>,
    /// The finding in one sentence.
    pub sentence: String,
}

/// Where a side came from, for the document's `sides`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SideSummary {
    pub label: String,
    pub source: String,
    /// "bench", "io" or "fio".
    pub kind: String,
    pub target: String,
    pub figures: usize,
    /// The most runs any of its figures has (1 when none was repeated).
    pub runs: usize,
}

/// One stored run, as `history list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RunSummary {
    pub id: i64,
    pub time: String,
    pub command: String,
    pub host: Option<String>,
    pub device: String,
    pub model: Option<String>,
    pub target: String,
    pub source: String,
    /// The run's first metric (the command's leading figure): name, value, unit, labels.
    pub headline: Option<StoredMetric>,
}

/// A metric row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct StoredMetric {
    pub metric: String,
    pub value: f64,
    pub unit: String,
    /// A JSON object of the metric's labels (`{"job":"seq_read"}`).
    pub labels: String,
}

/// One figure of a part over its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Cell {
    pub runs: u64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

/// One part: its figures, in the history table's `COLUMNS` order (`None` where no run measured it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PartRow {
    pub part: String,
    pub seq_read_bytes_per_s: Option<Cell>,
    pub seq_write_bytes_per_s: Option<Cell>,
    pub rand_read_iops: Option<Cell>,
    pub rand_write_iops: Option<Cell>,
}
