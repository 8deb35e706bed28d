//! Wires the reconcile into a kube-runtime Controller: fleets, the children they own, and the
//! stores and Secrets that fleets use.

use crate::context::{Context, Settings};
use crate::metrics::Metrics;
use crate::reconcile::{error_policy, reconcile};
use celld_api::{CelldFleet, CelldObjectStore};
use futures::StreamExt;
use gateway_api::httproutes::HttpRoute;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{Secret, Service};
use k8s_openapi::api::networking::v1::{Ingress, NetworkPolicy};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::core::{DeserializeGuard, PartialObjectMeta};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::reflector::{self, reflector};
use kube::runtime::{Controller, WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use std::future::Future;
use std::sync::Arc;
use tracing::{debug, info};

fn api<K>(client: &Client, settings: &Settings) -> Api<K>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope>,
    K::DynamicType: Default,
{
    match &settings.namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

/// Fleets whose storage goes through `store` (same namespace, storeRef.name).
fn fleets_using_store(
    fleets: &kube::runtime::reflector::Store<DeserializeGuard<CelldFleet>>,
    ns: &str,
    store: &str,
) -> Vec<ObjectRef<DeserializeGuard<CelldFleet>>> {
    fleets
        .state()
        .iter()
        .filter_map(|g| g.0.as_ref().ok())
        .filter(|f| f.namespace().as_deref() == Some(ns))
        .filter(|f| f.spec.store_ref.as_ref().is_some_and(|r| r.name == store))
        .map(|f| ObjectRef::new(&f.name_any()).within(ns))
        .collect()
}

/// Runs the controller until `shutdown` resolves. Returns once every running reconcile ended.
pub async fn run(
    client: Client,
    settings: Settings,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let selector = format!("app.kubernetes.io/managed-by={}", crate::children::MANAGER);
    let owned = || watcher::Config::default().labels(&selector);
    let fleets_api: Api<DeserializeGuard<CelldFleet>> = api(&client, &settings);
    let gateway_api = crate::discovery::http_route_served(&client).await;
    info!(gateway_api, namespace = ?settings.namespace, "starting the CelldFleet controller");

    let mut controller = Controller::new(fleets_api, watcher::Config::default().any_semantic())
        .owns(api::<StatefulSet>(&client, &settings), owned())
        .owns(api::<Service>(&client, &settings), owned())
        .owns(api::<NetworkPolicy>(&client, &settings), owned())
        .owns(api::<PodDisruptionBudget>(&client, &settings), owned())
        .owns(api::<Ingress>(&client, &settings), owned());
    if gateway_api {
        controller = controller.owns(api::<HttpRoute>(&client, &settings), owned());
    }
    let fleets = controller.store();

    let by_store = fleets.clone();
    controller = controller.watches(
        api::<CelldObjectStore>(&client, &settings),
        watcher::Config::default(),
        move |store: CelldObjectStore| {
            let ns = store.namespace().unwrap_or_default();
            fleets_using_store(&by_store, &ns, &store.name_any())
        },
    );

    // Secrets: metadata is enough to know which fleets to look at again; the reconcile reads
    // the Secret itself. Fleets use a Secret directly or through their store, so a reflector
    // of stores answers which stores name a Secret.
    let (store_cache, store_writer) = reflector::store::<CelldObjectStore>();
    let store_stream = reflector(
        store_writer,
        watcher(
            api::<CelldObjectStore>(&client, &settings),
            watcher::Config::default(),
        ),
    )
    .default_backoff();
    tokio::spawn(store_stream.for_each(|_| futures::future::ready(())));
    let by_secret = fleets.clone();
    let secrets: Api<PartialObjectMeta<Secret>> = api(&client, &settings);
    controller = controller.watches(secrets, watcher::Config::default(), move |secret| {
        let ns = secret.namespace().unwrap_or_default();
        let name = secret.name_any();
        let stores: Vec<String> = store_cache
            .state()
            .iter()
            .filter(|s| s.namespace().as_deref() == Some(ns.as_str()))
            .filter(|s| s.spec.credentials_secret_ref.name == name)
            .map(|s| s.name_any())
            .collect();
        by_secret
            .state()
            .iter()
            .filter_map(|g| g.0.as_ref().ok())
            .filter(|f| f.namespace().as_deref() == Some(ns.as_str()))
            .filter(|f| {
                let inline = f.spec.object_storage.credentials_secret_ref.as_ref();
                let store = f.spec.store_ref.as_ref();
                inline.is_some_and(|r| r.name == name)
                    || store.is_some_and(|r| stores.contains(&r.name))
            })
            .map(|f| ObjectRef::new(&f.name_any()).within(&ns))
            .collect::<Vec<_>>()
    });

    let ctx = Arc::new(Context::new(client, metrics, settings, gateway_api, fleets));
    controller
        .graceful_shutdown_on(shutdown)
        .run(reconcile, error_policy, ctx)
        .for_each(|result| async move {
            match result {
                Ok((obj, _)) => debug!(fleet = %obj, "reconciled"),
                Err(e) => debug!(error = %e, "reconcile did not complete"),
            }
        })
        .await;
    info!("controller stopped");
}
