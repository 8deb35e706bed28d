//! StatefulSet `<fleet>`: the celld nodes, following the runtime contract of the celld version
//! they run (its readiness gate decides the probes, its shutdown bound the grace period).

use super::{Desired, HEALTH_PATH, HTTP_PORT, INTERNAL_PORT, storage_env};
use celld_api::contract::durability::{DURABILITY, Durability};
use celld_api::contract::env::SHUTDOWN_TOTAL;
use celld_api::contract::node_api::node_address;
use celld_api::contract::releases::{Gate, Rules, SHUTDOWN_TOTAL_MS};
use celld_api::contract::version::image_version;
use celld_api::{LocalStorageType, PvcRetention, labels, pod_security};
use k8s_openapi::api::apps::v1::{
    RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetPersistentVolumeClaimRetentionPolicy,
    StatefulSetSpec, StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, EmptyDirVolumeSource, EnvVar, EnvVarSource, HTTPGetAction,
    ObjectFieldSelector, PersistentVolumeClaim, PersistentVolumeClaimSpec, PodSecurityContext,
    PodSpec, PodTemplateSpec, Probe, Volume, VolumeMount, VolumeResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use std::collections::BTreeMap;

/// Where the work volume is mounted (CELLD_WATCH).
pub const WORK_DIR: &str = "/var/lib/celld";
/// Time the kubelet grants beyond celld's own shutdown bound.
const GRACE_MARGIN_S: i64 = 20;
/// Seconds between two probes.
const PROBE_PERIOD_S: i32 = 5;
/// Time a startup probe allows beyond the longest a readiness gate that falls open holds.
const STARTUP_MARGIN_S: u64 = 60;

const WORK_VOLUME: &str = "work";
const TMP_VOLUME: &str = "tmp";

/// The StatefulSet of a fleet.
pub fn build(d: &Desired) -> StatefulSet {
    let spec = &d.fleet.spec;
    let persistent = spec.local_storage.type_ == LocalStorageType::Persistent;
    StatefulSet {
        metadata: d.meta(d.name.clone(), Some(upgrade_annotations(d))),
        spec: Some(StatefulSetSpec {
            replicas: Some(d.replicas),
            update_strategy: Some(StatefulSetUpdateStrategy {
                type_: Some("RollingUpdate".into()),
                rolling_update: Some(RollingUpdateStatefulSetStrategy {
                    partition: Some(d.upgrade.partition),
                    ..RollingUpdateStatefulSetStrategy::default()
                }),
            }),
            service_name: Some(d.peer_service_name()),
            pod_management_policy: Some("Parallel".into()),
            selector: LabelSelector {
                match_labels: Some(d.node_selector()),
                ..LabelSelector::default()
            },
            template: pod_template(d, persistent),
            volume_claim_templates: persistent.then(|| vec![claim_template(d)]),
            persistent_volume_claim_retention_policy: persistent.then(|| {
                StatefulSetPersistentVolumeClaimRetentionPolicy {
                    when_deleted: Some(
                        match spec.local_storage.when_deleted {
                            PvcRetention::Retain => "Retain",
                            PvcRetention::Delete => "Delete",
                        }
                        .into(),
                    ),
                    when_scaled: Some("Retain".into()),
                }
            }),
            ..StatefulSetSpec::default()
        }),
        status: None,
    }
}

/// Where a change of celld image stands, kept on the StatefulSet itself.
fn upgrade_annotations(d: &Desired) -> BTreeMap<String, String> {
    let mut annotations = BTreeMap::new();
    if let Some(from) = &d.upgrade.rolling_from {
        annotations.insert(labels::ROLLING_FROM.into(), from.clone());
    }
    if let Some(highest) = &d.upgrade.highest {
        annotations.insert(labels::HIGHEST_VERSION.into(), highest.to_string());
    }
    if let Some(at) = &d.upgrade.stopped_at {
        annotations.insert(labels::STOPPED_AT.into(), at.to_string());
    }
    annotations
}

fn pod_template(d: &Desired, persistent: bool) -> PodTemplateSpec {
    let spec = &d.fleet.spec;
    let mut pod_labels = spec.pod_labels.clone();
    pod_labels.extend(d.labels());
    pod_labels.extend(d.node_selector());
    pod_labels.insert("app.kubernetes.io/component".into(), "node".into());
    let mut annotations = spec.pod_annotations.clone();
    annotations.insert(labels::CONFIG_HASH.into(), d.config_hash.clone());

    let mut volumes = vec![Volume {
        name: TMP_VOLUME.into(),
        empty_dir: Some(EmptyDirVolumeSource {
            size_limit: Some(Quantity("1Gi".into())),
            ..EmptyDirVolumeSource::default()
        }),
        ..Volume::default()
    }];
    if !persistent {
        volumes.push(Volume {
            name: WORK_VOLUME.into(),
            empty_dir: Some(EmptyDirVolumeSource {
                size_limit: Some(Quantity(spec.local_storage.size.clone())),
                ..EmptyDirVolumeSource::default()
            }),
            ..Volume::default()
        });
    }

    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(pod_labels),
            annotations: Some(annotations),
            ..ObjectMeta::default()
        }),
        spec: Some(PodSpec {
            containers: vec![container(d)],
            volumes: Some(volumes),
            service_account_name: spec.service_account_name.clone(),
            automount_service_account_token: Some(false),
            enable_service_links: Some(false),
            termination_grace_period_seconds: Some(grace_period_seconds(&spec.env)),
            security_context: Some(PodSecurityContext {
                fs_group_change_policy: Some("OnRootMismatch".into()),
                ..pod_security::pod()
            }),
            node_selector: non_empty_map(&spec.node_selector),
            tolerations: non_empty(&spec.tolerations),
            affinity: spec.affinity.as_deref().cloned(),
            topology_spread_constraints: non_empty(&spec.topology_spread_constraints),
            image_pull_secrets: non_empty(&spec.image_pull_secrets),
            ..PodSpec::default()
        }),
    }
}

