//! celld's upgrade rules (runtime contract, "Shutdown and upgrades"), in one table: which version
//! changes may roll one node at a time, which must stop every old node before the new version
//! starts, and which versions may never start again once a newer one ran.

use crate::Durability;
use semver::Version;

/// A boundary between two celld release lines that nodes must not cross while both run.
struct NonRollable {
    /// The first version of the new line.
    first: (u64, u64, u64),
    /// The last version of the old line, for messages.
    after: &'static str,
    /// Whether the rule holds only with fleet durability (celld's default).
    fleet_durability_only: bool,
}

/// Transitions that must not be rolled: v0.1→v0.2, v0.3→v0.4, v0.5.1→v0.6.0 (fleet
/// durability). Crossing a boundary in either direction stops the fleet.
const NON_ROLLABLE: &[NonRollable] = &[
    NonRollable {
        first: (0, 2, 0),
        after: "v0.1",
        fleet_durability_only: false,
    },
    NonRollable {
        first: (0, 4, 0),
        after: "v0.3",
        fleet_durability_only: false,
    },
    NonRollable {
        first: (0, 6, 0),
        after: "v0.5.1",
        fleet_durability_only: true,
    },
];

/// Versions after which no older version may start again: once v0.4.1 ran, no v0.4.0 binary
/// may start.
const NO_RETURN: &[(u64, u64, u64)] = &[(0, 4, 1)];

/// The celld version an image runs, read from its tag (`ghcr.io/denoland/celld:v0.4.0`, `0.4.0`).
/// `None` for a digest, a tag that is not a semantic version (`latest`, `sha-…`) or no tag.
pub fn image_version(image: &str) -> Option<Version> {
    if image.contains('@') {
        return None;
    }
    let name_end = image.rfind('/').map_or(0, |slash| slash + 1);
    let (_, tag) = image[name_end..].split_once(':')?;
    Version::parse(tag.strip_prefix('v').unwrap_or(tag)).ok()
}

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

fn triple(v: &Version) -> (u64, u64, u64) {
    (v.major, v.minor, v.patch)
}

fn below(v: &Version, first: (u64, u64, u64)) -> bool {
    // A pre-release of the first version (0.4.0-rc.1) is already the new line.
    triple(v) < first
}

/// Whether `to` may start at all once `highest` ran: `Some(why)` when the table forbids it.
pub fn forbidden(highest: Option<&Version>, to: &Version) -> Option<String> {
    let highest = highest?;
    NO_RETURN
        .iter()
        .find(|floor| !below(highest, **floor) && below(to, **floor))
        .map(|(major, minor, patch)| {
            format!(
                "celld v{to} may not start again once v{major}.{minor}.{patch} or later ran (v{highest} ran on this fleet): keep an image at v{major}.{minor}.{patch} or later"
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
    NON_ROLLABLE
        .iter()
        .filter(|b| fleet_durability || !b.fleet_durability_only)
        .find(|b| below(from, b.first) != below(to, b.first))
        .map_or(Transition::Roll, |b| {
            let (major, minor, patch) = b.first;
            Transition::FullStop(format!(
                "celld {} and v{major}.{minor}.{patch} or later must not run side by side (v{from} → v{to})",
                b.after
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        image_version(&format!("ghcr.io/denoland/celld:{s}")).unwrap()
    }

    fn t(from: &str, to: &str) -> Transition {
        transition(Some(&v(from)), Some(&v(to)), Some(&v(from)), None)
    }

    #[test]
    fn versions_come_from_the_tag() {
        assert_eq!(v("v0.4.0"), Version::new(0, 4, 0));
        assert_eq!(v("0.4.1"), Version::new(0, 4, 1));
        assert_eq!(
            image_version("registry.local:5000/celld:v0.3.2"),
            Some(Version::new(0, 3, 2))
        );
        for unknown in [
            "ghcr.io/denoland/celld:latest",
            "ghcr.io/denoland/celld:sha-a52f990",
            "ghcr.io/denoland/celld",
            "registry.local:5000/celld",
            "ghcr.io/denoland/celld@sha256:0123",
            "ghcr.io/denoland/celld:v0.4.0@sha256:0123",
        ] {
            assert_eq!(image_version(unknown), None, "{unknown}");
        }
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
