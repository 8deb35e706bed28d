//! Plain-text tables in kubectl's style: upper-case headers, columns padded to their widest
//! cell, three spaces between columns, no trailing spaces.

/// A table being built.
#[derive(Debug, Default)]
pub struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these headers.
    pub fn new<S: AsRef<str>>(headers: &[S]) -> Self {
        Self {
            rows: vec![headers.iter().map(|h| h.as_ref().to_string()).collect()],
        }
    }

    /// Adds a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table, every line indented by `indent` and ending in a newline.
    pub fn render(&self, indent: &str) -> String {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|i| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(i))
                    .map(|c| c.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for row in &self.rows {
            let mut line = indent.to_string();
            for (i, cell) in row.iter().enumerate() {
                if i + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    line.push_str(&format!("{cell:<width$}   ", width = widths[i]));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::Table;

    #[test]
    fn pads_columns() {
        let mut t = Table::new(&["NAME", "READY", "AGE"]);
        t.row(vec!["web-0".into(), "1/1".into(), "5m".into()]);
        t.row(vec!["web-10".into(), "0/1".into(), "".into()]);
        assert_eq!(
            t.render("  "),
            "  NAME     READY   AGE\n  web-0    1/1     5m\n  web-10   0/1\n"
        );
    }
}
