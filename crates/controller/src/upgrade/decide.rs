//! Version-aware rollouts: how the StatefulSet moves its nodes to a new celld image. Pure: the
//! decision is made from the fleet's spec, the live StatefulSet and what the reconcile probed
//! (the nodes' `/state`, the pods left), and the StatefulSet carries the whole state (its image,
//! its partition and two annotations), so an operator restart picks a rollout up where it was.
//!
//! - Rolling: the new image with the StatefulSet's partition at the last ordinal; the partition
//!   goes down one node at a time, once every node is Ready and every node reports
//!   `restoring == 0` (the first node too: no node restarts while another is not ready or
//!   restores cells, celld #244/#245).
//! - Any other change of the pod template rolls the same way: at rest the partition is closed
//!   (at the node count), so a new template reaches no pod until the operator opens it one node
//!   at a time.
//! - Full stop: the old image at 0 replicas until no pod of the fleet is left and one lease
//!   lifetime passed since (celld: every old node stops and its lease expires before a new one
//!   starts), then the new image at the wanted replicas.
//! - Refused: a version celld forbids keeps the running image.

use crate::upgrade::held::HeldBack;
use crate::upgrade::live::{Live, max};
pub use crate::upgrade::probed::{Probe, Probed, Restores};
pub use crate::upgrade::progress::Progress;
use celld_api::contract::durability::Durability;
use celld_api::contract::lease::lease_lifetime;
use celld_api::contract::upgrades::{self, Transition};
use celld_api::contract::version::image_version;
use celld_api::{CelldFleetSpec, UpgradeStrategy};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::jiff::Timestamp;
use semver::Version;
use std::time::Duration;

/// The StatefulSet fields the rollout decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upgrade {
    /// The celld container's image.
    pub image: String,
    /// Whether the fleet is held at 0 replicas while old nodes stop.
    pub stopped: bool,
    /// The rolling update's partition: ordinals below it keep the old image.
    pub partition: i32,
    /// The image a rolling upgrade started from ([`celld_api::labels::ROLLING_FROM`]).
    pub rolling_from: Option<String>,
    /// The highest celld version the nodes were given ([`celld_api::labels::HIGHEST_VERSION`]).
    pub highest: Option<Version>,
    /// When a full stop found every old node gone ([`celld_api::labels::STOPPED_AT`]).
    pub stopped_at: Option<Timestamp>,
    /// spec.env's variables kept from the nodes until every node runs the release that
    /// allows them ([`held`](crate::upgrade::held)).
    pub held: Vec<HeldBack>,
    /// Where it stands.
    pub progress: Progress,
    /// What to probe before deciding again, if anything.
    pub probe: Option<Probe>,
    /// The node count to keep instead of the one wanted, while removing nodes waits until every
    /// node is Ready and none restores cells.
    pub keep_replicas: Option<i32>,
}

impl Upgrade {
    /// The image of the spec with nothing under way: a new fleet, or a finished change. The
    /// partition is closed at `replicas`: the next change of the pod template waits for the
    /// operator to roll it.
    fn steady(image: &str, highest: Option<Version>, replicas: i32) -> Self {
        Self {
            image: image.to_string(),
            stopped: false,
            partition: replicas.max(0),
            rolling_from: None,
            highest: max(highest, image_version(image)),
            stopped_at: None,
            held: Vec::new(),
            progress: Progress::Idle,
            probe: None,
            keep_replicas: None,
        }
    }
}

/// How the fleet's StatefulSet moves to `spec.image`, given the live StatefulSet, the replicas
/// the fleet should run and what was probed.
pub fn decide(
    spec: &CelldFleetSpec,
    replicas: i32,
    live: Option<&StatefulSet>,
    probed: &Probed,
) -> Upgrade {
    let mut upgrade = image(spec, replicas, live, probed);
    if let Some(live) = live.and_then(Live::of) {
        scale_in(&mut upgrade, replicas, &live, probed);
    }
    upgrade
}

