//! Reconciles of a fleet at rest write nothing and read nothing from the API server.

use crate::support::*;
use celld_api::CelldFleet;
use celld_testkit::{Check, wait_until};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::{Ingress, NetworkPolicy};
use kube::ResourceExt;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn reconciles_that_change_nothing_read_and_write_nothing() {
    let (env, op) = env_with_operator("noop").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "noop");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(&s3, &prefix, "00000000000000c1").await;
    apply_fleet(
        &env,
        &inline_fleet(
            "quiet",
            &s3,
            &prefix,
            json!({
                "ingress": {"hostname": "quiet.example.com", "ingressClass": "nginx"},
                "resources": {"requests": {"cpu": "1000m", "memory": "1024Mi"}},
                "localStorage": {"type": "Persistent", "size": "1Gi"},
            }),
        )
        .expect("a valid CelldFleet"),
    )
    .await;
    wait_condition(&env, "quiet", "Ready", "True", None).await;
    // Let the last status and events settle.
    tokio::time::sleep(Duration::from_secs(3)).await;

    async fn versions(env: &celld_testkit::TestEnv) -> Vec<(String, String)> {
        let mut v = vec![
            (
                "CelldFleet".to_string(),
                env.api::<CelldFleet>()
                    .get("quiet")
                    .await
                    .expect("fleet")
                    .resource_version()
                    .unwrap_or_default(),
            ),
            (
                "StatefulSet".to_string(),
                env.api::<StatefulSet>()
                    .get("quiet")
                    .await
                    .expect("sts")
                    .resource_version()
                    .unwrap_or_default(),
            ),
            (
                "Ingress".to_string(),
                env.api::<Ingress>()
                    .get("quiet")
                    .await
                    .expect("ing")
                    .resource_version()
                    .unwrap_or_default(),
            ),
            (
                "NetworkPolicy".to_string(),
                env.api::<NetworkPolicy>()
                    .get("quiet")
                    .await
                    .expect("np")
                    .resource_version()
                    .unwrap_or_default(),
            ),
        ];
        for svc in ["quiet", "quiet-peer"] {
            v.push((
                format!("Service/{svc}"),
                env.api::<Service>()
                    .get(svc)
                    .await
                    .expect("svc")
                    .resource_version()
                    .unwrap_or_default(),
            ));
        }
        v
    }
    let before = versions(&env).await;
    let writes_before = op.metrics.total_writes();
    let reads_before = op.metrics.total_reads();
    let reconciles_before = op.metrics.ok_reconciles();
    let unchanged_before = op.metrics.unchanged_reconciles();
    wait_until("at least 3 more reconciles", TIMEOUT, || async {
        let n = op.metrics.ok_reconciles();
        if n >= reconciles_before + 3 {
            Check::Done(())
        } else {
            Check::Pending(format!("{n} reconciles"))
        }
    })
    .await
    .expect("periodic reconciles happen");
    assert_eq!(versions(&env).await, before, "no object changed");
    assert_eq!(
        op.metrics.total_writes(),
        writes_before,
        "no write was sent:\n{}",
        op.metrics.encode()
    );
    assert_eq!(
        op.metrics.total_reads(),
        reads_before,
        "a reconcile at rest reads its inputs from the caches, not the API server:\n{}",
        op.metrics.encode()
    );
    let unchanged = op.metrics.unchanged_reconciles() - unchanged_before;
    assert!(
        unchanged >= 2,
        "periodic reconciles at rest find their inputs unchanged and plan nothing ({unchanged} did):\n{}",
        op.metrics.encode()
    );
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
