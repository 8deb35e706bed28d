//! The CelldPreview `preview create` applies, and what it does with a preview of that name that
//! already exists. The spec follows the command line: server-side apply with the plugin's field
//! manager, so a TTL or source image left out of a later run is removed again (the fleet's
//! default TTL applies), while fields other managers set stay.

use crate::cluster::fleets::FIELD_MANAGER;
use crate::cluster::kubeconfig::Target;
use crate::cluster::previews;
use crate::error::Result;
use crate::error::preview::PreviewError;
use celld_api::{CelldPreview, PreviewPhase};
use kube::Resource;
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

/// What to do with a preview of the name asked for that already exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Existing {
    /// It previews the same fleet and lives: update it and deploy again.
    Update,
    /// It is past its TTL or being deleted (why, in words): wait until it is gone, then create
    /// it again.
    Replace(String),
    /// It previews another fleet (named), which cannot change.
    OtherFleet(String),
}

/// What to do with `found`, an existing preview, asked to preview `fleet`.
pub fn existing(found: &CelldPreview, fleet: &str) -> Existing {
    if found.spec.fleet != fleet {
        return Existing::OtherFleet(found.spec.fleet.clone());
    }
    if found.metadata.deletion_timestamp.is_some() {
        return Existing::Replace("is being deleted".to_string());
    }
    let status = found.status.as_ref();
    let expiry = status
        .and_then(|s| s.expires_at.as_ref())
        .map_or_else(|| "its TTL".to_string(), |t| t.0.to_string());
    match status.map(|s| s.phase) {
        Some(PreviewPhase::Expiring) => Existing::Replace(format!(
            "expired at {expiry} (the operator is deleting its fleet and data)"
        )),
        Some(PreviewPhase::Expired) => Existing::Replace(format!("expired at {expiry}")),
        _ => Existing::Update,
    }
}

/// The object applied: the name, the fleet, and the TTL and source image when given.
pub fn body(name: &str, fleet: &str, ttl: Option<&str>, source_image: Option<&str>) -> Value {
    let mut spec = json!({ "fleet": fleet });
    if let Some(ttl) = ttl {
        spec["ttl"] = json!(ttl);
    }
    if let Some(image) = source_image {
        spec["source"] = json!({ "image": { "reference": image } });
    }
    json!({
        "apiVersion": CelldPreview::api_version(&()),
        "kind": CelldPreview::kind(&()),
        "metadata": { "name": name },
        "spec": spec,
    })
}

/// Applies `body` as preview `name` of the target namespace (server-side apply, taking over
/// the fields it sets). A refusal of the API server (the CRD's rules, or the admission policy
/// that checks a preview against its fleet) is an error carrying its message, which names the
/// field.
pub async fn apply(target: &Target, name: &str, body: &Value) -> Result<CelldPreview> {
    let ns = target.namespace.as_str();
    let params = PatchParams::apply(FIELD_MANAGER).force();
    match previews::api(target)
        .patch(name, &params, &Patch::Apply(body))
        .await
    {
        Ok(preview) => Ok(preview),
        Err(kube::Error::Api(status)) if matches!(status.code, 400 | 422) => {
            Err(PreviewError::Refused {
                name: name.to_string(),
                namespace: ns.to_string(),
                message: status.message,
            }
            .into())
        }
        Err(e) => Err(previews::preview_error(&target.client, "patch", Some(ns), e).await),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::{CelldPreviewSpec, CelldPreviewStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn preview(fleet: &str, phase: Option<PreviewPhase>) -> CelldPreview {
        let mut p = CelldPreview::new(
            "pr-1",
            CelldPreviewSpec {
                fleet: fleet.into(),
                ttl: None,
                source: None,
            },
        );
        p.status = phase.map(|phase| CelldPreviewStatus {
            phase,
            expires_at: Some(Time("2026-12-02T10:00:00Z".parse().unwrap())),
            ..CelldPreviewStatus::default()
        });
        p
    }

    #[test]
    fn a_live_preview_is_updated_one_past_its_ttl_replaced_another_fleets_refused() {
        assert_eq!(existing(&preview("web", None), "web"), Existing::Update);
        assert_eq!(
            existing(&preview("web", Some(PreviewPhase::Failed)), "web"),
            Existing::Update
        );
        assert_eq!(
            existing(&preview("web", Some(PreviewPhase::Expired)), "web"),
            Existing::Replace("expired at 2026-12-02T10:00:00Z".into())
        );
        assert!(matches!(
            existing(&preview("web", Some(PreviewPhase::Expiring)), "web"),
            Existing::Replace(why) if why.contains("deleting its fleet and data")
        ));
        let mut deleting = preview("web", Some(PreviewPhase::Ready));
        deleting.metadata.deletion_timestamp = Some(Time("2026-12-01T10:00:00Z".parse().unwrap()));
        assert_eq!(
            existing(&deleting, "web"),
            Existing::Replace("is being deleted".into())
        );
        assert_eq!(
            existing(&preview("api", Some(PreviewPhase::Expired)), "web"),
            Existing::OtherFleet("api".into())
        );
    }

    #[test]
    fn the_body_holds_only_what_the_command_line_says() {
        insta::assert_snapshot!(
            serde_json::to_string(&body("pr-1", "web", None, None)).unwrap(),
            @r#"{"apiVersion":"platform.celld.dev/v1alpha1","kind":"CelldPreview","metadata":{"name":"pr-1"},"spec":{"fleet":"web"}}"#
        );
        insta::assert_snapshot!(
            serde_json::to_string(&body("pr-1", "web", Some("24h"), Some("registry.example.com/w:1"))).unwrap(),
            @r#"{"apiVersion":"platform.celld.dev/v1alpha1","kind":"CelldPreview","metadata":{"name":"pr-1"},"spec":{"fleet":"web","source":{"image":{"reference":"registry.example.com/w:1"}},"ttl":"24h"}}"#
        );
    }
}
