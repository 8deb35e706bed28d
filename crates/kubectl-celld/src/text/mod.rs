//! Text in and out: `-o yaml|json` documents and stdout, tables, human sizes and ages, kubectl's
//! jsonpath templates and label selectors, "did you mean" suggestions, the parsing of flag
//! values, and the progress lines of the commands that drive a pod.

pub mod human;
pub mod jsonpath_template;
pub mod label_selector;
pub mod near;
pub mod output;
pub mod output_format;
pub mod parse;
pub mod progress;
pub mod table;
