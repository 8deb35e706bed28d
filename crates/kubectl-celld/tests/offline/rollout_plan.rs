//! `deploy --selector ... --waves ... --image ... --dry-run`: the CelldRollout built from the
//! flags (only what they say), checked as admission would, and its plan over fixture fleets
//! and rollouts with the operator's own selection: each wave's fleets and the fleets left alone
//! with their reasons (snapshots).

use crate::rollout_fixtures::{DIGEST, fleets, now, rollout_named};
use celld_api::CelldRollout;
use celld_api::rollout::SkipReason;
use clap::Parser;
use kubectl_celld::cli::{Cli, Command};
use kubectl_celld::commands::deploy::rollout::{self, body, plan};
use kubectl_celld::commands::deploy::targets::{self, Selection};
use kubectl_celld::text::output::serialize;
use kubectl_celld::text::output_format::OutputFormat;
use serde_json::json;

/// The rollout request `deploy` makes of `args`.
fn request(args: &[&str]) -> body::Request {
    let cli = Cli::try_parse_from(["kubectl-celld", "deploy"].iter().chain(args)).unwrap();
    let Command::Deploy(d) = cli.command else {
        panic!("not deploy")
    };
    match targets::selection(&d).unwrap() {
        Selection::Rollout(r) => *r,
        _ => panic!("not a rollout: {args:?}"),
    }
}

fn web_worker() -> body::Request {
    request(&[
        "--selector",
        "app=web",
        "--waves",
        "1,10%,50%",
        "--bake",
        "10m",
        "--image",
        &format!("registry.example.com/web-worker:1.4.3@{DIGEST}"),
    ])
}

/// An older rollout shipping to the fleets labelled tier=legacy, and the fleets with `india`
/// among them.
fn legacy() -> (Vec<celld_api::CelldFleet>, CelldRollout) {
    let mut fleets = fleets();
    for f in &mut fleets {
        if f.metadata.name.as_deref() == Some("india") {
            f.metadata
                .labels
                .get_or_insert_default()
                .insert("tier".into(), "legacy".into());
        }
    }
    let legacy = rollout_named(
        "legacy",
        json!({"matchLabels": {"tier": "legacy"}}),
        "2026-11-01T00:00:00Z",
        None,
    );
    (fleets, legacy)
}

#[test]
fn the_body_holds_only_what_the_flags_say() {
    let body = body::body(&web_worker(), "tenants");
    insta::assert_snapshot!("body_yaml", serialize(&body, OutputFormat::Yaml).unwrap());
    let rollout = rollout::checked(&body).unwrap();
    assert_eq!(rollout.spec.waves[1].bake, "10m");
    assert_eq!(
        rollout.spec.gates.progress_deadline, "15m",
        "defaults as the API server's"
    );
    let volume = body::body(
        &request(&[
            "-l",
            "app=web",
            "--waves",
            "100%",
            "--image",
            "r/w:1",
            "--image-layout",
            "volume",
        ]),
        "tenants",
    );
    assert_eq!(
        volume["spec"]["source"],
        json!({"image": {"reference": "r/w:1"}})
    );
    assert_eq!(
        volume["spec"]["waves"],
        json!([{"fleets": "100%"}]),
        "the default bake"
    );
}

#[test]
fn what_admission_would_refuse_is_refused_before_sending() {
    let mut bad = web_worker();
    bad.image = "Registry.example.com/WEB:1".into();
    let e = rollout::checked(&body::body(&bad, "tenants")).unwrap_err();
    insta::assert_snapshot!(e.to_string(), @"the CelldRollout built from the flags would be refused by the API server: spec.source.image.reference must be an image reference such as registry.example.com/web-worker:1.4.2@sha256:<64 hex digits> (no scheme such as https://); nothing was created");
}

