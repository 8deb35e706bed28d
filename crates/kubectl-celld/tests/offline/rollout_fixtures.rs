//! CelldRollouts and CelldFleets shared by the tests of `rollout` and `deploy --waves`: rollout
//! `web` over the fleets labelled app=web in three waves (one fleet, then a tenth, then the
//! rest after a promotion), as the operator would report it under way, waiting for its
//! promotion and rolled back; and fleets of namespace `tenants`, some of which a rollout leaves
//! alone.

use celld_api::{CelldFleet, CelldRollout};
use jiff::Timestamp;
use serde_json::{Value, json};

/// A digest to pin images with.
pub const DIGEST: &str = "sha256:1f0c3e5a7b9d2c4e6f8a0b1c3d5e7f9a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e";

/// The time the texts are rendered at.
pub fn now() -> Timestamp {
    "2026-12-02T12:00:00Z".parse().unwrap()
}

/// Fleet `name` of namespace `tenants` with `labels`.
pub fn fleet(name: &str, labels: &[(&str, &str)]) -> CelldFleet {
    let labels: serde_json::Map<String, Value> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "platform.celld.dev/v1alpha1",
        "kind": "CelldFleet",
        "metadata": {"name": name, "namespace": "tenants", "labels": labels},
        "spec": {"objectStorage": {"bucket": format!("s3://celld/{name}")}},
    }))
    .unwrap()
}

/// The fleets of namespace `tenants`: twelve labelled app=web (one pinned, one with its own
/// spec.source, one a preview's), and one of another app.
pub fn fleets() -> Vec<CelldFleet> {
    let mut fleets: Vec<CelldFleet> = [
        "acme", "beta", "carol", "delta", "echo", "fox", "golf", "hotel", "india",
    ]
    .iter()
    .map(|name| fleet(name, &[("app", "web")]))
    .collect();
    fleets.push(fleet(
        "juliet",
        &[("app", "web"), ("platform.celld.dev/rollout-pin", "1.4.1")],
    ));
    let mut own = fleet("kilo", &[("app", "web")]);
    own.spec.source = Some(Box::new(celld_api::WorkerSource::from_image(format!(
        "registry.example.com/kilo:2@{DIGEST}"
    ))));
    fleets.push(own);
    fleets.push(fleet(
        "pr-7",
        &[("app", "web"), ("platform.celld.dev/preview", "pr-7")],
    ));
    fleets.push(fleet("billing", &[("app", "billing")]));
    fleets
}

/// Rollout `name` of `tenants` over `selector`'s labels, created at `created`, with three
/// waves and `status` (JSON, as the operator writes it).
pub fn rollout_named(
    name: &str,
    selector: Value,
    created: &str,
    status: Option<Value>,
) -> CelldRollout {
    let mut r: CelldRollout = serde_json::from_value(json!({
        "apiVersion": "platform.celld.dev/v1alpha1",
        "kind": "CelldRollout",
        "metadata": {
            "name": name, "namespace": "tenants", "uid": format!("uid-{name}"),
            "generation": 1, "creationTimestamp": created,
        },
        "spec": {
            "source": {"image": {"reference": format!("registry.example.com/web-worker:1.4.2@{DIGEST}")}},
            "selector": selector,
            "waves": [
                {"fleets": 1, "bake": "10m"},
                {"fleets": "10%", "bake": "30m", "maxParallel": 5},
                {"fleets": "100%", "approval": "Manual"},
            ],
        },
    }))
    .unwrap();
    r.status = status.map(|s| serde_json::from_value(s).unwrap());
    r
}

/// Rollout `web` over app=web with `status`.
pub fn rollout(status: Option<Value>) -> CelldRollout {
    rollout_named(
        "web",
        json!({"matchLabels": {"app": "web"}}),
        "2026-12-02T10:00:00Z",
        status,
    )
}

fn target() -> Value {
    json!({
        "source": {"image": {"reference": format!("registry.example.com/web-worker:1.4.2@{DIGEST}")}},
        "revision": format!("registry.example.com/web-worker:1.4.2@{DIGEST}"),
        "key": "k1",
        "startedAt": "2026-12-02T11:00:00Z",
    })
}

