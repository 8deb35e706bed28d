//! Which fleets a rollout ships to: those of its namespace its selector matches, in name order,
//! minus the fleets it must leave alone (their own spec.source, the pin label, previews, an
//! older rollout's). One owner of a fleet's pointer at a time: of the rollouts selecting a
//! fleet, the oldest (by creation, then name) ships to it. Pure: the operator and `kubectl
//! celld deploy --dry-run` decide alike.

use super::{CelldRollout, MAX_FLEETS, SkipReason, SkippedFleet};
use crate::fleet::CelldFleet;
use crate::labels;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::ResourceExt;
use kube::core::{Selector, SelectorExt};
use std::collections::BTreeMap;

/// The fleets a rollout ships to, in order, and those it leaves alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// The fleets it ships to, by name.
    pub fleets: Vec<String>,
    /// Their labels, in the same order (wave selectors read them).
    pub labels: Vec<BTreeMap<String, String>>,
    /// Matching fleets left alone, by name.
    pub skipped: Vec<SkippedFleet>,
}

/// Whether `selector` selects `labels`; a selector Kubernetes would refuse selects nothing.
pub fn selects(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    Selector::try_from(selector.clone()).is_ok_and(|s| s.matches(labels))
}

/// Whether `a` is older than `b`: created first, or at the same second with a smaller name.
fn older(a: &CelldRollout, b: &CelldRollout) -> bool {
    let stamp = |r: &CelldRollout| r.metadata.creation_timestamp.as_ref().map(|t| t.0);
    (stamp(a), a.name_any()) < (stamp(b), b.name_any())
}

/// Why `fleet` is left alone by `rollout`, among the `rollouts` of its namespace; None when
/// the rollout ships to it.
fn skip(
    rollout: &CelldRollout,
    fleet: &CelldFleet,
    rollouts: &[&CelldRollout],
) -> Option<(SkipReason, String)> {
    let name = fleet.name_any();
    if fleet.spec.source.is_some() {
        return Some((
            SkipReason::OwnSource,
            format!(
                "CelldFleet {name} declares its own spec.source, which owns its bucket pointer; remove it to let the rollout ship to the fleet"
            ),
        ));
    }
    if let Some(pin) = fleet.labels().get(labels::ROLLOUT_PIN) {
        return Some((
            SkipReason::Pinned,
            format!(
                "CelldFleet {name} carries the label {}={pin}; remove it to let rollouts ship to the fleet",
                labels::ROLLOUT_PIN
            ),
        ));
    }
    if fleet.labels().contains_key(labels::PREVIEW) {
        return Some((
            SkipReason::Preview,
            format!("CelldFleet {name} serves a CelldPreview, which has a Worker of its own"),
        ));
    }
    let owner = rollouts
        .iter()
        .filter(|r| r.uid() != rollout.uid() && older(r, rollout))
        .filter(|r| selects(&r.spec.selector, fleet.labels()))
        .min_by(|a, b| {
            if older(a, b) {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Greater
            }
        })?;
    Some((
        SkipReason::OtherRollout,
        format!(
            "the older CelldRollout {} ships to CelldFleet {name} (one rollout owns a fleet's pointer at a time); narrow one of the selectors, or delete that rollout",
            owner.name_any()
        ),
    ))
}

