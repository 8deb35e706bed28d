//! Fleets whose last reconcile found nothing to do, with the inputs it saw. A periodic
//! reconcile that finds the same inputs again (the fleet, its store and Secret, every child's
//! resourceVersion, the deployment pointer) knows the plan, the apply and the status would
//! change nothing, and skips them: at rest a fleet costs one conditional read of its pointer.
//! A full reconcile still runs every [`FULL_EVERY`](crate::shared::settings::FULL_EVERY) (--full-reconcile-seconds), whatever the
//! inputs say; with more fleets
//! than [`FULL_RECONCILES_PER_SECOND`] allows in that period, the period stretches (as the
//! resync's does) so an idle operator's full reconciles, and the node reads behind
//! status.nodes, keep to that rate: 10,000 fleets are each looked at in full every 2,000 s.

use crate::buckets::pointer::Pointer;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Periodic full reconciles per second, across all fleets: beyond it [`FULL_EVERY`](crate::shared::settings::FULL_EVERY) stretches.
pub const FULL_RECONCILES_PER_SECOND: u32 = 5;

/// How a fleet stands against the inputs it last settled with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Same inputs, same children, within the full-reconcile period: nothing to do.
    Unchanged,
    /// Same inputs and children, but its full-reconcile period passed: a full reconcile that
    /// only refreshes what no watch tells (its nodes' states).
    Due,
    /// Something moved, or it never settled: a full reconcile.
    Changed,
}

/// The inputs of one reconcile that decide what it does.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    /// The fleet's resourceVersion (spec, annotations and status).
    pub fleet: String,
    /// The resourceVersion of its CelldObjectStore, if it uses one.
    pub store: Option<String>,
    /// The resourceVersion of its credentials Secret.
    pub secret: String,
    /// Its deployment pointer.
    pub pointer: Pointer,
    /// What its spec.source, deploy Job and pod say (see
    /// [`SourceRead::fingerprint`](crate::fleet::source_step::SourceRead::fingerprint)).
    pub source: Option<String>,
    /// The version of its capacity reading (moves when the reading differs, or a signal of
    /// spec.autoscaling turned on or off).
    pub capacity: Option<u64>,
    /// How many self-fences of its nodes are recent (see [`fences`](crate::nodes::fences)).
    pub fences: usize,
}

/// A child of a fleet, as a cache knows it: kept for every settled fleet, so without spare
/// capacity (the kinds are the API types' own strings).
#[derive(Debug, Clone, PartialEq)]
pub struct ChildVersion {
    kind: Cow<'static, str>,
    name: Box<str>,
    /// Its resourceVersion; None while it is absent.
    version: Option<Box<str>>,
}

