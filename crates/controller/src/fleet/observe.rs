//! The observe step: what a reconcile read and did, as the one [`Report`] the status writer
//! publishes. Every failure the reconcile met is gathered here, in the order met: the upgrade
//! decision's, spec.env's variables the nodes' celld refuses at startup, the bucket's, the
//! deployed version's manifest's, then the children's and the deploy Jobs' (or the storage's,
//! when it did not resolve). Pure.

use crate::buckets::pointer::Pointer;
use crate::children::Desired;
use crate::failure::Failure;
use crate::fleet::apply_plan::Applied;
use crate::fleet::inputs::Inputs;
use crate::fleet::status::observation::Route;
use crate::fleet::status::observation::{
    Acknowledged, AutoscaleObserved, Observation, ObservedStorage, Report, SourceObserved,
};
use crate::upgrade::decide::Progress;
use celld_api::contract::env;
use celld_api::contract::held::held_uses;
use celld_api::{CelldFleet, ResolveError, labels};
use k8s_openapi::api::apps::v1::StatefulSet;
use kube::ResourceExt;

/// The report of a full reconcile of `fleet`: its `inputs`, the `desired` fleet built from them
/// and what applying the plan did.
pub fn full(
    fleet: &CelldFleet,
    inputs: &Inputs,
    desired: &Desired<'_>,
    applied: Applied,
) -> Report {
    let mut failures = inputs.upgrade_failures.clone();
    failures.extend(env_refusals(fleet));
    match &inputs.pointer {
        Pointer::Unknown(why) => failures.push(Failure::bucket(why)),
        Pointer::NoCredentials(why) => failures.push(Failure::no_operator_credentials(why)),
        Pointer::Deployed(_) | Pointer::Missing => {}
    }
    failures.extend(inputs.manifest_failures.iter().cloned());
    failures.extend(applied.failures);
    let route = Route::of(fleet.spec.ingress.as_deref(), inputs.route_served);
    Report {
        observation: Observation {
            generation: fleet.metadata.generation,
            desired: inputs
                .autoscale
                .as_ref()
                .map_or(fleet.spec.replicas, |a| a.desired),
            storage: ObservedStorage::Resolved(inputs.storage.clone(), inputs.pointer.clone()),
            route,
            url: Some(desired.url()),
            failures,
            upgrade: desired.upgrade.progress.clone(),
            progress_deadline_s: fleet.spec.progress_deadline_seconds.into(),
            holders: inputs.holders.clone(),
            nodes: inputs.nodes.clone(),
            deployed_at: fleet.annotations().get(labels::DEPLOYED_AT).cloned(),
            source: inputs.source.as_ref().map(|(_, d)| {
                Box::new(SourceObserved {
                    status: d.status.clone(),
                    synced: d.synced.clone(),
                    drift_warning: d.drift_warning.clone(),
                })
            }),
            capacity: inputs.capacity.clone(),
            autoscale: inputs.autoscale.clone().map(|scaled| {
                Box::new(AutoscaleObserved {
                    scaled,
                    idle_evict: fleet.spec.env.iter().any(|e| e.name == env::IDLE_EVICT),
                })
            }),
            acknowledged: Acknowledged::of(&fleet.spec),
            held: (!held_uses(&fleet.spec.env).is_empty()).then(|| desired.upgrade.held.clone()),
            fences: inputs.fences.clone(),
        },
        statefulset: applied.statefulset,
        changed: applied.changed,
        pruned: applied.pruned,
    }
}

/// spec.env's variables that the celld of spec.image refuses at startup: admission refuses
/// them when the image's tag names the version, so these are the ones of an image whose
/// version is unknown (a digest alone, `latest`), or of a fleet admitted before the rule.
fn env_refusals(fleet: &CelldFleet) -> impl Iterator<Item = Failure> {
    env::refusals(&fleet.spec.image, &fleet.spec.env)
        .into_iter()
        .map(|r| Failure::env_refused(&r.name, &r.message))
}

/// The report of a reconcile of `fleet` that stopped because its storage does not resolve
/// (`error`): its children are left as they are, and its nodes, as `statefulset` shows them,
/// are still reported (an autoscaler reads status.replicas).
pub fn unresolved(
    fleet: &CelldFleet,
    error: &ResolveError,
    statefulset: Option<StatefulSet>,
) -> Report {
    let failure = Failure::storage(error);
    Report {
        observation: Observation {
            generation: fleet.metadata.generation,
            desired: fleet.spec.replicas,
            storage: ObservedStorage::Failed(failure.clone()),
            route: Route::None,
            url: fleet.status.as_ref().and_then(|s| s.url.clone()),
            failures: std::iter::once(failure)
                .chain(env_refusals(fleet))
                .collect(),
            upgrade: Progress::Idle,
            progress_deadline_s: fleet.spec.progress_deadline_seconds.into(),
            holders: Vec::new(),
            nodes: None,
            deployed_at: None,
            source: None,
            capacity: None,
            autoscale: None,
            acknowledged: Acknowledged::of(&fleet.spec),
            held: None,
            fences: Vec::new(),
        },
        statefulset,
        changed: Vec::new(),
        pruned: Vec::new(),
    }
}