/// The fleets `rollout` ships to among `fleets` (those of its namespace), with the `rollouts`
/// of its namespace (itself among them or not) deciding who owns a fleet several select.
pub fn select<'a>(
    rollout: &CelldRollout,
    fleets: impl IntoIterator<Item = &'a CelldFleet>,
    rollouts: &[&CelldRollout],
) -> Selection {
    let mut matching: Vec<&CelldFleet> = fleets
        .into_iter()
        .filter(|f| f.metadata.deletion_timestamp.is_none())
        .filter(|f| selects(&rollout.spec.selector, f.labels()))
        .collect();
    matching.sort_by_key(|f| f.name_any());
    let mut selection = Selection::default();
    for fleet in matching {
        let name = fleet.name_any();
        if let Some((reason, message)) = skip(rollout, fleet, rollouts) {
            selection.skipped.push(SkippedFleet {
                name,
                reason,
                message,
            });
        } else if selection.fleets.len() >= MAX_FLEETS {
            selection.skipped.push(SkippedFleet {
                name,
                reason: SkipReason::TooMany,
                message: format!(
                    "one rollout ships to at most {MAX_FLEETS} fleets; split the selector over several rollouts"
                ),
            });
        } else {
            selection.fleets.push(name);
            selection.labels.push(fleet.labels().clone());
        }
    }
    selection
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::WorkerSource;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn fleet(name: &str, labels: &[(&str, &str)]) -> CelldFleet {
        let mut f: CelldFleet = serde_json::from_value(serde_json::json!({
            "apiVersion": "platform.celld.dev/v1alpha1",
            "kind": "CelldFleet",
            "metadata": {"name": name, "namespace": "t"},
            "spec": {"objectStorage": {"bucket": format!("s3://b/{name}")}},
        }))
        .unwrap();
        f.metadata.labels = Some(
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        f
    }

    fn rollout(name: &str, created: i64, tier: &str) -> CelldRollout {
        let mut r: CelldRollout = serde_json::from_value(serde_json::json!({
            "apiVersion": "platform.celld.dev/v1alpha1",
            "kind": "CelldRollout",
            "metadata": {"name": name, "namespace": "t", "uid": name},
            "spec": {
                "source": {"image": {"reference": "r/w:1@sha256:0000000000000000000000000000000000000000000000000000000000000000"}},
                "selector": {"matchLabels": {"tier": tier}},
                "waves": [{"fleets": "100%"}],
            },
        }))
        .unwrap();
        r.metadata.creation_timestamp = Some(Time(
            k8s_openapi::jiff::Timestamp::from_second(created).unwrap(),
        ));
        r
    }

    #[test]
    fn ships_to_matching_fleets_in_name_order_and_says_why_it_skips_the_others() {
        let mut own = fleet("c-own", &[("tier", "web")]);
        own.spec.source = Some(Box::new(WorkerSource::from_image("r/x:1")));
        let fleets = [
            fleet("b", &[("tier", "web")]),
            fleet("a", &[("tier", "web")]),
            fleet("other", &[("tier", "db")]),
            own,
            fleet("d-pinned", &[("tier", "web"), (labels::ROLLOUT_PIN, "v1")]),
            fleet("e-preview", &[("tier", "web"), (labels::PREVIEW, "e")]),
        ];
        let r = rollout("web", 10, "web");
        let s = select(&r, &fleets, &[&r]);
        assert_eq!(s.fleets, ["a", "b"]);
        let skipped: Vec<(&str, SkipReason)> = s
            .skipped
            .iter()
            .map(|k| (k.name.as_str(), k.reason))
            .collect();
        assert_eq!(
            skipped,
            [
                ("c-own", SkipReason::OwnSource),
                ("d-pinned", SkipReason::Pinned),
                ("e-preview", SkipReason::Preview)
            ]
        );
        assert!(s.skipped[1].message.contains("rollout-pin=v1"));
    }

    #[test]
    fn the_oldest_rollout_owns_a_fleet_two_select() {
        let fleets = [fleet("a", &[("tier", "web")])];
        let (old, young) = (rollout("z-old", 1, "web"), rollout("a-young", 2, "web"));
        assert_eq!(select(&old, &fleets, &[&old, &young]).fleets, ["a"]);
        let s = select(&young, &fleets, &[&old, &young]);
        assert!(s.fleets.is_empty());
        assert_eq!(s.skipped[0].reason, SkipReason::OtherRollout);
        assert!(s.skipped[0].message.contains("z-old"), "{:?}", s.skipped);
        // Created in the same second: the name decides.
        let (b, a) = (rollout("b", 5, "web"), rollout("a", 5, "web"));
        assert_eq!(select(&a, &fleets, &[&a, &b]).fleets, ["a"]);
        assert!(select(&b, &fleets, &[&a, &b]).fleets.is_empty());
    }
}
