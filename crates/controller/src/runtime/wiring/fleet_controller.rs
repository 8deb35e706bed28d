//! The CelldFleet controller: fleets and every child kind they own, looked at again when a
//! store, Secret, deploy Job, deploy pod or Flux source they use changes.

use super::rollout_controller::HandedOver;
use super::watched::{Fleets, OptionalApis, Rollouts, Stores, Triggers, refs, stores_with_secret};
use crate::cache::caches::ChildCaches;
use crate::cache::compact::Compact;
use crate::cache::source_caches::{SourceCaches, deploy_selector, is_deploy_pod, pod_selector};
use crate::cache::streams::{Items, WatchStreams};
use crate::cache::worth::hashed;
use crate::shared::settings::Settings;
use crate::source::job_state::{job_worth, pod_worth};
use crate::store::status as store_status;
use celld_api::{CelldFleet, CelldObjectStore, CelldRollout, FluxSourceKind};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;
use kube::api::{ApiResource, DynamicObject};
use kube::core::DeserializeGuard;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{Controller, controller};

/// Names of the fleets of `ns` that parse and that `wanted` keeps.
fn fleet_names(fleets: &Fleets, ns: &str, wanted: impl Fn(&CelldFleet) -> bool) -> Vec<String> {
    fleets
        .state()
        .iter()
        .filter_map(|g| g.0.as_ref().ok())
        .filter(|f| f.namespace().as_deref() == Some(ns) && wanted(f))
        .map(|f| f.name_any())
        .collect()
}

/// Fleets of `ns` that use the Secret `secret`, directly or through one of `stores`.
fn fleets_using_secret(fleets: &Fleets, ns: &str, secret: &str, stores: &[String]) -> Vec<String> {
    fleet_names(fleets, ns, |f| {
        let inline = f.spec.object_storage.credentials_secret_ref.as_ref();
        let store = f.spec.store_ref.as_ref();
        inline.is_some_and(|r| r.name == secret) || store.is_some_and(|r| stores.contains(&r.name))
    })
}

/// The CelldFleet controller and what is read beside it.
pub(super) struct FleetParts {
    /// The controller.
    pub controller: Controller<DeserializeGuard<CelldFleet>>,
    /// The caches of the children.
    pub children: ChildCaches,
    /// The caches of spec.source and rollouts.
    pub source: SourceCaches,
    /// The StatefulSet changes the status follower reads.
    pub statefulsets_to_follow: Items<Compact<StatefulSet>>,
    /// Every fleet's node pods as listed or applied, for their exits.
    pub node_pods: Items<Pod>,
}

/// The CelldFleet controller: fleets and every child kind they own (HTTPRoutes only where the
/// cluster serves them), looked at again when a store or Secret they use changes, with the
/// children's caches, the StatefulSet changes the status follower reads and the node pods.
pub(super) fn fleet_controller(
    streams: &WatchStreams,
    settings: &Settings,
    optional: &OptionalApis,
    fleets: &Fleets,
    stores: &Stores,
    triggers: Triggers,
    rollouts: Option<(Rollouts, Items<DeserializeGuard<CelldRollout>>)>,
) -> FleetParts {
    let gateway_api = optional.gateway_api;
    let selector = format!("app.kubernetes.io/managed-by={}", crate::children::MANAGER);
    let owned = || streams.config().labels(&selector);
    let (statefulsets, statefulset_changes, statefulsets_to_follow) =
        streams.cached_shared("StatefulSet", owned());
    let (services, service_changes) = streams.cached_touched("Service", owned());
    let (network_policies, network_policy_changes) =
        streams.cached_touched("NetworkPolicy", owned());
    let (pod_disruption_budgets, pdb_changes) =
        streams.cached_owned("PodDisruptionBudget", owned());
    let (ingresses, ingress_changes) = streams.cached_owned("Ingress", owned());
    let mut controller = Controller::for_stream(triggers.fleets, fleets.clone())
        .with_config(
            controller::Config::default()
                .concurrency(settings.concurrency)
                .debounce(settings.debounce),
        )
        .owns_stream(statefulset_changes)
        .owns_stream(service_changes)
        .owns_stream(network_policy_changes)
        .owns_stream(pdb_changes)
        .owns_stream(ingress_changes);
    let http_routes = if gateway_api {
        let (routes, route_changes) = streams.cached_owned("HTTPRoute", owned());
        controller = controller.owns_stream(route_changes);
        Some(routes)
    } else {
        None
    };
    let by_store = fleets.clone();
    controller = controller.watches_stream(
        triggers.stores,
        move |store: DeserializeGuard<CelldObjectStore>| {
            let ns = store.namespace().unwrap_or_default();
            refs(
                store_status::fleets_using(&by_store, &ns, &store.name_any()),
                &ns,
            )
        },
    );
    let (by_secret, stores_by_secret) = (fleets.clone(), stores.clone());
    controller = controller.watches_stream(triggers.secrets, move |secret| {
        let ns = secret.namespace().unwrap_or_default();
        let name = secret.name_any();
        let stores = stores_with_secret(&stores_by_secret, &ns, &name);
        refs(fleets_using_secret(&by_secret, &ns, &name, &stores), &ns)
    });
    let (mut controller, mut source, node_pods) =
        watch_sources(streams, controller, fleets, &optional.flux);
    if let Some((rollouts, changes)) = rollouts {
        // A fleet a rollout starts or stops shipping to gets its source from it.
        let handed = HandedOver::new(fleets.clone(), rollouts.clone());
        controller = controller.watches_stream(changes, move |rollout| handed.fleets(&rollout));
        source.rollouts = Some(rollouts);
    }
    let children = ChildCaches {
        statefulsets,
        services,
        network_policies,
        pod_disruption_budgets,
        ingresses,
        http_routes,
    };
    FleetParts {
        controller,
        children,
        source,
        statefulsets_to_follow,
        node_pods,
    }
}

