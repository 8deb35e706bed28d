//! When a failed `celld deploy` is run again, as a whole: the rule the deploy Job's script
//! ([`super::publish`]) and `kubectl celld deploy` share.
//!
//! `celld deploy` does not retry its own conditional writes: one S3 `SlowDown` (HTTP 503) ends
//! it with an error saying the write "may have committed". The command is idempotent (the same
//! source is the same version, and the pointers are written with compare-and-swap), so running it
//! again is safe. A failure is retried when the output of the failed attempt has a line saying
//! the write may have committed or the failure is transient ([`reason`]), at most [`ATTEMPTS`]
//! times in all, waiting [`BACKOFF_SECONDS`] between attempts. Any other failure (a validation
//! error, a bundling error, refused credentials) is not retried.
//!
//! The script spells the same rule in sh (an extended regular expression for `grep -Ei`, and the
//! attempts and waits as numbers); the tests of this module run the script's spelling on a table
//! of outputs and check that both agree.

use std::time::Duration;

/// How many times `celld deploy` runs at most, the first attempt included.
pub const ATTEMPTS: u32 = 4;

/// The waits, in seconds, before the second, third and fourth attempts: 14 s in all, well
/// inside a deploy Job's deadline and a deploy pod's lifetime.
pub const BACKOFF_SECONDS: [u64; (ATTEMPTS - 1) as usize] = [2, 4, 8];

/// The phrases (ASCII, compared without case) of a line that makes a failure retryable: the
/// write may have committed, the store asked to slow down, or the connection failed or timed
/// out. A line with an HTTP 5xx status (`HTTP 503`, `status: 500`, `status code 502`) counts
/// too ([`has_server_error`]).
pub const PHRASES: &[&str] = &[
    "may have committed",
    "slowdown",
    "timed out",
    "timeout",
    "connection reset",
    "connection refused",
];

/// The wait before attempt `attempt` (2 to [`ATTEMPTS`]); `None` for the first attempt or past
/// the last.
pub fn backoff(attempt: u32) -> Option<Duration> {
    let index = usize::try_from(attempt.checked_sub(2)?).ok()?;
    BACKOFF_SECONDS
        .get(index)
        .map(|seconds| Duration::from_secs(*seconds))
}

/// Why the failed attempt that printed `output` may succeed when run again: its last line that
/// says so, trimmed; `None` when the failure is not retryable.
pub fn reason(output: &str) -> Option<&str> {
    output
        .lines()
        .rev()
        .find(|line| retryable_line(line))
        .map(str::trim)
}

/// Whether `line` says the write may have committed or the failure is transient.
fn retryable_line(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    PHRASES.iter().any(|phrase| lower.contains(phrase)) || has_server_error(&lower)
}

/// Whether `lower` (lowercase) has an HTTP 5xx status: `http` or `status` (or `status code`),
/// an optional `:`, one space and three digits starting with 5, not followed by a digit.
fn has_server_error(lower: &str) -> bool {
    ["http", "status"].iter().any(|word| {
        lower.match_indices(word).any(|(at, _)| {
            let mut rest = &lower[at + word.len()..];
            if *word == "status" {
                rest = rest.strip_prefix(" code").unwrap_or(rest);
            }
            rest = rest.strip_prefix(':').unwrap_or(rest);
            rest.strip_prefix(' ').is_some_and(is_5xx)
        })
    })
}

/// Whether `text` starts with `5`, two digits and then no digit.
fn is_5xx(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.first() == Some(&b'5')
        && bytes
            .get(1..3)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
        && !bytes.get(3).is_some_and(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests;
