//! One reconcile of one fleet: read inputs, build the desired children (pure), apply and prune
//! them (the one I/O step), then write the status when it changed. Whatever fails along the
//! way ends in the status (Degraded, with a typed reason), one Warning Event and the error
//! metric before the reconcile returns an error for a retry.

use crate::children::Desired;
use crate::error::Error;
use crate::failure::Failure;
use crate::fleet::context::Context;
use crate::fleet::settled::Seen;
use crate::status::compute::{Observed, Route, Storage};
use crate::status::follower::{self, Observation};
use crate::storage::pointer::Pointer;
use crate::{
    fleet::apply_plan as fleet_children, fleet::config_hash, fleet::gateway, fleet::plan,
    fleet::probe as upgrade_probe, fleet::resync_grid, status::events,
    status::write as status_write, upgrade::decide as upgrade,
};
use celld_api::{CelldFleet, CelldObjectStore, ResolveError, ResolvedStorage, resolve};
use k8s_openapi::api::core::v1::Secret;
use kube::core::DeserializeGuard;
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use std::sync::Arc;
use std::time::Instant;
use tracing::{info, warn};

/// The controller's reconcile entry point.
pub async fn reconcile(
    guard: Arc<DeserializeGuard<CelldFleet>>,
    ctx: Arc<Context>,
) -> Result<Action, Error> {
    let fleet = match &guard.0 {
        Ok(fleet) => fleet,
        Err(invalid) => {
            warn!(error = %invalid.error, name = ?invalid.metadata.name, namespace = ?invalid.metadata.namespace,
                "a CelldFleet does not match the schema; waiting for it to change");
            return Ok(Action::await_change());
        }
    };
    let started = Instant::now();
    let result = reconcile_fleet(fleet, &ctx).await;
    ctx.metrics
        .reconciled(result.is_ok(), started.elapsed().as_secs_f64());
    if let Err(e @ (Error::Kube { .. } | Error::Serialize { .. } | Error::Unnamed(_))) = &result {
        // Failures of children and storage were counted where they were met.
        ctx.metrics.failed(e.reason());
    }
    if result.is_ok() {
        ctx.succeeded(&key(fleet));
    }
    result
}

/// What the controller does after a failed reconcile: retry with per-fleet exponential backoff.
pub fn error_policy(
    guard: Arc<DeserializeGuard<CelldFleet>>,
    error: &Error,
    ctx: Arc<Context>,
) -> Action {
    let key = match &guard.0 {
        Ok(fleet) => key(fleet),
        Err(invalid) => format!(
            "{:?}/{:?}",
            invalid.metadata.namespace, invalid.metadata.name
        ),
    };
    let wait = ctx.backoff(&key);
    warn!(fleet = %key, error = %error, retry_in = ?wait, "reconcile failed");
    Action::requeue(wait)
}

fn key(fleet: &CelldFleet) -> String {
    format!(
        "{}/{}",
        fleet.namespace().unwrap_or_default(),
        fleet.name_any()
    )
}

/// A fleet's resolved storage, its credentials Secret (none for workload identity) and the
/// store's resourceVersion.
struct Inputs {
    storage: ResolvedStorage,
    secret: Option<Arc<Secret>>,
    store_version: Option<String>,
}

/// The fleet's storage with its credentials Secret, or why it does not resolve. Reads the
/// caches; the API server only for a Secret whose contents changed since last read, and to
/// confirm that a store or Secret missing from the cache is really missing (a fleet created
/// together with them may be reconciled before their watch events arrive).
async fn resolve_storage(
    ctx: &Context,
    ns: &str,
    fleet: &CelldFleet,
) -> Result<Inputs, ResolveError> {
    let api_error = |what: String| {
        move |source| ResolveError::Api {
            what,
            source: Box::new(source),
        }
    };
    let store = match &fleet.spec.store_ref {
        None => None,
        Some(r) => match ctx.caches.store(ns, &r.name) {
            Some(guard) => match &guard.0 {
                Ok(store) => Some(store.clone()),
                Err(invalid) => {
                    return Err(ResolveError::StoreInvalid {
                        name: r.name.clone(),
                        error: invalid.error.to_string(),
                    });
                }
            },
            None => Api::<CelldObjectStore>::namespaced(ctx.client.clone(), ns)
                .get_opt(&r.name)
                .await
                .map_err(api_error(format!("CelldObjectStore '{}'", r.name)))?,
        },
    };
    let storage = resolve::resolve(&fleet.spec, ns, store.as_ref())?;
    let secret = match &storage.credentials_secret {
        None => None,
        Some(name) => {
            let secret = match ctx.caches.secret(ns, name) {
                Some(meta) => ctx.secrets.get(&ctx.client, &meta).await,
                None => ctx.secrets.read(&ctx.client, ns, name).await,
            }
            .map_err(api_error(format!("Secret '{name}'")))?;
            let schemes = [storage.bucket.scheme];
            resolve::check_secret(name, ns, secret.as_deref(), &schemes)?;
            Some(secret.ok_or_else(|| ResolveError::SecretNotFound {
                name: name.clone(),
                namespace: ns.to_string(),
                needs: resolve::needed_keys(&schemes),
            })?)
        }
    };
    Ok(Inputs {
        storage,
        secret,
        store_version: store.and_then(|s| s.metadata.resource_version),
    })
}

