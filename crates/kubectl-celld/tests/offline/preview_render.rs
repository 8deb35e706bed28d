//! The text of `preview list` and `preview status` (snapshots), and the TTL left: previews
//! serving, waiting for their fleet, refused by the operator, and past their TTL.

use celld_api::{CelldFleet, CelldFleetSpec, CelldFleetStatus, DeploymentStatus};
use celld_api::{CelldPreview, CelldPreviewSpec, CelldPreviewStatus, PreviewPhase};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kubectl_celld::commands::preview::list::{self, PreviewList};
use kubectl_celld::commands::preview::report;
use kubectl_celld::text::output::serialize;
use kubectl_celld::text::output_format::OutputFormat;

fn now() -> Timestamp {
    "2026-12-02T12:00:00Z".parse().unwrap()
}

fn time(s: &str) -> Time {
    Time(s.parse().unwrap())
}

fn condition(type_: &str, status: &str, reason: &str, message: &str, at: &str) -> Condition {
    Condition {
        type_: type_.into(),
        status: status.into(),
        reason: reason.into(),
        message: message.into(),
        last_transition_time: time(at),
        observed_generation: Some(1),
    }
}

/// Preview `name` of `web` in `ns`, created at `created`, with `status`.
fn preview(
    ns: &str,
    name: &str,
    created: &str,
    status: Option<CelldPreviewStatus>,
) -> CelldPreview {
    let mut p = CelldPreview::new(
        name,
        CelldPreviewSpec {
            fleet: "web".into(),
            ttl: None,
            source: None,
        },
    );
    p.metadata.namespace = Some(ns.into());
    p.metadata.creation_timestamp = Some(time(created));
    p.status = status;
    p
}

fn ready(name: &str, version: &str, expires: &str) -> CelldPreviewStatus {
    CelldPreviewStatus {
        observed_generation: Some(1),
        phase: PreviewPhase::Ready,
        url: Some(format!("https://{name}.preview.example.com/")),
        fleet: Some(name.into()),
        bucket: Some(format!("s3://celld-previews/web/apps/{name}")),
        claimed_bucket: Some(format!("s3://celld-previews/web/apps/{name}")),
        version: Some(version.into()),
        expires_at: Some(time(expires)),
        expired_at: None,
        conditions: vec![condition(
            "Ready",
            "True",
            "Serving",
            &format!(
                "CelldFleet {name} serves version {version} at https://{name}.preview.example.com/"
            ),
            "2026-12-02T10:05:00Z",
        )],
    }
}

fn expired(name: &str) -> CelldPreviewStatus {
    CelldPreviewStatus {
        observed_generation: Some(1),
        phase: PreviewPhase::Expired,
        url: Some(format!("https://{name}.preview.example.com/")),
        fleet: None,
        bucket: Some(format!("s3://celld-previews/web/apps/{name}")),
        claimed_bucket: Some(format!("s3://celld-previews/web/apps/{name}")),
        version: Some("00000000000000a1".into()),
        expires_at: Some(time("2026-11-30T09:00:00Z")),
        expired_at: Some(time("2026-11-30T09:01:10Z")),
        conditions: vec![
            condition(
                "Ready",
                "False",
                "Expired",
                &format!(
                    "the TTL ended at 2026-11-30T09:00:00Z: CelldFleet {name} and its data are deleted; delete this preview, or create another to serve again"
                ),
                "2026-11-30T09:01:10Z",
            ),
            condition(
                "DataRemoved",
                "True",
                "DataRemoved",
                &format!("deleted 14 object(s) under s3://celld-previews/web/apps/{name}"),
                "2026-11-30T09:01:10Z",
            ),
        ],
    }
}

fn previews() -> Vec<CelldPreview> {
    vec![
        preview(
            "apps",
            "pr-12",
            "2026-12-02T10:00:00Z",
            Some(ready("pr-12", "0123456789abcdef", "2026-12-05T10:00:00Z")),
        ),
        preview(
            "apps",
            "pr-7",
            "2026-11-27T09:00:00Z",
            Some(expired("pr-7")),
        ),
        preview("team-b", "pr-30", "2026-12-02T11:59:15Z", None),
        preview(
            "team-b",
            "pr-31",
            "2026-12-01T12:00:00Z",
            // Past expiresAt, not yet Expiring: the operator has not looked again.
            Some(ready("pr-31", "fedcba9876543210", "2026-12-02T11:00:00Z")),
        ),
    ]
}

fn rows() -> Vec<list::PreviewRow> {
    previews().iter().map(|p| list::row(p, now())).collect()
}