/// Removing nodes waits, as a roll does, until every node is Ready and none restores cells:
/// the nodes left must not lose a follower while one of them is down or restoring. Going to no
/// node at all (no Worker deployed) never waits.
fn scale_in(upgrade: &mut Upgrade, replicas: i32, live: &Live, probed: &Probed) {
    if upgrade.stopped || replicas <= 0 || replicas >= live.replicas || live.ready == 0 {
        return;
    }
    // The nodes removed may be down; those that stay must all serve.
    let removed: Vec<String> = (replicas..live.replicas)
        .map(|i| format!("{}-{i}", live.name))
        .collect();
    let why = match &probed.restores {
        Some(restores) => match restores.holding(&removed) {
            Some(why) => why,
            None => return,
        },
        None => {
            upgrade.probe = Some(Probe::NodeStates);
            "the nodes' states are not read yet".to_string()
        }
    };
    upgrade.keep_replicas = Some(live.replicas);
    if matches!(upgrade.progress, Progress::Idle) {
        upgrade.partition = upgrade.partition.max(live.replicas);
        upgrade.progress = Progress::WaitingForRestores {
            why: format!(
                "removing nodes ({} to {replicas}) waits until every node is ready and none restores cells: {why}",
                live.replicas
            ),
        };
    }
}

/// How the StatefulSet's image and partition move to `spec.image`.
fn image(
    spec: &CelldFleetSpec,
    replicas: i32,
    live: Option<&StatefulSet>,
    probed: &Probed,
) -> Upgrade {
    let target = spec.image.as_str();
    let Some(live) = live.and_then(Live::of) else {
        return Upgrade::steady(target, None, replicas);
    };
    let highest = live.highest();
    let to = image_version(target);
    let in_the_way = to.as_ref().and_then(|to| {
        upgrades::forbidden(highest.as_ref(), to)
            .map(InTheWay::Refused)
            // Checked before the image changes: a rollback under way has passed it.
            .or_else(|| {
                (live.image != target)
                    .then(|| settings_in_the_way(spec, &live, to))
                    .flatten()
            })
    });
    if let Some(in_the_way) = in_the_way {
        let progress = match in_the_way {
            InTheWay::Refused(why) => Progress::Refused(format!(
                "spec.image {target} is refused and the nodes keep {}: {why}",
                live.image
            )),
            InTheWay::Waiting(why) => Progress::WaitingForSettings {
                why: format!(
                    "spec.image {target} waits and the nodes keep {}: {why}",
                    live.image
                ),
            },
        };
        // The nodes keep their image; a roll under way (of an image or a template) goes on.
        let mut kept = match live.rolling_from {
            Some(from) => roll(live.image, from, replicas, &live, highest, probed),
            None => kept(live.image, replicas, &live, highest, probed),
        };
        kept.progress = progress;
        return kept;
    }
    if live.image != target {
        return begin(spec, replicas, &live, highest, probed);
    }
    match live.rolling_from {
        Some(from) => roll(target, from, replicas, &live, highest, probed),
        None => kept(target, replicas, &live, highest, probed),
    }
}

/// The nodes keep `image`: at rest, or rolling a change of their pod template one node at a
/// time.
fn kept(
    image: &str,
    replicas: i32,
    live: &Live,
    highest: Option<Version>,
    probed: &Probed,
) -> Upgrade {
    if !live.template_pending {
        return Upgrade::steady(image, highest, replicas);
    }
    let (partition, waiting, probe) = step(live.partition, live.updated, replicas, live, probed);
    let updated = live.updated;
    Upgrade {
        partition,
        progress: match waiting {
            Some(why) => Progress::WaitingForRestores { why },
            None => Progress::RollingTemplate {
                updated,
                of: replicas,
            },
        },
        probe,
        ..Upgrade::steady(image, highest, replicas)
    }
}

