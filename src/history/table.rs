//! The empirical table per part, laid out as the vendor's table (`data/empirical.csv`:
//! part, sequential read, sequential write, random read IOPS, random write IOPS): from the
//! `bench` runs in history, per model or device, the median and range over runs of
//! SEQ1M Q8 read and write bandwidth and RND4K Q32 read and write IOPS.
//!
//! SQLite sorts the figures by part, column and value; they are streamed and one group's
//! values are held at a time, so memory does not grow with the number of runs stored.

use super::Store;
use crate::report::rows::{Cell, PartRow};
use crate::{Error, Result};
use rusqlite::params;

/// What a row of the table stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    /// The part: maker and product (CID) or model; devices without one by their identity.
    Model,
    /// Each device (its identity: CID, USB ids and serial, or model, serial and size).
    Device,
}

/// The table's figures: (column key, metric, bench job).
pub const COLUMNS: [(&str, &str, &str); 4] = [
    (
        "seq_read_bytes_per_s",
        "bench_bandwidth_bytes_per_second",
        "seq_read",
    ),
    (
        "seq_write_bytes_per_s",
        "bench_bandwidth_bytes_per_second",
        "seq_write",
    ),
    ("rand_read_iops", "bench_iops", "rand_read"),
    ("rand_write_iops", "bench_iops", "rand_write"),
];

impl PartRow {
    fn new(part: String) -> Self {
        PartRow {
            part,
            seq_read_bytes_per_s: None,
            seq_write_bytes_per_s: None,
            rand_read_iops: None,
            rand_write_iops: None,
        }
    }

    /// The cells in [`COLUMNS`] order.
    pub fn cells(&self) -> [&Option<Cell>; 4] {
        [
            &self.seq_read_bytes_per_s,
            &self.seq_write_bytes_per_s,
            &self.rand_read_iops,
            &self.rand_write_iops,
        ]
    }

    fn set(&mut self, column: usize, cell: Cell) {
        let slot = match column {
            0 => &mut self.seq_read_bytes_per_s,
            1 => &mut self.seq_write_bytes_per_s,
            2 => &mut self.rand_read_iops,
            _ => &mut self.rand_write_iops,
        };
        *slot = Some(cell);
    }
}

/// Close the group `group` (part, column) whose sorted values are `values` into `out`.
fn flush(group: &Option<(String, usize)>, values: &mut Vec<f64>, out: &mut Vec<PartRow>) {
    if let Some((part, column)) = group {
        if out.last().map(|r| &r.part) != Some(part) {
            out.push(PartRow::new(part.clone()));
        }
        if let (Some(row), Some(c)) = (out.last_mut(), cell(values)) {
            row.set(*column, c);
        }
    }
    values.clear();
}

fn cell(values: &mut [f64]) -> Option<Cell> {
    let median = crate::analysis::stats::median(values)?;
    let (min, max) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    Some(Cell {
        runs: values.len() as u64,
        median,
        min,
        max,
    })
}

/// The empirical table of the runs in `store`, one row per part, sorted by part.
pub fn table(store: &Store, by: By) -> Result<Vec<PartRow>> {
    let err = |e| super::db_error(store.path(), "building the table", e);
    let mut stmt = store
        .conn()
        .prepare(
            "SELECT CASE WHEN ?1 THEN coalesce(r.model, r.device) ELSE r.device END AS part,
                    m.metric, json_extract(m.labels, '$.job') AS job, m.value
             FROM metrics m JOIN runs r ON r.id = m.run_id
             WHERE r.command = 'bench'
               AND m.metric IN ('bench_bandwidth_bytes_per_second', 'bench_iops')
               AND json_extract(m.labels, '$.job') IN ('seq_read', 'seq_write', 'rand_read', 'rand_write')
             ORDER BY part, m.metric, job, m.value",
        )
        .map_err(err)?;
    let mut rows = stmt.query(params![by == By::Model]).map_err(err)?;
    let mut out: Vec<PartRow> = Vec::new();
    let mut group: Option<(String, usize)> = None;
    let mut values: Vec<f64> = Vec::new();
    while let Some(r) = rows.next().map_err(err)? {
        let part: String = r.get(0).map_err(err)?;
        let metric: String = r.get(1).map_err(err)?;
        let job: String = r.get(2).map_err(err)?;
        let value: f64 = r.get(3).map_err(err)?;
        let Some(column) = COLUMNS
            .iter()
            .position(|(_, m, j)| *m == metric && *j == job)
        else {
            continue;
        };
        if group.as_ref() != Some(&(part.clone(), column)) {
            flush(&group, &mut values, &mut out);
            group = Some((part, column));
        }
        values.push(value);
    }
    flush(&group, &mut values, &mut out);
    if out.len() > 1_000_000 {
        return Err(Error::runtime("history table: over a million parts"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::TargetInfo;
    use crate::report::Document;
    use crate::vocab::Metric;

    fn bench(spec: &str, seq_read: f64, rand_write: f64) -> Document {
        let info = TargetInfo {
            spec: spec.into(),
            kind: crate::device::TargetKind::Sim,
            model: Some("sim card".into()),
            ..Default::default()
        };
        let mut d = crate::history::tests::empty_bench(&info);
        d.metrics = vec![
            Metric::new(
                "bench_bandwidth_bytes_per_second",
                "",
                seq_read,
                &[("job", "seq_read")],
            ),
            Metric::new(
                "bench_bandwidth_bytes_per_second",
                "",
                seq_read * 2.0,
                &[("job", "seq_read_q1")],
            ),
            Metric::new("bench_iops", "", rand_write, &[("job", "rand_write")]),
        ];
        d
    }

    #[test]
    fn median_and_range_per_part_and_column() {
        let mut s = Store::open_in_memory().unwrap();
        for (spec, r, w) in [
            ("sim:a,seed=1", 10.0, 100.0),
            ("sim:a,seed=1", 30.0, 300.0),
            ("sim:a,seed=1", 20.0, 250.0),
            ("sim:a,seed=2", 5.0, 50.0),
        ] {
            let d = bench(spec, r, w);
            let id = super::super::identity::of_document(&d);
            s.record(&d, &id, None, "measured").unwrap();
        }
        let t = table(&s, By::Device).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].part, "sim:a,seed=1");
        assert_eq!(
            t[0].seq_read_bytes_per_s,
            Some(Cell {
                runs: 3,
                median: 20.0,
                min: 10.0,
                max: 30.0
            })
        );
        assert_eq!(t[0].rand_write_iops.as_ref().unwrap().median, 250.0);
        assert_eq!(t[0].seq_write_bytes_per_s, None);
        assert_eq!(t[1].seq_read_bytes_per_s.as_ref().unwrap().runs, 1);
        // Two seeds of one preset are one part.
        let by_model = table(&s, By::Model).unwrap();
        assert_eq!(by_model.len(), 1);
        assert_eq!(by_model[0].part, "sim:a");
        assert_eq!(
            by_model[0].seq_read_bytes_per_s.as_ref().unwrap().median,
            15.0
        );
    }
}
