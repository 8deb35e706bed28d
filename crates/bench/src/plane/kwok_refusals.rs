//! What kwok could not do during a run: the stage plays (a pod made Running, a volume bound)
//! the API server refused, counted from kwok's log. A run with refusals was paced, in part, by
//! the fake runtime retrying them, not by the floor or the operator alone.

use jiff::Timestamp;
use serde::Deserialize;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// The message kwok logs when a stage play fails.
const FAILED: &str = "failed to apply stage";

/// One line of kwok's JSON log, the fields read.
#[derive(Deserialize)]
struct Line {
    time: String,
    msg: String,
    #[serde(default)]
    err: String,
}

/// The stage plays kwok's log at `log` says failed between `from` and `to`, other than on an
/// object already gone (a pod deleted while a stage was under way: no work is held back). 0 when
/// the log cannot be read.
pub fn refused(log: &Path, from: Timestamp, to: Timestamp) -> u64 {
    let Ok(file) = std::fs::File::open(log) else {
        return 0;
    };
    count(BufReader::new(file), from, to)
}

fn count(lines: impl BufRead, from: Timestamp, to: Timestamp) -> u64 {
    lines
        .lines()
        .map_while(Result::ok)
        .filter(|l| l.contains(FAILED))
        .filter_map(|l| serde_json::from_str::<Line>(&l).ok())
        .filter(|l| l.msg == FAILED && !l.err.ends_with("not found"))
        .filter_map(|l| l.time.parse::<Timestamp>().ok())
        .filter(|at| (from..=to).contains(at))
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = r#"{"time":"2026-12-04T10:00:01Z","level":"INFO","msg":"Starting"}
{"time":"2026-12-04T10:00:02Z","level":"ERROR","msg":"failed to apply stage","err":"failed to patch pod web-0: Pod \"web-0\" is invalid: status.podIPs: Invalid value: [...]: may specify no more than one IP for each IP family","stage":"pod-ready"}
{"time":"2026-12-04T10:00:03Z","level":"ERROR","msg":"failed to apply stage","err":"failed to delete resource for step 0: failed to delete pod web-1: pods \"web-1\" not found","stage":"pod-delete"}
{"time":"2026-12-04T10:00:09Z","level":"ERROR","msg":"failed to apply stage","err":"failed to patch pod web-2: the server rejected our request","stage":"pod-ready"}
{"time":"2026-12-04T10:00:04Z","level":"INFO","msg":"retrying for failed job","stage":"pod-ready"}
not json: failed to apply stage
"#;

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn counts_refused_plays_in_the_window_but_not_those_on_objects_gone() {
        let window = (at("2026-12-04T10:00:00Z"), at("2026-12-04T10:00:05Z"));
        assert_eq!(count(LOG.as_bytes(), window.0, window.1), 1);
        let all = (at("2026-12-04T10:00:00Z"), at("2026-12-04T10:00:10Z"));
        assert_eq!(count(LOG.as_bytes(), all.0, all.1), 2);
    }

    #[test]
    fn a_missing_log_counts_none() {
        let t = at("2026-12-04T10:00:00Z");
        assert_eq!(refused(Path::new("/nonexistent/kwok.log"), t, t), 0);
    }
}
