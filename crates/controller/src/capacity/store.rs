//! The last capacity reading of every fleet, kept between reconciles: what the gauges export,
//! what a reconcile publishes in status.capacity and decides spec.autoscaling on, and since when
//! each autoscaling signal has held, reading after reading.

use crate::capacity::reading::{FleetReading, differs};
use crate::capacity::signals::{Hold, Signals};
use crate::locks::lock;
use k8s_openapi::jiff::Timestamp;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What is known of one fleet's capacity.
#[derive(Debug, Clone)]
pub struct Tracked {
    /// The fleet's namespace.
    pub namespace: String,
    /// The fleet's name.
    pub name: String,
    /// The last reading (shared with the observation of the reconcile that publishes it).
    pub reading: Arc<FleetReading>,
    /// When it was taken, on this process' clock.
    pub taken: Instant,
    /// Moves when a reading differs from the last one that moved it, or a signal of
    /// spec.autoscaling turns on or off: the fleet is reconciled then, not on every reading.
    pub version: u64,
    /// The last reading that moved `version`.
    shown: Arc<FleetReading>,
    /// What the last reading says to spec.autoscaling (fleets with it only).
    pub signals: Option<Signals>,
    /// Since when nodes have asked for more nodes, reading after reading.
    pub up_since: Option<Timestamp>,
    /// Since when the fleet has had room to lose a node, reading after reading.
    pub down_since: Option<Timestamp>,
    /// Whether the fleet's autoscaling is paused (a rollout, an upgrade, an adoption, a publish
    /// or a restore): exported for KEDA and HorizontalPodAutoscaler users.
    pub paused: bool,
    /// The nodes spec.autoscaling wants, for fleets with it.
    pub desired: Option<i32>,
}

/// The readings, by fleet uid.
#[derive(Debug, Default)]
pub struct CapacityStore {
    fleets: Mutex<HashMap<String, Tracked>>,
}

/// Where a fleet is: `namespace/name` and uid.
#[derive(Debug, Clone, Copy)]
pub struct FleetRef<'a> {
    /// Its uid.
    pub uid: &'a str,
    /// Its namespace.
    pub namespace: &'a str,
    /// Its name.
    pub name: &'a str,
}

impl CapacityStore {
    /// Keeps `reading` of `fleet` taken at `taken`, with what it says to spec.autoscaling;
    /// whether the fleet's version moved (its reconcile has something new to publish or
    /// decide).
    pub fn record(
        &self,
        fleet: FleetRef<'_>,
        reading: FleetReading,
        taken: Instant,
        signals: Option<Signals>,
    ) -> bool {
        let mut fleets = lock(&self.fleets);
        let previous = fleets.remove(fleet.uid);
        let at = reading.read_at;
        let (up_since, down_since) = match &signals {
            Some(s) => (
                s.up.as_ref()
                    .map(|_| previous.as_ref().and_then(|p| p.up_since).unwrap_or(at)),
                s.down
                    .as_ref()
                    .ok()
                    .map(|_| previous.as_ref().and_then(|p| p.down_since).unwrap_or(at)),
            ),
            None => (None, None),
        };
        let flipped = previous.as_ref().is_none_or(|p| {
            p.up_since.is_some() != up_since.is_some()
                || p.down_since.is_some() != down_since.is_some()
                || hold_reason(p.signals.as_ref()) != hold_reason(signals.as_ref())
        });
        let moved = flipped
            || previous
                .as_ref()
                .is_none_or(|p| differs(&p.shown.nodes, &reading.nodes));
        let reading = Arc::new(reading);
        let version = previous
            .as_ref()
            .map_or(1, |p| p.version + u64::from(moved));
        let shown = match (&previous, moved) {
            (Some(p), false) => p.shown.clone(),
            _ => reading.clone(),
        };
        fleets.insert(
            fleet.uid.to_string(),
            Tracked {
                namespace: fleet.namespace.to_string(),
                name: fleet.name.to_string(),
                reading,
                taken,
                version,
                shown,
                signals,
                up_since,
                down_since,
                paused: previous.as_ref().is_some_and(|p| p.paused),
                desired: previous.as_ref().and_then(|p| p.desired),
            },
        );
        moved
    }

