//! Settings held back: a variable of spec.env that uses a setting a release holds until every
//! node runs it (celld 0.6.1's CELLD_LTX_RETENTION_SECS and a raised
//! CELLD_MAX_ASSET_FILE_BYTES) reaches the nodes' template only once every node runs that
//! release or later; until then the fleet says which setting waits and for which nodes. Pure.

use crate::upgrade::live::Live;
use crate::upgrade::progress::Progress;
use celld_api::CelldFleetSpec;
use celld_api::contract::held::held_uses;
use celld_api::contract::releases::{display, triple};
use celld_api::contract::version::{image_version, unknown_because};

/// A variable of spec.env kept from the nodes for now, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldBack {
    /// The variable.
    pub name: String,
    /// The sentence: what it waits for, naming the nodes not there yet.
    pub why: String,
    /// Whether it reaches the nodes on its own (they are moving to a release that allows it);
    /// false when spec.image must change first.
    pub on_its_way: bool,
}

/// Where the nodes are going, as the upgrade decided it.
pub struct Moving<'a> {
    /// Where the change of image stands.
    pub progress: &'a Progress,
    /// The rolling update's partition: nodes below it are not moved yet.
    pub partition: i32,
    /// Whether the fleet is held at 0 nodes while old ones stop.
    pub stopped: bool,
}

/// The variables of `spec.env` the nodes' template leaves out for now, given the `live`
/// StatefulSet of the fleet `name` (none for a new fleet) and where its nodes are `moving`.
pub fn held_back(
    spec: &CelldFleetSpec,
    name: &str,
    live: Option<&Live>,
    upgrade: &Moving,
) -> Vec<HeldBack> {
    held_uses(&spec.env)
        .into_iter()
        .filter_map(|used| {
            let var = used.var.name.as_str();
            let release = display(used.since);
            let waits = |on_its_way: bool, why: String| {
                Some(HeldBack {
                    name: var.to_string(),
                    why: format!(
                        "spec.env's {var} reaches the nodes once every node runs celld {release} or later: {why}"
                    ),
                    on_its_way,
                })
            };
            let Some(target) = image_version(&spec.image) else {
                return waits(
                    false,
                    format!(
                    "the version of spec.image {} is unknown ({}); tag it with its version",
                    spec.image,
                    unknown_because(&spec.image)
                ),
                );
            };
            if triple(&target) < used.since {
                return waits(false, format!("spec.image runs v{target}"));
            }
            // A new fleet's nodes all start on the image; nodes that use it already keep it.
            let live = live?;
            if live.env.iter().any(|e| used.held.used_by(e)) {
                return None;
            }
            let below = |image: &str| image_version(image).is_none_or(|v| triple(&v) < used.since);
            match &upgrade.progress {
                Progress::Rolling { updated, of, .. } => waits(
                    true,
                    format!(
                    "{updated} of {of} nodes run it, not yet {}",
                    not_yet(name, upgrade.partition)
                ),
                ),
                Progress::WaitingForRestores { .. }
                    if live.rolling_from.is_some() || below(live.image) =>
                {
                    waits(
                    true,
                    format!(
                    "the nodes roll to it, not yet {}",
                    not_yet(name, upgrade.partition)
                ),
                    )
                }
                Progress::FullStop { left, .. } if upgrade.stopped => waits(
                    true,
                    format!("the fleet stops to start it ({left} old nodes left)"),
                ),
                // Every old node stopped: the new nodes start with it.
                Progress::FullStop { .. } => None,
                Progress::Idle
                | Progress::RollingTemplate { .. }
                | Progress::Refused(_)
                | Progress::WaitingForSettings { .. }
                    if below(live.image) =>
                {
                    waits(false, format!("the nodes run {}", live.image))
                }
                Progress::Idle
                | Progress::RollingTemplate { .. }
                | Progress::WaitingForRestores { .. }
                | Progress::Refused(_)
                | Progress::WaitingForSettings { .. } => None,
            }
        })
        .collect()
}

/// The nodes below `partition`, which a roll has not moved yet, by name.
fn not_yet(name: &str, partition: i32) -> String {
    let nodes: Vec<String> = (0..partition).map(|i| format!("{name}-{i}")).collect();
    nodes.join(", ")
}

#[cfg(test)]
mod tests;
