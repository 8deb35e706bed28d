//! The deploy Job that publishes one revision of a fleet's spec.source: one restricted pod
//! that fetches the source (a Flux artifact, checked against its digest, or an image mounted as
//! a volume or run as the deployer), runs `celld deploy` to the fleet's bucket prefix and
//! leaves its result in the container's termination message. The fleet's credentials reach it
//! as `secretKeyRef` only; its API token is not mounted. Pure: no API calls.

use crate::children::Desired;
use crate::source::job_state::CONTAINER;
use crate::source::wanted::Artifact;
use celld_api::contract::{deployer, publish};
use celld_api::{ImageLayout, WorkerSource, labels, pod_security, storage_env};
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Container, EmptyDirVolumeSource, EnvVar, ImageVolumeSource, PodSpec, PodTemplateSpec,
    ResourceRequirements, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

/// Label holding the publish key of a deploy Job: a running Job of another key is superseded.
pub const KEY_LABEL: &str = "platform.celld.dev/publish-key";
/// Seconds a finished deploy Job stays if the operator does not delete it first (it keeps the
/// last one of a fleet for `kubectl logs`).
pub const TTL_AFTER_FINISHED: i32 = 86_400;
/// The deploy container's working directory, an emptyDir.
const WORK: &str = publish::DEFAULT_WORK;
/// Where an image with layout Volume is mounted.
pub const VOLUME_SOURCE: &str = "/src";
/// Where an image with layout Deployer holds the project.
pub const DEPLOYER_SOURCE: &str = "/app";

/// What one deploy Job publishes.
pub struct Publish<'a> {
    /// spec.source.
    pub source: &'a WorkerSource,
    /// The Job's name.
    pub name: &'a str,
    /// The publish key.
    pub key: &'a str,
    /// The Flux artifact to download, for a sourceRef.
    pub artifact: Option<&'a Artifact>,
}

/// The deployer image of a fleet's deploy Jobs: spec.source.deployerImage, or this release's
/// deployer built on the fleet's celld release.
pub fn deployer(d: &Desired<'_>, source: &WorkerSource) -> String {
    source
        .deployer_image
        .clone()
        .unwrap_or_else(|| deployer::deployer_for(&d.fleet.spec.image))
}

/// The image the deploy container runs and the directory holding the project.
fn image_and_dir(d: &Desired<'_>, p: &Publish<'_>) -> (String, String) {
    let path = p.source.path.trim_start_matches("./").trim_end_matches('/');
    let under = |root: &str| {
        if path.is_empty() || path == "." {
            root.to_string()
        } else {
            format!("{root}/{path}")
        }
    };
    match &p.source.image {
        Some(image) if image.layout == ImageLayout::Deployer => {
            (image.reference.clone(), under(DEPLOYER_SOURCE))
        }
        Some(_) => (deployer(d, p.source), under(VOLUME_SOURCE)),
        None => (deployer(d, p.source), under(&publish::source_dir(WORK))),
    }
}

fn plain(name: &str, value: &str) -> EnvVar {
    EnvVar {
        name: name.to_string(),
        value: Some(value.to_string()),
        ..EnvVar::default()
    }
}

fn empty_dir(name: &str) -> Volume {
    Volume {
        name: name.to_string(),
        empty_dir: Some(EmptyDirVolumeSource::default()),
        ..Volume::default()
    }
}

fn mount(name: &str, path: &str, read_only: bool) -> VolumeMount {
    VolumeMount {
        name: name.to_string(),
        mount_path: path.to_string(),
        read_only: read_only.then_some(true),
        ..VolumeMount::default()
    }
}

