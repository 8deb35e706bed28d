//! What every node serves: the operator reads each node's `/state` (a stand-in answers for
//! kwok's pods), sends a reload to nodes behind the pointer, and reports each node's version,
//! `status.deployment.adopted` and the Adopted condition; a node that refuses a version is
//! named with celld's reason and one Warning Event; a state that cannot be read is never taken
//! as adopted.

use crate::support::*;
use celld_api::{Adoption, CelldFleet};
use celld_testkit::{Check, TestEnv, wait_until};
use serde_json::json;

const V1: &str = "00000000000000c1";
const V2: &str = "00000000000000c2";
const V3: &str = "00000000000000c3";
const REFUSAL: &str = "deployment module digest mismatch: src/index.js";

/// Waits until the fleet `web` reports `adopted` (N/M) with the Adopted condition `status`
/// and `reason`, and returns it.
async fn wait_adopted(env: &TestEnv, adopted: &str, status: &str, reason: &str) -> CelldFleet {
    let api = env.api::<CelldFleet>();
    wait_until(
        format!("fleet web: adopted {adopted}, Adopted={status} {reason}"),
        TIMEOUT,
        || async {
            let Ok(Some(fleet)) = api.get_opt("web").await else {
                return Check::Pending("no fleet".into());
            };
            let s = fleet.status.clone().unwrap_or_default();
            let ratio = s.deployment.as_ref().and_then(|d| d.adopted.clone());
            let hit = celld_api::conditions::find(&s.conditions, "Adopted")
                .is_some_and(|c| c.status == status && c.reason == reason);
            if hit && ratio.as_deref() == Some(adopted) {
                Check::Done(fleet)
            } else {
                Check::Pending(format!(
                    "adopted {ratio:?}, nodes {:?}, conditions {:?}",
                    s.nodes, s.conditions
                ))
            }
        },
    )
    .await
    .expect("the fleet reports its nodes")
}

#[tokio::test]
async fn every_node_version_is_reported_and_a_refusal_is_named_with_celld_reason() {
    let (env, nodes, op) = env_with_nodes("adoption", "0.6.1", V1).await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "adoption");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(&s3, &prefix, V1).await;
    let extra = json!({"image": "ghcr.io/denoland/celld:v0.6.1", "replicas": 3});
    apply_fleet(
        &env,
        &inline_fleet("web", &s3, &prefix, extra).expect("a CelldFleet"),
    )
    .await;

    // Every node serves the deployed version.
    let fleet = wait_adopted(&env, "3/3", "True", "Adopted").await;
    let status = fleet.status.expect("status");
    assert_eq!(status.nodes.len(), 3, "{status:?}");
    assert!(
        status
            .nodes
            .iter()
            .all(|n| n.adoption == Adoption::Adopted && n.version.as_deref() == Some(V1)),
        "{:?}",
        status.nodes
    );
    assert!(nodes.reloaded().is_empty(), "no node was behind");

    // V2 is deployed and web-2 refuses it: the others take it through the operator's reload,
    // web-2 keeps V1 and is named with celld's reason.
    nodes.refuse("web-2", V2, REFUSAL);
    nodes.publish(V2);
    publish_pointer(&s3, &prefix, V2).await;
    let fleet = wait_adopted(&env, "2/3", "False", "VersionRefused").await;
    let said = message(&fleet, "Adopted");
    assert!(
        said.contains("web-2") && said.contains(REFUSAL) && said.contains(V2),
        "{said}"
    );
    let status = fleet.status.expect("status");
    assert_eq!(
        status.deployment.as_ref().map(|d| d.version.as_str()),
        Some(V2),
        "the pointer stays what the bucket says"
    );
    let web2 = &status.nodes[2];
    assert_eq!(
        (web2.adoption, web2.version.as_deref()),
        (Adoption::Refused, Some(V1))
    );
    assert_eq!(nodes.serves("web-0"), V2);
    assert_eq!(nodes.serves("web-2"), V1);
    // The refusal is reported once, and web-2 is not sent the same version again.
    tokio::time::sleep(std::time::Duration::from_secs(6)).await;
    assert_eq!(
        events(&env, "web", "Warning", "VersionRefused").await.len(),
        1
    );
    let sent = nodes.reloaded();
    assert_eq!(
        sent.iter().filter(|p| *p == "web-2").count(),
        1,
        "one reload per node and version: {sent:?}"
    );

    // A state celld cannot give is reported, never taken as adopted.
    nodes.break_state("web-1", true);
    nodes.publish(V3);
    publish_pointer(&s3, &prefix, V3).await;
    let fleet = wait_adopted(&env, "2/3", "Unknown", "NodeStateUnreadable").await;
    let said = message(&fleet, "Adopted");
    assert!(said.contains("web-1"), "{said}");

    // Back to a version every node loads: Adopted again, with a Normal Event.
    nodes.break_state("web-1", false);
    nodes.publish(V1);
    publish_pointer(&s3, &prefix, V1).await;
    wait_adopted(&env, "3/3", "True", "Adopted").await;
    wait_events(&env, "web", "Normal", "Adopted").await;
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