fn container(d: &Desired) -> Container {
    let spec = &d.fleet.spec;
    let health = |failure_threshold| Probe {
        http_get: Some(HTTPGetAction {
            path: Some(HEALTH_PATH.into()),
            port: IntOrString::String("http".into()),
            ..HTTPGetAction::default()
        }),
        period_seconds: Some(PROBE_PERIOD_S),
        timeout_seconds: Some(2),
        failure_threshold: Some(failure_threshold),
        ..Probe::default()
    };
    Container {
        name: "celld".into(),
        image: Some(d.upgrade.image.clone()),
        image_pull_policy: spec.image_pull_policy.map(|p| p.as_str().into()),
        ports: Some(vec![
            port("http", HTTP_PORT),
            port("internal", INTERNAL_PORT),
        ]),
        env: Some(env(d)),
        resources: spec.resources.as_deref().cloned(),
        readiness_probe: Some(health(3)),
        startup_probe: startup_failures(&d.upgrade.image).map(health),
        volume_mounts: Some(vec![
            VolumeMount {
                name: WORK_VOLUME.into(),
                mount_path: WORK_DIR.into(),
                ..VolumeMount::default()
            },
            VolumeMount {
                name: TMP_VOLUME.into(),
                mount_path: "/tmp".into(),
                ..VolumeMount::default()
            },
        ]),
        security_context: Some(pod_security::container()),
        ..Container::default()
    }
}

fn port(name: &str, port: i32) -> ContainerPort {
    ContainerPort {
        name: Some(name.into()),
        container_port: port,
        protocol: Some("TCP".into()),
        ..ContainerPort::default()
    }
}

fn value(name: &str, value: impl Into<String>) -> EnvVar {
    EnvVar {
        name: name.into(),
        value: Some(value.into()),
        ..EnvVar::default()
    }
}

fn field(name: &str, path: &str) -> EnvVar {
    EnvVar {
        name: name.into(),
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: path.into(),
                ..ObjectFieldSelector::default()
            }),
            ..EnvVarSource::default()
        }),
        ..EnvVar::default()
    }
}

/// The celld environment: POD_NAME and POD_NAMESPACE first so later values can expand them.
fn env(d: &Desired) -> Vec<EnvVar> {
    let mut env = vec![
        field("POD_NAME", "metadata.name"),
        field("POD_NAMESPACE", "metadata.namespace"),
    ];
    env.extend(storage_env::location(&d.storage));
    env.extend([
        value("CELLD_ADDR", format!("0.0.0.0:{HTTP_PORT}")),
        value("CELLD_INTERNAL_ADDR", format!("0.0.0.0:{INTERNAL_PORT}")),
        value(
            "CELLD_ADVERTISE",
            node_address("$(POD_NAME)", &d.peer_service_name(), "$(POD_NAMESPACE)"),
        ),
        value("CELLD_NODE", "$(POD_NAME)"),
        value("CELLD_WATCH", WORK_DIR),
        value("TMPDIR", "/tmp"),
    ]);
    // celld's default is fleet: set when asked for, or when the work storage's default differs
    // (a Persistent fleet that never asked keeps the template it always had).
    let durability = d.fleet.spec.effective_durability();
    if d.fleet.spec.durability.is_some() || durability != Durability::Fleet {
        env.push(value(DURABILITY, durability.as_str()));
    }
    env.extend(storage_env::credentials(&d.storage));
    // A setting held until every node runs the release that allows it stays out for now.
    let held = |name: &str| d.upgrade.held.iter().any(|h| h.name == name);
    env.extend(d.fleet.spec.env.iter().filter(|e| !held(&e.name)).cloned());
    env
}

