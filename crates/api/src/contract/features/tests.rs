use super::*;
use crate::contract::releases::Release;

fn version((major, minor, patch): Triple) -> Version {
    Version::new(major, minor, patch)
}

fn required(features: &[&str]) -> Vec<String> {
    features.iter().map(|f| f.to_string()).collect()
}

/// The features the operator expects of each release, written out apart from the table.
fn serves(release: Triple, feature: &str) -> bool {
    feature == "containers-v1" && release >= (0, 6, 0)
}

#[test]
fn every_release_is_judged_on_containers_by_its_version() {
    for Release { version: v, .. } in RELEASES {
        let found = problems(Some(&version(*v)), &required(&["containers-v1"]));
        let mut want = Vec::new();
        if !serves(*v, "containers-v1") {
            want.push(FeatureProblem::TooOld {
                feature: "containers-v1".into(),
                since: (0, 6, 0),
                version: version(*v),
            });
        }
        want.push(FeatureProblem::ContainerEngine);
        assert_eq!(found, want, "{}", display(*v));
    }
}

#[test]
fn every_release_serves_a_manifest_requiring_nothing_and_no_release_an_unknown_feature() {
    for Release { version: v, .. } in RELEASES {
        assert!(problems(Some(&version(*v)), &[]).is_empty(), "{v:?}");
        assert_eq!(
            problems(Some(&version(*v)), &required(&["gpu-v2"])),
            [FeatureProblem::Unknown {
                feature: "gpu-v2".into(),
                newest: (0, 6, 2),
            }],
            "{v:?}"
        );
    }
}

#[test]
fn every_feature_of_the_table_is_served_from_its_release_on() {
    for release in RELEASES {
        for feature in release.features {
            assert_eq!(first_serving(feature), Some(release.version), "{feature}");
            for Release { version: v, .. } in RELEASES {
                let too_old = problems(Some(&version(*v)), &required(&[feature]))
                    .iter()
                    .any(|p| matches!(p, FeatureProblem::TooOld { .. }));
                assert_eq!(too_old, *v < release.version, "{feature} on {v:?}");
            }
        }
    }
    assert_eq!(first_serving("gpu-v2"), None);
}

#[test]
fn an_unknown_version_is_judged_only_on_what_no_version_serves() {
    assert_eq!(
        problems(None, &required(&["containers-v1", "gpu-v2"])),
        [
            FeatureProblem::ContainerEngine,
            FeatureProblem::Unknown {
                feature: "gpu-v2".into(),
                newest: (0, 6, 2),
            },
        ]
    );
    assert!(problems(None, &[]).is_empty());
}

#[test]
fn newer_and_pre_release_versions_follow_their_line() {
    let found = problems(
        Some(&Version::parse("0.6.0-rc.1").unwrap()),
        &required(&["containers-v1"]),
    );
    assert_eq!(found, [FeatureProblem::ContainerEngine]);
    let found = problems(
        Some(&Version::parse("0.5.9").unwrap()),
        &required(&["containers-v1"]),
    );
    assert_eq!(found.len(), 2);
    assert_eq!(
        problems(Some(&Version::new(1, 0, 0)), &required(&["containers-v1"])),
        [FeatureProblem::ContainerEngine]
    );
}

#[test]
fn messages_name_the_feature_the_versions_and_what_to_do() {
    let found = problems(Some(&Version::new(0, 5, 1)), &required(&["containers-v1"]));
    assert_eq!(
        found[0].to_string(),
        "requires feature containers-v1, which celld serves from v0.6.0 on, and spec.image runs v0.5.1: its nodes refuse the version (HTTP 422 on reload) and keep serving the one before; deploy a version that does not require containers-v1, or set spec.image to v0.6.0 or later"
    );
    let containers = found[1].to_string();
    assert!(
        containers.contains("needs a container engine")
            && containers.contains("the operator's restricted pods have none")
            && containers.contains("remove `containers` from the Worker")
            && containers.contains("run celld outside this operator"),
        "{containers}"
    );
    let unknown = &problems(None, &required(&["gpu-v2"]))[0];
    assert_eq!(unknown.feature(), "gpu-v2");
    assert!(
        unknown
            .to_string()
            .starts_with("requires feature gpu-v2, which no celld release up to v0.6.2 serves"),
        "{unknown}"
    );
    assert_eq!(found[1].feature(), "containers-v1");
}