/// Builds the deploy Job `p.name` of the fleet `d`.
pub fn build(d: &Desired<'_>, p: &Publish<'_>) -> Job {
    let (image, dir) = image_and_dir(d, p);
    let mut env = vec![plain("HOME", WORK), plain("TMPDIR", "/tmp")];
    if let Some(artifact) = p.artifact {
        env.push(plain(publish::ARTIFACT_URL_ENV, &artifact.url));
        env.push(plain(publish::ARTIFACT_DIGEST_ENV, &artifact.digest));
    }
    env.extend(storage_env::env(&d.storage));
    env.extend(deployer::shared_env(&d.fleet.spec.env));
    let mut volumes = vec![empty_dir("work"), empty_dir("tmp")];
    let mut mounts = vec![mount("work", WORK, false), mount("tmp", "/tmp", false)];
    if let Some(source) = p
        .source
        .image
        .as_ref()
        .filter(|i| i.layout == ImageLayout::Volume)
    {
        volumes.push(Volume {
            name: "source".into(),
            image: Some(ImageVolumeSource {
                reference: Some(source.reference.clone()),
                pull_policy: d
                    .fleet
                    .spec
                    .image_pull_policy
                    .map(|p| p.as_str().to_string()),
            }),
            ..Volume::default()
        });
        mounts.push(mount("source", VOLUME_SOURCE, true));
    }
    let container = Container {
        name: CONTAINER.to_string(),
        image: Some(image),
        command: Some(publish::command(storage_env::deploy_command(
            &dir, &d.storage, false,
        ))),
        working_dir: Some(WORK.to_string()),
        env: Some(env),
        volume_mounts: Some(mounts),
        resources: Some(ResourceRequirements {
            requests: Some(BTreeMap::from([
                ("cpu".to_string(), Quantity("100m".into())),
                ("memory".to_string(), Quantity("256Mi".into())),
            ])),
            ..ResourceRequirements::default()
        }),
        security_context: Some(pod_security::container()),
        termination_message_policy: Some("File".into()),
        ..Container::default()
    };
    let mut job_labels = d.labels();
    job_labels.insert(labels::ROLE.to_string(), labels::ROLE_DEPLOY.to_string());
    job_labels.insert(KEY_LABEL.to_string(), p.key.to_string());
    // The fleet's podLabels first: the operator's own win (admission keeps them apart).
    let mut pod_labels = d.fleet.spec.pod_labels.clone();
    pod_labels.extend(job_labels.clone());
    let pull_secrets = &d.fleet.spec.image_pull_secrets;
    let deadline = p
        .source
        .timeout()
        .map_or(600, |t| i64::try_from(t.as_secs()).unwrap_or(86_400));
    Job {
        metadata: ObjectMeta {
            labels: Some(job_labels),
            ..d.meta(p.name.to_string(), None)
        },
        spec: Some(JobSpec {
            backoff_limit: Some(0),
            active_deadline_seconds: Some(deadline),
            ttl_seconds_after_finished: Some(TTL_AFTER_FINISHED),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(pod_labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container],
                    restart_policy: Some("Never".into()),
                    service_account_name: d.fleet.spec.service_account_name.clone(),
                    automount_service_account_token: Some(false),
                    enable_service_links: Some(false),
                    termination_grace_period_seconds: Some(30),
                    image_pull_secrets: (!pull_secrets.is_empty()).then(|| pull_secrets.clone()),
                    security_context: Some(pod_security::pod()),
                    node_selector: (!d.fleet.spec.node_selector.is_empty())
                        .then(|| d.fleet.spec.node_selector.clone()),
                    tolerations: (!d.fleet.spec.tolerations.is_empty())
                        .then(|| d.fleet.spec.tolerations.clone()),
                    volumes: Some(volumes),
                    ..PodSpec::default()
                }),
            },
            ..JobSpec::default()
        }),
        status: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::children::fixtures;
    use celld_api::{FluxSourceKind, FluxSourceRef};

    const REF: &str = "ghcr.io/acme/web-worker:1.4.2@sha256:ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12";

    fn job(source: &WorkerSource, artifact: Option<&Artifact>) -> Job {
        let fleet = fixtures::fleet(fixtures::MINIMAL);
        let d = fixtures::desired(&fleet);
        build(
            &d,
            &Publish {
                source,
                name: "web-src-0123456789-1",
                key: "00112233aabbccdd",
                artifact,
            },
        )
    }

    /// The Job without the script (snapshotted once, in the api crate's tests).
    fn yaml(mut job: Job) -> String {
        if let Some(c) = job
            .spec
            .as_mut()
            .and_then(|s| s.template.spec.as_mut())
            .and_then(|p| p.containers.first_mut())
            .and_then(|c| c.command.as_mut())
        {
            c[2] = "<publish script>".into();
        }
        serde_yaml::to_string(&job).unwrap()
    }

    #[test]
    fn an_image_source_is_mounted_as_a_volume() {
        let mut source = WorkerSource::from_image(REF);
        source.path = "workers/web".into();
        insta::assert_snapshot!(yaml(job(&source, None)));
    }

    #[test]
    fn a_deployer_image_runs_itself_with_the_project_at_app() {
        let mut source = WorkerSource::from_image("registry.example.com/web-src:1.2.0");
        if let Some(image) = source.image.as_mut() {
            image.layout = ImageLayout::Deployer;
        }
        let job = job(&source, None);
        let pod = job.spec.unwrap().template.spec.unwrap();
        let c = &pod.containers[0];
        assert_eq!(
            c.image.as_deref(),
            Some("registry.example.com/web-src:1.2.0")
        );
        let command = c.command.clone().unwrap();
        assert_eq!(command[4..7], ["celld", "deploy", "/app"]);
        assert!(pod.volumes.unwrap().iter().all(|v| v.image.is_none()));
    }

    #[test]
    fn a_flux_artifact_is_downloaded_and_checked() {
        let source = WorkerSource {
            image: None,
            source_ref: Some(FluxSourceRef {
                kind: FluxSourceKind::Bucket,
                name: "web".into(),
            }),
            ..WorkerSource::from_image("unused")
        };
        let artifact = Artifact {
            url: "http://source-controller.flux-system.svc/bucket/apps/web/a.tar.gz".into(),
            digest: "sha256:ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12"
                .into(),
        };
        let job = job(&source, Some(&artifact));
        let c = job.spec.unwrap().template.spec.unwrap().containers[0].clone();
        let env: BTreeMap<_, _> = c
            .env
            .unwrap()
            .into_iter()
            .filter_map(|e| Some((e.name, e.value?)))
            .collect();
        assert_eq!(env[publish::ARTIFACT_URL_ENV], artifact.url);
        assert_eq!(env[publish::ARTIFACT_DIGEST_ENV], artifact.digest);
        assert_eq!(c.command.unwrap()[6], "/work/src");
    }

    #[test]
    fn credentials_come_only_from_secret_key_refs() {
        let job = job(&WorkerSource::from_image(REF), None);
        let pod = job.spec.unwrap().template.spec.unwrap();
        assert_eq!(pod.automount_service_account_token, Some(false));
        for e in pod.containers[0].env.clone().unwrap() {
            if e.name.starts_with("AWS_SECRET") || e.name.starts_with("AWS_ACCESS") {
                assert!(e.value.is_none() && e.value_from.is_some(), "{e:?}");
            }
        }
    }

    #[test]
    fn the_asset_limit_of_the_nodes_goes_to_celld_deploy() {
        let mut fleet = fixtures::fleet(fixtures::MINIMAL);
        for (name, value) in [
            ("RUST_LOG", "debug"),
            ("CELLD_MAX_ASSET_FILE_BYTES", "52428800"),
        ] {
            fleet.spec.env.push(EnvVar {
                name: name.into(),
                value: Some(value.into()),
                ..EnvVar::default()
            });
        }
        let d = fixtures::desired(&fleet);
        let source = WorkerSource::from_image(REF);
        let job = build(
            &d,
            &Publish {
                source: &source,
                name: "web-src-0123456789-1",
                key: "00112233aabbccdd",
                artifact: None,
            },
        );
        let env = job.spec.unwrap().template.spec.unwrap().containers[0]
            .env
            .clone()
            .unwrap();
        let value = |name: &str| {
            env.iter()
                .find(|e| e.name == name)
                .and_then(|e| e.value.clone())
        };
        assert_eq!(
            value("CELLD_MAX_ASSET_FILE_BYTES").as_deref(),
            Some("52428800")
        );
        assert_eq!(value("RUST_LOG"), None, "only what the deployer shares");
    }
}