/// The startup probe's failure threshold, when the image's celld version has one: a readiness
/// gate that falls open (0.4.x: at most 120 s) is waited for, plus a margin, before the kubelet
/// restarts a node that never became ready. From 0.5.0 the gate stays closed until the fleet
/// settles, which may take longer than any fixed bound: a startup probe would restart nodes
/// that correctly wait, so there is none, and the operator's progress deadline reports a
/// rollout that does not finish instead. An image whose version is unknown is treated alike.
fn startup_failures(image: &str) -> Option<i32> {
    let gate = image_version(image).map(|v| Rules::of(&v).gate)?;
    match gate {
        Gate::FallsOpen { after_s } => {
            let seconds = after_s + STARTUP_MARGIN_S;
            i32::try_from(seconds.div_ceil(PROBE_PERIOD_S.unsigned_abs().into())).ok()
        }
        Gate::HeldUntilSettled => None,
    }
}

/// terminationGracePeriodSeconds: above celld's shutdown bound (the contract's default), which
/// a literal CELLD_SHUTDOWN_TOTAL_MS in spec.env may raise.
fn grace_period_seconds(user_env: &[EnvVar]) -> i64 {
    let total_ms = user_env
        .iter()
        .find(|e| e.name == SHUTDOWN_TOTAL)
        .and_then(|e| e.value.as_deref())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .unwrap_or(SHUTDOWN_TOTAL_MS);
    i64::try_from(total_ms.div_ceil(1000)).map_or(i64::MAX, |s| s.saturating_add(GRACE_MARGIN_S))
}

fn claim_template(d: &Desired) -> PersistentVolumeClaim {
    let local = &d.fleet.spec.local_storage;
    PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some(WORK_VOLUME.into()),
            labels: Some(d.labels()),
            ..ObjectMeta::default()
        },
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(vec!["ReadWriteOnce".into()]),
            storage_class_name: local.storage_class_name.clone(),
            resources: Some(VolumeResourceRequirements {
                requests: Some(BTreeMap::from([(
                    "storage".to_string(),
                    Quantity(local.size.clone()),
                )])),
                ..VolumeResourceRequirements::default()
            }),
            ..PersistentVolumeClaimSpec::default()
        }),
        status: None,
    }
}

fn non_empty<T: Clone>(items: &[T]) -> Option<Vec<T>> {
    (!items.is_empty()).then(|| items.to_vec())
}

