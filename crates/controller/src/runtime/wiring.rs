//! Wires the reconcile into kube-runtime Controllers: fleets, the children they own, and the
//! stores and Secrets that fleets use. Every watch comes from [`WatchStreams`] (its own client,
//! timeout and backoff, its life reported to [`WatchHealth`]); the reconciles write through a
//! client that checks the [`Fence`].

use crate::cache::caches::{Caches, ChildCaches};
use crate::cache::compact::Compact;
use crate::cache::health::WatchHealth;
use crate::cache::source_caches::{SourceCaches, deploy_selector, flux_kinds};
use crate::cache::streams::{Items, WatchStreams};
use crate::fleet::context::{Context, HOUSEKEEPING_EVERY, Settings};
use crate::fleet::reconcile::{error_policy, reconcile};
use crate::leadership::fence::Fence;
use crate::leadership::fenced_client::fenced;
use crate::metrics::Metrics;
use crate::preview;
use crate::store::status as store_status;
use celld_api::{CelldFleet, CelldObjectStore, CelldPreview, FluxSourceKind};
use futures::StreamExt;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{ApiResource, DynamicObject};
use kube::core::{DeserializeGuard, PartialObjectMeta};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{Controller, controller};
use kube::{Client, Resource, ResourceExt};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tracing::{debug, info, warn};

/// How long reconciles under way get to finish once a shutdown is asked for. kube-runtime holds
/// a controller's reconciles until its cache has listed once, and waits for them on shutdown:
/// a cache that never lists (its CRD not installed, the list refused) would otherwise keep the
/// operator from ever stopping. Well under Kubernetes' default 30 s termination grace.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

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
        .filter(|s| {
            s.spec
                .credentials_secret_ref
                .as_ref()
                .is_some_and(|r| r.name == secret)
        })
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

/// Runs [`Context::housekeeping`] every [`HOUSEKEEPING_EVERY`] until `shutdown` resolves.
async fn housekeeping(ctx: Arc<Context>, shutdown: impl Future<Output = ()>) {
    let mut every = tokio::time::interval(HOUSEKEEPING_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let ticks = async {
        loop {
            every.tick().await;
            ctx.housekeeping();
        }
    };
    tokio::select! {
        () = ticks => {}
        () = shutdown => {}
    }
}

/// The fleets, stores and Secrets, each watched once: one cache each, and the changes each
/// controller looks at.
struct Shared {
    fleets: Fleets,
    stores: Stores,
    secrets: Store<PartialObjectMeta<Secret>>,
    for_fleets: Triggers,
    for_stores: Triggers,
    /// The fleet changes the preview controller looks at.
    for_previews: Items<DeserializeGuard<CelldFleet>>,
}

/// The changes of fleets, stores and Secrets one controller looks at.
struct Triggers {
    fleets: Items<DeserializeGuard<CelldFleet>>,
    stores: Items<DeserializeGuard<CelldObjectStore>>,
    secrets: Items<PartialObjectMeta<Secret>>,
}

impl Shared {
    fn watch(streams: &WatchStreams) -> Self {
        let config = streams.config();
        let (fleets, [fleet_changes, fleets_for_stores, fleets_for_previews]) =
            streams.cached_fanned::<DeserializeGuard<CelldFleet>, 3>(
                "CelldFleet",
                config.clone().any_semantic(),
            );
        let (stores, stores_for_fleets, store_changes) = streams
            .cached_shared::<DeserializeGuard<CelldObjectStore>>(
                "CelldObjectStore",
                config.clone().any_semantic(),
            );
        // The Secrets' metadata tells which fleets and stores to look at again and whether a
        // Secret changed since its contents were last read.
        let (secrets, secrets_for_fleets, secrets_for_stores) =
            streams.cached_shared::<PartialObjectMeta<Secret>>("Secret", config);
        Self {
            fleets,
            stores,
            secrets,
            for_fleets: Triggers {
                fleets: fleet_changes,
                stores: stores_for_fleets,
                secrets: secrets_for_fleets,
            },
            for_stores: Triggers {
                fleets: fleets_for_stores,
                stores: store_changes,
                secrets: secrets_for_stores,
            },
            for_previews: fleets_for_previews,
        }
    }
}

/// The CelldFleet controller: fleets and every child kind they own (HTTPRoutes only where the
/// cluster serves them), looked at again when a store or Secret they use changes. Returns it
/// with the children's caches and the StatefulSet changes the status follower reads.
fn fleet_controller(
    streams: &WatchStreams,
    settings: &Settings,
    optional: &OptionalApis,
    fleets: &Fleets,
    stores: &Stores,
    triggers: Triggers,
) -> (
    Controller<DeserializeGuard<CelldFleet>>,
    ChildCaches,
    SourceCaches,
    Items<Compact<StatefulSet>>,
) {
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
    let (controller, source) = watch_sources(streams, controller, fleets, &optional.flux);
    let children = ChildCaches {
        statefulsets,
        services,
        network_policies,
        pod_disruption_budgets,
        ingresses,
        http_routes,
    };
    (controller, children, source, statefulsets_to_follow)
}

/// The APIs the cluster may or may not serve, as discovered at start.
struct OptionalApis {
    /// Whether it serves HTTPRoute.
    gateway_api: bool,
    /// The Flux source kinds it serves.
    flux: Vec<(FluxSourceKind, ApiResource)>,
    /// Whether it serves CelldPreview (a CRD installed with this release).
    previews: bool,
}

/// The fleets of `ns` whose spec.source names the Flux source `kind`/`name`.
fn fleets_sourced_from(fleets: &Fleets, ns: &str, kind: FluxSourceKind, name: &str) -> Vec<String> {
    fleets
        .state()
        .iter()
        .filter_map(|g| g.0.as_ref().ok())
        .filter(|f| f.namespace().as_deref() == Some(ns))
        .filter(|f| {
            f.spec
                .source
                .as_ref()
                .and_then(|s| s.source_ref.as_ref())
                .is_some_and(|r| r.kind == kind && r.name == name)
        })
        .map(|f| f.name_any())
        .collect()
}

/// The deploy Jobs of spec.source (owned by their fleet), their pods (mapped to their fleet by
/// label) and the Flux sources of every kind in `flux` (mapped to the fleets naming them).
fn watch_sources(
    streams: &WatchStreams,
    mut controller: Controller<DeserializeGuard<CelldFleet>>,
    fleets: &Fleets,
    flux: &[(FluxSourceKind, ApiResource)],
) -> (Controller<DeserializeGuard<CelldFleet>>, SourceCaches) {
    let selector = deploy_selector();
    let (jobs, job_changes) =
        streams.cached_owned::<Job>("Job", streams.config().labels(&selector));
    let (pods, pod_changes) =
        streams.cached_touched::<Pod>("Pod", streams.config().labels(&selector));
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
        },
    )
}

