//! The revision a rollout's spec.source gives now, and the key that tells one revision of the
//! rollout from the next (a new key starts the rollout again from its first wave). Pure.

use crate::source::wanted::{self, FluxLookup, Wanted};
use celld_api::FluxSourceRef;
use celld_api::labels;
use celld_api::rollout::CelldRollout;
use kube::ResourceExt;
use sha2::{Digest, Sha256};

/// The revision spec.source gives now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetNow {
    /// The revision: the image reference, or the Flux artifact's revision.
    pub revision: String,
    /// Its digest, when known.
    pub digest: Option<String>,
    /// What identifies it: its revision, digest, path, deployer image and a request.
    pub key: String,
}

/// Why spec.source gives no revision now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoTarget {
    /// What a person reads.
    pub message: String,
    /// Whether only a person can change it.
    pub stalled: bool,
}

/// The key of `revision` (with `digest`) of `rollout`: its revision, digest, path, deployer
/// image and the annotation platform.celld.dev/reconcile-requested-at.
fn key(rollout: &CelldRollout, revision: &str, digest: Option<&str>) -> String {
    let source = &rollout.spec.source;
    let mut h = Sha256::new();
    for part in [
        revision,
        digest.unwrap_or(""),
        source.path.as_str(),
        source.deployer_image.as_deref().unwrap_or(""),
        rollout
            .annotations()
            .get(labels::RECONCILE_REQUESTED_AT)
            .map_or("", String::as_str),
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    hex::encode(&h.finalize()[..8])
}

/// The revision `rollout`'s spec.source gives now, `flux` looking its Flux source up.
pub fn now(
    rollout: &CelldRollout,
    flux: impl FnOnce(&FluxSourceRef) -> FluxLookup,
) -> Result<TargetNow, NoTarget> {
    match wanted::wanted(&rollout.spec.source.for_fleet(), flux) {
        Wanted::Revision(r) => Ok(TargetNow {
            key: key(rollout, &r.revision, r.digest.as_deref()),
            revision: r.revision,
            digest: r.digest,
        }),
        Wanted::Waiting {
            message, stalled, ..
        } => Err(NoTarget {
            message: message.replace("the fleet's namespace", "the rollout's namespace"),
            stalled,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rollout(source: serde_json::Value, annotations: serde_json::Value) -> CelldRollout {
        serde_json::from_value(json!({
            "apiVersion": "platform.celld.dev/v1alpha1",
            "kind": "CelldRollout",
            "metadata": {"name": "web", "namespace": "t", "annotations": annotations},
            "spec": {"source": source, "selector": {}, "waves": [{}]},
        }))
        .unwrap()
    }

    fn flux(revision: &str) -> FluxLookup {
        FluxLookup {
            installed: true,
            object: Some(
                serde_json::from_value(json!({
                    "apiVersion": "source.toolkit.fluxcd.io/v1beta2",
                    "kind": "OCIRepository",
                    "metadata": {"name": "web", "namespace": "t"},
                    "status": {
                        "artifact": {"url": "http://sc/a.tgz", "revision": revision,
                            "digest": format!("sha256:{}", "a".repeat(64))},
                        "conditions": [{"type": "Ready", "status": "True", "message": ""}],
                    },
                }))
                .unwrap(),
            ),
        }
    }

    #[test]
    fn the_key_changes_with_the_revision_the_path_and_a_request_only() {
        let image = json!({"image": {"reference": "r/w:1@sha256:00"}});
        let base = now(&rollout(image.clone(), json!({})), |_| {
            FluxLookup::default()
        })
        .unwrap();
        assert_eq!(base.revision, "r/w:1@sha256:00");
        let same = now(&rollout(image.clone(), json!({})), |_| {
            FluxLookup::default()
        })
        .unwrap();
        assert_eq!(base.key, same.key);
        let mut moved = image.clone();
        moved["path"] = json!("workers/web");
        assert_ne!(
            now(&rollout(moved, json!({})), |_| FluxLookup::default())
                .unwrap()
                .key,
            base.key
        );
        let asked = rollout(
            image.clone(),
            json!({labels::RECONCILE_REQUESTED_AT: "now"}),
        );
        assert_ne!(
            now(&asked, |_| FluxLookup::default()).unwrap().key,
            base.key
        );
        let mut retries = image;
        retries["retries"] = json!(7);
        assert_eq!(
            now(&rollout(retries, json!({})), |_| FluxLookup::default())
                .unwrap()
                .key,
            base.key,
            "how a revision is published is not what it is"
        );
    }

    #[test]
    fn a_flux_source_gives_its_artifact_or_says_why_not_in_the_rollout_s_words() {
        let source = json!({"sourceRef": {"kind": "OCIRepository", "name": "web"}});
        let r = rollout(source, json!({}));
        let one = now(&r, |_| flux("latest@sha256:1")).unwrap();
        let two = now(&r, |_| flux("latest@sha256:2")).unwrap();
        assert_eq!(one.revision, "latest@sha256:1");
        assert_ne!(one.key, two.key, "a new artifact is a new revision");
        let missing = now(&r, |_| FluxLookup {
            installed: true,
            object: None,
        })
        .unwrap_err();
        assert!(missing.stalled);
        assert!(
            missing.message.contains("the rollout's namespace"),
            "{}",
            missing.message
        );
    }
}