#[test]
fn ttl_left_counts_down_then_says_expired() {
    let at = |s: &str| Some(s.parse::<Timestamp>().unwrap());
    let cases = [
        (at("2026-12-05T10:00:00Z"), PreviewPhase::Ready, "2d22h"),
        (at("2026-12-02T12:00:45Z"), PreviewPhase::Pending, "45s"),
        (at("2026-12-02T13:30:00Z"), PreviewPhase::Ready, "90m"),
        (at("2026-12-02T12:00:00Z"), PreviewPhase::Ready, "expired"),
        (at("2026-12-01T12:00:00Z"), PreviewPhase::Ready, "expired"),
        (
            at("2026-12-05T10:00:00Z"),
            PreviewPhase::Expiring,
            "expired",
        ),
        (None, PreviewPhase::Expired, "expired"),
        (None, PreviewPhase::Failed, "-"),
    ];
    for (expires, phase, want) in cases {
        assert_eq!(
            list::ttl_left(expires, phase, now()),
            want,
            "{expires:?} {phase:?}"
        );
    }
}

#[test]
fn list_table() {
    let rows = rows();
    insta::assert_snapshot!("list_one_namespace", list::render(&rows[..2], false));
    insta::assert_snapshot!("list_all_namespaces", list::render(&rows, true));
}

#[test]
fn list_json() {
    let doc = serialize(&PreviewList { previews: rows() }, OutputFormat::Json).unwrap();
    insta::assert_snapshot!("list_json", doc);
}

fn fleet(
    name: &str,
    ready: Option<(&str, &str, &str)>,
    ready_nodes: i32,
    version: Option<&str>,
) -> CelldFleet {
    let mut f = CelldFleet::new(
        name,
        CelldFleetSpec::with_bucket("s3://celld-previews/web/apps/pr-12"),
    );
    f.spec.replicas = 1;
    f.status = ready.map(|(status, reason, message)| CelldFleetStatus {
        ready_replicas: ready_nodes,
        replicas: 1,
        deployment: version.map(|v| DeploymentStatus {
            version: v.into(),
            ..DeploymentStatus::default()
        }),
        conditions: vec![condition(
            "Ready",
            status,
            reason,
            message,
            "2026-12-02T10:05:00Z",
        )],
        ..CelldFleetStatus::default()
    });
    f
}

#[test]
fn status_of_a_serving_preview() {
    let mut p = previews().remove(0);
    p.spec.ttl = Some("72h".into());
    let f = fleet(
        "pr-12",
        Some(("True", "Serving", "1/1 nodes ready")),
        1,
        Some("0123456789abcdef"),
    );
    let r = report::build(&p, Some(&f));
    insta::assert_snapshot!("status_ready", report::render(&r, now()));
    insta::assert_snapshot!(
        "status_ready_json",
        serialize(&r, OutputFormat::Json).unwrap()
    );
}

#[test]
fn status_of_a_preview_whose_fleet_is_not_ready() {
    let mut p = previews().remove(0);
    let status = p.status.as_mut().unwrap();
    status.phase = PreviewPhase::Pending;
    status.version = None;
    status.conditions = vec![condition(
        "Ready",
        "False",
        "FleetNotReady",
        "CelldFleet pr-12 is not ready (NoDeployment): the bucket prefix has no deploy/current.json",
        "2026-12-02T11:58:00Z",
    )];
    let f = fleet(
        "pr-12",
        Some((
            "False",
            "NoDeployment",
            "the bucket prefix has no deploy/current.json",
        )),
        0,
        None,
    );
    insta::assert_snapshot!(
        "status_pending",
        report::render(&report::build(&p, Some(&f)), now())
    );
}

#[test]
fn status_of_an_expired_and_of_a_refused_preview() {
    let p = previews().remove(1);
    insta::assert_snapshot!(
        "status_expired",
        report::render(&report::build(&p, None), now())
    );
    let mut refused = preview(
        "apps",
        "pr-40",
        "2026-12-02T11:00:00Z",
        Some(CelldPreviewStatus {
            observed_generation: Some(1),
            phase: PreviewPhase::Failed,
            conditions: vec![condition(
                "Ready",
                "False",
                "PreviewsNotAllowed",
                "spec.fleet names CelldFleet web, which has no spec.previews: set it, or name a fleet that has it",
                "2026-12-02T11:00:01Z",
            )],
            ..CelldPreviewStatus::default()
        }),
    );
    refused.spec.source = Some(
        serde_json::from_value(
            serde_json::json!({"image": {"reference": "registry.example.com/web-worker:pr-40"}}),
        )
        .unwrap(),
    );
    insta::assert_snapshot!(
        "status_failed",
        report::render(&report::build(&refused, None), now())
    );
}
