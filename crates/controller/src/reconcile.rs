//! One reconcile of one fleet: read inputs, build the desired children (pure), apply and prune
//! them (the one I/O step), then write the status when it changed.

use crate::apply::{self, Outcome};
use crate::children::{self, Desired, MANAGER};
use crate::context::Context;
use crate::error::Error;
use crate::events;
use crate::pointer::{self, Pointer};
use crate::status::{self, Observed, Route, Storage};
use crate::{config_hash, gateway};
use celld_api::{CelldFleet, ResolveError, ResolvedStorage, labels, resolve};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::core::DeserializeGuard;
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use serde_json::json;
use std::collections::BTreeSet;
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
    if result.is_ok() {
        ctx.succeeded(&key(fleet));
    }
    update_fleet_gauge(&ctx);
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

fn update_fleet_gauge(ctx: &Context) {
    let (mut ready, mut not_ready, mut unknown) = (0, 0, 0);
    for guard in ctx.fleets.state() {
        let status = guard
            .0
            .as_ref()
            .ok()
            .and_then(|f| f.status.as_ref())
            .and_then(|s| {
                celld_api::conditions::find(&s.conditions, celld_api::conditions::READY)
                    .map(|c| c.status.clone())
            });
        match status.as_deref() {
            Some("True") => ready += 1,
            Some("False") => not_ready += 1,
            _ => unknown += 1,
        }
    }
    ctx.metrics.set_fleets(ready, not_ready, unknown);
}

/// The fleet's storage with its credentials Secret, or why it does not resolve.
async fn resolve_storage(
    ctx: &Context,
    ns: &str,
    fleet: &CelldFleet,
) -> Result<(ResolvedStorage, Secret), ResolveError> {
    let storage = resolve::fetch(&ctx.client, ns, &fleet.spec).await?;
    let secret = Api::<Secret>::namespaced(ctx.client.clone(), ns)
        .get_opt(&storage.credentials_secret)
        .await
        .map_err(|source| ResolveError::Api {
            what: format!("Secret '{}'", storage.credentials_secret),
            source: Box::new(source),
        })?;
    resolve::check_secret(&storage.credentials_secret, ns, secret.as_ref())?;
    let secret = secret.ok_or_else(|| ResolveError::SecretNotFound {
        name: storage.credentials_secret.clone(),
        namespace: ns.to_string(),
    })?;
    Ok((storage, secret))
}

async fn reconcile_fleet(fleet: &CelldFleet, ctx: &Context) -> Result<Action, Error> {
    let ns = fleet.namespace().ok_or(Error::Unnamed("CelldFleet"))?;
    let name = fleet.name_any();
    if fleet.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let uid = fleet.uid().ok_or(Error::Unnamed("CelldFleet"))?;

    let (storage, secret) = match resolve_storage(ctx, &ns, fleet).await {
        Ok(found) => found,
        Err(e @ ResolveError::Api { .. }) => return Err(e.into()),
        Err(e) => {
            // Never start pods with half a configuration: leave the children as they are,
            // report why, and wait for the store or Secret to appear (both are watched).
            let observed = Observed {
                generation: fleet.metadata.generation,
                name: &name,
                desired: fleet.spec.replicas,
                storage: Storage::Failed(e.reason(), e.to_string()),
                statefulset: None,
                route: Route::None,
                url: fleet.status.as_ref().and_then(|s| s.url.clone()),
            };
            write_status(ctx, fleet, &ns, &observed, None).await?;
            return Ok(Action::requeue(ctx.settings.resync));
        }
    };

    let config_hash = config_hash::compute(&storage, &secret);
    let s3 = ctx.s3_client(&config_hash, || {
        pointer::client(&storage, &secret, ctx.settings.s3_timeout)
    });
    let pointer = match &s3 {
        Ok(client) => pointer::read(client, &storage).await,
        Err(why) => Pointer::Unknown(why.clone()),
    };
    let ingress = fleet.spec.ingress.as_ref();
    let wants_route = ingress.is_some_and(|i| !i.gateway_refs.is_empty());
    let route_served = !wants_route || ctx.http_route_served().await;
    let https = match ingress {
        Some(i) if i.ingress_class.is_some() => i.tls.is_some(),
        Some(i) if route_served && !i.gateway_refs.is_empty() => {
            gateway::all_listeners_https(&ctx.client, &ns, &i.gateway_refs).await
        }
        _ => false,
    };
    let desired = Desired {
        fleet,
        name: name.clone(),
        namespace: ns.clone(),
        config_hash,
        replicas: if pointer == Pointer::Missing {
            0
        } else {
            fleet.spec.replicas
        },
        storage: storage.clone(),
        https,
    };

    let applied = apply_children(ctx, &desired, &uid).await?;
    if !applied.changed.is_empty() || !applied.pruned.is_empty() {
        info!(fleet = %key(fleet), changed = ?applied.changed, pruned = ?applied.pruned, "applied");
        events::applied(ctx, fleet, &applied.changed, &applied.pruned).await;
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
        statefulset: Some(&applied.statefulset),
        route,
        url: Some(desired.url()),
    };
    write_status(ctx, fleet, &ns, &observed, Some(&pointer)).await?;
    Ok(Action::requeue(match pointer {
        Pointer::Deployed(_) => ctx.settings.resync,
        Pointer::Missing | Pointer::Unknown(_) => ctx.settings.pending_resync,
    }))
}

