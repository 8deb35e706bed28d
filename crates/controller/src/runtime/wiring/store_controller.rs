//! The CelldObjectStore controller, which writes the stores' status.

use super::watched::{Stores, Triggers, refs, stores_in, stores_with_secret};
use celld_api::{CelldFleet, CelldObjectStore};
use kube::ResourceExt;
use kube::core::DeserializeGuard;
use kube::runtime::{Controller, controller};

/// The CelldObjectStore controller (it writes the stores' status): looked at again when its
/// Secret changes, or when a fleet of its namespace changes (a storeRef may have moved).
pub(super) fn store_controller(
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
