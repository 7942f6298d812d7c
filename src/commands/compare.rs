//! `flashscope compare A B [C...]`: the sides loaded (saved documents, fio JSON, runs or
//! devices of the history), their figures paired and compared, into the `compare`
//! document. The CLI (`cli::compare`) reads the sides' names and prints.

use crate::compare::{self, Side, SideSpec};
use crate::report::results::{CompareParameters, CompareResult, SpecTarget};
use crate::report::rows::{Row, SideSummary};
use crate::report::{Body, Document, Target};
use crate::vocab::{Inference, Metric, Warning};
use crate::Result;

/// `compare`'s parameters: the sides, the first one the base; `force`: compare figures
/// of different workloads too.
pub(crate) struct CompareParams {
    pub sides: Vec<SideSpec>,
    pub force: bool,
}

/// Load every side, compare each with the first, and build the document.
pub(crate) fn run(p: &CompareParams) -> Result<Document> {
    let sides = p
        .sides
        .iter()
        .map(compare::load)
        .collect::<Result<Vec<_>>>()?;
    let (rows, warnings) = compare::compare(&sides, p.force)?;
    Ok(document(&sides, &rows, warnings, p.force))
}

/// The `compare` document: `samples` are the rows, each row an inference named
/// `METRIC` (with `_vs_LABEL` when there are more than two sides) whose value is B / A − 1,
/// and the ratio and its interval as metrics.
fn document(sides: &[Side], rows: &[Row], warnings: Vec<Warning>, force: bool) -> Document {
    let names: Vec<String> = sides.iter().map(|s| s.spec.name()).collect();
    let summaries: Vec<SideSummary> = sides
        .iter()
        .enumerate()
        .map(|(i, s)| SideSummary {
            label: compare::label(i),
            source: s.spec.name(),
            kind: s.kind.clone(),
            target: s.target.clone(),
            figures: s.measures.len(),
            runs: s
                .measures
                .iter()
                .map(|m| m.runs.len())
                .max()
                .unwrap_or(0)
                .max(1),
        })
        .collect();
    let mut doc = Document::new(
        Target::Spec(SpecTarget {
            spec: names.join(" vs "),
        }),
        Body::Compare(CompareResult {
            parameters: CompareParameters {
                confidence: compare::stats::LEVEL,
                bootstrap_resamples: compare::stats::RESAMPLES,
                bootstrap_seed: compare::stats::SEED,
                min_seconds: compare::stats::MIN_SECONDS,
                force,
            },
            samples: rows.to_vec(),
            sides: summaries,
            verdict: compare::verdict(rows),
        }),
    );
    for r in rows {
        let key = if sides.len() > 2 {
            format!("{}_vs_{}", r.metric, r.side)
        } else {
            r.metric.clone()
        };
        // The difference is an inference when its interval excludes zero; otherwise the
        // data cannot tell it from none, and the sentence says how far it may go.
        let inference = match r.significant {
            Some(true) => Inference::new(
                (r.difference * 1e4).round() / 1e4,
                compare::stats::LEVEL,
                r.sentence.clone(),
            ),
            _ => Inference::inconclusive(r.sentence.clone()),
        };
        doc.inferences.insert(key, inference);
        let labels = [
            ("metric", r.metric.as_str()),
            ("baseline", r.baseline.as_str()),
            ("side", r.side.as_str()),
        ];
        doc.metrics.push(Metric::new(
            "compare_ratio",
            "Figure of the side over the baseline's (1 = the same)",
            1.0 + r.difference,
            &labels,
        ));
        if let (Some(lo), Some(hi)) = (r.ci_low, r.ci_high) {
            doc.metrics.push(Metric::new(
                "compare_ratio_ci_low",
                "Lower end of the 95 % interval of the ratio",
                1.0 + lo,
                &labels,
            ));
            doc.metrics.push(Metric::new(
                "compare_ratio_ci_high",
                "Upper end of the 95 % interval of the ratio",
                1.0 + hi,
                &labels,
            ));
        }
    }
    doc.warnings = warnings;
    doc
}
