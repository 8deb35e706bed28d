//! gs:// and az:// fleets with keys, against the local GCS (fake-gcs-server) and Azure Blob
//! (Azurite) emulators: each resolves, its nodes get exactly celld's environment for the store,
//! the operator reads the deployment pointer published into the emulator, and a rotated key
//! rolls the nodes. Fleets without a key: workload_identity.rs.

use crate::object_store_support::*;
use crate::support::*;
use celld_api::{CelldObjectStore, labels};
use celld_testkit::{Check, TestEnv, unique_name, wait_until};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::json;

async fn create_secret(env: &TestEnv, name: &str, data: serde_json::Value) {
    let secret: Secret =
        serde_json::from_value(json!({"metadata": {"name": name}, "stringData": data}))
            .expect("Secret");
    env.api::<Secret>()
        .create(&PostParams::default(), &secret)
        .await
        .expect("Secret created");
}

/// A service-account key the GCS client takes without asking Google for a token (the
/// emulator authenticates nothing).
fn emulator_key(id: &str) -> String {
    json!({"private_key": "unused", "private_key_id": id, "client_email": "celld@celld-test.iam.gserviceaccount.com", "disable_oauth": true}).to_string()
}
fn config_hash(sts: &StatefulSet) -> Option<String> {
    sts.spec
        .as_ref()?
        .template
        .metadata
        .as_ref()?
        .annotations
        .as_ref()?
        .get(labels::CONFIG_HASH)
        .cloned()
}

async fn wait_version(env: &TestEnv, name: &str, version: &str) {
    let api = env.api::<celld_api::CelldFleet>();
    wait_until(
        format!("fleet {name} at version {version}"),
        TIMEOUT,
        || async {
            let fleet = api.get(name).await.ok();
            let status = fleet.as_ref().and_then(|f| f.status.as_ref());
            let deployed = status
                .and_then(|s| celld_api::conditions::find(&s.conditions, "Deployed"))
                .is_some_and(|c| c.status == "True");
            let at = status
                .and_then(|s| s.deployment.as_ref())
                .map(|d| d.version.as_str());
            if deployed && at == Some(version) {
                Check::Done(())
            } else {
                Check::Pending(format!("{status:?}"))
            }
        },
    )
    .await
    .expect("the fleet reports the version published");
}

#[tokio::test]
async fn a_gcs_fleet_with_a_key_reads_its_pointer_and_rolls_on_rotation() {
    let (env, op, gcs, _) = env_with_emulators("gcs-key").await;
    let prefix = unique_name("gcs-key");
    create_secret(
        &env,
        "gcs-key",
        json!({"GOOGLE_SERVICE_ACCOUNT_KEY": emulator_key("one")}),
    )
    .await;
    let bucket = format!("gs://{}/{prefix}", gcs.bucket);
    apply_fleet(
        &env,
        &fleet(
            "web",
            json!({"objectStorage": {"bucket": bucket, "credentialsSecretRef": {"name": "gcs-key"}}}),
        ).expect("a valid CelldFleet"),
    )
    .await;

    // Nothing deployed yet: the read answers "not found", and the fleet waits at 0 nodes.
    wait_condition(&env, "web", "Deployed", "False", Some("NoDeployment")).await;
    let sts = statefulset(&env, "web").await;
    assert_eq!(sts.spec.as_ref().and_then(|s| s.replicas), Some(0));
    assert_eq!(
        storage_env(&sts),
        [
            format!("CELLD_BUCKET={bucket}"),
            "GOOGLE_SERVICE_ACCOUNT_KEY<-gcs-key/GOOGLE_SERVICE_ACCOUNT_KEY".to_string(),
        ]
    );
    assert_eq!(
        volumes_and_mounts(&sts),
        (
            vec!["tmp".to_string(), "work".to_string()],
            vec!["work:/var/lib/celld".to_string(), "tmp:/tmp".to_string()]
        )
    );

    publish_gcs(&gcs, &prefix, "00000000000000a1").await;
    wait_version(&env, "web", "00000000000000a1").await;
    let before = config_hash(&statefulset(&env, "web").await);

    // A new key rolls the nodes, as an S3 Secret does.
    env.api::<Secret>()
        .patch(
            "gcs-key",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"stringData": {"GOOGLE_SERVICE_ACCOUNT_KEY": emulator_key("two")}}),
            ),
        )
        .await
        .expect("key rotated");
    wait_new_hash(&env, "web", &[before]).await;
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}

