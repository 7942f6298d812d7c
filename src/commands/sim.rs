//! `flashscope sim list|serve`'s documents: the simulator's presets and keys, and what a
//! served card did. The CLI (`cli::sim`, `cli::serve`) runs the server and prints.

use crate::backend::sim::config::{SimConfig, KEYS, PRESETS};
use crate::device::{Spec, TargetSpec};
use crate::report::results::{
    KeyEntry, PresetEntry, ServeParameters, ServeResult, SimListResult, SpecTarget,
};
use crate::report::{Body, Document, Target};
use crate::serve::{Outcome, ServeOptions};
use crate::vocab::Warning;
use crate::{Error, Result};

/// The card `sim serve SPEC` serves: only a simulated card (`sim:PRESET[,key=value...]`).
pub(crate) fn served_config(spec: &TargetSpec) -> Result<SimConfig> {
    match spec.names() {
        Spec::Sim(cfg) => Ok((**cfg).clone()),
        Spec::Path(_) => Err(Error::usage(format!(
            "'{spec}' is not a simulated card: `sim serve` serves sim:PRESET[,key=value...] (see `flashscope sim list`)"
        ))),
    }
}

/// `sim list`'s document: every preset with its keys, and every key with its meaning.
pub(crate) fn list() -> Result<Document> {
    let mut presets = Vec::new();
    for p in PRESETS {
        let cfg = SimConfig::parse(p.name)?;
        presets.push(PresetEntry {
            name: p.name.to_string(),
            about: p.about.to_string(),
            keys: cfg
                .pairs()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        });
    }
    let keys = KEYS
        .iter()
        .map(|k| KeyEntry {
            key: k.key.to_string(),
            meaning: k.meaning.to_string(),
        })
        .collect();
    Ok(Document::new(
        Target::None,
        Body::SimList(SimListResult { presets, keys }),
    ))
}

/// `sim serve`'s document: the card `spec` served with `opts`, and how the serving went.
pub(crate) fn served(spec: &str, opts: &ServeOptions, outcome: &Outcome) -> Document {
    let mut doc = Document::new(
        Target::Spec(SpecTarget {
            spec: spec.to_string(),
        }),
        Body::SimServe(ServeResult {
            parameters: ServeParameters {
                mountpoint: opts.mountpoint.display().to_string(),
                attach_loop: opts.attach_loop,
                cpu: opts.cpu,
                spin_ns: opts.spin_ns,
            },
            stats: outcome.stats.clone(),
        }),
    );
    doc.elapsed_ns = outcome.stats.uptime_ns;
    doc.bytes_written = outcome.stats.bytes_written;
    doc.warnings = outcome
        .cleanup_warnings
        .iter()
        .map(|w| Warning::Cleanup { what: w.clone() })
        .collect();
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_sim_specs_are_served() {
        let spec = crate::device::test_spec;
        assert!(served_config(&spec("sim:sd-16g")).is_ok());
        let e = served_config(&spec("/dev/sda")).unwrap_err();
        assert!(e.to_string().contains("not a simulated card"), "{e}");
        let e = TargetSpec::parse("sim:nonsense").unwrap_err();
        assert_eq!(e.exit_code(), 2);
    }
}
