use super::*;
use crate::contract::publish::SCRIPT;
use std::process::Command;

/// Outputs of failed attempts, and the line that makes each retryable (None: not retryable).
const TABLE: &[(&str, Option<&str>)] = &[
    (
        "Uploaded 2 modules\nError: writing deploy/current.json (If-Match \"abc\") failed (HTTP 503 SlowDown): the write may have committed; run the deploy again\n",
        Some(
            "Error: writing deploy/current.json (If-Match \"abc\") failed (HTTP 503 SlowDown): the write may have committed; run the deploy again",
        ),
    ),
    (
        "uploading s3://b/k failed: service error: unhandled error (SlowDown)",
        Some("uploading s3://b/k failed: service error: unhandled error (SlowDown)"),
    ),
    (
        "line one\n  THE WRITE MAY HAVE COMMITTED  \nerror: done",
        Some("THE WRITE MAY HAVE COMMITTED"),
    ),
    ("PUT failed: HTTP 500", Some("PUT failed: HTTP 500")),
    (
        "server answered status: 502 Bad Gateway",
        Some("server answered status: 502 Bad Gateway"),
    ),
    ("status code 504", Some("status code 504")),
    (
        "error sending request: operation timed out",
        Some("error sending request: operation timed out"),
    ),
    (
        "read: Connection reset by peer",
        Some("read: Connection reset by peer"),
    ),
    (
        "connect: Connection refused (os error 111)",
        Some("connect: Connection refused (os error 111)"),
    ),
    (
        "dispatch failure: Timeout",
        Some("dispatch failure: Timeout"),
    ),
    (
        "first SlowDown\nsecond: http 503\n",
        Some("second: http 503"),
    ),
    // Not retryable: validation, bundling, credentials, other statuses and numbers.
    ("✘ [ERROR] Could not resolve \"./missing\"", None),
    ("no wrangler.jsonc or wrangler.json in 'src'", None),
    ("PUT deploy/x: 403 InvalidAccessKeyId (HTTP 403)", None),
    ("HTTP 404 NoSuchBucket", None),
    ("HTTP 5000 is not a status", None),
    ("HTTP 50", None),
    ("uploaded 503 bytes", None),
    ("status 412 PreconditionFailed: another deploy won", None),
    ("", None),
];

#[test]
fn the_rule_on_the_table() {
    for (output, expected) in TABLE {
        assert_eq!(reason(output), *expected, "{output:?}");
    }
}

#[test]
fn backoff_waits_between_attempts_and_stays_short() {
    assert_eq!(backoff(1), None);
    assert_eq!(backoff(2), Some(Duration::from_secs(2)));
    assert_eq!(backoff(3), Some(Duration::from_secs(4)));
    assert_eq!(backoff(ATTEMPTS), Some(Duration::from_secs(8)));
    assert_eq!(backoff(ATTEMPTS + 1), None);
    assert!(BACKOFF_SECONDS.iter().sum::<u64>() < 60);
}

/// The value of the script's assignment `name='...'` (or `name=...`).
fn script_value(name: &str) -> String {
    let prefix = format!("{name}=");
    let line = SCRIPT
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("the script assigns {name}"));
    line[prefix.len()..].trim_matches('\'').to_owned()
}

#[test]
fn the_script_spells_the_same_attempts_and_backoff() {
    assert_eq!(script_value("attempts"), ATTEMPTS.to_string());
    let waits: Vec<String> = BACKOFF_SECONDS.iter().map(u64::to_string).collect();
    assert_eq!(script_value("backoff"), waits.join(" "));
}

#[test]
fn the_script_pattern_agrees_with_the_rule() {
    let pattern = script_value("retryable");
    for phrase in PHRASES {
        assert!(
            pattern.contains(phrase),
            "{phrase} is in the script's pattern"
        );
    }
    for (output, expected) in TABLE {
        // What the script does with a failed attempt's output: its last matching line.
        let out = Command::new("sh")
            .args([
                "-c",
                "printf '%s' \"$2\" | LC_ALL=C grep -Ei -e \"$1\" | tail -n 1",
                "sh",
                &pattern,
                output,
            ])
            .output()
            .expect("run sh and grep");
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("UTF-8");
        let found = Some(text.trim()).filter(|t| !t.is_empty());
        assert_eq!(found, *expected, "the script on {output:?}");
    }
}

#[test]
fn what_the_deploy_double_says_is_judged_as_celld_s_output() {
    use celld_testkit::deploy_double::DeployError;
    let slow_down = DeployError::MayHaveCommitted {
        object: "s3://celld/web/deploy/current.json at http://127.0.0.1:9000".into(),
        answer: "HTTP 503 SlowDown".into(),
        message: "service error: unhandled error (SlowDown)".into(),
        version: "0123456789abcdef".into(),
    }
    .to_string();
    assert_eq!(reason(&slow_down), Some(slow_down.as_str()));
    let lost = DeployError::LostRace {
        bucket: "s3://celld".into(),
        key: "web/deploy/current.json".into(),
        expected: "it had ETag \"abc\"".into(),
        version: "0123456789abcdef".into(),
    }
    .to_string();
    assert_eq!(reason(&lost), None, "a lost race is not run again: {lost}");
}