#[test]
fn the_plan_lists_each_waves_fleets_and_the_skipped_ones_with_reasons() {
    let (fleets, legacy) = legacy();
    let request = web_worker();
    let rollout = rollout::checked(&body::body(&request, "tenants")).unwrap();
    let plan = plan::plan(&rollout, &fleets, &[legacy], now());
    assert_eq!(
        plan.waves,
        [vec!["acme"], vec![], vec!["beta", "carol", "delta"]]
    );
    let reasons: Vec<(&str, SkipReason)> = plan
        .skipped
        .iter()
        .map(|s| (s.name.as_str(), s.reason))
        .collect();
    assert_eq!(
        reasons,
        [
            ("echo", SkipReason::NoWave),
            ("fox", SkipReason::NoWave),
            ("golf", SkipReason::NoWave),
            ("hotel", SkipReason::NoWave),
            ("india", SkipReason::OtherRollout),
            ("juliet", SkipReason::Pinned),
            ("kilo", SkipReason::OwnSource),
            ("pr-7", SkipReason::Preview),
        ]
    );
    assert_eq!(plan.matched, 12);
    insta::assert_snapshot!("plan", plan::render(&rollout, &plan));
}

#[test]
fn a_rollout_that_exists_keeps_its_age() {
    let (fleets, legacy) = legacy();
    let rollout = rollout::checked(&body::body(&web_worker(), "tenants")).unwrap();
    // Created before legacy: it, not legacy, owns india.
    let mut existing = rollout.clone();
    existing.metadata.uid = Some("uid-web-worker".into());
    existing.metadata.creation_timestamp =
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            "2026-10-01T00:00:00Z".parse().unwrap(),
        ));
    let plan = plan::plan(&rollout, &fleets, &[legacy.clone(), existing], now());
    let other = |plan: &plan::Plan| {
        plan.skipped
            .iter()
            .any(|s| s.reason == SkipReason::OtherRollout)
    };
    assert!(!other(&plan), "{plan:?}");
    assert_eq!(plan.matched, 12);
    // A new one is the youngest.
    let plan = plan::plan(&rollout, &fleets, &[legacy], now());
    assert!(other(&plan), "{plan:?}");
}

#[test]
fn a_rollout_that_would_ship_to_no_fleet_is_not_created() {
    let request = request(&["-l", "app=nope", "--waves", "100%", "--image", "r/w:1"]);
    let rollout = rollout::checked(&body::body(&request, "tenants")).unwrap();
    let plan = plan::plan(&rollout, &fleets(), &[], now());
    assert_eq!(plan.fleets(), 0);
    insta::assert_snapshot!(plan::render(&rollout, &plan), @r"
    CelldRollout tenants/w ships image r/w:1 to 0 fleets in 1 wave:
    Wave 1 (up to 100%, bake 5m): 0 fleets
      (none)
    ");
    let e = rollout::nothing_to_ship(&request, "tenants", &plan);
    insta::assert_snapshot!(e.to_string(), @"CelldRollout tenants/w would ship to no fleet: no CelldFleet in namespace 'tenants' matches the selector 'app=nope'; list the fleets with their labels with: kubectl get celldfleets -n tenants --show-labels, then fix --selector. Nothing was created");
    let pinned = request_pinned();
    let rollout = rollout::checked(&body::body(&pinned, "tenants")).unwrap();
    let plan = plan::plan(&rollout, &fleets(), &[], now());
    let e = rollout::nothing_to_ship(&pinned, "tenants", &plan);
    assert!(e.to_string().contains("the selector 'platform.celld.dev/rollout-pin' matches 1 CelldFleets and the rollout leaves each alone"), "{e}");
    assert_eq!(
        rollout::digest_warning("r/w:1").unwrap(),
        "warning: r/w:1 is not pinned by digest: the rollout knows its revision by the reference, so pushing the same tag again ships nothing new; pass REGISTRY/NAME:TAG@sha256:DIGEST"
    );
    assert_eq!(rollout::digest_warning(&format!("r/w:1@{DIGEST}")), None);
}

fn request_pinned() -> body::Request {
    request(&[
        "-l",
        "platform.celld.dev/rollout-pin",
        "--waves",
        "100%",
        "--image",
        "r/w:1",
    ])
}