/// A hash of the fleet's annotations: a change asks for a fresh read of its pointer.
fn annotations_hash(fleet: &CelldFleet) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    fleet.annotations().hash(&mut h);
    h.finish()
}

async fn reconcile_fleet(fleet: &CelldFleet, ctx: &Context) -> Result<Action, Error> {
    let ns = fleet.namespace().ok_or(Error::Unnamed("CelldFleet"))?;
    let name = fleet.name_any();
    if fleet.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let uid = fleet.uid().ok_or(Error::Unnamed("CelldFleet"))?;
    ctx.caches.ready().await?;

    let inputs = match resolve_storage(ctx, &ns, fleet).await {
        Ok(found) => found,
        Err(e) => {
            // Never start pods with half a configuration: leave the children as they are,
            // report why, and wait for the store or Secret to appear (both are watched).
            let failure = Failure::storage(&e);
            ctx.metrics.failed(failure.reason);
            let failures = [failure];
            // The nodes keep running as they are: report them (an autoscaler reads
            // status.replicas).
            let statefulset =
                crate::cache::caches::child(&ctx.caches.children.statefulsets, &ns, &name);
            let observed = Observed {
                generation: fleet.metadata.generation,
                name: &name,
                desired: fleet.spec.replicas,
                storage: Storage::Failed(&failures[0]),
                statefulset: None,
                route: Route::None,
                url: fleet.status.as_ref().and_then(|s| s.url.clone()),
                failures: &failures,
                upgrade: &upgrade::Progress::Idle,
            };
            write_status(ctx, fleet, &ns, &observed, statefulset).await?;
            // A read the API server did not answer is retried with backoff; a missing store,
            // Secret or key waits for it to appear.
            return match e {
                ResolveError::Api { .. } => Err(e.into()),
                _ => Ok(Action::requeue(resync_grid::aligned(ctx.settings.resync))),
            };
        }
    };

    let Inputs {
        storage,
        secret,
        store_version,
    } = inputs;
    let client = ctx.buckets.get(&uid, &storage, secret.as_deref());
    ctx.metrics.set_s3_clients(ctx.buckets.len());
    let pointer = match client {
        Ok(client) => {
            ctx.pointers
                .pointer(&uid, annotations_hash(fleet), client.as_ref(), &storage)
                .await
        }
        Err(why) => Pointer::Unknown(why),
    };
    let ingress = fleet.spec.ingress.as_ref();
    let wants_route = ingress.is_some_and(|i| !i.gateway_refs.is_empty());
    let seen = Seen {
        fleet: fleet.resource_version().unwrap_or_default(),
        store: store_version,
        secret: secret
            .as_ref()
            .and_then(|s| s.resource_version())
            .unwrap_or_default(),
        pointer: pointer.clone(),
    };
    // Gateways are not watched: a fleet routed through one is always planned in full.
    let child_version = |kind: &str, name: &str| ctx.caches.children.version(&ns, kind, name);
    if !wants_route && ctx.settled.unchanged(&uid, &seen, child_version) {
        ctx.metrics.unchanged();
        return Ok(Action::requeue(requeue_after(ctx, &pointer)));
    }
    ctx.settled.forget(&uid);
    let config_hash = config_hash::compute(&storage, secret.as_deref());
    let route_served = !wants_route || ctx.http_route_served().await;
    let https = match ingress {
        Some(i) if i.ingress_class.is_some() => i.tls.is_some(),
        Some(i) if route_served && !i.gateway_refs.is_empty() => {
            gateway::all_listeners_https(&ctx.client, &ns, &i.gateway_refs).await
        }
        _ => false,
    };
    let replicas = if pointer == Pointer::Missing {
        0
    } else {
        fleet.spec.replicas
    };
    let mut failures = Vec::new();
    let upgrade = decide_upgrade(ctx, fleet, &ns, &name, replicas, &mut failures).await;
    let desired = Desired {
        fleet,
        name: name.clone(),
        namespace: ns.clone(),
        config_hash,
        replicas: if upgrade.stopped { 0 } else { replicas },
        storage: storage.clone(),
        https,
        operator: ctx.settings.operator_pods.clone(),
        upgrade,
    };

    let plan = plan::plan(&desired);
    // The versions of the children before they are read: a child that changes while this
    // reconcile runs then shows a newer version to the next one, which runs in full.
    let children: Vec<_> = plan
        .children()
        .into_iter()
        .map(|(kind, name)| {
            let version = child_version(&kind, &name);
            (kind, name, version)
        })
        .collect();
    let applied = fleet_children::apply(ctx, &desired, plan, &uid).await;
    if !applied.changed.is_empty() || !applied.pruned.is_empty() {
        info!(fleet = %key(fleet), changed = ?applied.changed, pruned = ?applied.pruned, "applied");
        events::applied(ctx, fleet, &applied.changed, &applied.pruned).await;
    }
    match &pointer {
        Pointer::Unknown(why) => failures.push(Failure::bucket(why)),
        Pointer::NoCredentials(why) => failures.push(Failure::no_operator_credentials(why)),
        Pointer::Deployed(_) | Pointer::Missing => {}
    }
    failures.extend(applied.failures.iter().cloned());
    for f in &failures {
        ctx.metrics.failed(f.reason);
    }

    let route = match ingress {
        None => Route::None,
        Some(i) if i.ingress_class.is_some() => Route::Ingress,
        Some(_) if route_served => Route::HttpRoute,
        Some(_) => Route::GatewayApiMissing,
    };
    let observed = Observed {
        generation: fleet.metadata.generation,
        name: &name,
        desired: fleet.spec.replicas,
        storage: Storage::Resolved(&storage, &pointer),
        statefulset: None,
        route,
        url: Some(desired.url()),
        failures: &failures,
        upgrade: &desired.upgrade.progress,
    };
    let wrote = write_status(ctx, fleet, &ns, &observed, applied.statefulset.clone()).await?;
    let under_way = desired.upgrade.progress.under_way();
    let settled = !wrote
        && !under_way
        && failures.is_empty()
        && applied.changed.is_empty()
        && applied.pruned.is_empty();
    if settled {
        ctx.settled.record(&uid, seen, children);
    }
    if !applied.failures.is_empty() {
        // The status says what failed; retrying with backoff picks up whatever changes outside
        // the fleet (a quota, a conflicting object, the API server coming back).
        return Err(Error::Children {
            fleet: key(fleet),
            failures: applied.failures,
        });
    }
    if under_way {
        return Ok(Action::requeue(UPGRADE_POLL));
    }
    Ok(Action::requeue(requeue_after(ctx, &pointer)))
}

