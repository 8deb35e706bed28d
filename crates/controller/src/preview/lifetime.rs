//! Whether a preview can be served, with what policy, and when it expires. Pure.

use celld_api::reasons::Reason;
use celld_api::rules::ttl;
use celld_api::{CelldFleet, CelldPreview, ImageLayout, PreviewPolicy, WorkerSource};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::ResourceExt;

/// What the preview's fleet allows it.
#[derive(Debug, Clone)]
pub enum PreviewVerdict {
    /// It can be served, a copy of `parent`, under `policy` until `expires_at`.
    Live {
        /// The fleet it previews.
        parent: Box<CelldFleet>,
        /// The fleet's spec.previews.
        policy: Box<PreviewPolicy>,
        /// When its TTL ends.
        expires_at: Timestamp,
    },
    /// It cannot be served as it is: why, what to do, and when it expires if that is known
    /// (from the status written while it was served).
    Refused {
        /// The Ready condition's reason.
        reason: Reason,
        /// What is wrong and what to do.
        message: String,
        /// When its TTL ends, as last known.
        expires_at: Option<Timestamp>,
    },
}

impl PreviewVerdict {
    /// When the preview expires, if known.
    pub fn expires_at(&self) -> Option<Timestamp> {
        match self {
            Self::Live { expires_at, .. } => Some(*expires_at),
            Self::Refused { expires_at, .. } => *expires_at,
        }
    }
}

/// The creation time of `preview` plus `lifetime`; a preview without a creation time (never
/// from the API server) counts from `now`.
fn ends(preview: &CelldPreview, lifetime: std::time::Duration, now: Timestamp) -> Timestamp {
    let created = preview
        .metadata
        .creation_timestamp
        .as_ref()
        .map_or(now, |t| t.0);
    let lifetime = SignedDuration::try_from(lifetime).unwrap_or(SignedDuration::MAX);
    created.saturating_add(lifetime).unwrap_or(Timestamp::MAX)
}

/// Whether `source` chooses the image its deploy Job runs.
fn chooses_deployer(source: &WorkerSource) -> bool {
    source.deployer_image.is_some()
        || source
            .image
            .as_ref()
            .is_some_and(|i| i.layout == ImageLayout::Deployer)
}

