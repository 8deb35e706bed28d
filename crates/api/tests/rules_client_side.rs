//! Every admission rule evaluated locally (kube's CEL support) on accepted and refused examples.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod cases;

use cases::updates::{EPHEMERAL_TO_PERSISTENT, FLEET_UPDATES};
use cases::{Case, previews::PREVIEWS, rollouts::ROLLOUTS, stores::STORES};
use celld_api::{CelldFleet, CelldObjectStore, CelldPreview, validate};
use serde_json::{Value, json};

fn object(kind: &str, yaml: &str) -> Value {
    let mut v: Value = serde_yaml::from_str(yaml).expect("case is YAML");
    v["apiVersion"] = json!("platform.celld.dev/v1alpha1");
    v["kind"] = json!(kind);
    v["metadata"]["namespace"] = json!("default");
    v
}

fn fleet(yaml: &str) -> CelldFleet {
    serde_json::from_value(object("CelldFleet", yaml)).expect("case parses as a CelldFleet")
}

fn check(case: &Case, result: Result<(), validate::SpecError>) -> Option<String> {
    match (case.refused_with, result) {
        (None, Ok(())) => None,
        (None, Err(e)) => Some(format!(
            "{}: expected to be accepted, refused with: {e}",
            case.name
        )),
        (Some(want), Ok(())) => Some(format!(
            "{}: expected refusal containing {want:?}, was accepted",
            case.name
        )),
        (Some(want), Err(e)) if e.to_string().contains(want) => None,
        (Some(want), Err(e)) => Some(format!("{}: expected {want:?}, got: {e}", case.name)),
    }
}

#[test]
fn fleet_rules() {
    let failures: Vec<String> = cases::fleets()
        .iter()
        .filter_map(|c| check(c, validate::fleet(&fleet(c.yaml))))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn object_store_rules() {
    let failures: Vec<String> = STORES
        .iter()
        .filter_map(|c| {
            let store: CelldObjectStore =
                serde_json::from_value(object("CelldObjectStore", c.yaml))
                    .expect("case parses as a CelldObjectStore");
            check(c, validate::object_store(&store))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn preview_rules() {
    let failures: Vec<String> = PREVIEWS
        .iter()
        .filter_map(|c| {
            let preview: CelldPreview = serde_json::from_value(object("CelldPreview", c.yaml))
                .expect("case parses as a CelldPreview");
            check(c, validate::preview(&preview))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn rollout_rules() {
    let failures: Vec<String> = ROLLOUTS
        .iter()
        .filter_map(|c| {
            let rollout: celld_api::CelldRollout =
                serde_json::from_value(object("CelldRollout", c.yaml))
                    .expect("case parses as a CelldRollout");
            check(c, validate::rollout(&rollout))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A preview's fleet cannot change: the child fleet and its data belong to the first.
#[test]
fn a_previews_fleet_cannot_change() {
    let parse = |yaml: &str| -> CelldPreview {
        serde_json::from_value(object("CelldPreview", yaml)).expect("a CelldPreview")
    };
    let old = parse("metadata: {name: pr-1}\nspec: {fleet: web}\n");
    let err =
        validate::preview_update(&parse("metadata: {name: pr-1}\nspec: {fleet: api}\n"), &old)
            .expect_err("spec.fleet change refused");
    assert!(
        err.to_string().contains("spec.fleet cannot change"),
        "{err}"
    );
    validate::preview_update(
        &parse("metadata: {name: pr-1}\nspec: {fleet: web, ttl: 96h}\n"),
        &old,
    )
    .expect("a ttl change is admitted");
}

#[test]
fn fleet_transition_rules() {
    let failures: Vec<String> = FLEET_UPDATES
        .iter()
        .filter_map(|u| {
            let case = Case {
                name: u.name,
                yaml: u.new,
                refused_with: u.refused_with,
            };
            check(&case, validate::fleet_update(&fleet(u.new), &fleet(u.old)))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A fleet that never used Persistent storage is refused for the type change alone, in one
/// message that names the type and the way out, never "uses Persistent storage".
#[test]
fn ephemeral_to_persistent_is_refused_for_the_type_only() {
    let (old, new) = EPHEMERAL_TO_PERSISTENT;
    let err = validate::fleet_update(&fleet(new), &fleet(old)).expect_err("type change refused");
    let messages: Vec<&str> = err.violations.iter().map(|v| v.message.as_str()).collect();
    assert_eq!(
        messages,
        vec![celld_api::rules::local_storage::TYPE_CHANGE_MESSAGE],
        "{err}"
    );
    assert!(!messages[0].contains("uses Persistent storage"), "{err}");
    assert!(
        messages[0].contains("delete the fleet and create it again"),
        "{err}"
    );
}