/// How often a fleet is looked at while its nodes move to a new image: restores on the nodes
/// and pods that finished terminating change nothing the operator watches.
const UPGRADE_POLL: std::time::Duration = std::time::Duration::from_secs(5);

/// How the StatefulSet moves to spec.image: decided from the cached StatefulSet, and again with
/// what the nodes or pods say when the rollout needs it. A failed probe or a refused image is
/// added to `failures`.
async fn decide_upgrade(
    ctx: &Context,
    fleet: &CelldFleet,
    ns: &str,
    name: &str,
    replicas: i32,
    failures: &mut Vec<Failure>,
) -> upgrade::Upgrade {
    let live = crate::cache::caches::child(&ctx.caches.children.statefulsets, ns, name);
    let decide =
        |probed: &upgrade::Probed| upgrade::decide(&fleet.spec, replicas, live.as_ref(), probed);
    let mut decided = decide(&upgrade::Probed::default());
    if let Some(probe) = decided.probe {
        match upgrade_probe::probe(ctx, ns, name, replicas, probe).await {
            Ok(probed) => decided = decide(&probed),
            Err(failure) => failures.push(failure),
        }
    }
    if let upgrade::Progress::Refused(why) = &decided.progress {
        failures.push(Failure::image_refused(why));
    }
    decided
}

/// When to look at a fleet again: soon while it waits for its first deployment or its bucket
/// cannot be read, at the resync period otherwise.
fn requeue_after(ctx: &Context, pointer: &Pointer) -> std::time::Duration {
    resync_grid::aligned(match pointer {
        Pointer::Deployed(_) => ctx.settings.resync,
        Pointer::Missing | Pointer::Unknown(_) | Pointer::NoCredentials(_) => {
            ctx.settings.pending_resync
        }
    })
}

/// Writes the status `observed` gives with the newest StatefulSet (the `applied` one, or the
/// cache's once it caught up), holding the fleet's status lock, and leaves the observation to
/// the status follower. Returns whether it wrote.
async fn write_status(
    ctx: &Context,
    fleet: &CelldFleet,
    ns: &str,
    observed: &Observed<'_>,
    applied: Option<k8s_openapi::api::apps::v1::StatefulSet>,
) -> Result<bool, Error> {
    let uid = fleet.uid().unwrap_or_default();
    let lock = ctx.observations.lock(&uid);
    let _writing = lock.lock().await;
    let cached = crate::cache::caches::child(&ctx.caches.children.statefulsets, ns, observed.name);
    let statefulset = follower::newest(applied, cached);
    let observation = Observation::of(observed, fleet.metadata.generation);
    let observed = observation.observed(observed.name, statefulset.as_ref());
    let wrote = match status_write::next(ctx, fleet, &observed) {
        Some(update) => {
            status_write::write(ctx, fleet, update, &observed, observation.pointer()).await?;
            true
        }
        None => false,
    };
    ctx.observations.record(&uid, observation);
    Ok(wrote)
}