/// Judges `preview` against its fleet `parent` (None: not found).
pub fn judge(
    preview: &CelldPreview,
    parent: Option<&CelldFleet>,
    now: Timestamp,
) -> PreviewVerdict {
    let known = preview
        .status
        .as_ref()
        .and_then(|s| s.expires_at.as_ref())
        .map(|t| t.0);
    let fleet = &preview.spec.fleet;
    let ns = preview.namespace().unwrap_or_default();
    let refuse = |reason, message: String| PreviewVerdict::Refused {
        reason,
        message,
        expires_at: known,
    };
    let Some(parent) = parent else {
        return refuse(
            Reason::FleetNotFound,
            format!(
                "spec.fleet names CelldFleet {fleet}, which does not exist in namespace {ns}: create it, or name an existing fleet (kubectl get celldfleets -n {ns})"
            ),
        );
    };
    let Some(policy) = parent.spec.previews.clone() else {
        return refuse(
            Reason::PreviewsNotAllowed,
            format!(
                "CelldFleet {fleet} does not allow previews: set its spec.previews (baseDomain, bucket, and ingressClass or gatewayRefs)"
            ),
        );
    };
    if policy.credentials.is_none() && !policy.share_credentials {
        return refuse(
            Reason::CredentialsShared,
            format!(
                "CelldFleet {fleet} gives its previews no credentials of their own, and its own reach its production prefix: set its spec.previews.credentials (a Secret, CelldObjectStore or ServiceAccount that reaches only {}), or accept the risk with spec.previews.shareCredentials: true",
                policy.bucket
            ),
        );
    }
    if let Some(source) = &preview.spec.source
        && chooses_deployer(source)
        && !policy.allow_source_deployer
    {
        return refuse(
            Reason::DeployerNotAllowed,
            format!(
                "spec.source chooses the image of the deploy Job (deployerImage, or image.layout Deployer), which runs with the previews' bucket credentials, and CelldFleet {fleet} does not allow it: remove it, or set the fleet's spec.previews.allowSourceDeployer: true"
            ),
        );
    }
    let asked = preview.spec.ttl.as_deref().unwrap_or(&policy.ttl);
    let (lifetime, max) = match (ttl::parse(asked), ttl::parse(&policy.max_ttl)) {
        (Ok(l), Ok(m)) => (l, m),
        (Err(e), _) | (_, Err(e)) => return refuse(Reason::TtlTooLong, e),
    };
    if lifetime > max {
        return refuse(
            Reason::TtlTooLong,
            format!(
                "spec.ttl {asked} is longer than the {} CelldFleet {fleet} allows (spec.previews.maxTtl): ask for less, or raise the fleet's maxTtl",
                policy.max_ttl
            ),
        );
    }
    PreviewVerdict::Live {
        parent: Box::new(parent.clone()),
        expires_at: ends(preview, lifetime, now),
        policy,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::{CelldFleetSpec, CelldPreviewSpec, CelldPreviewStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(second).unwrap()
    }

    fn parent(previews: Option<serde_json::Value>) -> CelldFleet {
        let mut spec = CelldFleetSpec::with_bucket("s3://celld/web");
        spec.previews = previews.map(|p| serde_json::from_value(p).unwrap());
        CelldFleet::new("web", spec)
    }

    fn preview(ttl: Option<&str>) -> CelldPreview {
        let mut p = CelldPreview::new(
            "pr-1",
            CelldPreviewSpec {
                fleet: "web".into(),
                ttl: ttl.map(Into::into),
                source: None,
            },
        );
        p.metadata.namespace = Some("shop".into());
        p.metadata.creation_timestamp = Some(Time(at(1_000)));
        p
    }

    fn allowing() -> Option<serde_json::Value> {
        Some(
            serde_json::json!({"baseDomain": "p.example.com", "bucket": "s3://celld-previews/web", "ingressClass": "nginx", "ttl": "2h", "maxTtl": "24h", "credentials": {"credentialsSecretRef": {"name": "previews-s3"}}}),
        )
    }

    #[test]
    fn expires_its_ttl_after_creation_by_default_the_fleets() {
        let v = judge(&preview(None), Some(&parent(allowing())), at(5_000));
        assert_eq!(v.expires_at(), Some(at(1_000 + 2 * 3600)));
        let v = judge(&preview(Some("30m")), Some(&parent(allowing())), at(5_000));
        assert_eq!(v.expires_at(), Some(at(1_000 + 1800)));
        assert!(matches!(v, PreviewVerdict::Live { .. }));
    }

    #[test]
    fn refuses_naming_the_fleet_and_the_fix() {
        let missing = judge(&preview(None), None, at(0));
        let PreviewVerdict::Refused {
            reason, message, ..
        } = missing
        else {
            panic!("served without a fleet")
        };
        assert_eq!(reason, Reason::FleetNotFound);
        assert!(message.contains("CelldFleet web, which does not exist in namespace shop"));
        let closed = judge(&preview(None), Some(&parent(None)), at(0));
        assert!(
            matches!(closed, PreviewVerdict::Refused { reason: Reason::PreviewsNotAllowed, ref message, .. } if message.contains("set its spec.previews"))
        );
        let long = judge(&preview(Some("48h")), Some(&parent(allowing())), at(0));
        assert!(
            matches!(long, PreviewVerdict::Refused { reason: Reason::TtlTooLong, ref message, .. } if message.contains("spec.ttl 48h is longer than the 24h"))
        );
    }

    #[test]
    fn previews_need_credentials_of_their_own_or_shared_ones_allowed() {
        let mut policy = allowing().unwrap();
        policy["credentials"] = serde_json::Value::Null;
        let shared = judge(&preview(None), Some(&parent(Some(policy.clone()))), at(0));
        let PreviewVerdict::Refused {
            reason, message, ..
        } = shared
        else {
            panic!("served with the fleet's own credentials")
        };
        assert_eq!(reason, Reason::CredentialsShared);
        insta::assert_snapshot!("credentials_shared", message);
        policy["shareCredentials"] = serde_json::Value::Bool(true);
        let allowed = judge(&preview(None), Some(&parent(Some(policy))), at(0));
        assert!(matches!(allowed, PreviewVerdict::Live { .. }));
    }

    #[test]
    fn a_source_that_chooses_its_deployer_needs_the_fleets_leave() {
        let chooser = |source: serde_json::Value| {
            let mut p = preview(None);
            p.spec.source = Some(serde_json::from_value(source).unwrap());
            p
        };
        let image = chooser(
            serde_json::json!({"image": {"reference": "registry.example.com/w:1", "layout": "Deployer"}}),
        );
        let deployer = chooser(
            serde_json::json!({"image": {"reference": "registry.example.com/w:1"}, "deployerImage": "registry.example.com/d:1"}),
        );
        let volume =
            chooser(serde_json::json!({"image": {"reference": "registry.example.com/w:1"}}));
        for p in [&image, &deployer] {
            let v = judge(p, Some(&parent(allowing())), at(0));
            assert!(
                matches!(v, PreviewVerdict::Refused { reason: Reason::DeployerNotAllowed, ref message, .. } if message.contains("spec.previews.allowSourceDeployer: true")),
                "{v:?}"
            );
        }
        assert!(matches!(
            judge(&volume, Some(&parent(allowing())), at(0)),
            PreviewVerdict::Live { .. }
        ));
        let mut policy = allowing().unwrap();
        policy["allowSourceDeployer"] = serde_json::Value::Bool(true);
        assert!(matches!(
            judge(&image, Some(&parent(Some(policy))), at(0)),
            PreviewVerdict::Live { .. }
        ));
    }

    #[test]
    fn a_refused_preview_keeps_the_expiry_it_had() {
        let mut p = preview(None);
        p.status = Some(CelldPreviewStatus {
            expires_at: Some(Time(at(9_000))),
            ..CelldPreviewStatus::default()
        });
        assert_eq!(judge(&p, None, at(0)).expires_at(), Some(at(9_000)));
    }
}
