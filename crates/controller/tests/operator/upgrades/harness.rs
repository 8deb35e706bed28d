//! What the upgrade tests share: the celld images, a Ready fleet `web` whose nodes the node
//! double plays, image changes and the waits for them.

use crate::pod_history::{PodHistory, Snapshot};
use crate::support::*;
use celld_fixtures::NodeDouble;
use celld_testkit::{TestEnv, wait_for_object};
use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::json;
use std::collections::BTreeSet;
use std::time::Duration;

pub(super) const V3: &str = "ghcr.io/denoland/celld:v0.3.0";
pub(super) const V40: &str = "ghcr.io/denoland/celld:v0.4.0";
pub(super) const V41: &str = "ghcr.io/denoland/celld:v0.4.1";
pub(super) const LATEST: &str = "ghcr.io/denoland/celld:latest";
pub(super) const V60: &str = "ghcr.io/denoland/celld:v0.6.0";
pub(super) const V61: &str = "ghcr.io/denoland/celld:v0.6.1";
pub(super) const RETENTION: &str = "CELLD_LTX_RETENTION_SECS";
/// The Worker version deployed, which the nodes serve.
pub(super) const FIRST: &str = "00000000000000a1";

/// An operator whose node API requests go to `nodes`, and a fleet `web` on `image` with
/// `replicas` nodes that is Ready.
pub(super) async fn ready_fleet(
    test: &str,
    image: &str,
    replicas: i32,
    nodes: &NodeDouble,
) -> TestEnv {
    let env = env_with_crds(test).await;
    let mut settings = settings(&env, "op-1");
    settings.node_api_connect_to = Some(nodes.address.clone());
    let op = start(operator_client(&env).await, settings);
    // The operator runs as long as the test: its task ends with the runtime.
    std::mem::forget(op);
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, test);
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(&s3, &prefix, FIRST).await;
    set_image(&env, &s3, &prefix, image, replicas).await;
    wait_serving(&env, image, replicas).await;
    env
}

pub(super) async fn set_image(
    env: &TestEnv,
    s3: &celld_testkit::S3Settings,
    prefix: &str,
    image: &str,
    replicas: i32,
) {
    apply_fleet(
        env,
        &inline_fleet(
            "web",
            s3,
            prefix,
            json!({"image": image, "replicas": replicas}),
        )
        .expect("a valid CelldFleet"),
    )
    .await;
}

/// Changes only the image of the fleet `web`.
pub(super) async fn change_image(env: &TestEnv, image: &str) {
    let s3 = env.s3().expect("S3 settings");
    let fleet = env
        .api::<celld_api::CelldFleet>()
        .get("web")
        .await
        .expect("fleet read");
    let replicas = fleet.spec.replicas;
    let bucket = fleet.spec.object_storage.bucket.clone();
    let prefix = bucket
        .split_once(&format!("{}/", s3.bucket))
        .map(|(_, p)| p.to_string())
        .expect("the fleet's prefix");
    set_image(env, &s3, &prefix, image, replicas).await;
}

/// Waits until every node runs `image`, is Ready, and the fleet says Ready and Stable.
pub(super) async fn wait_serving(env: &TestEnv, image: &str, replicas: i32) {
    wait_for_object(
        &env.api::<StatefulSet>(),
        "web",
        &format!("{replicas} nodes of {image}, all updated and ready"),
        Duration::from_secs(120),
        |sts| {
            let spec = sts.spec.as_ref();
            let status = sts.status.as_ref();
            let template_image = spec
                .and_then(|s| s.template.spec.as_ref())
                .and_then(|p| p.containers.first())
                .and_then(|c| c.image.as_deref());
            template_image == Some(image)
                && spec.and_then(|s| s.replicas) == Some(replicas)
                && status.is_some_and(|s| {
                    s.observed_generation == sts.metadata.generation
                        && s.replicas == replicas
                        && s.ready_replicas == Some(replicas)
                        && s.updated_replicas == Some(replicas)
                })
        },
    )
    .await
    .expect("the nodes run the image");
    wait_condition(env, "web", "Progressing", "False", Some("Stable")).await;
    wait_condition(env, "web", "Ready", "True", Some("Serving")).await;
}

/// The images of the pods that exist (terminating ones included) in a snapshot.
pub(super) fn images(snapshot: &Snapshot) -> BTreeSet<&str> {
    snapshot.values().map(|p| p.image.as_str()).collect()
}

/// Asserts no snapshot holds pods of `old` and `new` at once, and that both were seen.
pub(super) fn assert_never_side_by_side(history: &PodHistory, old: &str, new: &str) {
    let snapshots = history.snapshots();
    for s in &snapshots {
        let images = images(s);
        assert!(
            !(images.contains(old) && images.contains(new)),
            "pods of {old} and {new} existed at once: {s:?}"
        );
    }
    assert!(snapshots.iter().any(|s| images(s).contains(old)));
    assert!(snapshots.iter().any(|s| images(s).contains(new)));
    assert!(
        snapshots.iter().any(|s| s.is_empty()),
        "the fleet went through zero pods"
    );
}

/// Applies fleet `web` on `image` with 3 nodes and `env`.
pub(super) async fn apply_web(
    env: &TestEnv,
    image: &str,
    vars: serde_json::Value,
) -> Result<(), kube::Error> {
    let s3 = env.s3().expect("S3 settings");
    let fleet = env
        .api::<celld_api::CelldFleet>()
        .get("web")
        .await
        .expect("fleet read");
    let bucket = fleet.spec.object_storage.bucket.clone();
    let prefix = bucket
        .split_once(&format!("{}/", s3.bucket))
        .map(|(_, p)| p.to_string())
        .expect("the fleet's prefix");
    let fleet = inline_fleet(
        "web",
        &s3,
        &prefix,
        json!({"image": image, "replicas": 3, "env": vars}),
    )
    .expect("a CelldFleet");
    env.api::<celld_api::CelldFleet>()
        .patch(
            "web",
            &kube::api::PatchParams::apply("kubectl-test").force(),
            &kube::api::Patch::Apply(&fleet),
        )
        .await
        .map(|_| ())
}
