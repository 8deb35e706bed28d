//! The revision a fleet's spec.source names now: an image reference as written, or the
//! artifact of a Flux source read from its status; and the names derived from it (the publish
//! key, the deploy Jobs' names).

use celld_api::reasons::Reason;
use celld_api::{FluxSourceRef, WorkerSource};
use kube::api::DynamicObject;
use serde::Deserialize;
use sha2::{Digest, Sha256};

/// A revision ready to publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    /// The revision: the image reference, or the Flux artifact's revision.
    pub revision: String,
    /// Its content digest, when known.
    pub digest: Option<String>,
    /// Where the deploy Job downloads it (Flux sources only).
    pub artifact: Option<Artifact>,
}

/// A Flux artifact: a tar.gz the deploy Job downloads and checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    /// Its URL (source-controller's storage server).
    pub url: String,
    /// Its digest, sha256:<hex>.
    pub digest: String,
}

/// What spec.source gives now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wanted {
    /// A revision to publish.
    Revision(Revision),
    /// No revision can be had now; `stalled` when only a person can change that.
    Waiting {
        /// SourceNotReady or SourceNotFound.
        reason: Reason,
        /// What a person reads.
        message: String,
        /// Whether waiting cannot end it.
        stalled: bool,
    },
}

/// The revision of an image source: the reference itself, its digest when it pins one.
pub fn from_image(reference: &str) -> Wanted {
    let digest = reference
        .split_once('@')
        .map(|(_, digest)| digest.to_string());
    Wanted::Revision(Revision {
        revision: reference.to_string(),
        digest,
        artifact: None,
    })
}

/// The parts of a Flux source's status read here.
#[derive(Debug, Default, Deserialize)]
struct FluxStatus {
    #[serde(default)]
    artifact: Option<FluxArtifact>,
    #[serde(default)]
    conditions: Vec<FluxCondition>,
}

#[derive(Debug, Deserialize)]
struct FluxArtifact {
    #[serde(default)]
    url: String,
    #[serde(default)]
    revision: String,
    #[serde(default)]
    digest: Option<String>,
}

#[derive(Debug, Deserialize)]
struct FluxCondition {
    #[serde(rename = "type")]
    type_: String,
    status: String,
    #[serde(default)]
    message: String,
}