/// The CelldObjectStore controller (it writes the stores' status): looked at again when its
/// Secret changes, or when a fleet of its namespace changes (a storeRef may have moved).
fn store_controller(
    stores: &Stores,
    triggers: Triggers,
    concurrency: u16,
) -> Controller<DeserializeGuard<CelldObjectStore>> {
    let (stores_by_secret, stores_by_fleet) = (stores.clone(), stores.clone());
    Controller::for_stream(triggers.stores, stores.clone())
        .with_config(controller::Config::default().concurrency(concurrency))
        .watches_stream(triggers.secrets, move |secret| {
            let ns = secret.namespace().unwrap_or_default();
            refs(
                stores_with_secret(&stores_by_secret, &ns, &secret.name_any()),
                &ns,
            )
        })
        .watches_stream(
            triggers.fleets,
            move |fleet: DeserializeGuard<CelldFleet>| {
                // Their status lists the fleets that use them: look at every store of the
                // fleet's namespace.
                let ns = fleet.namespace().unwrap_or_default();
                let names = stores_in(&stores_by_fleet, &ns)
                    .iter()
                    .map(|s| s.name_any())
                    .collect();
                refs(names, &ns)
            },
        )
}

type Previews = Store<DeserializeGuard<CelldPreview>>;

/// The previews of namespace `ns` that preview the fleet `fleet`, and the one `fleet` serves
/// (its controller, when a preview).
fn previews_touched_by(
    previews: &Previews,
    fleet: &DeserializeGuard<CelldFleet>,
) -> Vec<ObjectRef<DeserializeGuard<CelldPreview>>> {
    let ns = fleet.namespace().unwrap_or_default();
    let name = fleet.name_any();
    let mut names: Vec<String> = previews
        .state()
        .iter()
        .filter_map(|g| g.0.as_ref().ok())
        .filter(|p| p.namespace().as_deref() == Some(ns.as_str()) && p.spec.fleet == name)
        .map(|p| p.name_any())
        .collect();
    names.extend(
        fleet
            .owner_references()
            .iter()
            .filter(|o| o.controller == Some(true) && o.kind == CelldPreview::kind(&()))
            .map(|o| o.name.clone()),
    );
    refs(names, &ns)
}

/// The CelldPreview controller: previews, looked at again when the fleet they preview or the
/// fleet they serve from changes. At most `concurrency` at once, like the fleets: fifty
/// previews created together do not open fifty connections to the API server.
fn preview_controller(
    streams: &WatchStreams,
    fleet_changes: Items<DeserializeGuard<CelldFleet>>,
    concurrency: u16,
) -> Controller<DeserializeGuard<CelldPreview>> {
    let (previews, preview_changes) = streams.cached_touched::<DeserializeGuard<CelldPreview>>(
        "CelldPreview",
        streams.config().any_semantic(),
    );
    let by_fleet = previews.clone();
    Controller::for_stream(preview_changes, previews)
        .with_config(controller::Config::default().concurrency(concurrency))
        .watches_stream(fleet_changes, move |fleet: DeserializeGuard<CelldFleet>| {
            previews_touched_by(&by_fleet, &fleet)
        })
}

