//! The `-o yaml|json` format shared by the commands that print typed documents (`status` has
//! more formats of its own, in `commands/status/format.rs`).

use clap::ValueEnum;

/// `-o` formats for scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// YAML
    Yaml,
    /// JSON
    Json,
}
