//! celld's upgrade rules (runtime contract, "Shutdown and upgrades"), read from the release
//! table: which version changes may roll one node at a time, which must stop every old node
//! before the new version starts, and which versions may never start again once a newer one ran.

use super::durability::Durability;
use super::releases::{Held, RELEASES, Release, Rolling, Triple, display, triple};
use semver::Version;

/// How the nodes may move from one celld version to another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transition {
    /// One node at a time, waiting for restores between nodes.
    Roll,
    /// Stop every old node, then start the new version; the sentence says why.
    FullStop(String),
    /// Not at all; the sentence says why.
    Forbidden(String),
}

fn below(v: &Version, first: Triple) -> bool {
    // A pre-release of the first version (0.4.0-rc.1) is already the new line.
    triple(v) < first
}

/// Whether `to` may start at all once `highest` ran: `Some(why)` when the table forbids it.
pub fn forbidden(highest: Option<&Version>, to: &Version) -> Option<String> {
    let highest = highest?;
    RELEASES
        .iter()
        .filter(|r| r.no_return)
        .find(|r| !below(highest, r.version) && below(to, r.version))
        .map(|r| {
            let floor = display(r.version);
            format!(
                "celld v{to} may not start again once {floor} or later ran (v{highest} ran on this fleet): keep an image at {floor} or later"
            )
        })
}

/// How nodes running `from` move to `to` (either unknown: the safe path), given the highest
/// version that ran on the fleet and its durability.
pub fn transition(
    from: Option<&Version>,
    to: Option<&Version>,
    highest: Option<&Version>,
    durability: Option<Durability>,
) -> Transition {
    if let Some(why) = to.and_then(|to| forbidden(highest, to)) {
        return Transition::Forbidden(why);
    }
    let (Some(from), Some(to)) = (from, to) else {
        return Transition::FullStop(
            "the celld version of the running or the new image is unknown (its tag is not a version), so the safe path is taken".into(),
        );
    };
    let fleet_durability = durability.unwrap_or(Durability::Fleet) == Durability::Fleet;
    RELEASES
        .iter()
        .filter(|r| boundary(r, fleet_durability))
        .find(|r| below(from, r.version) != below(to, r.version))
        .map_or(Transition::Roll, |r| {
            let first = display(r.version);
            Transition::FullStop(format!(
                "celld before {first} and {first} or later must not run side by side (v{from} → v{to})"
            ))
        })
}

/// The settings that must be unset on every node before nodes running `from` go back to `to`:
/// those the releases after `to`, up to `from`, bring and hold ([`Held`]) with
/// `unset_before_rollback`.
pub fn unset_before_rollback(from: &Version, to: &Version) -> Vec<&'static Held> {
    RELEASES
        .iter()
        .filter(|r| below(to, r.version) && !below(from, r.version))
        .flat_map(|r| r.held.iter())
        .filter(|h| h.unset_before_rollback)
        .collect()
}

