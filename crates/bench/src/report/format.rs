//! How the report writes numbers: seconds, MiB, thousands, ratios and verdicts.

use std::time::Duration;

/// A duration in seconds, one decimal.
pub fn secs(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

/// KiB as MiB, one decimal.
pub fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A ratio such as `1.05×`; `n/a` when it is not a number.
pub fn times(r: f64) -> String {
    if r.is_finite() {
        format!("{r:.2}×")
    } else {
        "n/a".into()
    }
}

/// `✓` or `✗` after a value that has a target.
pub fn verdict(met: bool) -> &'static str {
    if met { " ✓" } else { " ✗" }
}

/// A latency in milliseconds: one decimal below 100 ms, none above.
pub fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 100.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.0} ms")
    }
}
