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
    /// What identifies it (see [`key`]).
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
