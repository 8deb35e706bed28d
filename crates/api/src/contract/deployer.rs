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
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The deployer image of this release (the operator's and the plugin's): celld (the default
/// image's), esbuild, curl and celld-bucket, no source.
pub const DEFAULT_DEPLOYER_IMAGE: &str = concat!(
    "ghcr.io/anthaathi/celld-operator-deployer:v",
    env!("CARGO_PKG_VERSION")
);

/// The deployer image of this release for a fleet on `fleet_image`: the one built on the
/// fleet's own celld release, so `celld deploy` writes what its nodes read; the default one
/// when the release is unknown or has no deployer. By digest when the process was given the
/// release's digests ([`pin_digests`]).
pub fn deployer_for(fleet_image: &str) -> String {
    let tagged = match release_for(fleet_image) {
        Some(release) => format!("{DEFAULT_DEPLOYER_IMAGE}{}", tag_suffix(release)),
        None => DEFAULT_DEPLOYER_IMAGE.to_string(),
    };
    pinned(&tagged)
}

/// `reference` by digest when it is one of this release's deployer images and the process was
/// given its digest ([`pin_digests`]); as it is otherwise.
pub fn pinned(reference: &str) -> String {
    match DIGESTS.get() {
        Some(digests) => digests.pin(reference),
        None => reference.to_string(),
    }
}

/// The digests of this release's deployer images, by tag (`v0.1.0`, `v0.1.0-celld-v0.6.1`):
/// what a release writes into the operator's Deployment (`DEPLOYER_DIGESTS`) and builds into
/// the plugin, so a deploy runs the image the release built and signed, not whatever a tag
/// points at later.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeployerDigests(BTreeMap<String, String>);

/// A list of deployer digests that is not `TAG=sha256:<64 hex>,...`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{0}' is not TAG=sha256:<64 hex digits>: give the deployer images' digests as v0.1.0=sha256:...,v0.1.0-celld-v0.6.1=sha256:... (a release's images.txt lists them)"
)]
pub struct BadDigests(pub String);

impl DeployerDigests {
    /// From `TAG=sha256:<hex>` pairs separated by commas; empty for none.
    pub fn parse(value: &str) -> Result<Self, BadDigests> {
        let mut digests = BTreeMap::new();
        for pair in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = || BadDigests(pair.to_string());
            let (tag, digest) = pair.split_once('=').ok_or_else(bad)?;
            let hex = digest.strip_prefix("sha256:").ok_or_else(bad)?;
            let tag_ok = !tag.is_empty()
                && tag
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
            if !tag_ok || hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(bad());
            }
            digests.insert(tag.to_string(), digest.to_ascii_lowercase());
        }
        Ok(Self(digests))
    }

    /// `reference` (`REPOSITORY:TAG` of this release's deployer) by digest when its tag has
    /// one; anything else as it is.
    pub fn pin(&self, reference: &str) -> String {
        let repository = DEFAULT_DEPLOYER_IMAGE
            .rsplit_once(':')
            .map_or(DEFAULT_DEPLOYER_IMAGE, |(r, _)| r);
        match reference
            .strip_prefix(repository)
            .and_then(|rest| rest.strip_prefix(':'))
            .and_then(|tag| self.0.get(tag))
        {
            Some(digest) => format!("{reference}@{digest}"),
            None => reference.to_string(),
        }
    }

    /// Whether no digest is known.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The digests [`deployer_for`] pins, set once at the start of the process.
static DIGESTS: OnceLock<DeployerDigests> = OnceLock::new();

/// Makes [`deployer_for`] give this release's deployer images by digest from now on; the
/// first call wins (false for a later one).
pub fn pin_digests(digests: DeployerDigests) -> bool {
    DIGESTS.set(digests).is_ok()
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
    fn digests_pin_this_release_s_deployers_only() {
        let hex = "ab".repeat(32);
        let tag = DEFAULT_DEPLOYER_IMAGE.rsplit_once(':').unwrap().1;
        let digests = DeployerDigests::parse(&format!(
            "{tag}=sha256:{hex}, {tag}-celld-v0.6.1=sha256:{hex}"
        ))
        .unwrap();
        assert_eq!(
            digests.pin(DEFAULT_DEPLOYER_IMAGE),
            format!("{DEFAULT_DEPLOYER_IMAGE}@sha256:{hex}")
        );
        let per_release = format!("{DEFAULT_DEPLOYER_IMAGE}-celld-v0.6.1");
        assert_eq!(
            digests.pin(&per_release),
            format!("{per_release}@sha256:{hex}")
        );
        let unknown = format!("{DEFAULT_DEPLOYER_IMAGE}-celld-v0.4.0");
        assert_eq!(digests.pin(&unknown), unknown, "no digest given for it");
        assert_eq!(
            digests.pin("registry.example.com/own-deployer:1"),
            "registry.example.com/own-deployer:1"
        );
        assert!(DeployerDigests::parse("").unwrap().is_empty());
        for bad in [
            "v1",
            "v1=sha256:12",
            "v1=md5:00",
            "=sha256:00",
            &format!("v 1=sha256:{hex}"),
        ] {
            assert!(DeployerDigests::parse(bad).is_err(), "{bad}");
        }
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
