//! `model`: theoretical sequential speed from datasheet figures, each term kept, and the
//! vendor's measured reference rows.

use crate::model::reference;
use crate::model::{estimate, Datasheet};
use crate::report::results::{DatasheetTarget, ModelParameters, ModelResult, ModelTerm};
use crate::report::{Body, Document, Target};
use crate::vocab::units::{format_bytes, format_ns, format_rate};
use crate::vocab::Inference;
use crate::{Error, Result};

/// Which reference rows to show.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReferenceFilter {
    /// Media, e.g. spi-nand.
    pub media: Option<String>,
    /// Part number substring.
    pub part: Option<String>,
}

/// What `model` computes: an estimate from these figures, the reference rows, or both.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelParams {
    pub datasheet: Option<Datasheet>,
    pub reference: Option<ReferenceFilter>,
}

/// The estimate, the reference rows, or both, as a document.
pub fn model(params: &ModelParams) -> Result<Document> {
    let t0 = crate::backend::monotonic_ns();
    let mut doc = Document::new(
        Target::Datasheet(DatasheetTarget {
            kind: "datasheet".to_string(),
            flash: None,
        }),
        Body::Model(ModelResult::default()),
    );
    let mut body = ModelResult::default();
    if let Some(d) = &params.datasheet {
        let e = estimate(d);
        doc.target = Target::Datasheet(DatasheetTarget {
            kind: "datasheet".to_string(),
            flash: Some(d.kind.name().to_string()),
        });
        body.parameters = ModelParameters::Datasheet(d.clone());
        for (phase, terms) in [("write", &e.write_terms), ("read", &e.read_terms)] {
            body.samples.extend(terms.iter().map(|t| ModelTerm {
                phase: phase.to_string(),
                term: t.clone(),
            }));
        }
        doc.inferences.insert(
            "seq_write_bytes_per_s".into(),
            Inference::new(
                e.write_bytes_per_s.round() as u64,
                1.0,
                format!(
                    "{} in {} by the datasheet figures (an upper bound: no controller or filesystem overhead)",
                    format_bytes(d.total_bytes),
                    format_ns(e.write_ns)
                ),
            ),
        );
        doc.inferences.insert(
            "seq_read_bytes_per_s".into(),
            Inference::new(
                e.read_bytes_per_s.round() as u64,
                1.0,
                format!(
                    "bus-limited: {} of bus rate with {} command bytes per {} read",
                    format_rate(e.bus_bytes_per_s),
                    d.cmd_bytes,
                    format_bytes(d.read_bytes_per_command)
                ),
            ),
        );
        body.estimate = Some(e);
    }
    if let Some(filter) = &params.reference {
        let rows = reference::filter(
            &reference::table(),
            filter.media.as_deref(),
            filter.part.as_deref(),
        );
        if rows.is_empty() {
            let mut media: Vec<String> = reference::table().into_iter().map(|r| r.media).collect();
            media.sort();
            media.dedup();
            return Err(Error::usage(format!(
                "no reference row matches{}{}: media in the table are {}",
                filter
                    .media
                    .as_deref()
                    .map(|m| format!(" --media '{m}'"))
                    .unwrap_or_default(),
                filter
                    .part
                    .as_deref()
                    .map(|p| format!(" --part '{p}'"))
                    .unwrap_or_default(),
                media.join(", ")
            )));
        }
        body.reference = Some(rows);
    }
    doc.body = Body::Model(body);
    doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(t0);
    Ok(doc)
}
