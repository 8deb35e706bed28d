//! Wires the reconcile into a kube-runtime Controller: fleets, the children they own, and the
//! stores and Secrets that fleets use.

use crate::context::{Context, Settings};
use crate::metrics::Metrics;
use crate::reconcile::{error_policy, reconcile};
use crate::store_status;
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

fn store_names_in(
    stores: &kube::runtime::reflector::Store<CelldObjectStore>,
    ns: &str,
) -> Vec<String> {
    stores
        .state()
        .iter()
        .filter(|s| s.namespace().as_deref() == Some(ns))
        .map(|s| s.name_any())
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
    let store_cache_for_status = store_cache.clone();
    let store_cache_for_fleets = store_cache.clone();
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

    let stores_api: Api<DeserializeGuard<CelldObjectStore>> = api(&client, &settings);
    let secrets_for_stores: Api<PartialObjectMeta<Secret>> = api(&client, &settings);
    let fleets_for_stores: Api<PartialObjectMeta<CelldFleet>> = api(&client, &settings);
    let store_controller = Controller::new(stores_api, watcher::Config::default().any_semantic())
        .watches(secrets_for_stores, watcher::Config::default(), {
            let stores = store_cache_for_status.clone();
            move |secret| {
                let ns = secret.namespace().unwrap_or_default();
                let name = secret.name_any();
                stores
                    .state()
                    .iter()
                    .filter(|s| {
                        s.namespace().as_deref() == Some(ns.as_str())
                            && s.spec.credentials_secret_ref.name == name
                    })
                    .map(|s| ObjectRef::new(&s.name_any()).within(&ns))
                    .collect::<Vec<_>>()
            }
        })
        .watches(
            fleets_for_stores,
            watcher::Config::default(),
            move |fleet| {
                // A fleet's storeRef may have moved from one store to another: look at every store
                // of its namespace (their status lists the fleets that use them).
                let ns = fleet.namespace().unwrap_or_default();
                store_names_in(&store_cache_for_fleets, &ns)
                    .into_iter()
                    .map(|n| ObjectRef::new(&n).within(&ns))
                    .collect::<Vec<_>>()
            },
        );

    let ctx = Arc::new(Context::new(client, metrics, settings, gateway_api, fleets));
    let shutdown = futures::FutureExt::shared(Box::pin(shutdown));
    let fleet_loop = controller
        .graceful_shutdown_on(shutdown.clone())
        .run(reconcile, error_policy, ctx.clone())
        .for_each(|result| async move {
            match result {
                Ok((obj, _)) => debug!(fleet = %obj, "reconciled"),
                Err(e) => debug!(error = %e, "reconcile did not complete"),
            }
        });
    let store_loop = store_controller
        .graceful_shutdown_on(shutdown)
        .run(store_status::reconcile, store_status::error_policy, ctx)
        .for_each(|result| async move {
            if let Err(e) = result {
                debug!(error = %e, "store status did not complete");
            }
        });
    futures::future::join(fleet_loop, store_loop).await;
    info!("controller stopped");
}
