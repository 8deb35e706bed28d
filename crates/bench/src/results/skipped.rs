//! What could not be measured.

/// A fleet count, the churn or the previews, that could not be measured, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    /// What was to be measured.
    pub what: String,
    /// Why it was not.
    pub why: String,
}
