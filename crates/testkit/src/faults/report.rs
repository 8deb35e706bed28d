//! The fault report, `REPORT.md`: one section per test that injects faults, each kept in
//! `sections/<name>.md` and rewritten by the run that measured it. The report is assembled from
//! every section file, in file-name order, after each write, so test targets add their rows
//! without knowing about each other. A test run writes both under the build directory
//! ([`report_dir`]); `make faults-report` copies them into the repository's `faults/`.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::report_dir::report_dir;
use crate::error::{Error, Result};

/// The report's file name.
const REPORT_FILE: &str = "REPORT.md";

/// The directory of the section files, in the report's directory.
const SECTIONS_DIR: &str = "sections";

/// How long to wait for another writer's lock before taking it over as stale.
const LOCK_STALE: Duration = Duration::from_secs(30);

const HEADER: &str = "# celld-operator fault report\n\n\
What the operator does under faults and hostile input, measured against real local control \
planes (kube-apiserver, etcd, kube-controller-manager, kube-scheduler, kwok fake nodes, an S3 \
server) by the integration tests that inject them. Each section says which test measured it. \
A test run writes its sections to the build directory (`target/faults/`), never here; \
`make faults-report` runs the tests and copies their report here. This file is assembled from \
`faults/sections/*.md` in file-name order.\n";

/// One section of the report: a `##` title, then paragraphs, lists and tables.
#[derive(Debug, Clone)]
pub struct ReportSection {
    name: String,
    markdown: String,
}

impl ReportSection {
    /// A section stored as `sections/<name>.md`. Sections appear in the report in
    /// file-name order, so start `name` with a number (`10-admission-fuzz`).
    pub fn new(name: &str, title: &str) -> Self {
        ReportSection {
            name: name.to_owned(),
            markdown: format!("## {title}\n"),
        }
    }

    /// Adds a paragraph.
    pub fn paragraph(&mut self, text: impl AsRef<str>) -> &mut Self {
        self.markdown.push('\n');
        self.markdown.push_str(text.as_ref().trim_end());
        self.markdown.push('\n');
        self
    }

    /// Adds a bulleted list.
    pub fn bullets<S: AsRef<str>>(&mut self, items: &[S]) -> &mut Self {
        self.markdown.push('\n');
        for item in items {
            self.markdown.push_str("- ");
            self.markdown.push_str(&one_line(item.as_ref()));
            self.markdown.push('\n');
        }
        self
    }

    /// Adds a table with a `header` row; `|` and line breaks in cells are escaped.
    pub fn table<S: AsRef<str>>(&mut self, header: &[&str], rows: &[Vec<S>]) -> &mut Self {
        self.markdown.push('\n');
        self.markdown.push_str(&row(header));
        self.markdown.push_str(&row(&vec!["---"; header.len()]));
        for r in rows {
            self.markdown.push_str(&row(r));
        }
        self
    }

    /// The section's Markdown.
    pub fn markdown(&self) -> &str {
        &self.markdown
    }

    /// Writes the section file under the build directory ([`report_dir`]) and assembles the
    /// report there again; returns the report's path.
    pub fn write(&self) -> Result<PathBuf> {
        self.write_in(&report_dir())
    }

    /// [`ReportSection::write`] into the report directory `dir`.
    fn write_in(&self, dir: &Path) -> Result<PathBuf> {
        let sections = dir.join(SECTIONS_DIR);
        std::fs::create_dir_all(&sections)
            .map_err(|e| Error::io("creating the report's sections directory", &sections, e))?;
        let file = sections.join(format!("{}.md", self.name));
        write_atomically(&file, &self.markdown)?;
        assemble_report_in(dir)
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn row<S: AsRef<str>>(cells: &[S]) -> String {
    let cells: Vec<String> = cells
        .iter()
        .map(|c| one_line(c.as_ref()).replace('|', "\\|"))
        .collect();
    format!("| {} |\n", cells.join(" | "))
}

/// Assembles `REPORT.md` under the build directory ([`report_dir`]) from every section file
/// there and returns its path.
pub fn assemble_report() -> Result<PathBuf> {
    assemble_report_in(&report_dir())
}

/// [`assemble_report`] in the report directory `dir`.
fn assemble_report_in(dir: &Path) -> Result<PathBuf> {
    let _lock = Lock::take(&dir.join(".assemble.lock"))?;
    let report = assemble(&dir.join(SECTIONS_DIR))?;
    let path = dir.join(REPORT_FILE);
    write_atomically(&path, &report)?;
    Ok(path)
}

/// The report made of the section files in `sections`, in file-name order.
fn assemble(sections: &Path) -> Result<String> {
    let mut files: Vec<PathBuf> = match std::fs::read_dir(sections) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(Error::io("listing the report's sections", sections, e)),
    };
    files.sort();
    let mut report = String::from(HEADER);
    for file in &files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| Error::io("reading a report section", file, e))?;
        report.push('\n');
        report.push_str(text.trim_end());
        report.push('\n');
    }
    Ok(report)
}

fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| Error::io("writing the fault report", &tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io("writing the fault report", path, e))
}

/// A lock file held while the report is assembled, so two test processes do not interleave.
struct Lock(PathBuf);

impl Lock {
    fn take(path: &Path) -> Result<Self> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io("creating the report directory", dir, e))?;
        }
        loop {
            match OpenOptions::new().write(true).create_new(true).open(path) {
                Ok(_) => return Ok(Lock(path.to_path_buf())),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let age = std::fs::metadata(path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| SystemTime::now().duration_since(t).ok());
                    if age.is_some_and(|a| a > LOCK_STALE) {
                        // Left behind by a writer that died: take it over.
                        let _ = std::fs::remove_file(path);
                    } else {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                }
                Err(e) => return Err(Error::io("locking the fault report", path, e)),
            }
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_escape_cells_and_keep_one_line() {
        let mut section = ReportSection::new("00-test", "Title");
        section
            .paragraph("Some text.")
            .table(&["a", "b"], &[vec!["x|y", "two\nlines"]]);
        assert_eq!(
            section.markdown(),
            "## Title\n\nSome text.\n\n| a | b |\n| --- | --- |\n| x\\|y | two lines |\n"
        );
    }

    #[test]
    fn sections_are_written_and_assembled_in_the_given_directory_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut later = ReportSection::new("20-later", "Later");
        later.paragraph("Second.");
        let mut first = ReportSection::new("10-first", "First");
        first.paragraph("First.");
        later.write_in(dir.path()).unwrap();
        let report = first.write_in(dir.path()).unwrap();
        assert_eq!(report, dir.path().join("REPORT.md"));
        assert!(dir.path().join("sections/10-first.md").is_file());
        let text = std::fs::read_to_string(&report).unwrap();
        assert!(text.starts_with(HEADER), "{text}");
        assert!(
            text.ends_with("\n## First\n\nFirst.\n\n## Later\n\nSecond.\n"),
            "{text}"
        );
        assert!(!dir.path().join(".assemble.lock").exists());
    }

    #[test]
    fn the_committed_report_is_the_assembly_of_the_committed_sections() {
        let committed = crate::paths::workspace_root().join(crate::faults::REPORT_DIR);
        let report = std::fs::read_to_string(committed.join(REPORT_FILE)).unwrap();
        assert_eq!(
            report,
            assemble(&committed.join(SECTIONS_DIR)).unwrap(),
            "faults/REPORT.md is not made of faults/sections/*.md: refresh both with `make faults-report`"
        );
    }
}
