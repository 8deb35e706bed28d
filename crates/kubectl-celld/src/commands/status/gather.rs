//! Gathering what `status FLEET` shows from the API: the fleet and its status, the storage as
//! the operator resolves it, the StatefulSet, the node pods and recent Events. A part that
//! cannot be read is reported as a warning, so a broken fleet still gets a full report.

use super::report::{
    ConditionReport, EventReport, FleetReport, PodReport, RolloutReport, StorageReport,
};
use crate::cluster::fleet_context;
use crate::cluster::kubeconfig::Target;
use crate::error::Error;
use celld_api::reasons::Reason;
use celld_api::{CelldFleet, CelldObjectStore, ResolvedStorage, StorageStatus};
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{Event, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::Api;
use kube::api::ListParams;

/// Builds the report of `fleet`.
pub async fn gather(target: &Target, fleet: &CelldFleet, max_events: usize) -> FleetReport {
    let ns = target.namespace.as_str();
    let name = fleet.metadata.name.clone().unwrap_or_default();
    let mut warnings = Vec::new();
    let status = fleet.status.as_ref();

    let storage = storage(target, fleet, &mut warnings).await;
    let rollout = rollout(target, fleet, &mut warnings).await;
    let pod_list = pods(target, &name, &mut warnings).await;
    let pods: Vec<PodReport> = pod_list.iter().map(pod_report).collect();
    let pod_names: Vec<String> = pods.iter().map(|p| p.name.clone()).collect();
    let events = events(target, &name, &pod_names, max_events, &mut warnings).await;

    let conditions: Vec<ConditionReport> = status
        .map(|s| {
            s.conditions
                .iter()
                .map(|c| ConditionReport {
                    type_: c.type_.clone(),
                    status: c.status.clone(),
                    reason: c.reason.clone(),
                    message: c.message.clone(),
                    last_transition_time: Some(c.last_transition_time.clone()),
                })
                .collect()
        })
        .unwrap_or_default();

    FleetReport {
        namespace: ns.to_string(),
        created: fleet.metadata.creation_timestamp.clone(),
        url: status.and_then(|s| s.url.clone()),
        image: fleet.spec.image.clone(),
        replicas: fleet.spec.replicas,
        status_reported: status.is_some(),
        worker: status.and_then(|s| s.deployment.clone()),
        storage,
        rollout,
        pods,
        nodes: status.map(|s| s.nodes.clone()).unwrap_or_default(),
        source: super::source::report(fleet, &conditions),
        capacity: status.and_then(|s| s.capacity.clone()),
        autoscaling: super::capacity::report(fleet, &conditions),
        conditions,
        events,
        warnings,
        name,
    }
}

async fn storage(target: &Target, fleet: &CelldFleet, warnings: &mut Vec<String>) -> StorageReport {
    match fleet_context::resolve_storage(target, fleet).await {
        Ok(r) => {
            let secret_exists = match &r.credentials_secret {
                Some(secret) => fleet_context::secret_exists(target, secret)
                    .await
                    .unwrap_or_else(|e| {
                        warnings.push(e.to_string());
                        None
                    }),
                None => None,
            };
            StorageReport {
                secret_exists,
                ..resolved(&r, fleet)
            }
        }
        Err(e) => StorageReport {
            store: fleet.spec.store_ref.as_ref().map(|s| s.name.clone()),
            bucket: fleet.spec.object_storage.bucket.clone(),
            error: Some(e.to_string()),
            ..StorageReport::default()
        },
    }
}

/// The report of storage that resolved, from what the operator writes to the fleet's
/// `status.storage` (the region for S3 only, the storage account for Azure only) plus the
/// fleet's ServiceAccount; the Secret not checked.
fn resolved(r: &ResolvedStorage, fleet: &CelldFleet) -> StorageReport {
    let StorageStatus {
        store,
        bucket,
        endpoint,
        region,
        azure_storage_account,
        credentials_secret,
    } = r.to_status();
    StorageReport {
        store,
        bucket,
        endpoint,
        region,
        azure_storage_account,
        service_account: fleet.spec.service_account_name.clone(),
        credentials_secret,
        secret_exists: None,
        error: None,
    }
}

/// Resolves a fleet's storage against an already-listed set of stores (for the table).
pub fn resolve_with(fleet: &CelldFleet, stores: &[CelldObjectStore]) -> StorageReport {
    let ns = fleet.metadata.namespace.clone().unwrap_or_default();
    let store = fleet.spec.store_ref.as_ref().and_then(|r| {
        stores.iter().find(|s| {
            s.metadata.name.as_deref() == Some(r.name.as_str())
                && s.metadata.namespace.as_deref() == Some(ns.as_str())
        })
    });
    match celld_api::resolve::resolve(&fleet.spec, &ns, store) {
        Ok(r) => resolved(&r, fleet),
        Err(e) => StorageReport {
            store: fleet.spec.store_ref.as_ref().map(|s| s.name.clone()),
            bucket: fleet.spec.object_storage.bucket.clone(),
            error: Some(e.reason().to_string()),
            ..StorageReport::default()
        },
    }
}

async fn rollout(target: &Target, fleet: &CelldFleet, warnings: &mut Vec<String>) -> RolloutReport {
    let ns = target.namespace.as_str();
    let name = fleet.metadata.name.clone().unwrap_or_default();
    let spec_observed = fleet
        .status
        .as_ref()
        .and_then(|s| s.observed_generation)
        .is_some_and(|g| Some(g) >= fleet.metadata.generation);
    let mut report = RolloutReport {
        stateful_set: name.clone(),
        spec_observed,
        upgrade: upgrade(fleet),
        ..RolloutReport::default()
    };
    let api: Api<StatefulSet> = Api::namespaced(target.client.clone(), ns);
    match api.get_opt(&name).await {
        Ok(Some(sts)) => {
            let status = sts.status.unwrap_or_default();
            report.found = true;
            report.replicas = sts.spec.and_then(|s| s.replicas).unwrap_or(1);
            report.ready_replicas = status.ready_replicas.unwrap_or(0);
            report.updated_replicas = status.updated_replicas.unwrap_or(0);
            report.current_revision = status.current_revision;
            report.update_revision = status.update_revision;
        }
        Ok(None) => {}
        Err(e) => warnings.push(Error::api("get", "statefulsets.apps", Some(ns), e).to_string()),
    }
    report
}

/// Progressing reasons of a change of celld image (the operator's `upgrade` module).
const UPGRADE_REASONS: [&str; 4] = [
    Reason::RollingUpgrade.as_str(),
    Reason::WaitingForRestores.as_str(),
    Reason::WaitingForSettings.as_str(),
    Reason::FullStop.as_str(),
];

/// The change of celld image under way, from the fleet's Progressing condition.
pub fn upgrade(fleet: &CelldFleet) -> Option<String> {
    let status = fleet.status.as_ref()?;
    celld_api::conditions::find(&status.conditions, celld_api::conditions::PROGRESSING)
        .filter(|c| c.status == "True" && UPGRADE_REASONS.contains(&c.reason.as_str()))
        .map(|c| format!("{}: {}", c.reason, c.message))
}

/// The fleet's node pods, in ordinal order; none (and a warning) when they cannot be listed.
async fn pods(target: &Target, fleet: &str, warnings: &mut Vec<String>) -> Vec<Pod> {
    let selector = fleet_context::node_selector(fleet);
    fleet_context::node_pods(&target.client, Some(&target.namespace), &selector)
        .await
        .unwrap_or_else(|e| {
            warnings.push(e.to_string());
            Vec::new()
        })
}

/// A pod as `status` shows it (kubectl's STATUS column logic, simplified).
pub fn pod_report(pod: &Pod) -> PodReport {
    let status = pod.status.clone().unwrap_or_default();
    let containers = status.container_statuses.clone().unwrap_or_default();
    let total = pod
        .spec
        .as_ref()
        .map(|s| s.containers.len())
        .unwrap_or(containers.len());
    let ready = containers.iter().filter(|c| c.ready).count();
    let restarts = containers.iter().map(|c| c.restart_count).sum();
    let waiting = containers.iter().find_map(|c| {
        c.state
            .as_ref()
            .and_then(|s| s.waiting.as_ref())
            .and_then(|w| w.reason.clone())
    });
    let phase = if pod.metadata.deletion_timestamp.is_some() {
        "Terminating".to_string()
    } else {
        waiting.unwrap_or_else(|| status.phase.clone().unwrap_or_else(|| "Pending".into()))
    };
    PodReport {
        name: pod.metadata.name.clone().unwrap_or_default(),
        phase,
        ready: format!("{ready}/{total}"),
        restarts,
        created: pod.metadata.creation_timestamp.clone(),
        ip: status.pod_ip.filter(|ip| !ip.is_empty()),
        node: pod.spec.as_ref().and_then(|s| s.node_name.clone()),
        image: pod
            .spec
            .as_ref()
            .and_then(|s| s.containers.iter().find(|c| c.name == "celld"))
            .and_then(|c| c.image.clone()),
    }
}

/// Whether an Event is about this fleet: the fleet, its StatefulSet, its pods (current ones,
/// or `<fleet>-N` ones that are gone) or its deploy Jobs and their pods.
pub fn concerns(event: &Event, fleet: &str, pods: &[String]) -> bool {
    let o = &event.involved_object;
    let name = o.name.as_deref().unwrap_or_default();
    let kind = o.kind.as_deref().unwrap_or_default();
    let deploy_prefix = crate::pod::job::generate_name(fleet);
    match kind {
        "CelldFleet" | "StatefulSet" => name == fleet,
        "Pod" => {
            pods.iter().any(|p| p == name)
                || name.strip_prefix(&format!("{fleet}-")).is_some_and(|rest| {
                    !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit())
                })
                || name.starts_with(&deploy_prefix)
        }
        "Job" => name.starts_with(&deploy_prefix),
        "PersistentVolumeClaim" => name.rsplit_once('-').is_some_and(|(head, ordinal)| {
            head.ends_with(&format!("-{fleet}")) && ordinal.chars().all(|c| c.is_ascii_digit())
        }),
        _ => false,
    }
}