/// The version every child in `children` (kind, name) has now, as `version` tells it.
pub fn versions(
    children: Vec<(Cow<'static, str>, String)>,
    version: impl Fn(&str, &str) -> Option<String>,
) -> Vec<ChildVersion> {
    children
        .into_iter()
        .map(|(kind, name)| ChildVersion {
            version: version(&kind, &name).map(String::into_boxed_str),
            kind,
            name: name.into_boxed_str(),
        })
        .collect()
}

#[derive(Debug)]
struct Entry {
    seen: Seen,
    children: Box<[ChildVersion]>,
    at: Instant,
}

/// The settled fleets, by uid.
#[derive(Debug, Default)]
pub struct Settled {
    fleets: Mutex<HashMap<String, Entry>>,
}

impl Settled {
    /// Records that fleet `uid` needed nothing with inputs `seen` and `children`.
    pub fn record(&self, uid: &str, seen: Seen, children: Vec<ChildVersion>) {
        let entry = Entry {
            seen,
            children: children.into_boxed_slice(),
            at: Instant::now(),
        };
        self.lock().insert(uid.to_string(), entry);
    }

    /// How fleet `uid` stands: whether it settled with the inputs `seen`, `version` (kind, name
    /// → resourceVersion in the caches now) still gives every child the version it had then,
    /// and less than `full_every` passed since.
    pub fn standing(
        &self,
        uid: &str,
        seen: &Seen,
        version: impl Fn(&str, &str) -> Option<String>,
        full_every: Duration,
    ) -> Standing {
        let fleets = self.lock();
        let Some(entry) = fleets.get(uid) else {
            return Standing::Changed;
        };
        let same = entry.seen == *seen
            && entry
                .children
                .iter()
                .all(|c| version(&c.kind, &c.name).as_deref() == c.version.as_deref());
        match (same, entry.at.elapsed() < full_every) {
            (false, _) => Standing::Changed,
            (true, true) => Standing::Unchanged,
            (true, false) => Standing::Due,
        }
    }

    /// Forgets fleet `uid`: its next reconcile is a full one.
    pub fn forget(&self, uid: &str) {
        self.lock().remove(uid);
    }

    /// Forgets the fleets whose uid `live` does not keep.
    pub fn retain(&self, live: impl Fn(&str) -> bool) {
        crate::map_retain::retain(&mut self.lock(), |uid, _| live(uid));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.fleets.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::settings::FULL_EVERY;

    fn seen(fleet: &str) -> Seen {
        Seen {
            source: None,
            capacity: None,
            fences: 0,
            fleet: fleet.into(),
            store: None,
            secret: "7".into(),
            pointer: Pointer::Missing,
        }
    }

    fn children(rv: &str) -> Vec<ChildVersion> {
        versions(
            vec![
                ("StatefulSet".into(), "web".into()),
                ("Ingress".into(), "web".into()),
            ],
            |kind, _| (kind == "StatefulSet").then(|| rv.to_string()),
        )
    }

    fn cache(rv: &'static str) -> impl Fn(&str, &str) -> Option<String> {
        move |kind, _| (kind == "StatefulSet").then(|| rv.to_string())
    }

    impl Settled {
        fn unchanged(
            &self,
            uid: &str,
            seen: &Seen,
            version: impl Fn(&str, &str) -> Option<String>,
        ) -> bool {
            self.standing(uid, seen, version, FULL_EVERY) == Standing::Unchanged
        }
    }

    #[test]
    fn same_inputs_and_children_are_unchanged() {
        let s = Settled::default();
        assert!(
            !s.unchanged("u", &seen("1"), cache("5")),
            "nothing recorded yet"
        );
        s.record("u", seen("1"), children("5"));
        assert!(s.unchanged("u", &seen("1"), cache("5")));
    }

    #[test]
    fn any_moved_input_or_child_is_a_change() {
        let s = Settled::default();
        s.record("u", seen("1"), children("5"));
        assert!(!s.unchanged("u", &seen("2"), cache("5")), "fleet");
        assert!(!s.unchanged("u", &seen("1"), cache("6")), "child");
        let appeared = |_: &str, _: &str| Some("5".to_string());
        assert!(
            !s.unchanged("u", &seen("1"), appeared),
            "an absent child appeared"
        );
        let mut other = seen("1");
        other.pointer = Pointer::Unknown("no bucket".into());
        assert!(!s.unchanged("u", &other, cache("5")), "pointer");
        other = seen("1");
        other.secret = "8".into();
        assert!(!s.unchanged("u", &other, cache("5")), "Secret");
        other = seen("1");
        other.store = Some("3".into());
        assert!(!s.unchanged("u", &other, cache("5")), "store");
    }

    #[test]
    fn the_same_inputs_past_the_period_are_due_for_a_full_reconcile() {
        let s = Settled::default();
        s.record("u", seen("1"), children("5"));
        assert_eq!(
            s.standing("u", &seen("1"), cache("5"), Duration::ZERO),
            Standing::Due
        );
        assert_eq!(
            s.standing("u", &seen("2"), cache("5"), Duration::ZERO),
            Standing::Changed,
            "a change is a change, due or not"
        );
    }

    #[test]
    fn the_period_stretches_beyond_3_000_fleets_to_2_000_s_at_10_000() {
        use crate::shared::resync_budget::stretched;
        let period = |fleets| stretched(FULL_EVERY, fleets, FULL_RECONCILES_PER_SECOND);
        assert_eq!(period(1_000), FULL_EVERY);
        assert_eq!(period(3_000), FULL_EVERY);
        assert_eq!(period(10_000), Duration::from_secs(2_000));
    }

    #[test]
    fn forgotten_and_deleted_fleets_are_not_settled() {
        let s = Settled::default();
        s.record("u", seen("1"), children("5"));
        s.record("v", seen("1"), children("5"));
        s.forget("u");
        s.retain(|uid| uid != "v");
        assert!(!s.unchanged("u", &seen("1"), cache("5")));
        assert!(!s.unchanged("v", &seen("1"), cache("5")));
    }
}
