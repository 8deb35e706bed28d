//! The deploy Job: one restricted pod in the fleet's namespace that stays up (for a bounded
//! time) while the plugin drives it over `pods/exec`. Its labels are the ones the operator's
//! NetworkPolicy lets reach the nodes' internal port.

use celld_api::contract::deployer;
use celld_api::{CelldFleet, ResolvedStorage};
use celld_api::{labels, pod_security, storage_env};
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Container, EmptyDirVolumeSource, EnvVar, PodSpec, PodTemplateSpec, ResourceRequirements,
    Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::Resource;
use std::collections::BTreeMap;
use std::time::Duration;

pub use celld_api::contract::deployer::{DEFAULT_DEPLOYER_IMAGE, deployer_for};
/// Name of the deploy container.
pub const CONTAINER: &str = "deploy";
/// The container's working directory, an emptyDir; every exec path is relative to it.
pub const WORK_DIR: &str = "/work";
/// Where an upload is extracted, relative to [`WORK_DIR`].
pub const UPLOAD_DIR: &str = "src";
/// Where an `--image` deployer holds the Worker source.
pub const IMAGE_SOURCE_DIR: &str = "/app";
/// Seconds a finished Job stays before Kubernetes deletes it, should the plugin not.
pub const TTL_AFTER_FINISHED: i32 = 300;
/// Value of `app.kubernetes.io/managed-by` on deploy Jobs and pods.
pub const MANAGED_BY: &str = "kubectl-celld";

/// What the Job is built from.
pub struct Input<'a> {
    /// The fleet deployed to.
    pub fleet: &'a CelldFleet,
    /// Its resolved storage: the pod gets the nodes' bucket environment from it.
    pub storage: &'a ResolvedStorage,
    /// The image the pod runs: the deployer, or the `--image` with the source at /app.
    pub image: &'a str,
    /// How long the pod may live at most.
    pub lifetime: Duration,
    /// Whether the Job is kept after the deploy (no TTL then).
    pub keep: bool,
}

/// Labels of the Job and its pod.
pub fn pod_labels(fleet: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (labels::FLEET.to_string(), fleet.to_string()),
        (labels::ROLE.to_string(), labels::ROLE_DEPLOY.to_string()),
        (
            "app.kubernetes.io/managed-by".to_string(),
            MANAGED_BY.to_string(),
        ),
    ])
}

/// The deploy pod's labels: the fleet's `podLabels`, then [`pod_labels`] (which admission keeps
/// users from setting).
fn template_labels(fleet: &CelldFleet, own: BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut labels = fleet.spec.pod_labels.clone();
    labels.extend(own);
    labels
}

/// `generateName` of the Job: the fleet's name cut so that the Job's name (plus the 5 random
/// characters) still fits in a 63-character label value.
pub fn generate_name(fleet: &str) -> String {
    const SUFFIX: &str = "-deploy-";
    let keep = 63 - 5 - SUFFIX.len();
    let base: String = fleet.chars().take(keep).collect();
    format!("{}{SUFFIX}", base.trim_end_matches('-'))
}

/// The keep-alive command: a bounded sleep loop that ends at once on SIGTERM.
pub fn keepalive(lifetime: Duration) -> Vec<String> {
    let secs = lifetime.as_secs().max(60);
    vec![
        "sh".into(),
        "-c".into(),
        format!(
            "trap 'exit 0' TERM INT; i=0; while [ \"$i\" -lt {secs} ]; do sleep 1; i=$((i+1)); done"
        ),
    ]
}

fn plain_env(name: &str, value: &str) -> EnvVar {
    EnvVar {
        name: name.to_string(),
        value: Some(value.to_string()),
        ..EnvVar::default()
    }
}

fn owner(fleet: &CelldFleet) -> Option<OwnerReference> {
    Some(OwnerReference {
        api_version: CelldFleet::api_version(&()).to_string(),
        kind: CelldFleet::kind(&()).to_string(),
        name: fleet.metadata.name.clone()?,
        uid: fleet.metadata.uid.clone()?,
        ..OwnerReference::default()
    })
}

/// The container's environment: its home and temporary directory, then exactly the bucket
/// environment the fleet's nodes get (no key at all under workload identity), and the
/// variables of the fleet's spec.env that `celld deploy` must read as the nodes do
/// (CELLD_MAX_ASSET_FILE_BYTES).
pub fn env(fleet: &CelldFleet, storage: &ResolvedStorage) -> Vec<EnvVar> {
    let mut env = vec![plain_env("HOME", WORK_DIR), plain_env("TMPDIR", WORK_DIR)];
    env.extend(storage_env::env(storage));
    env.extend(deployer::shared_env(&fleet.spec.env));
    env
}

