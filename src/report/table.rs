//! Aligned text tables for human output.

/// One CSV field (RFC 4180): control characters shown as [`crate::input::printable`]
/// shows them, quoted when it holds a comma or quote, with quotes doubled. A text a spreadsheet would run as a formula (starting with `=`, `+`,
/// `-`, `@`, a tab or a carriage return, and not a number) gets a leading `'`, as OWASP
/// recommends: a device or document name cannot become a formula in someone's sheet.
pub fn csv_field(text: &str) -> std::borrow::Cow<'_, str> {
    // Control characters shown, not kept: a CSV on a terminal obeys no escape sequence.
    let text = crate::input::printable(text);
    let formula =
        text.starts_with(['=', '+', '-', '@', '\t', '\r']) && text.trim().parse::<f64>().is_err();
    let text: std::borrow::Cow<'_, str> = if formula {
        format!("'{text}").into()
    } else {
        text
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\"")).into()
    } else {
        text
    }
}

#[cfg(test)]
mod csv_tests {
    #[test]
    fn formulas_are_neutralised_and_numbers_kept() {
        use super::csv_field;
        assert_eq!(csv_field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(csv_field("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(csv_field("+1-2"), "'+1-2");
        assert_eq!(csv_field("-1.5"), "-1.5");
        assert_eq!(csv_field("1e6"), "1e6");
        assert_eq!(csv_field("sim:sd-16g"), "sim:sd-16g");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        // A document's line break or escape sequence is shown, not kept (issue 30).
        assert_eq!(csv_field("x\n\u{1b}[2J"), "x\\n\\u{1b}[2J");
        assert_eq!(csv_field("=1+2\n"), "'=1+2\\n");
    }
}

/// Column alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A text table: a header row and data rows, rendered with aligned columns. The data
/// cells are kept as one text with an offset per cell, not a `String` each (`analyze` of
/// a large log draws a table of a million rows). Rows too many to hold are drawn as they
/// come: [`Table::fit`] each, then [`Table::head`] and [`Table::line`] each again.
#[derive(Debug, Clone, Default)]
pub struct Table {
    header: Vec<String>,
    align: Vec<Align>,
    /// Each column's width in characters, over the header and the rows so far.
    width: Vec<usize>,
    /// Every data cell's text, one after the other.
    cells: String,
    /// Where each data cell ends in `cells`, row after row (`header.len()` per row).
    ends: Vec<usize>,
    rows: usize,
}

impl Table {
    /// A table with these column headers; the first column is left-aligned, the rest right.
    pub fn new(header: &[&str]) -> Self {
        let align = (0..header.len())
            .map(|i| if i == 0 { Align::Left } else { Align::Right })
            .collect();
        Table {
            header: header.iter().map(|s| s.to_string()).collect(),
            align,
            width: header.iter().map(|s| s.chars().count()).collect(),
            ..Table::default()
        }
    }

    /// Override the alignment of one column.
    pub fn align(mut self, column: usize, align: Align) -> Self {
        if let Some(a) = self.align.get_mut(column) {
            *a = align;
        }
        self
    }

    /// Append a row (missing cells are blank, extra cells are dropped).
    pub fn row(&mut self, cells: Vec<String>) {
        self.fit(&cells);
        for i in 0..self.header.len() {
            self.cells.push_str(cells.get(i).map_or("", |c| c.as_str()));
            self.ends.push(self.cells.len());
        }
        self.rows += 1;
    }

    /// Widen the columns to fit a row that is not kept (drawn later with [`Table::line`]).
    pub fn fit(&mut self, cells: &[String]) {
        for (w, cell) in self.width.iter_mut().zip(cells) {
            *w = (*w).max(crate::input::printable(cell).chars().count());
        }
    }

    /// The cells of data row `r`.
    fn cells_of(&self, r: usize) -> impl Iterator<Item = &str> {
        let n = self.header.len();
        (r * n..(r + 1) * n).map(move |k| {
            let start = if k == 0 { 0 } else { self.ends[k - 1] };
            &self.cells[start..self.ends[k]]
        })
    }

    /// One row as drawn, with its line feed (missing cells blank, extra ones dropped).
    fn draw<'c>(&self, cells: impl Iterator<Item = &'c str>) -> String {
        let n = self.header.len();
        let mut parts = Vec::with_capacity(n);
        for (i, cell) in cells.chain(std::iter::repeat("")).take(n).enumerate() {
            // A cell is one line: a line break or escape sequence in it (a device's or a
            // document's name) is shown, never obeyed (issue 30).
            let cell = crate::input::printable(cell);
            let pad = self.width[i].saturating_sub(cell.chars().count());
            parts.push(match self.align[i] {
                Align::Left => format!("{cell}{}", " ".repeat(pad)),
                Align::Right => format!("{}{cell}", " ".repeat(pad)),
            });
        }
        let mut out = parts.join("  ").trim_end().to_string();
        out.push('\n');
        out
    }

    /// A row given to [`Table::fit`], as drawn.
    pub fn line(&self, cells: &[String]) -> String {
        self.draw(cells.iter().map(|c| c.as_str()))
    }

    /// The header and the rule under it.
    pub fn head(&self) -> String {
        let mut out = self.draw(self.header.iter().map(|s| s.as_str()));
        let rule: Vec<String> = self.width.iter().map(|w| "-".repeat(*w)).collect();
        out.push_str(&rule.join("  "));
        out.push('\n');
        out
    }

    /// Render with two spaces between columns and a rule under the header.
    pub fn render(&self) -> String {
        let mut out = self.head();
        for r in 0..self.rows {
            out.push_str(&self.draw(self.cells_of(r)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up() {
        let mut t = Table::new(&["name", "value"]);
        t.row(vec!["size".into(), "16 GiB".into()]);
        t.row(vec!["logical sector".into(), "512 B".into()]);
        let s = t.render();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[2].ends_with("16 GiB"));
        assert_eq!(lines[2].len(), lines[3].len());
    }
}
