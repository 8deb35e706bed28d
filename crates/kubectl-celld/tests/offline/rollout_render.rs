//! The text and documents of `rollout status` (snapshots): a rollout under way, one waiting for
//! its promotion, one rolled back, one paused twice, and one the operator has not reported on;
//! and what `-w` ends with for each.

use crate::rollout_fixtures::{now, progressing, rolled_back, rollout, waiting};
use kubectl_celld::commands::rollout::report::{self, RolloutReport};
use kubectl_celld::commands::rollout::status::{self, RolloutOutput};
use kubectl_celld::text::output_format::OutputFormat;
use std::collections::BTreeMap;

fn text(r: &RolloutReport) -> String {
    status::show(r, &RolloutOutput::Text, now()).unwrap()
}

#[test]
fn under_way() {
    let r = report::build(&rollout(Some(progressing())));
    assert!(!r.ended);
    insta::assert_snapshot!("under_way", text(&r));
    insta::assert_snapshot!(
        "under_way_json",
        status::show(&r, &RolloutOutput::Document(OutputFormat::Json), now()).unwrap()
    );
    assert_eq!(
        status::show(
            &r,
            &RolloutOutput::JsonPath("{.waves[1].fleets[1].adopted}".into()),
            now()
        )
        .unwrap(),
        "1/3"
    );
}

#[test]
fn waiting_for_its_promotion() {
    let r = report::build(&rollout(Some(waiting())));
    insta::assert_snapshot!("waiting_for_promotion", text(&r));
}

#[test]
fn rolled_back_and_what_the_watch_ends_with() {
    let r = report::build(&rollout(Some(rolled_back())));
    assert!(r.ended);
    insta::assert_snapshot!("rolled_back", text(&r));
    let e = status::outcome(&r).unwrap_err();
    assert_eq!(e.exit_code(), 1);
    insta::assert_snapshot!(e.to_string(), @"CelldRollout tenants/web ended RolledBack: RolledBack: wave 1 failed: CelldFleet acme: node acme-1 refused the version; the fleets moved were pointed back; see it with: kubectl celld rollout status web -n tenants");
}

#[test]
fn a_watch_ends_with_0_only_once_the_latest_spec_succeeded() {
    let mut succeeded = waiting();
    succeeded["phase"] = serde_json::json!("Succeeded");
    let r = report::build(&rollout(Some(succeeded.clone())));
    assert!(r.ended);
    assert_eq!(status::outcome(&r).unwrap(), 0);
    // A new spec the operator has not seen yet: the old revision's end is not this one's.
    let mut changed = rollout(Some(succeeded));
    changed.metadata.generation = Some(2);
    let r = report::build(&changed);
    assert!(!r.ended);
    assert!(text(&r).contains("the operator has not seen the latest change"));
}

#[test]
fn paused_in_git_and_by_hand() {
    let mut r = rollout(Some(progressing()));
    r.spec.paused = true;
    r.metadata.annotations = Some(BTreeMap::from([
        (
            "platform.celld.dev/rollout-paused".to_string(),
            "incident 42".to_string(),
        ),
        (
            "platform.celld.dev/rollout-abort".to_string(),
            "errors in wave 2".to_string(),
        ),
    ]));
    let text = text(&report::build(&r));
    assert!(
        text.contains(
            "Paused:      spec.paused is true; annotation platform.celld.dev/rollout-paused: incident 42"
        ),
        "{text}"
    );
    assert!(
        text.contains("Abort:       asked: errors in wave 2"),
        "{text}"
    );
    assert!(
        text.ends_with("It is paused twice: resume with kubectl celld rollout resume web -n tenants, and set spec.paused: false where the rollout is managed (git)\n"),
        "{text}"
    );
}

#[test]
fn not_reported_yet() {
    let r = report::build(&rollout(None));
    assert!(!r.ended && r.phase.is_none());
    insta::assert_snapshot!("not_reported", text(&r));
}
