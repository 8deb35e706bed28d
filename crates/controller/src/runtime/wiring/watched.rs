//! The fleets, stores and Secrets, each watched once and shared by the controllers, the APIs
//! the cluster was found to serve, and the lookups from a changed object to the ones to look
//! at again.

use crate::cache::changes::Changes;
use crate::cache::streams::{Items, WatchStreams};
use celld_api::{CelldFleet, CelldObjectStore, CelldRollout, FluxSourceKind};
use k8s_openapi::api::core::v1::Secret;
use kube::api::ApiResource;
use kube::core::{DeserializeGuard, PartialObjectMeta};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};

pub(super) type Fleets = Store<DeserializeGuard<CelldFleet>>;
pub(super) type Stores = Store<DeserializeGuard<CelldObjectStore>>;
pub(super) type Rollouts = Store<DeserializeGuard<CelldRollout>>;

/// References to `names` in namespace `ns`.
pub(super) fn refs<K>(names: Vec<String>, ns: &str) -> Vec<ObjectRef<K>>
where
    K: Resource,
    K::DynamicType: Default,
{
    names.iter().map(|n| ObjectRef::new(n).within(ns)).collect()
}

/// The stores of namespace `ns` that parse.
pub(super) fn stores_in(stores: &Stores, ns: &str) -> Vec<CelldObjectStore> {
    stores
        .state()
        .iter()
        .filter_map(|g| g.0.as_ref().ok())
        .filter(|s| s.namespace().as_deref() == Some(ns))
        .cloned()
        .collect()
}

/// Names of the stores of `ns` whose credentials are the Secret `secret`.
pub(super) fn stores_with_secret(stores: &Stores, ns: &str, secret: &str) -> Vec<String> {
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

/// The fleets, stores and Secrets, each watched once: one cache each, and the changes each
/// controller looks at.
pub(super) struct Watched {
    pub(super) fleets: Fleets,
    /// The changes the fleets' watch brought to their cache, counted as the fleet controller
    /// takes them.
    pub(super) fleets_moved: Changes,
    pub(super) stores: Stores,
    pub(super) secrets: Store<PartialObjectMeta<Secret>>,
    pub(super) for_fleets: Triggers,
    pub(super) for_stores: Triggers,
    /// The fleet changes the preview controller looks at.
    pub(super) for_previews: Items<DeserializeGuard<CelldFleet>>,
    /// The rollouts, when the cluster serves them: their cache, the changes the fleet
    /// controller looks at (a fleet's assignment), and what the rollout controller looks at.
    pub(super) rollouts: Option<(
        Rollouts,
        Items<DeserializeGuard<CelldRollout>>,
        RolloutTriggers,
    )>,
}

/// The changes the rollout controller looks at: its rollouts, and the fleets they ship to.
pub(super) struct RolloutTriggers {
    pub(super) rollouts: Items<DeserializeGuard<CelldRollout>>,
    pub(super) fleets: Items<DeserializeGuard<CelldFleet>>,
}

/// The changes of fleets, stores and Secrets one controller looks at.
pub(super) struct Triggers {
    pub(super) fleets: Items<DeserializeGuard<CelldFleet>>,
    pub(super) stores: Items<DeserializeGuard<CelldObjectStore>>,
    pub(super) secrets: Items<PartialObjectMeta<Secret>>,
}

impl Watched {
    pub(super) fn watch(streams: &WatchStreams, rollouts_served: bool) -> Self {
        let config = streams.config();
        let (
            fleets,
            [
                fleet_changes,
                fleets_for_stores,
                fleets_for_previews,
                fleets_for_rollouts,
            ],
        ) = streams.cached_fanned::<DeserializeGuard<CelldFleet>, 4>(
            "CelldFleet",
            config.clone().any_semantic(),
        );
        let rollouts = rollouts_served.then(|| {
            let (rollouts, for_fleets, changes) = streams
                .cached_shared::<DeserializeGuard<CelldRollout>>(
                    "CelldRollout",
                    config.clone().any_semantic(),
                );
            let triggers = RolloutTriggers {
                rollouts: changes,
                fleets: fleets_for_rollouts,
            };
            (rollouts, for_fleets, triggers)
        });
        let fleets_moved = Changes::default();
        let fleet_changes = fleets_moved.counting(fleet_changes);
        let (stores, stores_for_fleets, store_changes) = streams
            .cached_shared::<DeserializeGuard<CelldObjectStore>>(
                "CelldObjectStore",
                config.clone().any_semantic(),
            );
        // The Secrets' metadata tells which fleets and stores to look at again and whether a
        // Secret changed since its contents were last read.
        let (secrets, secrets_for_fleets, secrets_for_stores) =
            streams.cached_secrets("Secret", config);
        Self {
            fleets,
            fleets_moved,
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
            rollouts,
        }
    }
}

/// The APIs the cluster may or may not serve, as discovered at start.
pub(super) struct OptionalApis {
    /// Whether it serves HTTPRoute.
    pub(super) gateway_api: bool,
    /// The Flux source kinds it serves.
    pub(super) flux: Vec<(FluxSourceKind, ApiResource)>,
    /// Whether it serves CelldPreview (a CRD installed with this release).
    pub(super) previews: bool,
    /// Whether it serves CelldRollout (a CRD installed with this release).
    pub(super) rollouts: bool,
}
