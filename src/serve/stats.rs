//! The server's counters: requests served, model time added, and its own overhead.

use super::histogram::{LatencyHistogram, Percentiles};
use crate::vocab::units::{format_bytes, format_ns};
use serde::{Deserialize, Serialize};

/// Running totals, updated by the event loop and the completer.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub discards: u64,
    pub errors: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub bytes_discarded: u64,
    /// Card time the model added, summed over requests.
    pub model_ns: u64,
    /// From a request's arrival in the server to its reply being queued (model work and
    /// bookkeeping).
    pub handler: LatencyHistogram,
    /// How long after its due time each reply left (sleep and wake-up error).
    pub late: LatencyHistogram,
    /// How far ahead of the card's deadline replies leave: the way to the server and
    /// back, measured when it started.
    pub lead_ns: u64,
}

/// What `MOUNTPOINT/stats` shows and the server prints at exit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ServeStats {
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub discards: u64,
    pub errors: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub bytes_discarded: u64,
    /// Card time the model added, in ns.
    pub model_ns: u64,
    /// Time since the server started, in ns.
    pub uptime_ns: u64,
    /// Server work per request before its reply was queued.
    pub handler_ns: Percentiles,
    /// Reply lateness past its due time (the model's deadline less `lead_ns`).
    pub late_ns: Percentiles,
    /// The transport time replies leave ahead of the model's deadline, so a client sees
    /// the model's latency (measured through the served path when the server started).
    #[serde(default)]
    pub lead_ns: u64,
}

impl Counters {
    pub fn snapshot(&self, uptime_ns: u64) -> ServeStats {
        ServeStats {
            requests: self.reads + self.writes + self.flushes + self.discards,
            reads: self.reads,
            writes: self.writes,
            flushes: self.flushes,
            discards: self.discards,
            errors: self.errors,
            bytes_read: self.bytes_read,
            bytes_written: self.bytes_written,
            bytes_discarded: self.bytes_discarded,
            model_ns: self.model_ns,
            uptime_ns,
            handler_ns: super::histogram::percentiles(&self.handler),
            late_ns: super::histogram::percentiles(&self.late),
            lead_ns: self.lead_ns,
        }
    }
}

fn pct_line(name: &str, p: &Percentiles) -> String {
    format!(
        "  {name:<8} p50 {}  p90 {}  p99 {}  p99.9 {}  max {}\n",
        format_ns(p.p50_ns as f64),
        format_ns(p.p90_ns as f64),
        format_ns(p.p99_ns as f64),
        format_ns(p.p999_ns as f64),
        format_ns(p.max_ns as f64)
    )
}

impl ServeStats {
    /// The summary printed on stderr at exit.
    pub fn text(&self) -> String {
        let mut s = format!(
            "served {} requests ({} reads {}, {} writes {}, {} flushes, {} discards {}, {} errors) in {}; model time added {}\n",
            self.requests,
            self.reads,
            format_bytes(self.bytes_read),
            self.writes,
            format_bytes(self.bytes_written),
            self.flushes,
            self.discards,
            format_bytes(self.bytes_discarded),
            self.errors,
            format_ns(self.uptime_ns as f64),
            format_ns(self.model_ns as f64),
        );
        s.push_str(&format!(
            "replies left {} ahead of the model's deadline (the served path's own round trip, measured at start)\n",
            format_ns(self.lead_ns as f64)
        ));
        s.push_str("server overhead per request:\n");
        s.push_str(&pct_line("handler", &self.handler_ns));
        s.push_str(&pct_line("late", &self.late_ns));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_adds_up_requests_and_keeps_percentiles() {
        let mut c = Counters {
            reads: 3,
            writes: 2,
            flushes: 1,
            discards: 1,
            model_ns: 5_000,
            ..Counters::default()
        };
        c.late.record(2_000);
        let s = c.snapshot(1_000_000);
        assert_eq!(s.requests, 7);
        assert_eq!(s.late_ns.max_ns, 2_000);
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["late_ns"]["p50_ns"], 2_000);
        assert!(s.text().contains("served 7 requests"), "{}", s.text());
    }
}
