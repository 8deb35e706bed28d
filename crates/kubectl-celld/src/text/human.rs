//! Human-readable ages, sizes and image references, in kubectl's style.

use jiff::Timestamp;

/// An age as kubectl prints it: `45s`, `3m20s`, `25m`, `5h10m`, `20h`, `3d4h`, `12d`, `2y30d`.
pub fn duration(seconds: i64) -> String {
    let s = seconds.max(0);
    let (m, h, d) = (s / 60, s / 3600, s / 86_400);
    if s < 120 {
        format!("{s}s")
    } else if m < 10 {
        match s % 60 {
            0 => format!("{m}m"),
            rem => format!("{m}m{rem}s"),
        }
    } else if h < 3 {
        format!("{m}m")
    } else if h < 8 {
        match m % 60 {
            0 => format!("{h}h"),
            rem => format!("{h}h{rem}m"),
        }
    } else if h < 48 {
        format!("{h}h")
    } else if d < 8 {
        match h % 24 {
            0 => format!("{d}d"),
            rem => format!("{d}d{rem}h"),
        }
    } else if d < 365 * 2 {
        format!("{d}d")
    } else if d < 365 * 8 {
        let y = d / 365;
        match d % 365 {
            0 => format!("{y}y"),
            rem => format!("{y}y{rem}d"),
        }
    } else {
        format!("{}y", d / 365)
    }
}

/// The age of `then` at `now`; `<unknown>` without a time.
pub fn age(then: Option<Timestamp>, now: Timestamp) -> String {
    match then {
        Some(t) => duration(now.as_second() - t.as_second()),
        None => "<unknown>".to_string(),
    }
}

/// The age at `now` of a time written in RFC 3339 (`45s`); None when it does not parse.
pub fn age_of(rfc3339: &str, now: Timestamp) -> Option<String> {
    rfc3339
        .parse::<Timestamp>()
        .ok()
        .map(|t| duration(now.as_second() - t.as_second()))
}

/// A byte count in binary units: `512 B`, `1.5 KiB`, `3.2 MiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// Digits of an image digest shown in tables, as `docker images` shows an id.
const SHORT_DIGEST: usize = 12;

/// An image reference for a table: a digest cut to its first 12 digits
/// (`…/celld:v0.6.0@sha256:e188a7f2bb0b`); `-o wide`, JSON and YAML keep it whole.
pub fn image(reference: &str) -> String {
    match reference.split_once('@') {
        Some((name, digest)) => {
            let (algorithm, hex) = digest.split_once(':').unwrap_or(("", digest));
            let short: String = hex.chars().take(SHORT_DIGEST).collect();
            if algorithm.is_empty() {
                format!("{name}@{short}")
            } else {
                format!("{name}@{algorithm}:{short}")
            }
        }
        None => reference.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_like_kubectl() {
        let cases = [
            (5, "5s"),
            (119, "119s"),
            (200, "3m20s"),
            (240, "4m"),
            (25 * 60, "25m"),
            (5 * 3600 + 600, "5h10m"),
            (20 * 3600, "20h"),
            (3 * 86_400 + 4 * 3600, "3d4h"),
            (12 * 86_400, "12d"),
            (800 * 86_400, "2y70d"),
            (-5, "0s"),
        ];
        for (secs, want) in cases {
            assert_eq!(duration(secs), want, "{secs}s");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(3 * 1024 * 1024 + 200 * 1024), "3.2 MiB");
    }

    #[test]
    fn ages_of_written_times() {
        let now: Timestamp = "2026-11-29T12:00:00Z".parse().unwrap();
        assert_eq!(age_of("2026-11-29T11:59:15Z", now).as_deref(), Some("45s"));
        assert_eq!(age_of("yesterday", now), None);
    }

    #[test]
    fn image_digests_are_cut_for_tables() {
        assert_eq!(
            image(
                "ghcr.io/denoland/celld:v0.6.0@sha256:e188a7f2bb0b8cec9fb04ee4c3d1ed7cca0ea0419519ae2a9ba36e5b6fe5161b"
            ),
            "ghcr.io/denoland/celld:v0.6.0@sha256:e188a7f2bb0b"
        );
        assert_eq!(image("celld@sha256:0123"), "celld@sha256:0123");
        assert_eq!(
            image("ghcr.io/denoland/celld:v0.4.0"),
            "ghcr.io/denoland/celld:v0.4.0"
        );
    }
}