#[tokio::test]
async fn an_azure_fleet_through_a_store_reads_its_pointer_and_rolls_on_rotation() {
    let (env, op, _, azure) = env_with_emulators("azure-store").await;
    let prefix = unique_name("azure-store");
    create_secret(
        &env,
        "azure-key",
        json!({"AZURE_STORAGE_ACCOUNT_KEY": azure.key}),
    )
    .await;
    let store: CelldObjectStore = serde_json::from_value(json!({
        "apiVersion": "platform.celld.dev/v1alpha1", "kind": "CelldObjectStore",
        "metadata": {"name": "azure"},
        "spec": {"azureStorageAccount": azure.account, "credentialsSecretRef": {"name": "azure-key"}},
    }))
    .expect("a CelldObjectStore");
    env.api::<CelldObjectStore>()
        .create(&PostParams::default(), &store)
        .await
        .expect("store created");
    let bucket = publish_azure(&azure, &prefix, "00000000000000b2").await;
    apply_fleet(
        &env,
        &fleet(
            "shop",
            json!({"storeRef": {"name": "azure"}, "objectStorage": {"bucket": bucket}}),
        )
        .expect("a valid CelldFleet"),
    )
    .await;

    wait_version(&env, "shop", "00000000000000b2").await;
    let sts = statefulset(&env, "shop").await;
    assert_eq!(
        storage_env(&sts),
        [
            format!("CELLD_BUCKET={bucket}"),
            format!("AZURE_STORAGE_ACCOUNT_NAME={}", azure.account),
            "AZURE_STORAGE_ACCOUNT_KEY<-azure-key/AZURE_STORAGE_ACCOUNT_KEY".to_string(),
        ]
    );
    assert_eq!(
        volumes_and_mounts(&sts),
        (
            vec!["tmp".to_string(), "work".to_string()],
            vec!["work:/var/lib/celld".to_string(), "tmp:/tmp".to_string()]
        )
    );
    let fleet = env
        .api::<celld_api::CelldFleet>()
        .get("shop")
        .await
        .expect("fleet");
    let storage = fleet
        .status
        .and_then(|s| s.storage)
        .expect("status.storage");
    assert_eq!(
        (storage.azure_storage_account, storage.region),
        (Some(azure.account.clone()), None)
    );

    // A new version is read conditionally (Azurite answers If-None-Match) and still seen.
    publish_azure(&azure, &prefix, "00000000000000b3").await;
    wait_version(&env, "shop", "00000000000000b3").await;

    // A new account key rolls the nodes, as an S3 Secret does. Azurite knows one key per
    // account, so the Secret first takes another key and then the account's key again: each
    // change rolls, and the operator reads with the key the Secret holds now.
    let original = config_hash(&statefulset(&env, "shop").await);
    rotate_azure_key(&env, OTHER_AZURE_KEY).await;
    let other = wait_new_hash(&env, "shop", &[original]).await;
    rotate_azure_key(&env, &azure.key).await;
    wait_new_hash(&env, "shop", &[other]).await;
    wait_rolled(&env, "shop").await;
    publish_azure(&azure, &prefix, "00000000000000b4").await;
    wait_version(&env, "shop", "00000000000000b4").await;
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}

/// Waits until every node of the fleet runs the StatefulSet's current template.
async fn wait_rolled(env: &TestEnv, name: &str) {
    let api = env.api::<StatefulSet>();
    wait_until("every node on the new template", TIMEOUT, || async {
        let sts = api.get(name).await.ok();
        let want = sts.as_ref().and_then(|s| s.spec.as_ref()?.replicas);
        let generation = sts.as_ref().and_then(|s| s.metadata.generation);
        let status = sts.and_then(|s| s.status);
        match &status {
            Some(st)
                if want.is_some_and(|n| n > 0)
                    && st.observed_generation == generation
                    && st.updated_replicas == want
                    && st.ready_replicas == want
                    && st.current_revision == st.update_revision =>
            {
                Check::Done(())
            }
            _ => Check::Pending(format!("{status:?}")),
        }
    })
    .await
    .expect("the nodes rolled");
}

/// A well-formed Azure account key that is not Azurite's.
const OTHER_AZURE_KEY: &str =
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==";

/// Puts `key` into the Secret `azure-key`.
async fn rotate_azure_key(env: &TestEnv, key: &str) {
    env.api::<Secret>()
        .patch(
            "azure-key",
            &PatchParams::default(),
            &Patch::Merge(json!({"stringData": {"AZURE_STORAGE_ACCOUNT_KEY": key}})),
        )
        .await
        .expect("key rotated");
}

/// The fleet's config hash once it is none of `before`.
async fn wait_new_hash(env: &TestEnv, name: &str, before: &[Option<String>]) -> Option<String> {
    let api = env.api::<StatefulSet>();
    wait_until("the rotated key in the config hash", TIMEOUT, || async {
        let now = api.get(name).await.ok().and_then(|s| config_hash(&s));
        if now.is_some() && !before.contains(&now) {
            Check::Done(now)
        } else {
            Check::Pending(format!("{now:?}"))
        }
    })
    .await
    .expect("the nodes roll onto the new key")
}
