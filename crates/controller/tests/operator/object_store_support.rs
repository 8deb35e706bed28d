//! What the object store tests share: an operator reading gs:// and az:// buckets at the local
//! emulators, a deployment pointer, and the storage part of a fleet's StatefulSet.

use crate::support::*;
use celld_operator::buckets::object_store::StoreEndpoints;
use celld_operator::shared::own_identity::OwnIdentity;
use celld_testkit::{AzureSettings, Check, GcsSettings, TestEnv, wait_until};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::EnvVar;
use k8s_openapi::api::networking::v1::NetworkPolicy;

/// A test namespace with an operator that reads gs:// and az:// buckets at the emulators.
pub async fn env_with_emulators(test: &str) -> (TestEnv, Operator, GcsSettings, AzureSettings) {
    let env = env_with_crds(test).await;
    let gcs = GcsSettings::load().expect("GCS emulator settings (make cluster-up)");
    let azure = AzureSettings::load().expect("Azure Blob emulator settings (make cluster-up)");
    let mut settings = settings(&env, "op-1");
    settings.store_endpoints = StoreEndpoints {
        gcs: Some(gcs.endpoint.clone()),
        azure_blob: Some(azure.blob_endpoint.clone()),
    };
    // The fleets of these tests without a credentials Secret are read with the operator's own
    // identity, which finds none here.
    settings.own_identity = OwnIdentity::In([env.namespace().to_string()].into());
    let op = start(operator_client(&env).await, settings);
    (env, op, gcs, azure)
}

/// A deployment pointer (`deploy/current.json`) for Worker version `version`.
pub fn pointer(version: &str) -> Vec<u8> {
    celld_fixtures::pointer_json(celld_fixtures::pointer::SCRIPT, version)
        .expect("the pointer serialises")
        .into_bytes()
}

/// Publishes the pointer of Worker version `version` under `prefix` in the Azure Blob
/// emulator's container, and returns the bucket a fleet names for it.
pub async fn publish_azure(azure: &AzureSettings, prefix: &str, version: &str) -> String {
    azure
        .put(&format!("{prefix}/deploy/current.json"), &pointer(version))
        .await
        .expect("pointer published to Azurite");
    format!("az://{}/{prefix}", azure.container)
}

/// Publishes the pointer of Worker version `version` under `prefix` in the GCS emulator's
/// bucket, and returns the bucket a fleet names for it.
pub async fn publish_gcs(gcs: &GcsSettings, prefix: &str, version: &str) -> String {
    gcs.put(&format!("{prefix}/deploy/current.json"), &pointer(version))
        .await
        .expect("pointer published to the GCS emulator");
    format!("gs://{}/{prefix}", gcs.bucket)
}

/// The fleet's StatefulSet once it exists.
pub async fn statefulset(env: &TestEnv, name: &str) -> StatefulSet {
    let api = env.api::<StatefulSet>();
    wait_until(format!("StatefulSet {name}"), TIMEOUT, || async {
        match api.get_opt(name).await {
            Ok(Some(sts)) => Check::Done(sts),
            other => Check::Pending(format!("{other:?}")),
        }
    })
    .await
    .expect("StatefulSet applied")
}

/// The cloud metadata endpoints a fleet's nodes may not reach.
pub const METADATA_BLOCKED: [&str; 4] = [
    "169.254.169.254/32",
    "169.254.169.252/32",
    "100.100.100.200/32",
    "fd00:ec2::254/128",
];

/// What the live NetworkPolicy of fleet `name` does with its nodes' egress: its policy types,
/// and the addresses its egress IP blocks except (empty when egress is not restricted).
pub async fn metadata_egress(env: &TestEnv, name: &str) -> (Vec<String>, Vec<String>) {
    let api = env.api::<NetworkPolicy>();
    let policy = wait_until(format!("NetworkPolicy {name}"), TIMEOUT, || async {
        match api.get_opt(name).await {
            Ok(Some(policy)) => Check::Done(policy),
            other => Check::Pending(format!("{other:?}")),
        }
    })
    .await
    .expect("NetworkPolicy applied");
    let spec = policy.spec.expect("a NetworkPolicy spec");
    let blocked = spec
        .egress
        .iter()
        .flatten()
        .flat_map(|rule| rule.to.clone().unwrap_or_default())
        .filter_map(|peer| peer.ip_block)
        .flat_map(|block| block.except.unwrap_or_default())
        .collect();
    (spec.policy_types.unwrap_or_default(), blocked)
}

/// The storage part of the celld container's environment (bucket, store settings, keys), as
/// `NAME=value` or `NAME<-secret/key`, in order.
pub fn storage_env(sts: &StatefulSet) -> Vec<String> {
    let pod = sts
        .spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .expect("pod spec");
    let env: &[EnvVar] = pod.containers[0].env.as_deref().unwrap_or_default();
    env.iter()
        .filter(|e| {
            e.name == "CELLD_BUCKET"
                || ["AWS_", "S3_", "GOOGLE_", "AZURE_"]
                    .iter()
                    .any(|p| e.name.starts_with(p))
                || e.value_from
                    .as_ref()
                    .is_some_and(|v| v.secret_key_ref.is_some())
        })
        .map(|e| {
            match e
                .value_from
                .as_ref()
                .and_then(|v| v.secret_key_ref.as_ref())
            {
                Some(r) => format!("{}<-{}/{}", e.name, r.name, r.key),
                None => format!("{}={}", e.name, e.value.as_deref().unwrap_or_default()),
            }
        })
        .collect()
}

/// The pod's volumes and the celld container's mounts: the work and tmp volumes only, never a
/// key file.
pub fn volumes_and_mounts(sts: &StatefulSet) -> (Vec<String>, Vec<String>) {
    let pod = sts
        .spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .expect("pod spec");
    let volumes = pod
        .volumes
        .iter()
        .flatten()
        .map(|v| v.name.clone())
        .collect();
    let mounts = pod.containers[0]
        .volume_mounts
        .iter()
        .flatten()
        .map(|m| format!("{}:{}", m.name, m.mount_path))
        .collect();
    (volumes, mounts)
}