/// Runs the controller until `shutdown` resolves. Returns once every running reconcile ended, or
/// [`SHUTDOWN_GRACE`] after `shutdown`, whichever comes first.
/// Every write passes `fence`; every watch reports its life to `watches`.
pub async fn run(
    client: Client,
    settings: Settings,
    metrics: Arc<Metrics>,
    fence: Arc<Fence>,
    watches: Arc<WatchHealth>,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let streams = WatchStreams::new(client.clone(), settings.namespace.clone(), watches.clone());
    let optional = OptionalApis {
        gateway_api: crate::cache::discovery::http_route_served(&client).await,
        flux: flux_kinds(&client).await,
        previews: crate::cache::discovery::previews_served(&client).await,
    };
    let gateway_api = optional.gateway_api;
    let flux: Vec<&str> = optional.flux.iter().map(|(k, _)| k.as_str()).collect();
    let previews = optional.previews;
    info!(gateway_api, ?flux, previews, namespace = ?settings.namespace, "starting the CelldFleet controller");
    let Shared {
        fleets,
        stores,
        secrets,
        for_fleets,
        for_stores,
        for_previews,
    } = Shared::watch(&streams);
    let (fleet_controller, children, source, statefulsets_to_follow) =
        fleet_controller(&streams, &settings, &optional, &fleets, &stores, for_fleets);
    // Fleets whose nodes answered after their reconcile stopped waiting are looked at again.
    let (node_trigger, again) = futures::channel::mpsc::unbounded();
    let fleet_controller = fleet_controller.reconcile_on(again);
    let store_controller = store_controller(&stores, for_stores, settings.concurrency);
    let caches = Caches::new(children, stores, secrets, source, streams.listed());
    // Made after the caches every reconcile waits for: a fleet never waits for the previews.
    let preview_controller =
        previews.then(|| preview_controller(&streams, for_previews, settings.concurrency));
    let writer = fenced(client, fence, metrics.clone(), settings.api_qps);
    let ctx = Arc::new(Context::new(
        writer,
        metrics,
        settings,
        gateway_api,
        fleets,
        caches,
        node_trigger,
    ));
    let shutdown = futures::FutureExt::shared(Box::pin(shutdown));
    let shutdown_previews = shutdown.clone();
    let housekeeping = tokio::spawn(housekeeping(ctx.clone(), shutdown.clone()));
    let capacity = tokio::spawn(crate::runtime::capacity_reads::run(
        ctx.clone(),
        shutdown.clone(),
    ));
    let follower = tokio::spawn(crate::status::follower::run(
        ctx.status.clone(),
        ctx.fleets.clone(),
        statefulsets_to_follow,
        shutdown.clone(),
    ));
    let fleet_loop = fleet_controller
        .graceful_shutdown_on(shutdown.clone())
        .run(reconcile, error_policy, ctx.clone())
        .for_each(|result| async move {
            match result {
                Ok((obj, _)) => debug!(fleet = %obj, "reconciled"),
                Err(e) => debug!(error = %e, "reconcile did not complete"),
            }
        });
    let store_loop = store_controller
        .graceful_shutdown_on(shutdown.clone())
        .run(
            store_status::reconcile,
            store_status::error_policy,
            ctx.clone(),
        )
        .for_each(|result| async move {
            if let Err(e) = result {
                debug!(error = %e, "store status did not complete");
            }
        });
    let preview_loop = async move {
        if let Some(controller) = preview_controller {
            controller
                .graceful_shutdown_on(shutdown_previews)
                .run(
                    preview::reconcile::reconcile,
                    preview::reconcile::error_policy,
                    ctx,
                )
                .for_each(|result| async move {
                    if let Err(e) = result {
                        debug!(error = %e, "preview reconcile did not complete");
                    }
                })
                .await;
        }
    };
    let grace = async {
        shutdown.clone().await;
        tokio::time::sleep(SHUTDOWN_GRACE).await;
    };
    tokio::select! {
        _ = futures::future::join3(fleet_loop, store_loop, preview_loop) => {}
        () = grace => warn!(grace = ?SHUTDOWN_GRACE, "reconciles still under way, or a watch that never listed, at the end of the shutdown grace; stopping without them"),
    }
    housekeeping.abort();
    capacity.abort();
    follower.abort();
    watches.forget_all();
    info!("controller stopped");
}
