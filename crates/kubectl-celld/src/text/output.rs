//! Writing results to stdout: `-o yaml|json` documents and text.

use super::output_format::OutputFormat;
use crate::error::{Error, Result};
use serde::Serialize;
use std::io::Write;

/// Serializes `value` as YAML or pretty JSON, ending in a newline.
pub fn serialize<T: Serialize>(value: &T, format: OutputFormat) -> Result<String> {
    match format {
        OutputFormat::Yaml => {
            serde_yaml::to_string(value).map_err(|e| Error::Output(e.to_string()))
        }
        OutputFormat::Json => serde_json::to_string_pretty(value)
            .map(|s| s + "\n")
            .map_err(|e| Error::Output(e.to_string())),
    }
}

/// Prints `text` to stdout; a closed pipe (`| head`) is not an error.
pub fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::Output(e.to_string())),
    }
}
