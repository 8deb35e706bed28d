//! Preview lifetimes: durations written in hours, minutes and seconds (`72h`, `1h30m`), the
//! form both Kubernetes' CEL `duration()` and this parser read the same way.

use std::time::Duration;

/// The shortest lifetime a preview may have.
pub const MIN: Duration = Duration::from_secs(60);

/// What a lifetime looks like, for messages.
pub const HELP: &str =
    "a duration in hours, minutes and seconds such as 72h, 90m or 1h30m, at least 1m";

/// Rule: the string is a lifetime of at least [`MIN`] (`at` names the field).
pub fn rule(at: &str) -> kube::core::Rule {
    kube::core::Rule::new(
        "self.matches('^([0-9]{1,5}h)?([0-9]{1,5}m)?([0-9]{1,5}s)?$') && self != '' && duration(self) >= duration('1m')",
    )
    .message(format!("{at} must be {HELP}").as_str())
}

/// The lifetime `text` means, or why it is not one.
pub fn parse(text: &str) -> Result<Duration, String> {
    let bad = || format!("{text:?} is not {HELP}");
    let mut rest = text;
    let mut total = 0u64;
    let mut last_unit = 0;
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if digits == 0 || digits > 5 {
            return Err(bad());
        }
        let (number, tail) = rest.split_at(digits);
        let mut chars = tail.chars();
        let (rank, seconds) = match chars.next() {
            Some('h') => (1, 3600),
            Some('m') => (2, 60),
            Some('s') => (3, 1),
            _ => return Err(bad()),
        };
        if rank <= last_unit {
            return Err(bad());
        }
        last_unit = rank;
        let n: u64 = number.parse().map_err(|_| bad())?;
        total += n * seconds;
        rest = chars.as_str();
    }
    let d = Duration::from_secs(total);
    if d < MIN { Err(bad()) } else { Ok(d) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_hours_minutes_and_seconds_in_that_order() {
        assert_eq!(parse("72h"), Ok(Duration::from_secs(72 * 3600)));
        assert_eq!(parse("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse("90m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse("1m30s"), Ok(Duration::from_secs(90)));
        for bad in [
            "", "30s", "1d", "30m1h", "1h1h", "h", "1.5h", "-1h", "123456h", " 1h",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} parsed");
        }
    }
}
