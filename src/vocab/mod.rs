//! The vocabulary every room speaks: units, errors, and what a run finds and says
//! (an [`Inference`] with its [`Status`], a [`Check`], a [`Metric`], a [`Warning`]).
//! Leaf of the house: imports nothing of the crate outside this folder (tests/layers.rs).

pub mod error;
pub mod hostpath;
pub mod units;
pub mod warning;

pub use warning::Warning;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How sure an inference is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Confident,
    Tentative,
    Inconclusive,
}

/// One inferred quantity: its value (null exactly when inconclusive), how sure, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Inference {
    #[cfg_attr(test, schemars(schema_with = "inference_value_schema"))]
    pub value: Option<serde_json::Value>,
    pub status: Status,
    pub confidence: f64,
    pub evidence: String,
}

/// An inference's `value` in the document's schema: a number, a string, a boolean, a list
/// or null (null exactly when the status is inconclusive: `report::schema::document` adds
/// that rule to the inference). Here beside the type, so vocab names nothing above it.
#[cfg(test)]
fn inference_value_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": ["number", "string", "boolean", "array", "null"] })
}

/// Confidence at or above which an inference is called confident.
pub const CONFIDENT_AT: f64 = 0.9;
/// Confidence at or above which an inference is tentative rather than inconclusive.
pub const TENTATIVE_AT: f64 = 0.5;

impl Inference {
    /// An inference with a value; the status follows from the confidence (below
    /// `TENTATIVE_AT` the value is withheld and the status is inconclusive).
    pub fn new(
        value: impl Into<serde_json::Value>,
        confidence: f64,
        evidence: impl Into<String>,
    ) -> Self {
        let confidence = if confidence.is_finite() {
            confidence.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let status = if confidence >= CONFIDENT_AT {
            Status::Confident
        } else if confidence >= TENTATIVE_AT {
            Status::Tentative
        } else {
            Status::Inconclusive
        };
        Inference {
            value: if status == Status::Inconclusive {
                None
            } else {
                Some(value.into())
            },
            status,
            confidence,
            evidence: evidence.into(),
        }
    }

    /// An inference the data could not decide; the evidence says why.
    pub fn inconclusive(reason: impl Into<String>) -> Self {
        Inference {
            value: None,
            status: Status::Inconclusive,
            confidence: 0.0,
            evidence: reason.into(),
        }
    }

    /// The value as an integer, when there is one.
    pub fn as_u64(&self) -> Option<u64> {
        self.value.as_ref().and_then(|v| v.as_u64())
    }

    /// The value as an integer, when the inference is confident.
    pub fn confident_u64(&self) -> Option<u64> {
        self.as_u64().filter(|_| self.status == Status::Confident)
    }

    /// "confident", "tentative" or "inconclusive".
    pub fn status_word(&self) -> &'static str {
        match self.status {
            Status::Confident => "confident",
            Status::Tentative => "tentative",
            Status::Inconclusive => "inconclusive",
        }
    }
}

/// One pass/fail check with its figure (a JUnit test case, a LAVA `lava-test-case`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Check {
    /// A stable name: `COMMAND.WHAT`, e.g. `probe.capacity`, `bench.class_a2`,
    /// `bench.expect.seq_write`, `health.wear`. Letters, digits, `.`, `_` and `-` only.
    pub name: String,
    pub passed: bool,
    /// The figure the check judged, in `units`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measurement: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units: Option<String>,
    /// The limit the figure was held against, in `units` (`--expect seq_write>=10MB/s`:
    /// 10000000 bytes/s), where the check has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// One sentence: what was required and what was found.
    pub message: String,
    /// The check could not decide: a capacity test stopped by a budget before its verdict
    /// or unable to see past a cache, a verify that read nothing back. Never `passed`: a
    /// script that reads only `passed` must not take it for a pass.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inconclusive: bool,
}

impl Check {
    /// "passed", "FAILED" or, when it could not decide, "not decided".
    pub fn outcome_word(&self) -> &'static str {
        match (self.passed, self.inconclusive) {
            (_, true) => "not decided",
            (true, false) => "passed",
            (false, false) => "FAILED",
        }
    }

    /// Mark the check as undecided (and so not passed) when `undecided`.
    pub fn undecided_if(mut self, undecided: bool) -> Self {
        if undecided {
            self.passed = false;
            self.inconclusive = true;
        }
        self
    }
}

/// One figure for monitoring (Prometheus textfile collector, history).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Metric {
    /// Without the `flashscope_` prefix, with the unit as suffix as Prometheus names
    /// it: `read_bytes_per_second`, `wear_ratio`, `usable_bytes`.
    pub name: String,
    /// What it means, in words (the HELP line).
    pub help: String,
    pub value: f64,
    /// Labels beyond the device's (e.g. `job="rnd4k_q32"`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

impl Metric {
    /// A figure named `name` (no prefix, unit suffix) with its HELP text and extra labels.
    pub fn new(name: &str, help: &str, value: f64, labels: &[(&str, &str)]) -> Self {
        Metric {
            name: name.to_string(),
            help: help.to_string(),
            value,
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inference_value_is_null_exactly_when_inconclusive() {
        let low = Inference::new(4096, 0.3, "weak");
        assert_eq!(low.status, Status::Inconclusive);
        assert!(low.value.is_none());
        let mid = Inference::new(4096, 0.6, "some");
        assert_eq!(mid.status, Status::Tentative);
        assert_eq!(mid.as_u64(), Some(4096));
        let high = Inference::new(4096, 0.95, "strong");
        assert_eq!(high.status, Status::Confident);
        let nan = Inference::new(1, f64::NAN, "nan");
        assert_eq!(nan.status, Status::Inconclusive);
    }
}
