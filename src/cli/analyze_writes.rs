//! The write-test part of `analyze`: flashbench `--open-au` and `--find-fat` logs through
//! the same inference as the live `open-au` and `fat` tests.

use crate::analysis::fat::{infer_fat, samples_from_flashbench};
use crate::analysis::flashbench::{FlashbenchLog, LogData, OpenAuLog, OpenAuNrSource};
use crate::analysis::openau::{
    at_most_tentative, infer_open_au, per_count, points_from_flashbench,
};
use crate::report::{Document, Inference, Warning};
use crate::units::format_bytes;
use std::collections::BTreeMap;

const ASSUMED: &str = "the open-AU counts were taken from the order of the runs, not from command lines (give --open-au-nr to state them)";

/// The text line of each write-test inference the document has, in the order `analyze`
/// prints them.
pub fn lines(map: &BTreeMap<String, Inference>) -> Vec<String> {
    [
        ("open_au", "open erase blocks (open_au)"),
        (
            "open_au_random",
            "open erase blocks in random order (open_au_random)",
        ),
        (
            "fat_area_erase_blocks",
            "FAT area erase blocks (fat_area_erase_blocks)",
        ),
    ]
    .into_iter()
    .filter_map(|(key, what)| map.get(key).map(|i| line(what, i)))
    .collect()
}

fn line(key: &str, inf: &Inference) -> String {
    let v = inf
        .value
        .as_ref()
        .map(|v| v.to_string())
        .unwrap_or_else(|| "?".into());
    format!("{key}: {v} ({}) - {}\n", inf.status_word(), inf.evidence)
}

/// Infer `open_au` (linear logs), `open_au_random` (random logs, against the linear
/// one-block rate when present) and `fat_area_erase_blocks` from the logs there are.
pub fn open_au_and_fat(logs: &[(String, FlashbenchLog)], doc: &mut Document) {
    let open: Vec<(&str, &OpenAuLog)> = logs
        .iter()
        .filter_map(|(f, l)| match &l.data {
            LogData::OpenAu(o) => Some((f.as_str(), o)),
            _ => None,
        })
        .collect();
    for (f, o) in &open {
        if o.open_au_nr.is_none() {
            doc.warnings.push(Warning::OpenAuNrUnknown {
                file: f.to_string(),
            });
        }
    }
    // Counts assumed from the order of the runs may be wrong: no confident answer on them.
    let assumed = |logs: &[&OpenAuLog]| {
        logs.iter()
            .any(|o| o.open_au_nr_source == Some(OpenAuNrSource::RunOrder))
    };
    let linear: Vec<&OpenAuLog> = open
        .iter()
        .filter(|(_, o)| !o.random)
        .map(|x| x.1)
        .collect();
    let random: Vec<&OpenAuLog> = open.iter().filter(|(_, o)| o.random).map(|x| x.1).collect();
    let mut lin_ref = None;
    if !linear.is_empty() {
        let (pts, size) = points_from_flashbench(&linear);
        let mut inf = infer_open_au(&pts, None);
        if assumed(&linear) {
            inf = at_most_tentative(inf, ASSUMED);
        }
        if let Some(sz) = size {
            inf.evidence = format!("at {} writes: {}", format_bytes(sz), inf.evidence);
            lin_ref = per_count(&pts)
                .into_iter()
                .find(|&(n, _)| n == 1)
                .map(|(_, r)| (sz, r));
        }
        doc.inferences.insert("open_au".into(), inf);
    }
    if !random.is_empty() {
        let (pts, size) = points_from_flashbench(&random);
        let reference = match (lin_ref, size) {
            (Some((ls, r)), Some(rs)) if ls == rs => Some(r),
            _ => None,
        };
        let mut inf = infer_open_au(&pts, reference);
        if assumed(&random) {
            inf = at_most_tentative(inf, ASSUMED);
        }
        if let Some(sz) = size {
            inf.evidence = format!(
                "at {} random-order writes: {}",
                format_bytes(sz),
                inf.evidence
            );
        }
        doc.inferences.insert("open_au_random".into(), inf);
    }
    let fat: Vec<_> = logs
        .iter()
        .filter_map(|(_, l)| match &l.data {
            LogData::FindFat(f) => Some(samples_from_flashbench(f)),
            _ => None,
        })
        .flatten()
        .collect();
    if logs
        .iter()
        .any(|(_, l)| matches!(l.data, LogData::FindFat(_)))
    {
        let inf = infer_fat(&fat);
        doc.inferences.insert("fat_area_erase_blocks".into(), inf);
    }
}
