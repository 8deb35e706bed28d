//! The first step of a reconcile: everything the plan is built from, read once. The fleet's
//! storage and credentials Secret, its deployment pointer, whether its route is served and
//! claims https, its live StatefulSet (parsed once, here) and how that StatefulSet moves to
//! spec.image. A fleet whose inputs are the ones it last settled with stops here.

use crate::autoscale::decide::Scaled;
use crate::buckets::bucket_clients;
use crate::buckets::pointer::Pointer;
use crate::buckets::resolve::{Resolved, resolve_storage};
use crate::cache::caches;
use crate::capacity::reading::{self, FleetReading};
use crate::capacity::store::Tracked;
use crate::failure::Failure;
use crate::fleet::autoscale_step;
use crate::fleet::config_hash;
use crate::fleet::context::Context;
pub use crate::fleet::fleet_id::FleetId;
use crate::fleet::gateway;
use crate::fleet::probe;
use crate::fleet::settled::{Seen, Standing};
use crate::fleet::source_step::{self, SourceRead};
use crate::fleet::status::conditions::progressing::Deadline;
use crate::fleet::status::observation::Route;
use crate::nodes::adoption::Reading;
use crate::nodes::fences::Fence;
use crate::nodes::reads::FleetNodes;
use crate::shared::own_identity::OwnIdentity;
use crate::source::terms::Decision;
use crate::upgrade::decide::{self, Probed, Upgrade};
use crate::upgrade::held;
use crate::upgrade::live::Live;
use celld_api::{CelldFleet, CelldFleetStatus, ResolveError, ResolvedStorage};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::runtime::reflector::ObjectRef;
use std::sync::Arc;
use std::time::Duration;

/// How long a reconcile waits for a reading of the fleet's nodes: their answers take
/// milliseconds in a cluster; nodes that do not answer yet must not hold the reconcile.
pub const NODE_READ_BUDGET: Duration = Duration::from_millis(500);

/// Everything a full reconcile builds its plan from.
#[derive(Debug)]
pub struct Inputs {
    /// The resolved object storage.
    pub storage: ResolvedStorage,
    /// Hash of the storage settings and credentials contents the pods must run with.
    pub config_hash: String,
    /// The deployment pointer read from the bucket.
    pub pointer: Pointer,
    /// What decides whether the next reconcile may skip, as seen now.
    pub seen: Seen,
    /// Whether the cluster serves HTTPRoute (as last discovered).
    pub http_routes_served: bool,
    /// Whether the fleet's route, if it asks for one, can be served.
    pub route_served: bool,
    /// Whether the route claims https.
    pub https: bool,
    /// The StatefulSet as the cache holds it.
    pub live: Option<StatefulSet>,
    /// How the StatefulSet moves to spec.image.
    pub upgrade: Upgrade,
    /// What the upgrade decision met: a probe that failed, an image celld forbids; and a
    /// failed read of the pods that hold a rollout past its deadline.
    pub upgrade_failures: Vec<Failure>,
    /// The nodes that hold a rollout past its deadline, read only then.
    pub holders: Vec<String>,
    /// The nodes' states against the deployed version: read while a Worker is deployed.
    pub nodes: Option<Arc<Reading>>,
    /// What the deployed version's manifest requires that the nodes cannot serve.
    pub manifest_failures: Vec<Failure>,
    /// spec.source: what it gives and the next step of publishing it.
    pub source: Option<(SourceRead, Decision)>,
    /// The last reading of the nodes' capacity (the capacity store's).
    pub capacity: Option<Arc<FleetReading>>,
    /// What spec.autoscaling decided, for a fleet with it.
    pub autoscale: Option<Scaled>,
    /// The recent self-fences of its nodes.
    pub fences: Vec<Fence>,
}

/// What reading a fleet's inputs found.
#[derive(Debug)]
pub enum Gathered {
    /// The storage does not resolve.
    Unresolved(ResolveError),
    /// Nothing changed since the fleet last settled: no plan, apply or status is needed.
    Settled(Pointer),
    /// A full reconcile is needed.
    Changed(Box<Inputs>),
}