/// Builds the Job: it runs under the fleet's ServiceAccount, which carries the cloud identity
/// when the fleet names no credentials Secret, and its pod carries the fleet's `podLabels` too
/// (AKS workload identity acts on pods labelled `azure.workload.identity/use`). Pure: no API
/// calls.
pub fn build(input: &Input<'_>) -> Job {
    let fleet_name = input.fleet.metadata.name.clone().unwrap_or_default();
    let labels = pod_labels(&fleet_name);
    let container = Container {
        name: CONTAINER.to_string(),
        image: Some(input.image.to_string()),
        command: Some(keepalive(input.lifetime)),
        working_dir: Some(WORK_DIR.to_string()),
        env: Some(env(input.fleet, input.storage)),
        volume_mounts: Some(vec![VolumeMount {
            name: "work".into(),
            mount_path: WORK_DIR.into(),
            ..VolumeMount::default()
        }]),
        resources: Some(ResourceRequirements {
            requests: Some(BTreeMap::from([
                ("cpu".to_string(), Quantity("100m".into())),
                ("memory".to_string(), Quantity("256Mi".into())),
            ])),
            ..ResourceRequirements::default()
        }),
        security_context: Some(pod_security::container()),
        ..Container::default()
    };
    let pull_secrets = &input.fleet.spec.image_pull_secrets;
    let pod = PodSpec {
        containers: vec![container],
        restart_policy: Some("Never".into()),
        service_account_name: input.fleet.spec.service_account_name.clone(),
        automount_service_account_token: Some(false),
        enable_service_links: Some(false),
        termination_grace_period_seconds: Some(5),
        image_pull_secrets: (!pull_secrets.is_empty()).then(|| pull_secrets.clone()),
        security_context: Some(pod_security::pod()),
        volumes: Some(vec![Volume {
            name: "work".into(),
            empty_dir: Some(EmptyDirVolumeSource::default()),
            ..Volume::default()
        }]),
        ..PodSpec::default()
    };
    let lifetime = i64::try_from(input.lifetime.as_secs()).unwrap_or(i64::MAX / 2);
    Job {
        metadata: ObjectMeta {
            generate_name: Some(generate_name(&fleet_name)),
            namespace: input.fleet.metadata.namespace.clone(),
            labels: Some(labels.clone()),
            owner_references: owner(input.fleet).map(|o| vec![o]),
            ..ObjectMeta::default()
        },
        spec: Some(JobSpec {
            backoff_limit: Some(0),
            active_deadline_seconds: Some(lifetime.max(60) + 60),
            ttl_seconds_after_finished: (!input.keep).then_some(TTL_AFTER_FINISHED),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(template_labels(input.fleet, labels)),
                    ..ObjectMeta::default()
                }),
                spec: Some(pod),
            },
            ..JobSpec::default()
        }),
        status: None,
    }
}

#[cfg(test)]
mod deployer_tests {
    use super::*;

