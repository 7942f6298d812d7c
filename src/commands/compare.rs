//! `flashscope compare A B [C...]`: the sides loaded (saved documents, fio JSON, runs or
//! devices of the history), their figures paired and compared, into the `compare`
//! document. The CLI (`cli::compare`) reads the sides' names and prints.

use crate::compare::{self, SideSpec};
use crate::report::Document;
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
    Ok(compare::document(&sides, &rows, warnings, p.force))
}