/// Reads the inputs of `fleet`: from the caches, the bucket (the pointer), and the API server
/// only where no cache answers (see [`resolve_storage`], [`gateway`] and [`probe`]). In three
/// phases: [the bucket's side](read_bucket) (storage, pointer, source, capacity), the settled
/// short-cut on what that saw, then [the rest](read_rest) (route, StatefulSet, the pure
/// decisions and the probes they ask for).
pub async fn read(ctx: &Context, fleet: &CelldFleet, id: &FleetId) -> Gathered {
    let bucket = match read_bucket(ctx, fleet, id).await {
        Ok(bucket) => bucket,
        Err(e) => return Gathered::Unresolved(e),
    };
    // Gateways are not watched: a fleet routed through one is always planned in full.
    let standing = if wants_route(fleet) {
        Standing::Changed
    } else {
        let child_version = |kind: &str, name: &str| {
            ctx.shared
                .caches
                .children
                .version(&id.namespace, kind, name)
        };
        ctx.settled
            .standing(&id.uid, &bucket.seen, child_version, ctx.full_every())
    };
    if standing == Standing::Unchanged {
        return Gathered::Settled(bucket.pointer);
    }
    ctx.settled.forget(&id.uid);
    Gathered::Changed(Box::new(read_rest(ctx, fleet, id, bucket, standing).await))
}

/// What the first phase read: the storage and its Secret, the pointer, the source's state, the
/// capacity reading, and what of it decides whether the fleet is settled.
struct BucketSide {
    storage: ResolvedStorage,
    secret: Option<Arc<Secret>>,
    client: Result<bucket_clients::Client, String>,
    latest: Option<CelldFleetStatus>,
    source_read: Option<SourceRead>,
    pointer: Pointer,
    tracked: Option<Tracked>,
    fences: Vec<Fence>,
    seen: Seen,
}

/// The first phase: the storage (from the caches), the fleet's newest status, its source's
/// state, the pointer (from the bucket) and the last capacity reading.
async fn read_bucket(
    ctx: &Context,
    fleet: &CelldFleet,
    id: &FleetId,
) -> Result<BucketSide, ResolveError> {
    let Resolved {
        storage,
        secret,
        store_version,
    } = resolve_storage(
        &ctx.shared.caches,
        &ctx.shared.secrets,
        &ctx.shared.client,
        &id.namespace,
        fleet,
    )
    .await?;
    // Before anything is read from the bucket: the pointer of a prefix another fleet holds is
    // not this fleet's to see.
    ctx.prefix_claims
        .claim(&ctx.shared.caches, fleet, &id.uid, &storage)?;
    let client = ctx.shared.buckets.get(&id.uid, &storage, secret.as_deref());
    ctx.shared.metrics.set_s3_clients(ctx.shared.buckets.len());
    // The fleet's newest status, read once: its own, or the one written that the cache does
    // not show yet. The steps that build on their last status start from it.
    let latest = ctx.reads.written.newest(fleet);
    let source_read = source_step::read(ctx, fleet, id, &storage, latest.as_ref());
    // A deploy Job that ended changed the pointer: read it afresh.
    let fresh = annotations_hash(fleet)
        ^ u64::from(source_read.as_ref().is_some_and(SourceRead::job_ended));
    let own_identity = secret.is_none() && !ctx.shared.settings.own_identity.allows(&id.namespace);
    let pointer = match &client {
        _ if own_identity => Pointer::NoCredentials(OwnIdentity::refusal(
            &storage
                .bucket
                .object_url(crate::buckets::pointer::POINTER_KEY),
            &id.namespace,
        )),
        Ok(client) => {
            ctx.reads
                .pointers
                .pointer(&id.uid, fresh, client.as_ref(), &storage)
                .await
        }
        Err(why) => Pointer::Unknown(why.clone()),
    };
    // A reading the status would not show (counts of a fleet without spec.autoscaling that
    // moved a little, lately shown) leaves the fleet settled.
    let (now, cut_off) = (Timestamp::now(), ctx.nodes.api.reachability().cut_off());
    let tracked = ctx
        .nodes
        .capacity
        .get(&id.uid)
        .filter(|t| reading::shown_in_status(fleet, &t.reading, now, cut_off));
    let fences = ctx.nodes.fences.recent(&id.namespace, &id.name, now);
    let seen = Seen {
        fleet: fleet.resource_version().unwrap_or_default(),
        store: store_version,
        secret: secret
            .as_ref()
            .and_then(|s| s.resource_version())
            .unwrap_or_default(),
        pointer: pointer.clone(),
        source: source_read.as_ref().map(SourceRead::fingerprint),
        capacity: tracked.as_ref().map(|t| t.version),
        fences: fences.len(),
    };
    Ok(BucketSide {
        storage,
        secret,
        client,
        latest,
        source_read,
        pointer,
        tracked,
        fences,
        seen,
    })
}

