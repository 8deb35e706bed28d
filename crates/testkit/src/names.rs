//! Unique, DNS-1123 conformant names for per-test objects.

use rand::Rng;

/// Longest object name that is also a valid label value and namespace name.
const MAX_NAME: usize = 63;

/// `prefix-xxxxxx` with six random lowercase letters and digits. The prefix is lowercased,
/// characters other than `[a-z0-9-]` become `-`, and it is cut so the result fits in 63
/// characters.
pub fn unique_name(prefix: &str) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    let suffix: String = (0..6)
        .map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]))
        .collect();
    let clean = sanitize(prefix, MAX_NAME - suffix.len() - 1);
    if clean.is_empty() {
        format!("t-{suffix}")
    } else {
        format!("{clean}-{suffix}")
    }
}

/// `text` lowercased, with characters other than `[a-z0-9-]` as `-`, at most `max` characters,
/// without leading or trailing `-` (a valid label value; may be empty).
pub(crate) fn sanitize(text: &str, max: usize) -> String {
    let mut clean: String = text
        .to_ascii_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    clean.truncate(max);
    clean.trim_matches('-').to_owned()
}

#[cfg(test)]
mod tests {
    use super::unique_name;

    #[test]
    fn names_are_valid_and_distinct() {
        let a = unique_name("My_Test::case");
        let b = unique_name("My_Test::case");
        assert_ne!(a, b);
        assert!(a.starts_with("my-test--case-"), "{a}");
        let long = unique_name(&"x".repeat(100));
        assert_eq!(long.len(), 63, "{long}");
        assert!(unique_name("--").starts_with("t-"));
    }
}