/// The next partition of a roll at `partition` (at most `replicas`) with `updated` nodes on the
/// new template: one lower once every node above it is updated, every node of the `live`
/// StatefulSet is Ready and no node restores cells (asked for with a probe of the nodes'
/// states), else the same. With why the roll waits, if it does.
fn step(
    partition: i32,
    updated: i32,
    replicas: i32,
    live: &Live,
    probed: &Probed,
) -> (i32, Option<String>, Option<Probe>) {
    let partition = partition.min(replicas).max(0);
    let step_done = live.current && updated >= replicas - partition;
    if !step_done || partition == 0 {
        return (partition, None, None);
    }
    // No node serves (a fleet that never came up, a bad image everywhere): nothing is lost by
    // replacing them, and the change may be the fix.
    if live.ready == 0 {
        return (partition - 1, None, None);
    }
    if live.ready + 1 < replicas {
        return (
            partition,
            Some(format!(
                "{} of {replicas} nodes are ready; no node is replaced while another is down",
                live.ready
            )),
            None,
        );
    }
    // The next node may itself be down (a bad image's, a pod that never started): replacing it
    // is how a fix reaches it.
    let next = format!("{}-{}", live.name, partition - 1);
    match &probed.restores {
        None => (partition, None, Some(Probe::NodeStates)),
        Some(restores) => match restores.holding(&[next]) {
            None => (partition - 1, None, None),
            Some(why) => (partition, Some(why), None),
        },
    }
}

/// Why the image may not change yet.
enum InTheWay {
    /// Not until someone changes the spec.
    Refused(String),
    /// Not until the nodes finish what is under way.
    Waiting(String),
}

/// Why the nodes may not go back to `to` yet: a setting the release they leave holds must be
/// unset on every node first (celld 0.6.1: CELLD_LTX_RETENTION_SECS before going back to 0.6.0).
/// Refused while spec.env keeps it; once spec.env dropped it, the template drops it and the
/// image waits until every node runs without it.
fn settings_in_the_way(spec: &CelldFleetSpec, live: &Live, to: &Version) -> Option<InTheWay> {
    let from = live.running()?;
    upgrades::unset_before_rollback(&from, to)
        .into_iter()
        .find_map(|held| {
            let name = held.name;
            let unset_first = format!(
                "celld asks that {name} be unset on every node before the nodes go back below v{from}"
            );
            if spec.env.iter().any(|e| held.used_by(e)) {
                Some(InTheWay::Refused(format!(
                    "{unset_first}: remove {name} from spec.env; the image changes once every node runs without it"
                )))
            } else if live.env.iter().any(|e| held.used_by(e)) || !live.rolled_out() {
                Some(InTheWay::Waiting(format!(
                    "{unset_first}: the nodes roll without it first"
                )))
            } else {
                None
            }
        })
}

/// The image changes: roll or stop, by the strategy and celld's table.
fn begin(
    spec: &CelldFleetSpec,
    replicas: i32,
    live: &Live,
    highest: Option<Version>,
    probed: &Probed,
) -> Upgrade {
    let target = spec.image.as_str();
    let to = image_version(target);
    // Mid-roll, nodes run either image: the change must suit both.
    let from_images: Vec<&str> = [Some(live.image), live.rolling_from]
        .into_iter()
        .flatten()
        .collect();
    // The nodes roll across a boundary only if both the running and the wanted nodes
    // acknowledge writes after the bucket's.
    let durability = match (live.durability(), spec.effective_durability()) {
        (Durability::Bucket, Durability::Bucket) => Durability::Bucket,
        _ => Durability::Fleet,
    };
    // What celld's table says for every image the nodes run now.
    let by_table = from_images
        .iter()
        .map(|from| {
            upgrades::transition(
                image_version(from).as_ref(),
                to.as_ref(),
                highest.as_ref(),
                Some(durability),
            )
        })
        .find(|t| *t != Transition::Roll)
        .unwrap_or(Transition::Roll);
    let versions_known = to.is_some() && from_images.iter().all(|i| image_version(i).is_some());
    let transition = match spec.upgrade_strategy {
        // Rolling takes the risk of versions the operator cannot read, never a pair celld
        // says cannot share a serving fleet.
        UpgradeStrategy::Rolling => match by_table {
            Transition::FullStop(why) if versions_known => Transition::FullStop(format!(
                "{why}; spec.upgradeStrategy Rolling does not roll a pair celld forbids rolling"
            )),
            _ => Transition::Roll,
        },
        UpgradeStrategy::FullStop => {
            Transition::FullStop("spec.upgradeStrategy is FullStop".into())
        }
        UpgradeStrategy::Auto => by_table,
    };
    match transition {
        Transition::Roll => {
            // The first node waits as each next one does: every node Ready, none restoring.
            let (partition, waiting, probe) = step(replicas, 0, replicas, live, probed);
            Upgrade {
                image: target.to_string(),
                stopped: false,
                partition,
                rolling_from: Some(live.rolling_from.unwrap_or(live.image).to_string()),
                highest: max(highest, to),
                stopped_at: None,
                held: Vec::new(),
                progress: match waiting {
                    Some(why) => Progress::WaitingForRestores { why },
                    None => Progress::Rolling {
                        from: live.image.to_string(),
                        to: target.to_string(),
                        updated: 0,
                        of: replicas,
                    },
                },
                probe,
                keep_replicas: None,
            }
        }
        // `forbidden` was checked before; the table cannot forbid here.
        Transition::FullStop(why) | Transition::Forbidden(why) => {
            let lease = lease_lifetime(&spec.env);
            stop(target, live, highest, why, probed, lease)
        }
    }
}

