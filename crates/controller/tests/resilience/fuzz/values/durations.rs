//! Durations as the CRDs write them (hours, minutes and seconds: `1h30m`, `90s`) and counts,
//! each for a field admitted from a lower to an upper bound.

use super::{Class, Gen};
use serde_json::{Value, json};

/// Seconds of `text`, a duration of the fuzz's own (always well formed).
fn seconds(text: &str) -> u64 {
    celld_api::fleet::parse_duration(text).map_or(0, |d| d.as_secs())
}

/// `secs` written in one of three ways: hours, minutes and seconds (`1h30m`), seconds only
/// (`5400s`), or minutes when they divide it.
fn render(secs: u64, style: usize) -> String {
    match style {
        0 => {
            let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
            let mut text = String::new();
            for (n, unit) in [(h, 'h'), (m, 'm'), (s, 's')] {
                if n > 0 {
                    text.push_str(&format!("{n}{unit}"));
                }
            }
            if text.is_empty() { "0s".into() } else { text }
        }
        1 => format!("{secs}s"),
        _ if secs.is_multiple_of(60) => format!("{}m", secs / 60),
        _ => format!("{secs}s"),
    }
}

impl Gen {
    /// A duration for a field admitted from `min` to `max` (both durations such as `30s`,
    /// `24h`): inside, at either bound (also written out to the 16 characters a duration may
    /// have), just outside, or not a duration.
    pub fn duration(&mut self, min: &str, max: &str) -> (Value, Class) {
        let (lo, hi) = (seconds(min), seconds(max));
        match self.class() {
            Class::Valid => {
                let secs = lo + self.below(usize::try_from(hi - lo + 1).unwrap_or(1)) as u64;
                let style = self.below(3);
                (json!(render(secs, style)), Class::Valid)
            }
            Class::Boundary => {
                let style = self.below(3);
                let v = one_of!(self;
                    render(lo, style),
                    render(hi, style),
                    format!("{:05}h{:05}m{:03}s", hi / 3600, hi / 60 % 60, hi % 60),
                );
                (json!(v), Class::Boundary)
            }
            Class::Hostile => {
                let v = one_of!(self;
                    json!(render(hi + 1, 0)),
                    json!(if lo > 0 { render(lo - 1, 1) } else { "-1s".to_string() }),
                    json!(format!("{:05}h{:05}m{:04}s", hi / 3600, hi / 60 % 60, hi % 60)),
                    json!("1d"),
                    json!("1.5h"),
                    json!("10"),
                    json!(""),
                    json!("1h1h"),
                    json!("5s1m"),
                    json!("100000s"),
                    json!("1h 30m"),
                    json!("PT10M"),
                    json!("10M"),
                    json!("\u{ff11}\u{ff10}m"),
                    json!(600),
                    Value::Null,
                );
                (v, Class::Hostile)
            }
        }
    }

    /// A count for a field admitted from `min` to `max`.
    pub fn count(&mut self, min: i64, max: i64) -> (Value, Class) {
        match self.class() {
            Class::Valid => {
                let span = usize::try_from(max - min + 1).unwrap_or(1).min(10);
                (json!(min + self.below(span) as i64), Class::Valid)
            }
            Class::Boundary => (one_of!(self; json!(min), json!(max)), Class::Boundary),
            Class::Hostile => (
                one_of!(self;
                    json!(min - 1),
                    json!(max + 1),
                    json!(-1),
                    json!("3"),
                    json!(1.5),
                    json!(2_147_483_648_i64),
                    json!(true),
                    Value::Null,
                ),
                Class::Hostile,
            ),
        }
    }
}
