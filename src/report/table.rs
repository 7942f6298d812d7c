//! Aligned text tables for human output.

/// One CSV field (RFC 4180): quoted when it holds a comma, quote or line break, with
/// quotes doubled. A text a spreadsheet would run as a formula (starting with `=`, `+`,
/// `-`, `@`, a tab or a carriage return, and not a number) gets a leading `'`, as OWASP
/// recommends: a device or document name cannot become a formula in someone's sheet.
pub fn csv_field(text: &str) -> std::borrow::Cow<'_, str> {
    let formula =
        text.starts_with(['=', '+', '-', '@', '\t', '\r']) && text.trim().parse::<f64>().is_err();
    let text: std::borrow::Cow<'_, str> = if formula {
        format!("'{text}").into()
    } else {
        text.into()
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
    }
}

/// Column alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A text table: a header row and data rows, rendered with aligned columns.
#[derive(Debug, Clone, Default)]
pub struct Table {
    header: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
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
            rows: Vec::new(),
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
        let mut cells = cells;
        cells.resize(self.header.len(), String::new());
        self.rows.push(cells);
    }

    /// Render with two spaces between columns and a rule under the header.
    pub fn render(&self) -> String {
        let n = self.header.len();
        let mut width = vec![0usize; n];
        for row in std::iter::once(&self.header).chain(self.rows.iter()) {
            for (i, cell) in row.iter().enumerate() {
                width[i] = width[i].max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let line = |row: &Vec<String>, out: &mut String| {
            let mut parts = Vec::with_capacity(n);
            for (i, cell) in row.iter().enumerate() {
                let pad = width[i] - cell.chars().count();
                parts.push(match self.align[i] {
                    Align::Left => format!("{cell}{}", " ".repeat(pad)),
                    Align::Right => format!("{}{cell}", " ".repeat(pad)),
                });
            }
            out.push_str(parts.join("  ").trim_end());
            out.push('\n');
        };
        line(&self.header, &mut out);
        let rule: Vec<String> = width.iter().map(|w| "-".repeat(*w)).collect();
        out.push_str(&rule.join("  "));
        out.push('\n');
        for row in &self.rows {
            line(row, &mut out);
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
