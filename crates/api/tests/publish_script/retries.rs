//! `celld deploy` run again by the script when its output says it may pass then, and only then.

use std::time::Instant;

use celld_api::contract::deploy_retry::{ATTEMPTS, BACKOFF_SECONDS};
use celld_api::contract::publish::Step;

use crate::files::project;
use crate::script_run::{Ran, Run};

const SLOW_DOWN: &str = "Error: writing deploy/current.json failed (HTTP 503 SlowDown): the write may have committed; run the deploy again";

fn run_failing(fails: u32, line: &str) -> Ran {
    let run = Run::new()
        .env("STUB_FAILS", fails.to_string())
        .env("STUB_FAIL_LINE", line);
    let root = run.path("volume");
    project(&root);
    let (_run, ran) = run.run(&root.join("project/app"));
    ran
}

#[test]
fn a_deploy_that_may_have_committed_runs_again_until_it_publishes() {
    let started = Instant::now();
    let ran = run_failing(2, SLOW_DOWN);
    assert!(ran.result.is_published(), "{:?}", ran.result);
    assert_eq!(ran.result.attempts, Some(3));
    assert_eq!(ran.runs, 3, "celld ran three times");
    let stdout = ran.stdout();
    for (attempt, wait) in [(2, BACKOFF_SECONDS[0]), (3, BACKOFF_SECONDS[1])] {
        let line = format!(
            "celld-publish: attempt {attempt} of {ATTEMPTS} in {wait}s after: {SLOW_DOWN}\n"
        );
        assert!(stdout.contains(&line), "{line:?} in {stdout}");
    }
    assert!(!stdout.contains("attempt 4 of"), "{stdout}");
    let waited = started.elapsed().as_secs();
    assert!(
        waited >= BACKOFF_SECONDS[0] + BACKOFF_SECONDS[1],
        "waited {waited}s"
    );
    let raw = String::from_utf8(ran.raw.clone()).unwrap();
    assert_eq!(raw, r#"{"outcome":"Published","attempts":3}"#);
}

#[test]
fn a_deploy_that_keeps_failing_stops_after_the_last_attempt() {
    let ran = run_failing(ATTEMPTS + 3, "dispatch failure: operation timed out");
    ran.assert_failed(Step::Deploy, 1);
    assert_eq!(ran.runs, ATTEMPTS);
    assert_eq!(ran.result.attempts, Some(ATTEMPTS));
    assert!(
        ran.message()
            .ends_with("dispatch failure: operation timed out"),
        "{}",
        ran.message()
    );
    assert_eq!(
        ran.result.describe(),
        format!(
            "celld deploy exited with 1 after {ATTEMPTS} attempts: building {} | dispatch failure: operation timed out",
            ran.args.as_ref().unwrap()[1]
        )
    );
}

#[test]
fn a_failure_that_is_not_transient_is_not_retried() {
    let ran = run_failing(1, "✘ [ERROR] Could not resolve \"./missing\"");
    ran.assert_failed(Step::Deploy, 1);
    assert_eq!(ran.runs, 1, "celld ran once");
    assert_eq!(ran.result.attempts, Some(1));
    assert!(
        !ran.stdout().contains("celld-publish: attempt"),
        "{}",
        ran.stdout()
    );
}