/// Whether `digest` is sha256:<64 lowercase hex digits>, the only form the deploy Job checks.
fn sha256_digest(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// The revision of the Flux source `reference` names, from its cached `object` (None: not
/// found); `installed` says whether the cluster serves the kind at all.
pub fn from_flux(
    reference: &FluxSourceRef,
    object: Option<&DynamicObject>,
    installed: bool,
) -> Wanted {
    let named = format!("{} '{}'", reference.kind.as_str(), reference.name);
    if !installed {
        return Wanted::Waiting {
            reason: Reason::SourceNotFound,
            message: format!(
                "spec.source.sourceRef names {named}, but the cluster does not serve {}.source.toolkit.fluxcd.io: install Flux's source-controller (its CRDs are read when the operator starts, so restart it afterwards), or use spec.source.image",
                reference.kind.plural()
            ),
            stalled: true,
        };
    }
    let Some(object) = object else {
        return Wanted::Waiting {
            reason: Reason::SourceNotFound,
            message: format!(
                "{named} does not exist in the fleet's namespace: create it, or fix spec.source.sourceRef"
            ),
            stalled: true,
        };
    };
    let status: FluxStatus = object
        .data
        .get("status")
        .cloned()
        .and_then(|s| serde_json::from_value(s).ok())
        .unwrap_or_default();
    let ready = status.conditions.iter().find(|c| c.type_ == "Ready");
    let artifact = status
        .artifact
        .filter(|a| !a.url.is_empty() && !a.revision.is_empty());
    match (artifact, ready) {
        (Some(a), Some(r)) if r.status == "True" => match a.digest {
            Some(digest) if sha256_digest(&digest) => Wanted::Revision(Revision {
                revision: a.revision,
                digest: Some(digest.clone()),
                artifact: Some(Artifact { url: a.url, digest }),
            }),
            other => Wanted::Waiting {
                reason: Reason::SourceNotReady,
                message: format!(
                    "{named} has an artifact without a sha256 digest ({}): the operator publishes only artifacts it can check; use a source-controller that records status.artifact.digest (Flux 2.1 or later)",
                    other.as_deref().unwrap_or("none")
                ),
                stalled: true,
            },
        },
        (_, ready) => Wanted::Waiting {
            reason: Reason::SourceNotReady,
            message: format!(
                "waiting for {named} to be ready with an artifact{}",
                ready
                    .filter(|r| !r.message.is_empty())
                    .map(|r| format!(": {}", r.message))
                    .unwrap_or_default()
            ),
            stalled: false,
        },
    }
}

/// What spec.source names now, `flux` giving the cached Flux source (None: not found) and
/// whether its kind is served.
pub fn wanted(source: &WorkerSource, flux: impl FnOnce(&FluxSourceRef) -> FluxLookup) -> Wanted {
    match (&source.image, &source.source_ref) {
        (Some(image), _) => from_image(&image.reference),
        (None, Some(reference)) => {
            let found = flux(reference);
            from_flux(reference, found.object.as_ref(), found.installed)
        }
        (None, None) => Wanted::Waiting {
            reason: Reason::SourceNotFound,
            message: "spec.source names neither an image nor a sourceRef".into(),
            stalled: true,
        },
    }
}

/// A Flux source looked up in the caches.
#[derive(Debug, Default)]
pub struct FluxLookup {
    /// Whether the cluster serves its kind.
    pub installed: bool,
    /// The object, when cached.
    pub object: Option<DynamicObject>,
}

/// The key of a publish: what the content published to the bucket depends on (the revision,
/// the project's path in it, the bucket) and the annotation that asks for a publish again.
/// Failures are counted, and a publish is due, per key.
pub fn key(desired: &Revision, path: &str, bucket: &str, requested_at: Option<&str>) -> String {
    let mut h = Sha256::new();
    for part in [
        desired.revision.as_str(),
        desired.digest.as_deref().unwrap_or(""),
        path,
        bucket,
        requested_at.unwrap_or(""),
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    hex::encode(&h.finalize()[..8])
}

/// The name of the deploy Jobs of `key` for fleet `fleet`, without the attempt number:
/// `<fleet>-src-<10 hex>` over the key and the deployer image, so a deployer change starts a
/// new Job (and never publishes by itself). At most 58 characters, leaving room for `-<n>`.
pub fn job_base(fleet: &str, key: &str, deployer: &str) -> String {
    let mut h = Sha256::new();
    h.update(key.as_bytes());
    h.update([0]);
    h.update(deployer.as_bytes());
    let hash = hex::encode(&h.finalize()[..5]);
    let keep = 58 - "-src-".len() - hash.len();
    let fleet: String = fleet.chars().take(keep).collect();
    format!("{}-src-{hash}", fleet.trim_end_matches('-'))
}

/// The name of attempt `attempt` of the Jobs named `base`.
pub fn job_name(base: &str, attempt: i32) -> String {
    format!("{base}-{attempt}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::FluxSourceKind;
    use serde_json::json;

    fn bucket_ref() -> FluxSourceRef {
        FluxSourceRef {
            kind: FluxSourceKind::Bucket,
            name: "web".into(),
        }
    }

    fn flux(status: serde_json::Value) -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "Bucket",
            "metadata": {"name": "web", "namespace": "apps"}, "status": status,
        }))
        .unwrap()
    }

    const DIGEST: &str = "sha256:ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12";

    #[test]
    fn an_image_pinned_by_digest_carries_it() {
        let pinned = format!("r.example.com/w:1.2@{DIGEST}");
        assert_eq!(
            from_image(&pinned),
            Wanted::Revision(Revision {
                revision: pinned.clone(),
                digest: Some(DIGEST.into()),
                artifact: None
            })
        );
        let Wanted::Revision(tagged) = from_image("r.example.com/w:1.2") else {
            panic!("a tag is a revision");
        };
        assert_eq!(tagged.digest, None);
    }

    #[test]
    fn a_ready_flux_source_gives_its_artifact() {
        let object = flux(json!({
            "artifact": {"url": "http://sc/bucket/apps/web/abc.tar.gz", "revision": format!("latest@{DIGEST}"), "digest": DIGEST},
            "conditions": [{"type": "Ready", "status": "True", "message": "stored"}],
        }));
        let Wanted::Revision(d) = from_flux(&bucket_ref(), Some(&object), true) else {
            panic!("ready");
        };
        assert_eq!(d.revision, format!("latest@{DIGEST}"));
        assert_eq!(
            d.artifact.unwrap().url,
            "http://sc/bucket/apps/web/abc.tar.gz"
        );
    }

    #[test]
    fn a_flux_source_not_ready_missing_or_uninstalled_waits() {
        let failing = flux(json!({
            "conditions": [{"type": "Ready", "status": "False", "message": "bucket 'x' not found"}],
        }));
        let Wanted::Waiting {
            reason,
            message,
            stalled,
        } = from_flux(&bucket_ref(), Some(&failing), true)
        else {
            panic!("not ready");
        };
        assert_eq!(reason, Reason::SourceNotReady);
        assert!(!stalled);
        insta::assert_snapshot!(message, @"waiting for Bucket 'web' to be ready with an artifact: bucket 'x' not found");
        let Wanted::Waiting {
            reason, stalled, ..
        } = from_flux(&bucket_ref(), None, true)
        else {
            panic!("missing");
        };
        assert_eq!((reason, stalled), (Reason::SourceNotFound, true));
        let Wanted::Waiting { message, .. } = from_flux(&bucket_ref(), None, false) else {
            panic!("uninstalled");
        };
        assert!(
            message.contains("install Flux's source-controller"),
            "{message}"
        );
        let unchecked = flux(json!({
            "artifact": {"url": "http://sc/a.tar.gz", "revision": "main@sha1:abc", "digest": "sha1:abc"},
            "conditions": [{"type": "Ready", "status": "True"}],
        }));
        assert!(matches!(
            from_flux(&bucket_ref(), Some(&unchecked), true),
            Wanted::Waiting { stalled: true, .. }
        ));
    }

    #[test]
    fn job_names_fit_a_label_and_change_with_key_and_deployer() {
        let long = "a".repeat(52);
        let base = job_base(&long, "k1", "deployer:1");
        assert!(job_name(&base, 100).len() <= 63, "{base}");
        assert_ne!(job_base("web", "k1", "d:1"), job_base("web", "k2", "d:1"));
        assert_ne!(job_base("web", "k1", "d:1"), job_base("web", "k1", "d:2"));
        assert_eq!(job_base("web", "k1", "d:1"), job_base("web", "k1", "d:1"));
        assert!(job_base("web", "k1", "d:1").starts_with("web-src-"));
        let d = Revision {
            revision: "r".into(),
            digest: None,
            artifact: None,
        };
        assert_ne!(
            key(&d, "./", "s3://b/p", None),
            key(&d, "./", "s3://b/p", Some("2026-12-02T10:00:00Z"))
        );
        assert_ne!(
            key(&d, "./", "s3://b/p", None),
            key(&d, "web/", "s3://b/p", None)
        );
    }
}
