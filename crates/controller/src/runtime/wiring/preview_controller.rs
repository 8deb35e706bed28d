//! The CelldPreview controller.

use super::watched::refs;
use crate::cache::streams::{Items, WatchStreams};
use celld_api::{CelldFleet, CelldPreview};
use kube::core::DeserializeGuard;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{Controller, controller};
use kube::{Resource, ResourceExt};

pub(super) type Previews = Store<DeserializeGuard<CelldPreview>>;

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
/// previews created together do not open fifty connections to the API server. With its cache
/// of previews.
pub(super) fn preview_controller(
    streams: &WatchStreams,
    fleet_changes: Items<DeserializeGuard<CelldFleet>>,
    concurrency: u16,
) -> (Controller<DeserializeGuard<CelldPreview>>, Previews) {
    let (previews, preview_changes) = streams.cached_touched::<DeserializeGuard<CelldPreview>>(
        "CelldPreview",
        streams.config().any_semantic(),
    );
    let (by_fleet, cached) = (previews.clone(), previews.clone());
    let controller = Controller::for_stream(preview_changes, previews)
        .with_config(controller::Config::default().concurrency(concurrency))
        .watches_stream(fleet_changes, move |fleet: DeserializeGuard<CelldFleet>| {
            previews_touched_by(&by_fleet, &fleet)
        });
    (controller, cached)
}
