//! The bounds and names of vars from Secrets.
//!
//! celld documents no bound on a Worker's vars. These follow Cloudflare Workers, whose config
//! format celld reads: an environment variable holds at most 5 KB. The total of 64 KiB keeps a
//! Worker's config (which every node reads on each deploy) small; a Worker needing more than
//! that in vars should keep the data elsewhere and put only a reference in a var.

/// Largest value of one var from a Secret, in bytes.
pub const MAX_VALUE_BYTES: usize = 5 * 1024;

/// Largest size of all the Worker's vars together, in bytes: each name plus each value (a
/// string's bytes; the JSON text of a non-string value of the config).
pub const MAX_TOTAL_BYTES: usize = 64 * 1024;

/// Whether `name` can be a var: what a Worker reads as `env.NAME` without quoting, ASCII
/// letters, digits and `_`, not starting with a digit.
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A valid name close to `name`: every other character becomes `_`, and a leading digit gets a
/// `_` in front.
pub fn suggest(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        out.insert(0, '_');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["API_KEY", "_x", "a1", "CELLD_TOKEN"] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in ["", "1A", "api-key", "tls.crt", "a b", "é"] {
            assert!(!valid_name(bad), "{bad}");
            assert!(valid_name(&suggest(bad)), "{bad} -> {}", suggest(bad));
        }
        assert_eq!(suggest("api-key"), "api_key");
        assert_eq!(suggest("tls.crt"), "tls_crt");
        assert_eq!(suggest("1A"), "_1A");
    }
}
