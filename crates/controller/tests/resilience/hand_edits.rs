//! Hand edits of every child kind: a field the operator owns is changed by someone else, then
//! the object is deleted. The operator must restore both within seconds, from its watches alone
//! (its periodic resync is 10 minutes here), and leave labels and annotations it does not own
//! alone. Service ports edited by hand or by another controller, with the operator in the test
//! process: operator/hand_edits.rs.

mod edits;

use crate::cluster::{Cluster, Tuning};
use crate::conditions::has;
use crate::fixtures::{apply, publish_pointer};
use crate::leaks;
use crate::sentinels::Sentinels;
use crate::timing::{measured, seconds, until_each};
use celld_fixtures::manifests::{fleet_manifest, inline_spec, merge};
use celld_testkit::faults::ReportSection;
use edits::{Edit, edits};
use kube::api::{DeleteParams, DynamicObject, Patch, PatchParams};
use kube::{Api, Client, ResourceExt};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// How long the operator may take to undo one edit or recreate one object.
const RESTORE_BOUND: Duration = Duration::from_secs(20);

/// The field manager of the hand edits.
const EDITOR: &str = "hand-editor";

/// A label and an annotation the operator does not own, added before each edit.
const FOREIGN_LABEL: (&str, &str) = ("example.com/hand-edit", "kept");
const FOREIGN_ANNOTATION: (&str, &str) = ("example.com/note", "added by hand, kept");

/// What happened to one edit.
struct Outcome {
    restored_after: Option<Duration>,
    foreign_kept: bool,
    recreated_after: Option<Duration>,
    problems: Vec<String>,
}

async fn field_of(api: &Api<DynamicObject>, name: &str, field: &str) -> Option<(String, Value)> {
    let object = api.get_opt(name).await.ok().flatten()?;
    let value = serde_json::to_value(&object).ok()?.pointer(field).cloned();
    Some((
        object.uid().unwrap_or_default(),
        value.unwrap_or(Value::Null),
    ))
}

