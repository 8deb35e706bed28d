//! Pointing back the fleets a failed rollout moved: once a fleet's own reconcile no longer
//! follows the rollout (its status.source no longer names it, so no deploy Job of the revision
//! runs or starts), its bucket pointer is set back at the version it served when its wave
//! started, with the compare-and-swap writes of [`pointer_back`](crate::buckets::pointer_back).

use crate::buckets::pointer_back::PointBack;
use crate::rollout::input::PointedBack;
use crate::shared::bucket_access::reach;
use crate::shared::context::Shared;
use celld_api::CelldFleet;
use celld_api::rollout::{CelldRolloutStatus, FleetPhase, RolloutFleet};
use std::collections::BTreeMap;

/// Whether `fleet`'s own reconcile still follows the rollout `rollout`.
fn follows(fleet: &CelldFleet, rollout: &str) -> bool {
    fleet
        .status
        .as_ref()
        .and_then(|s| s.source.as_ref())
        .is_some_and(|s| s.rollout.as_deref() == Some(rollout))
}

/// Points back every fleet of `status` being pointed back whose reconcile no longer follows
/// `rollout` (of namespace `ns`); what each got.
pub async fn due(
    shared: &Shared,
    ns: &str,
    rollout: &str,
    status: &CelldRolloutStatus,
    fleets: &BTreeMap<String, CelldFleet>,
) -> BTreeMap<String, PointedBack> {
    let mut done = BTreeMap::new();
    let rolling_back = status
        .waves
        .iter()
        .flat_map(|w| &w.fleets)
        .filter(|f| f.phase == FleetPhase::RollingBack);
    for entry in rolling_back {
        let outcome = match fleets.get(&entry.name) {
            None => PointedBack::Skipped("the fleet was deleted: nothing to point back".into()),
            Some(fleet) if follows(fleet, rollout) => continue,
            Some(fleet) => one(shared, ns, fleet, entry).await,
        };
        done.insert(entry.name.clone(), outcome);
    }
    done
}

/// Points `fleet` back at the version `entry` recorded. Its pointer must name the version the
/// rollout published, or, when its status did not say one yet (a publish that landed as the
/// wave failed), any: the rollout owned the fleet's pointer since its wave started.
async fn one(shared: &Shared, ns: &str, fleet: &CelldFleet, entry: &RolloutFleet) -> PointedBack {
    let to = entry.to.as_deref();
    let published = to.map_or_else(|| "the revision".to_string(), |to| format!("version {to}"));
    let Some(from) = &entry.from else {
        return PointedBack::Skipped(format!(
            "the fleet served no version before its wave: left on {published}"
        ));
    };
    let Some(script) = &entry.from_script else {
        return PointedBack::Skipped(format!(
            "the pointer of version {from} named no script: left on {published}; run kubectl celld rollback {} --to {from}",
            entry.name
        ));
    };
    let (source, storage) = match reach(shared, ns, fleet).await {
        Ok(reached) => reached,
        Err(why) => return PointedBack::Failed(why),
    };
    match source.point_back(&storage, to, script, from).await {
        Ok(PointBack::Written) => PointedBack::Done(format!(
            "pointed back from {published} at version {from} (compare-and-swap)"
        )),
        Ok(PointBack::Already) => PointedBack::Done(format!("already on version {from}")),
        Ok(PointBack::Moved(now)) => PointedBack::Skipped(format!(
            "the pointer names {} now, not the rollout's {published}: another writer moved it, so it is left alone",
            now.map_or_else(|| "no version".to_string(), |v| format!("version {v}"))
        )),
        Err(why) => PointedBack::Failed(why),
    }
}