/// Whether the fleet routes through Gateways.
fn wants_route(fleet: &CelldFleet) -> bool {
    fleet
        .spec
        .ingress
        .as_ref()
        .is_some_and(|i| !i.gateway_refs.is_empty())
}

/// The last phase, for a fleet that is not settled: whether its route is served and claims
/// https, its live StatefulSet, then the decisions (autoscaling, replicas, upgrade, source;
/// pure) with the reads they ask for (the nodes, the pods holding a rollout, the manifest).
async fn read_rest(
    ctx: &Context,
    fleet: &CelldFleet,
    id: &FleetId,
    bucket: BucketSide,
    standing: Standing,
) -> Inputs {
    let BucketSide {
        storage,
        secret,
        client,
        latest,
        source_read,
        pointer,
        tracked,
        fences,
        seen,
    } = bucket;
    let ingress = fleet.spec.ingress.as_ref();
    let route_served = !wants_route(fleet) || ctx.http_route_served().await;
    let https = match (Route::of(ingress.map(|i| &**i), route_served), ingress) {
        (Route::Ingress, Some(i)) => i.tls.is_some(),
        (Route::HttpRoute, Some(i)) if !i.gateway_refs.is_empty() => {
            gateway::all_listeners_https(&ctx.shared.client, &id.namespace, &i.gateway_refs).await
        }
        _ => false,
    };
    let live = caches::child(
        &ctx.shared.caches.children.statefulsets,
        &id.namespace,
        &id.name,
    );
    let autoscale = autoscale_step::decided(ctx, fleet, id, live.as_ref(), latest.as_ref());
    let replicas = replicas(fleet, &pointer, autoscale.as_ref());
    let nodes = read_nodes(ctx, id, replicas, &pointer, standing).await;
    let (upgrade, mut upgrade_failures) =
        decide_upgrade(ctx, fleet, id, replicas, live.as_ref(), nodes.as_deref()).await;
    let holders = if past_deadline(fleet) {
        match probe::holders(ctx, &id.namespace, &id.name, replicas, live.as_ref()).await {
            Ok(holders) => holders,
            Err(failure) => {
                upgrade_failures.push(failure);
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    let (source, image) = (client.as_deref().ok(), &fleet.spec.image);
    let manifest_failures = ctx
        .reads
        .manifests
        .failures(&id.uid, source, &storage, &pointer, image)
        .await;
    let source = source_read.map(|read| {
        let decision = source_step::decide(ctx, &read, &pointer);
        (read, decision)
    });
    Inputs {
        config_hash: config_hash::compute(&storage, secret.as_deref()),
        storage,
        pointer,
        seen,
        http_routes_served: ctx.gateway_api(),
        route_served,
        https,
        live,
        upgrade,
        upgrade_failures,
        holders,
        nodes,
        manifest_failures,
        source,
        capacity: tracked.map(|t| t.reading),
        autoscale,
        fences,
    }
}

/// The states of the fleet's `replicas` nodes against the version `pointer` names, with the
/// reloads sent to nodes behind it; none when no Worker is deployed. A periodic full reconcile
/// (`standing` [`Standing::Due`]: nothing moved) takes a reading younger than two periods in
/// which every node serves the version, the capacity reader's most often, instead of reading
/// the nodes again. A reading that takes longer than [`NODE_READ_BUDGET`] is not waited for:
/// the last one stands in, and the fleet is looked at again when the late one differs; none is
/// waited for while the operator reaches no node, or after the fleet's last reading outlasted
/// the budget (see [`NodeReads::within`](crate::nodes::reads::NodeReads::within)).
async fn read_nodes(
    ctx: &Context,
    id: &FleetId,
    replicas: i32,
    pointer: &Pointer,
    standing: Standing,
) -> Option<Arc<Reading>> {
    let Pointer::Deployed(deployment) = pointer else {
        return None;
    };
    if standing == Standing::Due {
        // Two periods: the capacity reader's round of 10,000 fleets takes about one.
        let young = ctx.full_every() * 2;
        let steady = ctx
            .nodes
            .reads
            .steady(&id.uid, &deployment.version, replicas, young);
        if steady.is_some() {
            return steady;
        }
    }
    let nodes = FleetNodes {
        namespace: id.namespace.clone(),
        name: id.name.clone(),
        peer_service: crate::children::peer_service_name(&id.name),
        replicas,
    };
    let again = ctx.nodes.trigger.clone();
    let fleet = ObjectRef::new(&id.name).within(&id.namespace);
    ctx.nodes
        .reads
        .within(
            &ctx.nodes.api,
            &id.uid,
            nodes,
            &deployment.version,
            NODE_READ_BUDGET,
            move || {
                // The controller is gone only when the operator stops.
                let _ = again.unbounded_send(fleet);
            },
        )
        .await
}

/// Whether the fleet's status shows a rollout past spec.progressDeadlineSeconds.
fn past_deadline(fleet: &CelldFleet) -> bool {
    Deadline::new(
        fleet.spec.progress_deadline_seconds.into(),
        fleet.status.as_ref(),
        fleet.metadata.generation,
        Timestamp::now(),
    )
    .passed()
}

/// The nodes the fleet should run: what spec.autoscaling decided (`autoscale`), else
/// spec.replicas; none while the bucket holds no deployment (celld nodes exit at boot without
/// one).
pub fn replicas(fleet: &CelldFleet, pointer: &Pointer, autoscale: Option<&Scaled>) -> i32 {
    if *pointer == Pointer::Missing {
        0
    } else {
        autoscale.map_or(fleet.spec.replicas, |s| s.desired)
    }
}

/// A hash of the fleet's annotations: a change asks for a fresh read of its pointer.
fn annotations_hash(fleet: &CelldFleet) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    fleet.annotations().hash(&mut h);
    h.finish()
}

/// How the StatefulSet moves to spec.image: decided from the `live` StatefulSet, and again with
/// what the nodes (their `reading`, when made) or pods say when the rollout needs it. A failed
/// probe or a refused image is returned beside the decision.
async fn decide_upgrade(
    ctx: &Context,
    fleet: &CelldFleet,
    id: &FleetId,
    replicas: i32,
    live: Option<&StatefulSet>,
    reading: Option<&Reading>,
) -> (Upgrade, Vec<Failure>) {
    let mut failures = Vec::new();
    let decide = |probed: &Probed| decide::decide(&fleet.spec, replicas, live, probed);
    let mut decided = decide(&Probed::default());
    if let Some(wanted) = decided.probe {
        match probe::probe(ctx, &id.namespace, &id.name, replicas, wanted, reading).await {
            Ok(probed) => decided = decide(&probed),
            Err(failure) => failures.push(failure),
        }
    }
    if let decide::Progress::Refused(why) = &decided.progress {
        failures.push(Failure::image_refused(why));
    }
    let running = live.and_then(Live::of);
    let moving = held::Moving {
        progress: &decided.progress,
        partition: decided.partition,
        stopped: decided.stopped,
    };
    decided.held = held::held_back(&fleet.spec, &id.name, running.as_ref(), &moving);
    (decided, failures)
}