/// Polls until `name`'s `field` equals `want` (and its uid differs from `old_uid`, if given).
async fn until_restored(
    api: &Api<DynamicObject>,
    name: &str,
    field: &str,
    want: &Value,
    old_uid: Option<&str>,
) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < RESTORE_BOUND {
        if let Some((uid, value)) = field_of(api, name, field).await
            && &value == want
            && old_uid.is_none_or(|old| old != uid)
        {
            return Some(started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

async fn run_edit(client: &Client, ns: &str, edit: &Edit) -> Outcome {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &edit.resource);
    let subject = format!("{} {ns}/{} {}", edit.kind, edit.name, edit.field);
    let mut problems = Vec::new();
    let (uid, original) = field_of(&api, edit.name, edit.field)
        .await
        .unwrap_or_else(|| panic!("{subject}: the operator made the object"));
    assert!(!original.is_null(), "{subject}: the operator set the field");

    let params = PatchParams {
        field_manager: Some(EDITOR.into()),
        ..PatchParams::default()
    };
    let foreign = json!({"metadata": {
        "labels": {FOREIGN_LABEL.0: FOREIGN_LABEL.1},
        "annotations": {FOREIGN_ANNOTATION.0: FOREIGN_ANNOTATION.1},
    }});
    api.patch(edit.name, &params, &Patch::Merge(&foreign))
        .await
        .unwrap_or_else(|e| panic!("{subject}: foreign label added: {e}"));
    // A JSON merge patch of the whole spec with the one field changed: lists are replaced as a
    // whole, so the edit lands exactly where it is meant to.
    let mut live = serde_json::to_value(api.get(edit.name).await.expect("the child"))
        .expect("the child as JSON");
    *live
        .pointer_mut(edit.field)
        .unwrap_or_else(|| panic!("{subject}: the field exists")) = edit.value.clone();
    let patch = json!({"spec": live["spec"]});
    let edited = api
        .patch(edit.name, &params, &Patch::Merge(&patch))
        .await
        .unwrap_or_else(|e| panic!("{subject}: hand edit ({}) accepted: {e}", edit.what));
    let edited_value = serde_json::to_value(&edited)
        .ok()
        .and_then(|v| v.pointer(edit.field).cloned());
    assert_ne!(
        edited_value.as_ref(),
        Some(&original),
        "{subject}: the hand edit changed the field"
    );

    let restored_after = until_restored(&api, edit.name, edit.field, &original, None).await;
    if restored_after.is_none() {
        let now = field_of(&api, edit.name, edit.field).await.map(|(_, v)| v);
        problems.push(format!(
            "{subject}: hand edit ({}) not undone within {RESTORE_BOUND:?}: still {now:?}, the operator wants {original}",
            edit.what
        ));
    }
    let live = api.get(edit.name).await.expect("the edited object");
    let foreign_kept = live.labels().get(FOREIGN_LABEL.0).map(String::as_str)
        == Some(FOREIGN_LABEL.1)
        && live
            .annotations()
            .get(FOREIGN_ANNOTATION.0)
            .map(String::as_str)
            == Some(FOREIGN_ANNOTATION.1);
    if !foreign_kept {
        problems.push(format!(
            "{subject}: the operator removed the foreign label {} or annotation {}",
            FOREIGN_LABEL.0, FOREIGN_ANNOTATION.0
        ));
    }

    api.delete(edit.name, &DeleteParams::background())
        .await
        .unwrap_or_else(|e| panic!("{subject}: deleted by hand: {e}"));
    let recreated_after = until_restored(&api, edit.name, edit.field, &original, Some(&uid)).await;
    if recreated_after.is_none() {
        problems.push(format!(
            "{subject}: not recreated within {RESTORE_BOUND:?} after it was deleted by hand"
        ));
    }
    Outcome {
        restored_after,
        foreign_kept,
        recreated_after,
        problems,
    }
}

#[tokio::test]
async fn hand_edits_of_every_child_are_undone_and_deleted_children_come_back() {
    let cluster = Cluster::shared().await;
    let namespace = cluster.namespace("resilience-edits").await;
    let ns = namespace.name();
    let mut sentinels = Sentinels::default();
    sentinels
        .working_secret(&cluster.client, ns, "creds", &cluster.s3)
        .await;
    let prefix = cluster.s3.unique_prefix("resilience-edits");
    let prefix = prefix.trim_end_matches('/');

    let mut fleets = vec![(
        "web",
        json!({"replicas": 2, "ingress": {"hostname": "web.example.com", "ingressClass": "nginx"}}),
    )];
    if cluster.gateway_api {
        fleets.push((
            "routed",
            json!({"replicas": 2, "ingress": {"hostname": "routed.example.com", "gatewayRefs": [{"name": "gw"}]}}),
        ));
    }
    let names: Vec<String> = fleets.iter().map(|(n, _)| (*n).to_string()).collect();
    for (name, extra) in fleets {
        let fleet_prefix = format!("{prefix}/{name}");
        publish_pointer(&cluster.s3, &fleet_prefix, "0123456789abcdef").await;
        let mut spec = inline_spec(&cluster.s3, &fleet_prefix, "creds", 1);
        merge(&mut spec, extra);
        apply(&cluster.client, ns, &fleet_manifest(name, spec))
            .await
            .unwrap_or_else(|e| panic!("fleet {name} applied: {e}"));
    }
    let tuning = Tuning {
        resync: 600,
        pending_resync: 600,
    };
    let operator = cluster.operator(Some(ns), tuning).await;
    until_each(
        &cluster.client,
        ns,
        &names,
        "fleets Ready before the hand edits",
        Instant::now(),
        Duration::from_secs(90),
        |f| has(f, "Ready", "True", None),
    )
    .await;

    let mut rows = Vec::new();
    let mut problems = Vec::new();
    for edit in edits(cluster.gateway_api) {
        let outcome = run_edit(&cluster.client, ns, &edit).await;
        let show = |d: Option<Duration>| {
            d.map_or(format!("not within {}", seconds(RESTORE_BOUND)), seconds)
        };
        rows.push(vec![
            format!("{} `{}`", edit.kind, edit.name),
            format!("`{}`: {}", edit.field, edit.what),
            show(outcome.restored_after),
            if outcome.foreign_kept { "yes" } else { "no" }.to_string(),
            show(outcome.recreated_after),
        ]);
        problems.extend(outcome.problems);
    }

    let mut operator = operator;
    assert!(
        operator.is_running(),
        "the operator process exited during the hand edits"
    );
    let panics = operator.panics().expect("the operator log");
    let scan = leaks::scan(&cluster, &[ns], &[operator.log_path()], sentinels.values()).await;

    let mut section = ReportSection::new("50-hand-edits", "Hand edits of every child");
    section
        .paragraph(measured("hand_edits"))
        .paragraph(format!(
            "One fleet with an Ingress{} (2 nodes, a deployed Worker), the operator's periodic resync set to 10 minutes so that only its watches can undo an edit. Each edit is made by another field manager after it added a label and an annotation of its own; then the object is deleted. Bound: {} each.",
            if cluster.gateway_api { " and one with an HTTPRoute" } else { "" },
            seconds(RESTORE_BOUND)
        ))
        .table(
            &["child", "hand edit", "undone after", "foreign label and annotation kept", "recreated after deletion"],
            &rows,
        )
        .bullets(&[
            format!("Problems: {}", if problems.is_empty() { "none".to_string() } else { problems.join("; ") }),
            format!("Operator panics: {}", panics.len()),
            format!(
                "Credential values found outside their Secret: {} (searched {})",
                scan.findings.len(),
                scan.summary()
            ),
        ]);
    section.write().expect("the report section written");

    assert!(
        panics.is_empty(),
        "the operator panicked:\n{}",
        panics.join("\n")
    );
    scan.assert_clean("hand edits");
    assert!(
        problems.is_empty(),
        "hand edits the operator did not handle:\n{}",
        problems.join("\n")
    );
    namespace.cleanup().await.expect("namespace deleted");
}
