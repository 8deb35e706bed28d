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
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{Controller, watcher};
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

type Fleets = Store<DeserializeGuard<CelldFleet>>;
type Stores = Store<DeserializeGuard<CelldObjectStore>>;

/// The stores of namespace `ns` that parse.
fn stores_in(stores: &Stores, ns: &str) -> Vec<CelldObjectStore> {
    stores
        .state()
        .iter()
        .filter_map(|g| g.0.as_ref().ok())
        .filter(|s| s.namespace().as_deref() == Some(ns))
        .cloned()
        .collect()
}

/// Names of the stores of `ns` whose credentials are the Secret `secret`.
fn stores_with_secret(stores: &Stores, ns: &str, secret: &str) -> Vec<String> {
    stores_in(stores, ns)
        .iter()
        .filter(|s| s.spec.credentials_secret_ref.name == secret)
        .map(|s| s.name_any())
        .collect()
}

/// References to `names` in namespace `ns`.
fn refs<K>(names: Vec<String>, ns: &str) -> Vec<ObjectRef<K>>
where
    K: Resource,
    K::DynamicType: Default,
{
    names.iter().map(|n| ObjectRef::new(n).within(ns)).collect()
}

/// Fleets of `ns` that use the Secret `secret`, directly or through one of `stores`.
fn fleets_using_secret(fleets: &Fleets, ns: &str, secret: &str, stores: &[String]) -> Vec<String> {
    fleets
        .state()
        .iter()
        .filter_map(|g| g.0.as_ref().ok())
        .filter(|f| f.namespace().as_deref() == Some(ns))
        .filter(|f| {
            let inline = f.spec.object_storage.credentials_secret_ref.as_ref();
            let store = f.spec.store_ref.as_ref();
            inline.is_some_and(|r| r.name == secret)
                || store.is_some_and(|r| stores.contains(&r.name))
        })
        .map(|f| f.name_any())
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

    // Stores: their own controller writes their status; its cache also tells which stores
    // name a Secret.
    let store_controller = Controller::new(
        api::<DeserializeGuard<CelldObjectStore>>(&client, &settings),
        watcher::Config::default().any_semantic(),
    );
    let stores = store_controller.store();

    let by_store = fleets.clone();
    controller = controller.watches(
        api::<CelldObjectStore>(&client, &settings),
        watcher::Config::default(),
        move |store: CelldObjectStore| {
            let ns = store.namespace().unwrap_or_default();
            refs(
                store_status::fleets_using(&by_store, &ns, &store.name_any()),
                &ns,
            )
        },
    );
    // Secrets: metadata is enough to know which fleets to look at again; the reconcile reads
    // the Secret itself.
    let (by_secret, stores_by_secret) = (fleets.clone(), stores.clone());
    controller = controller.watches(
        api::<PartialObjectMeta<Secret>>(&client, &settings),
        watcher::Config::default(),
        move |secret| {
            let ns = secret.namespace().unwrap_or_default();
            let name = secret.name_any();
            let stores = stores_with_secret(&stores_by_secret, &ns, &name);
            refs(fleets_using_secret(&by_secret, &ns, &name, &stores), &ns)
        },
    );

    let (stores_by_secret, stores_by_fleet) = (stores.clone(), stores);
    let store_controller = store_controller
        .watches(
            api::<PartialObjectMeta<Secret>>(&client, &settings),
            watcher::Config::default(),
            move |secret| {
                let ns = secret.namespace().unwrap_or_default();
                refs(
                    stores_with_secret(&stores_by_secret, &ns, &secret.name_any()),
                    &ns,
                )
            },
        )
        .watches(
            api::<PartialObjectMeta<CelldFleet>>(&client, &settings),
            watcher::Config::default(),
            move |fleet| {
                // A fleet's storeRef may have moved from one store to another: look at every
                // store of its namespace (their status lists the fleets that use them).
                let ns = fleet.namespace().unwrap_or_default();
                let names = stores_in(&stores_by_fleet, &ns)
                    .iter()
                    .map(|s| s.name_any())
                    .collect();
                refs(names, &ns)
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