/// A full stop: the old image at 0 replicas until no pod is left and `lease` (one lease
/// lifetime) passed since the reconcile that first found none, then the new image.
fn stop(
    target: &str,
    live: &Live,
    highest: Option<Version>,
    why: String,
    probed: &Probed,
    lease: Duration,
) -> Upgrade {
    let scaled_down = live.current && live.replicas == 0 && live.pods == 0;
    let gone = scaled_down && probed.pods_left == Some(0);
    // The first reconcile that finds every old pod gone starts the lease's clock.
    let stopped_at = gone.then(|| live.stopped_at.unwrap_or(probed.at));
    let starts_at = stopped_at.and_then(|at| at.checked_add(lease).ok());
    let progress = |left: i32| Progress::FullStop {
        from: live.image.to_string(),
        to: target.to_string(),
        left,
        starts_at,
        why: why.clone(),
    };
    if starts_at.is_some_and(|starts| starts <= probed.at) {
        // Every pod is created anew: at the new template, which an open partition gives them.
        let mut start = Upgrade::steady(target, highest, 0);
        start.progress = progress(0);
        return start;
    }
    let left = probed
        .pods_left
        .map_or(live.pods, |n| i32::try_from(n).unwrap_or(i32::MAX));
    Upgrade {
        image: live.image.to_string(),
        stopped: true,
        partition: 0,
        rolling_from: None,
        highest,
        stopped_at,
        held: Vec::new(),
        progress: progress(left),
        probe: scaled_down.then_some(Probe::PodsLeft),
        keep_replicas: None,
    }
}

/// A rolling upgrade under way: lower the partition by one once the nodes above it are updated,
/// every node is Ready and no node restores cells (see [`step`]).
fn roll(
    target: &str,
    from: &str,
    replicas: i32,
    live: &Live,
    highest: Option<Version>,
    probed: &Probed,
) -> Upgrade {
    let partition = live.partition.min(replicas).max(0);
    let step_done = live.current && live.updated >= replicas - partition && live.ready >= replicas;
    if step_done && partition == 0 {
        return Upgrade::steady(target, highest, replicas);
    }
    let (partition, waiting, probe) = step(live.partition, live.updated, replicas, live, probed);
    Upgrade {
        image: target.to_string(),
        stopped: false,
        partition,
        rolling_from: Some(from.to_string()),
        highest,
        stopped_at: None,
        held: Vec::new(),
        progress: match waiting {
            Some(why) => Progress::WaitingForRestores { why },
            None => Progress::Rolling {
                from: from.to_string(),
                to: target.to_string(),
                updated: live.updated,
                of: replicas,
            },
        },
        probe,
        keep_replicas: None,
    }
}

#[cfg(test)]
mod tests;
