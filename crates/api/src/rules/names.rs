//! Kubernetes name formats as CEL regular expressions, and the rules that hold a field to one.
//!
//! The expressions use `[.]` rather than an escaped dot so that they read the same in Rust, in
//! CEL string literals and in the generated CRD.

use kube::core::Rule;

/// A DNS-1123 label: at most 63 lowercase letters, digits and '-', starting and ending with a
/// letter or digit (namespaces, Gateway namespaces).
pub const DNS_LABEL: &str = "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$";

/// A DNS-1123 subdomain: dot-separated lowercase labels (Secret, ServiceAccount, StorageClass and
/// IngressClass names). Its 253-character limit is the field's maxLength.
pub const DNS_SUBDOMAIN: &str =
    "^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

/// A label value: empty, or at most 63 letters, digits, '-', '_' and '.', starting and ending
/// with a letter or digit.
pub const LABEL_VALUE: &str = "^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$";

/// The name part of a qualified name, at most 63 characters.
const NAME_PART: &str = "[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?";

/// A qualified name (label keys, taint and topology keys), unanchored: `[prefix/]name`, the
/// prefix a lowercase DNS subdomain.
pub fn qualified_name_body() -> String {
    format!("([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?{NAME_PART}")
}

/// An annotation key, unanchored: a qualified name whose prefix may use uppercase letters
/// (Kubernetes lowercases annotation keys before checking them).
pub fn annotation_key_body() -> String {
    format!(
        "([A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?([.][A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*/)?{NAME_PART}"
    )
}

/// The prefix of a qualified name is at most 253 characters.
const PREFIX_LENGTH: &str = "^([^/]{1,253}/)?[^/]*$";

/// CEL: `expr` (a string) is a qualified name.
pub fn is_qualified_name(expr: &str) -> String {
    format!(
        "({expr}.matches('^{}$') && {expr}.matches('{PREFIX_LENGTH}'))",
        qualified_name_body()
    )
}

/// CEL: `expr` (a string) is an annotation key.
pub fn is_annotation_key(expr: &str) -> String {
    format!(
        "({expr}.matches('^{}$') && {expr}.matches('{PREFIX_LENGTH}'))",
        annotation_key_body()
    )
}

/// CEL: `expr` (a string) is a label value.
pub fn is_label_value(expr: &str) -> String {
    format!("{expr}.matches('{LABEL_VALUE}')")
}

/// What a qualified name is, for messages.
pub const QUALIFIED_NAME_HELP: &str = "a qualified name [PREFIX/]NAME: NAME is at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit; the optional PREFIX is a lowercase DNS subdomain of at most 253 characters";

/// What a label value is, for messages.
pub const LABEL_VALUE_HELP: &str = "empty or at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit";

/// Rule: the string is a DNS-1123 subdomain (`at` names the field, `what` the object it names).
pub fn dns_subdomain_rule(at: &str, what: &str, example: &str) -> Rule {
    Rule::new(format!("self.matches('{DNS_SUBDOMAIN}')")).message(
        format!("{at} must be the name of {what}: a DNS subdomain of lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, for example {example}").as_str(),
    )
}

/// Rule: the string is a DNS-1123 label (`at` names the field, `what` the object it names).
pub fn dns_label_rule(at: &str, what: &str, example: &str) -> Rule {
    Rule::new(format!("self.matches('{DNS_LABEL}')")).message(
        format!("{at} must be the name of {what}: a DNS label of at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit, for example {example}").as_str(),
    )
}
