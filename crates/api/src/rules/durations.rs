//! Durations written in hours, minutes and seconds (`90s`, `10m`, `1h30m`), the form both
//! Kubernetes' CEL `duration()` and [`parse_duration`](crate::fleet::parse_duration) read the
//! same way, bounded by a shortest and a longest value.

use kube::core::Rule;

/// Rule: the string is a duration of hours, minutes and seconds from `min` to `max` (both
/// written the same way, such as `0s` and `24h`); `at` names the field in the message.
pub fn rule(at: &str, min: &str, max: &str) -> Rule {
    Rule::new(format!(
        "self.matches('^([0-9]{{1,5}}h)?([0-9]{{1,5}}m)?([0-9]{{1,5}}s)?$') && self != '' && duration(self) >= duration('{min}') && duration(self) <= duration('{max}')"
    ))
    .message(
        format!("{at} must be a duration of hours, minutes and seconds such as 90s, 10m or 1h30m, from {min} to {max}").as_str(),
    )
}