fn skipped() -> Value {
    json!([
        {"name": "juliet", "reason": "Pinned", "message": "CelldFleet juliet carries the label platform.celld.dev/rollout-pin=1.4.1; remove it to let rollouts ship to the fleet"},
        {"name": "kilo", "reason": "OwnSource", "message": "CelldFleet kilo declares its own spec.source, which owns its bucket pointer; remove it to let the rollout ship to the fleet"},
    ])
}

/// Under way: wave 1 passed, wave 2 bakes with one fleet still publishing, wave 3 pending.
pub fn progressing() -> Value {
    json!({
        "observedGeneration": 1,
        "phase": "Progressing",
        "target": target(),
        "wave": "2/3",
        "currentWave": 2,
        "moved": "2/9",
        "waves": [
            {"number": 1, "phase": "Passed", "startedAt": "2026-12-02T11:00:00Z",
             "bakeStartedAt": "2026-12-02T11:02:00Z", "bakeUntil": "2026-12-02T11:12:00Z",
             "finishedAt": "2026-12-02T11:12:05Z",
             "fleets": [{"name": "acme", "phase": "Adopted", "from": "00000000000000a1",
                         "to": "0123456789abcdef", "adopted": "3/3"}]},
            {"number": 2, "phase": "Publishing", "startedAt": "2026-12-02T11:40:00Z",
             "fleets": [
                {"name": "beta", "phase": "Adopted", "from": "00000000000000a1",
                 "to": "0123456789abcdef", "adopted": "2/2"},
                {"name": "carol", "phase": "Publishing", "from": "00000000000000a1",
                 "to": "0123456789abcdef", "adopted": "1/3",
                 "message": "2 nodes still serve 00000000000000a1"}]},
            {"number": 3, "phase": "Pending"},
        ],
        "skipped": skipped(),
        "conditions": [
            {"type": "Reconciling", "status": "True", "reason": "WaveStarted",
             "message": "wave 2 of 3 is under way", "lastTransitionTime": "2026-12-02T11:40:00Z"},
            {"type": "Ready", "status": "False", "reason": "WaveStarted",
             "message": "wave 2 of 3 is under way", "lastTransitionTime": "2026-12-02T11:00:00Z"},
        ],
    })
}

/// Waves 1 and 2 passed; wave 3 waits for `kubectl celld rollout promote`.
pub fn waiting() -> Value {
    let mut status = progressing();
    status["phase"] = json!("WaitingForPromotion");
    status["waves"][1]["phase"] = json!("Passed");
    status["waves"][1]["fleets"][1]["phase"] = json!("Adopted");
    status["waves"][1]["fleets"][1]["adopted"] = json!("3/3");
    status["waves"][1]["fleets"][1]["message"] = Value::Null;
    status["moved"] = json!("3/9");
    status["waves"][2]["message"] = json!("waits for kubectl celld rollout promote");
    status
}

/// Wave 1 failed its gate (a node refused the version) and the fleet was pointed back.
pub fn rolled_back() -> Value {
    json!({
        "observedGeneration": 1,
        "phase": "RolledBack",
        "target": target(),
        "wave": "1/3",
        "currentWave": 1,
        "moved": "0/9",
        "waves": [
            {"number": 1, "phase": "Failed", "startedAt": "2026-12-02T11:00:00Z",
             "finishedAt": "2026-12-02T11:03:00Z",
             "message": "CelldFleet acme: node acme-1 refused the version",
             "fleets": [{"name": "acme", "phase": "RolledBack", "from": "00000000000000a1",
                         "to": "0123456789abcdef", "adopted": "2/3", "reason": "VersionRefused",
                         "message": "node acme-1 refused 0123456789abcdef: SyntaxError in worker.js; pointed back at 00000000000000a1"}]},
            {"number": 2, "phase": "Pending"},
            {"number": 3, "phase": "Pending"},
        ],
        "skipped": skipped(),
        "conditions": [
            {"type": "Stalled", "status": "True", "reason": "RolledBack",
             "message": "wave 1 failed: CelldFleet acme: node acme-1 refused the version; the fleets moved were pointed back",
             "lastTransitionTime": "2026-12-02T11:03:00Z"},
            {"type": "Ready", "status": "False", "reason": "RolledBack",
             "message": "wave 1 failed", "lastTransitionTime": "2026-12-02T11:03:00Z"},
        ],
    })
}