struct Applied {
    statefulset: StatefulSet,
    changed: Vec<String>,
    pruned: Vec<String>,
}

/// Applies a fleet's children in its namespace, recording what changed and what was pruned.
struct Children<'a> {
    ctx: &'a Context,
    ns: &'a str,
    uid: &'a str,
    selector: String,
    changed: Vec<String>,
    pruned: Vec<String>,
}

impl Children<'_> {
    fn api<K: apply::Child>(&self) -> Api<K> {
        Api::namespaced(self.ctx.client.clone(), self.ns)
    }

    /// Applies a child the fleet always has.
    async fn always<K: apply::Child>(&mut self, child: K) -> Result<K, Error> {
        let name = child.name_any();
        let (live, outcome) = apply::apply(&self.api(), child, &self.ctx.metrics).await?;
        if outcome == Outcome::Applied {
            self.changed.push(format!("{}/{name}", K::kind(&())));
        }
        Ok(live)
    }

    /// Applies a child the spec may ask for, and deletes the fleet's other objects of its kind.
    async fn optional<K: apply::Child>(&mut self, child: Option<K>) -> Result<(), Error> {
        let keep: BTreeSet<String> = child.iter().map(|c| c.name_any()).collect();
        if let Some(child) = child {
            self.always(child).await?;
        }
        let api = self.api::<K>();
        let metrics = &self.ctx.metrics;
        let deleted = apply::prune(&api, &self.selector, self.uid, &keep, metrics).await?;
        self.pruned
            .extend(deleted.into_iter().map(|n| format!("{}/{n}", K::kind(&()))));
        Ok(())
    }
}

async fn apply_children(ctx: &Context, d: &Desired<'_>, uid: &str) -> Result<Applied, Error> {
    let mut children = Children {
        ctx,
        ns: &d.namespace,
        uid,
        selector: format!(
            "{}={},app.kubernetes.io/managed-by={MANAGER}",
            labels::FLEET,
            d.name
        ),
        changed: Vec::new(),
        pruned: Vec::new(),
    };
    let statefulset = children.always(children::statefulset::build(d)).await?;
    children.always(children::service::build(d)).await?;
    children.always(children::peer_service::build(d)).await?;
    children.always(children::network_policy::build(d)).await?;
    children.optional(children::pdb::build(d)).await?;
    children.optional(children::ingress::build(d)).await?;
    // HTTPRoute exists as a kind only where the cluster serves the Gateway API.
    if ctx.gateway_api.load(std::sync::atomic::Ordering::Relaxed) {
        children.optional(children::httproute::build(d)).await?;
    }
    Ok(Applied {
        statefulset,
        changed: children.changed,
        pruned: children.pruned,
    })
}

async fn write_status(
    ctx: &Context,
    fleet: &CelldFleet,
    ns: &str,
    observed: &Observed<'_>,
    pointer: Option<&Pointer>,
) -> Result<(), Error> {
    let uid = fleet.uid().unwrap_or_default();
    let seen = fleet.resource_version().unwrap_or_default();
    let written = ctx.written_status(&uid, &seen);
    let previous = written.as_ref().or(fleet.status.as_ref());
    let status = status::compute(previous, observed, Timestamp::now());
    if previous == Some(&status) {
        return Ok(());
    }
    let api: Api<CelldFleet> = Api::namespaced(ctx.client.clone(), ns);
    let patch = json!({
        "apiVersion": "platform.celld.dev/v1alpha1",
        "kind": "CelldFleet",
        "status": status,
    });
    api.patch_status(
        &fleet.name_any(),
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(&patch),
    )
    .await
    .map_err(|e| {
        Error::kube(
            format!("writing the status of CelldFleet {}", fleet.name_any()),
            e,
        )
    })?;
    ctx.metrics.write("CelldFleet", "status");
    ctx.remember_status(&uid, &seen, status.clone());
    events::transitions(ctx, fleet, previous, &status, pointer).await;
    Ok(())
}