fn non_empty_map(map: &BTreeMap<String, String>) -> Option<BTreeMap<String, String>> {
    (!map.is_empty()).then(|| map.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::children::fixtures;

    #[test]
    fn full_fleet() {
        let fleet = fixtures::fleet(fixtures::FULL);
        insta::assert_yaml_snapshot!(build(&fixtures::desired(&fleet)));
    }

    #[test]
    fn minimal_fleet() {
        let fleet = fixtures::fleet(fixtures::MINIMAL);
        insta::assert_yaml_snapshot!(build(&fixtures::desired(&fleet)));
    }

    #[test]
    fn a_held_setting_stays_out_of_the_template_and_the_others_go_in() {
        let mut fleet = fixtures::fleet(fixtures::MINIMAL);
        for name in ["CELLD_LTX_RETENTION_SECS", "RUST_LOG"] {
            fleet.spec.env.push(EnvVar {
                name: name.into(),
                value: Some("60".into()),
                ..EnvVar::default()
            });
        }
        let mut d = fixtures::desired(&fleet);
        let names = |d: &Desired| -> Vec<String> {
            build(d).spec.unwrap().template.spec.unwrap().containers[0]
                .env
                .clone()
                .unwrap()
                .into_iter()
                .map(|e| e.name)
                .collect()
        };
        assert!(names(&d).contains(&"CELLD_LTX_RETENTION_SECS".to_string()));
        d.upgrade.held = vec![crate::upgrade::held::HeldBack {
            name: "CELLD_LTX_RETENTION_SECS".into(),
            why: String::new(),
            on_its_way: true,
        }];
        let held = names(&d);
        assert!(
            !held.contains(&"CELLD_LTX_RETENTION_SECS".to_string()),
            "{held:?}"
        );
        assert!(held.contains(&"RUST_LOG".to_string()), "{held:?}");
    }

    #[test]
    fn probes_fit_the_readiness_gate_of_each_version() {
        let image = |tag: &str| format!("ghcr.io/denoland/celld:{tag}");
        // 0.4.x: the gate falls open after 120 s; the startup probe waits 180 s.
        for tag in ["v0.4.0", "v0.4.1", "0.4.1@sha256:ce8bbc3c26a1"] {
            assert_eq!(startup_failures(&image(tag)), Some(36), "{tag}");
        }
        // From 0.5.0 the gate never opens by timeout: no startup probe restarts a waiting node.
        for tag in ["v0.5.0", "v0.5.1", "v0.6.0", "v0.6.1", "v0.9.0", "latest"] {
            assert_eq!(startup_failures(&image(tag)), None, "{tag}");
        }
        assert_eq!(
            startup_failures("ghcr.io/denoland/celld@sha256:e188a7f2"),
            None
        );

        let mut fleet = fixtures::fleet(fixtures::MINIMAL);
        for (tag, startup) in [("v0.4.1", true), ("v0.6.1", false)] {
            fleet.spec.image = image(tag);
            let desired = fixtures::desired(&fleet);
            let sts = build(&desired);
            let pod = sts.spec.unwrap().template.spec.unwrap();
            let container = &pod.containers[0];
            assert_eq!(container.startup_probe.is_some(), startup, "{tag}");
            let readiness = container.readiness_probe.as_ref().unwrap();
            let path = readiness.http_get.as_ref().unwrap().path.as_deref();
            assert_eq!(
                path,
                Some(HEALTH_PATH),
                "{tag}: readiness stays on the health path"
            );
            assert!(
                container.liveness_probe.is_none(),
                "{tag}: no liveness probe kills a draining or gated node"
            );
        }
    }

    /// celld #244/#245: a node restarted under a new `CELLD_NODE` at its old address never
    /// finishes its recovery. Whatever the fleet and its celld version, each node is its pod's
    /// name, at the stable address its peer Service gives that name, and spec.env cannot say
    /// otherwise (admission refuses both names there).
    #[test]
    fn a_node_is_its_pod_name_at_its_peer_address_on_every_fleet_and_version() {
        use celld_api::contract::node_api::node_address;
        for fixture in [fixtures::FULL, fixtures::MINIMAL, fixtures::GATEWAY] {
            for tag in ["v0.4.0", "v0.4.1", "v0.5.1", "0.6.0", "v0.6.2", "latest"] {
                let mut fleet = fixtures::fleet(fixture);
                fleet.spec.image = format!("ghcr.io/denoland/celld:{tag}");
                let d = fixtures::desired(&fleet);
                let spec = build(&d).spec.expect("spec");
                assert_eq!(
                    spec.service_name.as_deref(),
                    Some(d.peer_service_name().as_str())
                );
                let pod = spec.template.spec.expect("pod spec");
                let env = pod.containers[0].env.clone().unwrap_or_default();
                let at = |name: &str| {
                    let found: Vec<usize> = env
                        .iter()
                        .enumerate()
                        .filter(|(_, e)| e.name == name)
                        .map(|(i, _)| i)
                        .collect();
                    assert_eq!(found.len(), 1, "{tag}: {name} once: {env:?}");
                    (found[0], &env[found[0]])
                };
                let (pod_name, pod_var) = at("POD_NAME");
                let field = pod_var
                    .value_from
                    .as_ref()
                    .and_then(|v| v.field_ref.as_ref());
                assert_eq!(field.map(|f| f.field_path.as_str()), Some("metadata.name"));
                let (node, node_var) = at("CELLD_NODE");
                assert_eq!(node_var.value.as_deref(), Some("$(POD_NAME)"), "{tag}");
                let (advertise, advertised) = at("CELLD_ADVERTISE");
                assert_eq!(
                    advertised.value,
                    Some(node_address(
                        "$(POD_NAME)",
                        &d.peer_service_name(),
                        "$(POD_NAMESPACE)"
                    )),
                    "{tag}"
                );
                assert!(pod_name < node && pod_name < advertise, "{tag}: {env:?}");
            }
        }
        for name in ["CELLD_NODE", "CELLD_ADVERTISE", "POD_NAME"] {
            assert!(celld_api::labels::RESERVED_ENV.contains(&name), "{name}");
        }
    }

    #[test]
    fn grace_period_exceeds_the_shutdown_bound() {
        assert_eq!(grace_period_seconds(&[]), 60);
        let env = [value("CELLD_SHUTDOWN_TOTAL_MS", "90500")];
        assert_eq!(grace_period_seconds(&env), 111);
    }
}
