//! Kubernetes quantities (CPU, memory, storage sizes) in CEL rules.
//!
//! A quantity must match [`QUANTITY`] before a rule hands it to CEL's `quantity()`: the pattern
//! keeps every value and every comparison within the range that both the API server and kube's
//! client-side CEL compute exactly (at most 18 significant digits, exponents up to 18). The API
//! server silently caps a quantity at 2^63-1, so the rules refuse values that large.

use kube::core::Rule;

/// A non-negative quantity: up to 15 integer digits and 3 decimals, then a binary or decimal SI
/// suffix or an exponent up to 18.
pub const QUANTITY: &str = "^([0-9]{1,15}([.][0-9]{0,3})?|[.][0-9]{1,3})([KMGTPE]i|[numkMGTPE]|[eE][+]?([0-9]|1[0-8])|[eE]-[0-9])?$";

/// The largest quantity Kubernetes stores exactly (2^63-1); larger ones are capped to it.
pub const LARGEST: &str = "9223372036854775807";

/// What the rules accept, for messages.
pub const HELP: &str =
    "below 2^63, with at most 15 digits before and 3 after the point and exponents up to 18";

/// CEL: the string `s` is a non-negative quantity below 2^63-1.
pub fn is_quantity(s: &str) -> String {
    format!("({s}.matches('{QUANTITY}') && quantity({s}).compareTo(quantity('{LARGEST}')) < 0)")
}

/// Rule: the string is a positive quantity below 2^63-1 (`at` names the field).
pub fn positive_rule(at: &str, examples: &str) -> Rule {
    Rule::new(format!(
        "{} && quantity(self).isGreaterThan(quantity('0'))",
        is_quantity("self")
    ))
    .message(
        format!("{at} must be a positive Kubernetes quantity such as {examples}, {HELP}").as_str(),
    )
}