/// Whether nodes must not cross `release` while both sides run.
fn boundary(release: &Release, fleet_durability: bool) -> bool {
    match release.rolls_from_older {
        Rolling::Yes => false,
        Rolling::No => true,
        Rolling::WithBucketDurability => fleet_durability,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::version::image_version;

    fn v(s: &str) -> Version {
        image_version(&format!("ghcr.io/denoland/celld:{s}")).unwrap()
    }

    fn t(from: &str, to: &str) -> Transition {
        transition(Some(&v(from)), Some(&v(to)), Some(&v(from)), None)
    }

    #[test]
    fn the_contract_table() {
        assert_eq!(t("v0.4.0", "v0.4.1"), Transition::Roll);
        assert_eq!(t("v0.2.1", "v0.3.0"), Transition::Roll);
        for (from, to) in [
            ("v0.1.3", "v0.2.0"),
            ("v0.3.0", "v0.4.0"),
            ("v0.3.9", "v0.4.1"),
            ("v0.2.0", "v0.4.0"),
            ("v0.5.1", "v0.6.0"),
            ("v0.4.0", "v0.3.0"),
            ("v0.3.0", "v0.4.0-rc.1"),
        ] {
            assert!(
                matches!(t(from, to), Transition::FullStop(_)),
                "{from} → {to}"
            );
        }
    }

    /// Every pair of neighbouring releases from the oldest supported one, each way, as celld's
    /// upgrade notes give it (the newer release's notes name each pair).
    #[test]
    fn every_pair_of_releases_each_way() {
        use Transition::Roll;
        let stop = |t: Transition| matches!(t, Transition::FullStop(_));
        let forbidden = |t: Transition| matches!(t, Transition::Forbidden(_));
        let with = |from: &str, to: &str, durability| {
            let (from, to) = (v(from), v(to));
            let highest = from.clone().max(to.clone());
            transition(Some(&from), Some(&to), Some(&highest), durability)
        };
        let fleet = |from: &str, to: &str| with(from, to, None);
        let bucket = |from: &str, to: &str| with(from, to, Some(Durability::Bucket));
        // 0.4.0 → 0.4.1 rolls, and no 0.4.0 starts again.
        assert_eq!(fleet("0.4.0", "0.4.1"), Roll);
        assert!(forbidden(fleet("0.4.1", "0.4.0")));
        // 0.4.1 → 0.5.0 is a full stop whatever the durability (0.4.1 cannot read 0.5.0's alarm
        // discovery entries), and no 0.4.x starts on the bucket once 0.5 ran.
        assert!(stop(fleet("0.4.1", "0.5.0")));
        assert!(stop(bucket("0.4.1", "0.5.0")));
        assert!(stop(fleet("0.4.0", "0.5.1")));
        assert!(forbidden(fleet("0.5.0", "0.4.1")));
        assert!(forbidden(bucket("0.5.1", "0.4.1")));
        // 0.5.0 ↔ 0.5.1 rolls.
        assert_eq!(fleet("0.5.0", "0.5.1"), Roll);
        assert_eq!(fleet("0.5.1", "0.5.0"), Roll);
        // 0.5.1 ↔ 0.6.0: a full stop with fleet durability, rolling with bucket durability.
        assert!(stop(fleet("0.5.1", "0.6.0")));
        assert_eq!(bucket("0.5.1", "0.6.0"), Roll);
        assert!(stop(fleet("0.6.0", "0.5.1")));
        assert_eq!(bucket("0.6.0", "0.5.1"), Roll);
        // 0.6.0 ↔ 0.6.1 rolls (its gates are held apart), 0.6.1 ↔ 0.6.2 rolls.
        assert_eq!(fleet("0.6.0", "0.6.1"), Roll);
        assert_eq!(fleet("0.6.1", "0.6.0"), Roll);
        assert_eq!(fleet("0.6.1", "0.6.2"), Roll);
        assert_eq!(fleet("0.6.2", "0.6.1"), Roll);
        // Tags as celld's release workflow publishes them.
        assert_eq!(fleet("v0.6.1", "0.6.2"), Roll);
    }

    #[test]
    fn a_rollback_below_0_6_1_needs_its_epoch_retention_unset_first() {
        let names = |from: &str, to: &str| -> Vec<&str> {
            unset_before_rollback(&v(from), &v(to))
                .iter()
                .map(|h| h.name)
                .collect()
        };
        assert_eq!(names("0.6.1", "0.6.0"), ["CELLD_LTX_RETENTION_SECS"]);
        assert_eq!(names("0.6.2", "0.5.1"), ["CELLD_LTX_RETENTION_SECS"]);
        assert!(names("0.6.2", "0.6.1").is_empty());
        assert!(names("0.6.0", "0.5.1").is_empty());
        assert!(names("0.6.0", "0.6.1").is_empty(), "not a rollback");
    }

    #[test]
    fn bucket_durability_rolls_across_v0_6() {
        let (from, to) = (v("v0.5.1"), v("v0.6.0"));
        assert_eq!(
            transition(Some(&from), Some(&to), None, Some(Durability::Bucket)),
            Transition::Roll
        );
    }

    #[test]
    fn unknown_versions_take_the_safe_path() {
        assert!(matches!(
            transition(None, Some(&v("v0.4.1")), None, None),
            Transition::FullStop(_)
        ));
        assert!(matches!(
            transition(Some(&v("v0.4.1")), None, None, None),
            Transition::FullStop(_)
        ));
    }

    #[test]
    fn no_v0_4_0_after_v0_4_1() {
        let highest = v("v0.4.1");
        let Transition::Forbidden(why) =
            transition(Some(&highest), Some(&v("v0.4.0")), Some(&highest), None)
        else {
            panic!("a downgrade below v0.4.1 must be forbidden");
        };
        assert!(why.contains("v0.4.0 may not start again"), "{why}");
        // From an unknown image whose predecessor was v0.4.1, still forbidden.
        assert!(matches!(
            transition(None, Some(&v("v0.4.0")), Some(&highest), None),
            Transition::Forbidden(_)
        ));
        // v0.4.2 → v0.4.1 is a downgrade that stays above the floor: it rolls.
        let newest = v("v0.4.2");
        assert_eq!(
            transition(Some(&newest), Some(&highest), Some(&newest), None),
            Transition::Roll
        );
    }
}
