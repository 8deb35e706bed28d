//! celld's upgrade rules (runtime contract, "Shutdown and upgrades"), read from the release
//! table: which version changes may roll one node at a time, which must stop every old node
//! before the new version starts, and which versions may never start again once a newer one ran.

use super::durability::Durability;
use super::releases::{RELEASES, Release, Rolling, Triple, display, triple};
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