    /// What is known of fleet `uid`.
    pub fn get(&self, uid: &str) -> Option<Tracked> {
        lock(&self.fleets).get(uid).cloned()
    }

    /// When fleet `uid` was last read, on this process' clock.
    pub fn taken(&self, uid: &str) -> Option<Instant> {
        lock(&self.fleets).get(uid).map(|t| t.taken)
    }

    /// Records what a reconcile of fleet `uid` decided, for the gauges.
    pub fn decided(&self, uid: &str, paused: bool, desired: Option<i32>) {
        if let Some(t) = lock(&self.fleets).get_mut(uid) {
            t.paused = paused;
            t.desired = desired;
        }
    }

    /// Calls `each` with every fleet's tracked capacity, in no order.
    pub fn each(&self, mut each: impl FnMut(&Tracked)) {
        for t in lock(&self.fleets).values() {
            each(t);
        }
    }

    /// Forgets the fleets whose uid `live` does not keep.
    pub fn retain(&self, live: impl Fn(&str) -> bool) {
        crate::map_retain::retain(&mut lock(&self.fleets), |uid, _| live(uid));
    }
}

/// The reason that holds a scale-in, if one does.
fn hold_reason(signals: Option<&Signals>) -> Option<celld_api::reasons::Reason> {
    signals.and_then(|s| s.down.as_ref().err().map(|h: &Hold| h.reason))
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::NodeCapacity;
    use celld_api::reasons::Reason;

    fn reading(at: i64, rss: u64) -> FleetReading {
        FleetReading {
            read_at: Timestamp::from_second(at).unwrap(),
            nodes: vec![NodeCapacity {
                name: "web-0".into(),
                rss_bytes: Some(rss),
                ..NodeCapacity::default()
            }],
        }
    }

    const WEB: FleetRef<'static> = FleetRef {
        uid: "u",
        namespace: "ns",
        name: "web",
    };

    fn up() -> Signals {
        Signals {
            up: Some((Reason::CapacityWaiting, "waiting".into())),
            down: Err(Hold {
                reason: Reason::NoHeadroom,
                message: "waiting".into(),
            }),
        }
    }

    #[test]
    fn moves_on_a_real_change_and_keeps_when_a_signal_started() {
        let store = CapacityStore::default();
        let now = Instant::now();
        assert!(store.record(WEB, reading(10, 1000), now, None), "first");
        assert!(!store.record(WEB, reading(20, 1050), now, None), "5 %");
        assert!(
            !store.record(WEB, reading(30, 1095), now, None),
            "9.5 % of the one shown"
        );
        assert!(store.record(WEB, reading(40, 1200), now, None), "20 %");
        assert_eq!(store.get("u").unwrap().version, 2);
        assert!(
            store.record(WEB, reading(50, 1200), now, Some(up())),
            "signal on"
        );
        assert!(!store.record(WEB, reading(60, 1200), now, Some(up())));
        let t = store.get("u").unwrap();
        assert_eq!(t.up_since, Some(Timestamp::from_second(50).unwrap()));
        assert_eq!(t.down_since, None);
        let quiet = Signals {
            up: None,
            down: Ok("room".into()),
        };
        assert!(store.record(WEB, reading(70, 1200), now, Some(quiet.clone())));
        assert!(!store.record(WEB, reading(80, 1200), now, Some(quiet)));
        let t = store.get("u").unwrap();
        assert_eq!(t.up_since, None);
        assert_eq!(t.down_since, Some(Timestamp::from_second(70).unwrap()));
        store.decided("u", true, Some(3));
        assert!(store.get("u").unwrap().paused);
        store.retain(|_| false);
        assert!(store.get("u").is_none());
    }
}
