//! Which celld runs `celld deploy` for a fleet: the deployer image is built once per celld
//! release the operator supports, and a deploy uses the one of the fleet's own release, so the
//! manifest it writes is the one the fleet's nodes read (from v0.5.0 with each module's full
//! SHA-256). A fleet whose release is unknown or has no deployer gets the default one, built on
//! the default image's celld. The variables of the fleet's spec.env that the release table marks
//! as shared between the deployer and the nodes go to the deployer as they are
//! ([`shared_env`]).

use super::releases::{OLDEST_SUPPORTED, RELEASES, Triple, display, triple};
use super::version::image_version;
use k8s_openapi::api::core::v1::EnvVar;

/// The deployer image of this release (the operator's and the plugin's): celld (the default
/// image's), esbuild, curl and celld-bucket, no source.
pub const DEFAULT_DEPLOYER_IMAGE: &str = concat!(
    "ghcr.io/anthaathi/celld-operator-deployer:v",
    env!("CARGO_PKG_VERSION")
);

/// The deployer image of this release for a fleet on `fleet_image`: the one built on the
/// fleet's own celld release, so `celld deploy` writes what its nodes read; the default one
/// when the release is unknown or has no deployer.
pub fn deployer_for(fleet_image: &str) -> String {
    match release_for(fleet_image) {
        Some(release) => format!("{DEFAULT_DEPLOYER_IMAGE}{}", tag_suffix(release)),
        None => DEFAULT_DEPLOYER_IMAGE.to_string(),
    }
}

/// The releases a deployer image is built for, oldest first: every release in the table from
/// the oldest supported one.
pub fn releases() -> impl Iterator<Item = Triple> {
    RELEASES
        .iter()
        .map(|r| r.version)
        .filter(|v| *v >= OLDEST_SUPPORTED)
}

/// The suffix of the deployer tag built on celld `release` (`-celld-v0.6.1`).
pub fn tag_suffix(release: Triple) -> String {
    format!("-celld-{}", display(release))
}

/// The release whose deployer deploys to a fleet on `image`: the image's own release when a
/// deployer is built for it (a pre-release counts as its release).
pub fn release_for(image: &str) -> Option<Triple> {
    let version = triple(&image_version(image)?);
    releases().find(|r| *r == version)
}

/// The variables of a fleet's `env` that some release reads on the deployer as on the nodes
/// (celld 0.6.1's CELLD_MAX_ASSET_FILE_BYTES): a deploy pod gets them as the nodes do, so a
/// raised asset limit is the same on both sides. Older releases ignore them.
pub fn shared_env(env: &[EnvVar]) -> Vec<EnvVar> {
    env.iter()
        .filter(|var| {
            RELEASES
                .iter()
                .any(|r| r.shared_with_deployer.contains(&var.name.as_str()))
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_supported_release_has_a_deployer_and_a_fleet_gets_its_own() {
        let all: Vec<String> = releases().map(display).collect();
        assert_eq!(
            all,
            [
                "v0.4.0", "v0.4.1", "v0.5.0", "v0.5.1", "v0.6.0", "v0.6.1", "v0.6.2"
            ]
        );
        assert_eq!(tag_suffix((0, 6, 1)), "-celld-v0.6.1");
        assert_eq!(
            release_for("ghcr.io/denoland/celld:v0.5.1@sha256:0123"),
            Some((0, 5, 1))
        );
        assert_eq!(release_for("ghcr.io/denoland/celld:0.4.0"), Some((0, 4, 0)));
        assert_eq!(
            release_for("ghcr.io/denoland/celld:v0.3.0"),
            None,
            "older than supported"
        );
        assert_eq!(
            release_for("ghcr.io/denoland/celld:v0.7.0"),
            None,
            "not in the table"
        );
        assert_eq!(release_for("ghcr.io/denoland/celld:latest"), None);
        assert_eq!(release_for(crate::DEFAULT_IMAGE), Some((0, 6, 0)));
    }

    #[test]
    fn the_asset_limit_goes_to_the_deployer_as_the_nodes_get_it() {
        let var = |name: &str| EnvVar {
            name: name.into(),
            value: Some("52428800".into()),
            ..EnvVar::default()
        };
        let env = [var("RUST_LOG"), var("CELLD_MAX_ASSET_FILE_BYTES")];
        assert_eq!(shared_env(&env), [var("CELLD_MAX_ASSET_FILE_BYTES")]);
        assert_eq!(shared_env(&[var("CELLD_IDLE_EVICT_S")]), []);
    }
}