/// When an Event last happened, whichever API wrote it.
pub fn last_seen(e: &Event) -> Option<Timestamp> {
    e.series
        .as_ref()
        .and_then(|s| s.last_observed_time.as_ref().map(|t| t.0))
        .or_else(|| e.last_timestamp.as_ref().map(|t| t.0))
        .or_else(|| e.event_time.as_ref().map(|t| t.0))
        .or_else(|| e.metadata.creation_timestamp.as_ref().map(|t| t.0))
}

async fn events(
    target: &Target,
    fleet: &str,
    pods: &[String],
    max: usize,
    warnings: &mut Vec<String>,
) -> Vec<EventReport> {
    let ns = target.namespace.as_str();
    let api: Api<Event> = Api::namespaced(target.client.clone(), ns);
    let list = match api.list(&ListParams::default()).await {
        Ok(l) => l.items,
        Err(e) => {
            warnings.push(Error::api("list", "events", Some(ns), e).to_string());
            return Vec::new();
        }
    };
    select_events(list, fleet, pods, max)
}

/// The `max` most recent Events about the fleet, oldest first.
pub fn select_events(
    list: Vec<Event>,
    fleet: &str,
    pods: &[String],
    max: usize,
) -> Vec<EventReport> {
    let mut mine: Vec<Event> = list
        .into_iter()
        .filter(|e| concerns(e, fleet, pods))
        .collect();
    mine.sort_by_key(last_seen);
    let skip = mine.len().saturating_sub(max);
    mine.into_iter()
        .skip(skip)
        .map(|e| EventReport {
            type_: e.type_.clone().unwrap_or_else(|| "Normal".into()),
            reason: e.reason.clone().unwrap_or_default(),
            object: format!(
                "{}/{}",
                e.involved_object.kind.as_deref().unwrap_or_default(),
                e.involved_object.name.as_deref().unwrap_or_default()
            ),
            message: e.message.clone().unwrap_or_default().trim().to_string(),
            count: e
                .series
                .as_ref()
                .map(|s| s.count.unwrap_or(1))
                .or(e.count)
                .unwrap_or(1),
            last_seen: last_seen(&e).map(Time),
        })
        .collect()
}