/// The fleets of `ns` whose spec.source names the Flux source `kind`/`name`.
fn fleets_sourced_from(fleets: &Fleets, ns: &str, kind: FluxSourceKind, name: &str) -> Vec<String> {
    fleet_names(fleets, ns, |f| {
        f.spec
            .source
            .as_ref()
            .and_then(|s| s.source_ref.as_ref())
            .is_some_and(|r| r.kind == kind && r.name == name)
    })
}

/// The deploy Jobs of spec.source (owned by their fleet), their pods (mapped to their fleet by
/// label) and the Flux sources of every kind in `flux` (mapped to the fleets naming them); the
/// node pods, read in the deploy pods' watch, are returned for their exits.
fn watch_sources(
    streams: &WatchStreams,
    mut controller: Controller<DeserializeGuard<CelldFleet>>,
    fleets: &Fleets,
    flux: &[(FluxSourceKind, ApiResource)],
) -> (
    Controller<DeserializeGuard<CelldFleet>>,
    SourceCaches,
    Items<Pod>,
) {
    let selector = deploy_selector();
    // Of a deploy Job and its pod, only what the reconcile reads wakes the fleet: their
    // progress through the control plane would otherwise cost it a dozen reconciles.
    let (jobs, job_changes) =
        streams.cached_owned_if::<Job>("Job", streams.config().labels(&selector), |job| {
            hashed(job_worth(job))
        });
    let pod_selector = pod_selector();
    let (pods, pod_changes, node_pods) = streams.cached_split::<Pod>(
        "Pod",
        streams.config().labels(&pod_selector),
        is_deploy_pod,
        |pod| hashed(pod_worth(pod)),
    );
    controller = controller
        .owns_stream(job_changes)
        .watches_stream(pod_changes, |pod: Pod| {
            let ns = pod.namespace().unwrap_or_default();
            pod.labels()
                .get(celld_api::labels::FLEET)
                .map(|fleet| ObjectRef::new(fleet).within(&ns))
        });
    let mut caches = Vec::new();
    for (kind, resource) in flux {
        let (store, changes) = streams.cached_dynamic(kind.as_str(), resource, streams.config());
        let (kind, by_source) = (*kind, fleets.clone());
        controller = controller.watches_stream_with(
            changes,
            move |source: DynamicObject| {
                let ns = source.namespace().unwrap_or_default();
                refs(
                    fleets_sourced_from(&by_source, &ns, kind, &source.name_any()),
                    &ns,
                )
            },
            resource.clone(),
        );
        caches.push((kind, resource.clone(), store));
    }
    (
        controller,
        SourceCaches {
            jobs,
            pods,
            flux: caches,
            rollouts: None,
        },
        node_pods,
    )
}
