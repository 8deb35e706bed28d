//! `status -o`: yaml, json, wide, name and jsonpath=TEMPLATE, as kubectl spells them.

/// An output format of `status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusOutput {
    /// The typed document as YAML.
    Yaml,
    /// The typed document as JSON.
    Json,
    /// The table with more columns.
    Wide,
    /// `celldfleet.platform.celld.dev/NAME`, one a line.
    Name,
    /// kubectl's jsonpath template against the JSON document.
    JsonPath(String),
}

/// Parses `-o`.
pub fn parse(value: &str) -> Result<StatusOutput, String> {
    match value {
        "yaml" => Ok(StatusOutput::Yaml),
        "json" => Ok(StatusOutput::Json),
        "wide" => Ok(StatusOutput::Wide),
        "name" => Ok(StatusOutput::Name),
        other => match other
            .strip_prefix("jsonpath=")
            .or_else(|| other.strip_prefix("jsonpath-as-json="))
        {
            Some(t) if !t.is_empty() => Ok(StatusOutput::JsonPath(t.to_string())),
            _ => Err(
                "use yaml, json, wide, name or jsonpath=TEMPLATE (e.g. jsonpath='{.worker.version}')"
                    .to_string(),
            ),
        },
    }
}