    #[test]
    fn a_fleet_is_deployed_with_its_own_celld() {
        assert_eq!(
            deployer_for("ghcr.io/denoland/celld:v0.5.1"),
            format!("{DEFAULT_DEPLOYER_IMAGE}-celld-v0.5.1")
        );
        assert_eq!(
            deployer_for("registry.example.com/celld@sha256:0123"),
            DEFAULT_DEPLOYER_IMAGE
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::{BucketUrl, CelldFleetSpec};
    use k8s_openapi::api::core::v1::LocalObjectReference;

    fn fleet() -> CelldFleet {
        let mut spec = CelldFleetSpec::with_bucket("s3://celld/web");
        spec.image_pull_secrets = vec![LocalObjectReference {
            name: "regcred".into(),
        }];
        let mut f = CelldFleet::new("web", spec);
        f.metadata.namespace = Some("apps".into());
        f.metadata.uid = Some("0b8f6d1e-0000-4000-8000-000000000001".into());
        f
    }

    fn storage() -> ResolvedStorage {
        ResolvedStorage {
            store: Some("minio".into()),
            bucket: BucketUrl::parse("s3://celld/web").unwrap(),
            endpoint: Some("http://minio.storage.svc:9000".into()),
            region: "us-east-1".into(),
            allow_http: true,
            azure_storage_account: None,
            credentials_secret: Some("s3-creds".into()),
        }
    }

    #[test]
    fn job_yaml() {
        let (f, s) = (fleet(), storage());
        let job = build(&Input {
            fleet: &f,
            storage: &s,
            image: DEFAULT_DEPLOYER_IMAGE,
            lifetime: Duration::from_secs(1800),
            keep: false,
        });
        insta::assert_yaml_snapshot!(job, {
            ".spec.template.spec.containers[0].image" => "[deployer image]"
        });
    }

    #[test]
    fn the_asset_limit_of_the_nodes_goes_to_celld_deploy() {
        let mut f = fleet();
        for (name, value) in [
            ("RUST_LOG", "debug"),
            ("CELLD_MAX_ASSET_FILE_BYTES", "52428800"),
        ] {
            f.spec.env.push(EnvVar {
                name: name.into(),
                value: Some(value.into()),
                ..EnvVar::default()
            });
        }
        let env = env(&f, &storage());
        let names: Vec<&str> = env.iter().map(|e| e.name.as_str()).collect();
        assert!(names.contains(&"CELLD_MAX_ASSET_FILE_BYTES"), "{names:?}");
        assert!(
            !names.contains(&"RUST_LOG"),
            "only what the deployer shares"
        );
    }

    /// The Job's ServiceAccount and its container's environment, for the stores' snapshots.
    fn identity_and_env(bucket: &str, secret: Option<&str>, account: Option<&str>) -> String {
        let mut f = fleet();
        f.spec.service_account_name = secret.is_none().then(|| "celld-identity".to_string());
        if account.is_some() && secret.is_none() {
            f.spec.pod_labels =
                BTreeMap::from([("azure.workload.identity/use".into(), "true".into())]);
        }
        let s = ResolvedStorage {
            store: None,
            bucket: BucketUrl::parse(bucket).unwrap(),
            endpoint: None,
            region: "us-east-1".into(),
            allow_http: false,
            azure_storage_account: account.map(Into::into),
            credentials_secret: secret.map(Into::into),
        };
        let job = build(&Input {
            fleet: &f,
            storage: &s,
            image: "img",
            lifetime: Duration::from_secs(600),
            keep: false,
        });
        let template = job.spec.unwrap().template;
        let pod = template.spec.unwrap();
        serde_yaml::to_string(&serde_json::json!({
            "labels": template.metadata.unwrap().labels,
            "serviceAccountName": pod.service_account_name,
            "automountServiceAccountToken": pod.automount_service_account_token,
            "env": pod.containers[0].env,
        }))
        .unwrap()
    }

    #[test]
    fn s3_workload_identity_runs_under_the_fleet_s_service_account_without_keys() {
        insta::assert_snapshot!(identity_and_env("s3://celld/web", None, None));
    }

    #[test]
    fn gcs_with_a_key_gets_the_nodes_env() {
        insta::assert_snapshot!(identity_and_env("gs://celld/web", Some("gcs-key"), None));
    }

    #[test]
    fn gcs_workload_identity() {
        insta::assert_snapshot!(identity_and_env("gs://celld/web", None, None));
    }

    #[test]
    fn azure_with_an_account_key_gets_the_nodes_env() {
        insta::assert_snapshot!(identity_and_env(
            "az://workers/web",
            Some("azure-key"),
            Some("companycelld")
        ));
    }

    #[test]
    fn azure_workload_identity() {
        insta::assert_snapshot!(identity_and_env(
            "az://workers/web",
            None,
            Some("companycelld")
        ));
    }

    #[test]
    fn keep_job_has_no_ttl() {
        let (f, s) = (fleet(), storage());
        let job = build(&Input {
            fleet: &f,
            storage: &s,
            image: "img",
            lifetime: Duration::from_secs(600),
            keep: true,
        });
        let spec = job.spec.unwrap();
        assert_eq!(spec.ttl_seconds_after_finished, None);
        assert_eq!(spec.active_deadline_seconds, Some(660));
    }

    #[test]
    fn names_fit_label_values() {
        let long = "a".repeat(52);
        assert_eq!(generate_name(&long).len() + 5, 63);
        assert_eq!(generate_name("web"), "web-deploy-");
        let dashy = format!("{}-b", "a".repeat(49));
        assert_eq!(generate_name(&dashy), format!("{}-deploy-", "a".repeat(49)));
    }

    #[test]
    fn default_image_follows_the_release() {
        assert!(DEFAULT_DEPLOYER_IMAGE.ends_with(&format!("v{}", env!("CARGO_PKG_VERSION"))));
    }
}
