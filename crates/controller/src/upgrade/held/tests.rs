//! Which settings wait, and for which nodes.

use super::*;
use crate::upgrade::decide::{Probed, decide};
use k8s_openapi::api::apps::v1::StatefulSet;

const V60: &str = "ghcr.io/denoland/celld:v0.6.0";
const V61: &str = "ghcr.io/denoland/celld:v0.6.1";

fn spec(image: &str, env: &[(&str, &str)]) -> CelldFleetSpec {
    let mut spec = CelldFleetSpec::with_bucket("s3://b/p");
    spec.image = image.into();
    spec.replicas = 3;
    spec.env = env
        .iter()
        .map(|(name, value)| k8s_openapi::api::core::v1::EnvVar {
            name: (*name).into(),
            value: Some((*value).into()),
            ..Default::default()
        })
        .collect();
    spec
}

/// A StatefulSet of 3 nodes on `image` with `env`, `updated` of them on its template, a roll
/// from `from` at `partition` when given.
fn sts(image: &str, env: &[(&str, &str)], updated: i32, roll: Option<(&str, i32)>) -> StatefulSet {
    let env: Vec<_> = env
        .iter()
        .map(|(n, v)| serde_json::json!({"name": n, "value": v}))
        .collect();
    let annotations = roll.map_or(
        serde_json::json!({}),
        |(from, _)| serde_json::json!({"platform.celld.dev/rolling-from": from}),
    );
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web", "generation": 4, "annotations": annotations},
        "spec": {
            "replicas": 3,
            "selector": {},
            "serviceName": "web-peer",
            "updateStrategy": {"rollingUpdate": {"partition": roll.map_or(0, |(_, p)| p)}},
            "template": {"spec": {"containers": [{"name": "celld", "image": image, "env": env}]}},
        },
        "status": {"observedGeneration": 4, "replicas": 3, "readyReplicas": 3, "updatedReplicas": updated},
    }))
    .unwrap()
}

/// What is held for `spec` against `live`, decided as a reconcile does.
fn held(spec: &CelldFleetSpec, live: Option<&StatefulSet>, probed: &Probed) -> Vec<HeldBack> {
    let upgrade = decide(spec, spec.replicas, live, probed);
    let moving = Moving {
        progress: &upgrade.progress,
        partition: upgrade.partition,
        stopped: upgrade.stopped,
    };
    held_back(spec, "web", live.and_then(Live::of).as_ref(), &moving)
}

const RETENTION: (&str, &str) = ("CELLD_LTX_RETENTION_SECS", "86400");

#[test]
fn a_new_fleet_on_the_release_uses_its_settings_at_once() {
    assert_eq!(held(&spec(V61, &[RETENTION]), None, &Probed::default()), []);
}

#[test]
fn a_setting_waits_for_an_image_that_allows_it_and_names_why() {
    let unknown = spec("ghcr.io/denoland/celld:latest", &[RETENTION]);
    let h = held(&unknown, None, &Probed::default());
    assert_eq!(h.len(), 1);
    assert_eq!(h[0].name, "CELLD_LTX_RETENTION_SECS");
    assert!(!h[0].on_its_way, "spec.image must change");
    assert!(
        h[0].why.contains("is unknown") && h[0].why.contains("v0.6.1"),
        "{}",
        h[0].why
    );

    let raised = spec(V60, &[("CELLD_MAX_ASSET_FILE_BYTES", "52428800")]);
    let h = held(&raised, Some(&sts(V60, &[], 3, None)), &Probed::default());
    assert!(h[0].why.ends_with("spec.image runs v0.6.0"), "{}", h[0].why);
    assert!(!h[0].on_its_way);
}

#[test]
fn while_the_nodes_roll_to_the_release_the_setting_waits_for_the_nodes_not_there_yet() {
    let wanted = spec(V61, &[RETENTION]);
    // The image changes: the roll starts at the last node.
    let h = held(&wanted, Some(&sts(V60, &[], 3, None)), &Probed::default());
    assert_eq!(h.len(), 1);
    assert!(h[0].why.contains("web-0, web-1"), "{}", h[0].why);
    assert!(h[0].on_its_way);
    // One node left.
    let rolling = sts(V61, &[], 2, Some((V60, 1)));
    let h = held(&wanted, Some(&rolling), &Probed::default());
    assert!(
        h[0].why.contains("2 of 3 nodes run it, not yet web-0"),
        "{}",
        h[0].why
    );
    // Every node runs 0.6.1: it goes to the nodes.
    let done = sts(V61, &[], 3, Some((V60, 0)));
    assert_eq!(held(&wanted, Some(&done), &Probed::default()), []);
    let steady = sts(V61, &[], 3, None);
    assert_eq!(held(&wanted, Some(&steady), &Probed::default()), []);
}

#[test]
fn nodes_that_use_a_setting_keep_it() {
    let wanted = spec(V61, &[("CELLD_LTX_RETENTION_SECS", "3600")]);
    let using = sts(V61, &[RETENTION], 1, None);
    assert_eq!(held(&wanted, Some(&using), &Probed::default()), []);
}

#[test]
fn going_back_below_the_release_waits_until_no_node_has_the_setting() {
    // spec.env dropped it with the image: the template loses it first, on 0.6.1.
    let back = spec(V60, &[]);
    let using = sts(V61, &[RETENTION], 3, None);
    let up = decide(&back, 3, Some(&using), &Probed::default());
    assert_eq!(up.image, V61, "{up:?}");
    let Progress::WaitingForSettings { why } = &up.progress else {
        panic!("{:?}", up.progress)
    };
    assert!(
        why.contains("CELLD_LTX_RETENTION_SECS") && why.contains("every node"),
        "{why}"
    );
    assert!(up.progress.under_way(), "the reconcile looks again soon");
    // The template without it rolls: still waiting while a node may have it.
    let dropping = sts(V61, &[], 1, None);
    let up = decide(&back, 3, Some(&dropping), &Probed::default());
    assert!(
        matches!(up.progress, Progress::WaitingForSettings { .. }),
        "{up:?}"
    );
    // spec.env that keeps it: refused, saying what to do.
    let keeps = spec(V60, &[RETENTION]);
    let up = decide(&keeps, 3, Some(&using), &Probed::default());
    let Progress::Refused(why) = &up.progress else {
        panic!("{:?}", up.progress)
    };
    assert!(
        why.contains("remove CELLD_LTX_RETENTION_SECS from spec.env"),
        "{why}"
    );
    // No node has it: the rollback rolls.
    let dropped = sts(V61, &[], 3, None);
    let up = decide(&back, 3, Some(&dropped), &Probed::default());
    assert!(matches!(up.progress, Progress::Rolling { .. }), "{up:?}");
    // And the roll goes on while its nodes move (not every node on the template yet).
    let rolling_back = sts(V60, &[], 1, Some((V61, 2)));
    let up = decide(&back, 3, Some(&rolling_back), &Probed::default());
    assert!(matches!(up.progress, Progress::Rolling { .. }), "{up:?}");
    // A fleet that never used it rolls back at once.
    let never = sts(V61, &[("RUST_LOG", "info")], 3, None);
    let up = decide(&back, 3, Some(&never), &Probed::default());
    assert!(matches!(up.progress, Progress::Rolling { .. }), "{up:?}");
}
