//! Fleets without a credentials Secret (workload identity): their nodes get exactly celld's
//! environment for the store and no key, and the operator, which has no key for the bucket
//! either, says precisely that. An s3:// fleet without a credentials Secret gets no key either.
//! The nodes' NetworkPolicy keeps them from the cloud metadata endpoints unless their identity
//! is served there (GKE Workload Identity).

use crate::object_store_support::*;
use crate::support::*;
use celld_testkit::{Check, unique_name, wait_until};
use serde_json::json;

#[tokio::test]
async fn workload_identity_nodes_get_no_key_and_the_operator_says_it_has_none() {
    for var in [
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_SERVICE_ACCOUNT",
        "GOOGLE_SERVICE_ACCOUNT_PATH",
        "GOOGLE_SERVICE_ACCOUNT_KEY",
    ] {
        assert!(
            std::env::var_os(var).is_none(),
            "{var} is set: the operator under test would find GCS credentials in its environment; unset it to run this test"
        );
    }
    let (env, op, gcs, _) = env_with_emulators("gcs-identity").await;
    let prefix = unique_name("gcs-identity");
    let bucket = publish_gcs(&gcs, &prefix, "00000000000000c3").await;
    apply_fleet(
        &env,
        &fleet(
            "api",
            json!({"objectStorage": {"bucket": bucket}, "serviceAccountName": "celld"}),
        )
        .expect("a valid CelldFleet"),
    )
    .await;

    let fleet = wait_no_operator_credentials(&env, "api", &bucket).await;
    let said = message(&fleet, "Deployed");
    assert!(
        said.contains("the operator's own identity gave none"),
        "its own identity was tried (the namespace is listed): {said}"
    );
    wait_condition(
        &env,
        "api",
        "Degraded",
        "True",
        Some("NoOperatorCredentials"),
    )
    .await;
    wait_until("a Warning Event on the fleet", TIMEOUT, || async {
        match events(&env, "api", "Warning", "NoOperatorCredentials")
            .await
            .len()
        {
            0 => Check::Pending("no Event yet".into()),
            n => Check::Done(n),
        }
    })
    .await
    .expect("a Warning Event NoOperatorCredentials");
    wait_condition(&env, "api", "StorageResolved", "True", Some("Resolved")).await;

    // The nodes still run (they use their own identity) with no key at all.
    let sts = statefulset(&env, "api").await;
    assert_eq!(storage_env(&sts), [format!("CELLD_BUCKET={bucket}")]);
    assert_eq!(
        volumes_and_mounts(&sts).0,
        vec!["tmp".to_string(), "work".to_string()]
    );
    let pod = sts.spec.and_then(|s| s.template.spec).expect("pod spec");
    assert_eq!(pod.service_account_name.as_deref(), Some("celld"));
    assert_eq!(
        metadata_egress(&env, "api").await,
        (vec!["Ingress".to_string()], Vec::new()),
        "GKE Workload Identity is served by the metadata server: egress not restricted"
    );
    assert_eq!(
        events(&env, "api", "Warning", "NoOperatorCredentials")
            .await
            .len(),
        1,
        "one Warning Event, not one per reconcile"
    );

    // An s3:// fleet under IRSA or Pod Identity: its nodes get where the bucket is, no key.
    let s3 = env.s3().expect("S3 settings");
    let s3_bucket = format!("s3://{}/{prefix}", s3.bucket);
    apply_fleet(
        &env,
        &crate::support::fleet(
            "irsa",
            json!({"objectStorage": {"bucket": s3_bucket, "endpoint": s3.endpoint, "region": s3.region, "allowHTTP": true}, "serviceAccountName": "celld"}),
        ).expect("a valid CelldFleet"),
    )
    .await;
    wait_condition(&env, "irsa", "StorageResolved", "True", Some("Resolved")).await;
    let sts = statefulset(&env, "irsa").await;
    assert_eq!(
        storage_env(&sts),
        [
            format!("CELLD_BUCKET={s3_bucket}"),
            format!("AWS_REGION={}", s3.region),
            format!("S3_ENDPOINT={}", s3.endpoint),
        ]
    );
    assert_eq!(
        volumes_and_mounts(&sts).0,
        vec!["tmp".to_string(), "work".to_string()]
    );
    assert_eq!(
        metadata_egress(&env, "irsa").await,
        (
            vec!["Ingress".to_string(), "Egress".to_string()],
            METADATA_BLOCKED.map(String::from).to_vec()
        ),
        "IRSA and EKS Pod Identity need no metadata endpoint"
    );
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}

