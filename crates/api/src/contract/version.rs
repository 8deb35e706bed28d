//! The celld version an image runs, read from its tag.

use semver::Version;

/// The celld version an image runs, read from its tag (`ghcr.io/denoland/celld:v0.4.0`,
/// `0.4.0`), also when a digest pins the tag (`…/celld:v0.5.0@sha256:…`, as Renovate writes
/// it). `None` for a digest alone, a tag that is not a semantic version (`latest`, `sha-…`) or
/// no tag.
pub fn image_version(image: &str) -> Option<Version> {
    let reference = image.split_once('@').map_or(image, |(name, _digest)| name);
    let name_end = reference.rfind('/').map_or(0, |slash| slash + 1);
    let (_, tag) = reference[name_end..].split_once(':')?;
    Version::parse(tag.strip_prefix('v').unwrap_or(tag)).ok()
}

/// Why no version could be read from `image`, for messages.
pub fn unknown_because(image: &str) -> &'static str {
    let reference = image.split_once('@').map_or(image, |(name, _digest)| name);
    let name_end = reference.rfind('/').map_or(0, |slash| slash + 1);
    match reference[name_end..].split_once(':') {
        None if image.contains('@') => "it is pinned by digest alone",
        None => "it has no tag",
        Some(_) => "its tag is not a version",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_come_from_the_tag() {
        let v = |image: &str| image_version(image);
        assert_eq!(
            v("ghcr.io/denoland/celld:v0.4.0"),
            Some(Version::new(0, 4, 0))
        );
        assert_eq!(
            v("ghcr.io/denoland/celld:0.4.1"),
            Some(Version::new(0, 4, 1))
        );
        assert_eq!(
            v("registry.local:5000/celld:v0.3.2"),
            Some(Version::new(0, 3, 2))
        );
    }

    #[test]
    fn a_digest_pinned_tag_is_read_as_its_tag() {
        let digest = "sha256:df8e74bb0000000000000000000000000000000000000000000000000000cafe";
        assert_eq!(
            image_version(&format!("ghcr.io/denoland/celld:v0.5.0@{digest}")),
            Some(Version::new(0, 5, 0))
        );
        assert_eq!(
            image_version(&format!("registry.local:5000/celld:0.6.1@{digest}")),
            Some(Version::new(0, 6, 1))
        );
    }

    #[test]
    fn images_without_a_version_tag_are_unknown_and_say_why() {
        for (image, why) in [
            ("ghcr.io/denoland/celld:latest", "its tag is not a version"),
            (
                "ghcr.io/denoland/celld:sha-a52f990",
                "its tag is not a version",
            ),
            ("ghcr.io/denoland/celld", "it has no tag"),
            ("registry.local:5000/celld", "it has no tag"),
            (
                "ghcr.io/denoland/celld@sha256:0123",
                "it is pinned by digest alone",
            ),
            (
                "registry.local:5000/celld@sha256:0123",
                "it is pinned by digest alone",
            ),
        ] {
            assert_eq!(image_version(image), None, "{image}");
            assert_eq!(unknown_because(image), why, "{image}");
        }
    }
}