#[tokio::test]
async fn an_azure_fleet_under_workload_identity_gets_the_account_and_no_key() {
    let ambient: Vec<String> = std::env::vars()
        .map(|(name, _)| name)
        .filter(|name| name.starts_with("AZURE_"))
        .collect();
    assert!(
        ambient.is_empty(),
        "{ambient:?} set: the operator under test would find Azure credentials in its environment; unset them to run this test"
    );
    let (env, op, _, azure) = env_with_emulators("azure-identity").await;
    let prefix = unique_name("azure-identity");
    let bucket = publish_azure(&azure, &prefix, "00000000000000d4").await;
    apply_fleet(
        &env,
        &fleet(
            "jobs",
            json!({"objectStorage": {"bucket": bucket, "azureStorageAccount": azure.account}, "serviceAccountName": "celld", "podLabels": {"azure.workload.identity/use": "true"}}),
        ).expect("a valid CelldFleet"),
    )
    .await;

    // Neither a managed identity nor a workload identity token reaches the operator here.
    wait_no_operator_credentials(&env, "jobs", &bucket).await;

    // The nodes get the account name and no key: celld takes the pod's identity.
    let sts = statefulset(&env, "jobs").await;
    assert_eq!(
        storage_env(&sts),
        [
            format!("CELLD_BUCKET={bucket}"),
            format!("AZURE_STORAGE_ACCOUNT_NAME={}", azure.account),
        ]
    );
    assert_eq!(
        volumes_and_mounts(&sts),
        (
            vec!["tmp".to_string(), "work".to_string()],
            vec!["work:/var/lib/celld".to_string(), "tmp:/tmp".to_string()]
        )
    );
    let template = sts.spec.map(|s| s.template).expect("pod template");
    let label = template
        .metadata
        .and_then(|m| m.labels)
        .and_then(|l| l.get("azure.workload.identity/use").cloned());
    assert_eq!(
        label.as_deref(),
        Some("true"),
        "AKS gives the identity to pods with this label"
    );
    let pod = template.spec.expect("pod spec");
    assert_eq!(pod.service_account_name.as_deref(), Some("celld"));
    assert_eq!(
        metadata_egress(&env, "jobs").await.1,
        METADATA_BLOCKED.map(String::from).to_vec(),
        "AKS Workload Identity needs no metadata endpoint"
    );
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}

/// Waits until fleet `name` says the operator has no credentials for the pointer in `bucket`
/// (the fleet names no credentials Secret).
async fn wait_no_operator_credentials(
    env: &celld_testkit::TestEnv,
    name: &str,
    bucket: &str,
) -> celld_api::CelldFleet {
    let fleet = wait_condition(
        env,
        name,
        "Deployed",
        "Unknown",
        Some("NoOperatorCredentials"),
    )
    .await;
    let deployed = celld_api::conditions::find(
        &fleet.status.as_ref().expect("status").conditions,
        "Deployed",
    )
    .expect("Deployed")
    .clone();
    assert!(
        deployed.message.starts_with(&format!(
            "the operator has no credentials for {bucket}/deploy/current.json: the fleet names no credentials Secret"
        )),
        "{}",
        deployed.message
    );
    fleet
}

#[tokio::test]
async fn the_operators_own_identity_reads_no_bucket_for_an_unlisted_namespace() {
    // Started without --own-identity-namespaces.
    let (env, op) = env_with_operator("own-identity").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "own-identity");
    publish_pointer(&s3, &prefix, "00000000000000e5").await;
    let bucket = format!("s3://{}/{prefix}", s3.bucket);
    apply_fleet(
        &env,
        &crate::support::fleet(
            "tenant",
            json!({"objectStorage": {"bucket": bucket, "endpoint": s3.endpoint, "region": s3.region, "allowHTTP": true}, "serviceAccountName": "celld"}),
        )
        .expect("a valid CelldFleet"),
    )
    .await;
    let fleet = wait_no_operator_credentials(&env, "tenant", &bucket).await;
    let said = message(&fleet, "Deployed");
    assert!(
        said.contains(&format!(
            "the operator reads buckets with its own cloud identity only for the namespaces of its --own-identity-namespaces flag, which has not {}: set the fleet's spec.objectStorage.credentialsSecretRef",
            env.namespace()
        )),
        "{said}"
    );
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
