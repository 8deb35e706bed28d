//! The previews run's objects: one parent fleet that allows previews (spec.previews, a TTL of a
//! day, one node each), its previews `pr-1`, `pr-2`..., and the deployment each of their
//! fleets serves, published in its bucket prefix before anything is created.

use crate::error::{Error, Result};
use crate::settings::{CONCURRENCY, fleet_namespace};
use crate::workload::{bucket_prefix, fleet_json, manifest};
use celld_api::{CelldFleet, CelldPreview};
use celld_fixtures::publish_pointer;
use celld_testkit::S3Settings;
use futures::{StreamExt, TryStreamExt};
use kube::api::PostParams;
use kube::{Api, Client};
use serde_json::json;
use std::ops::RangeInclusive;

/// The parent fleet's name.
pub const PARENT: &str = "web";

/// How long each preview lives: far longer than the run, so none expires in it.
pub const TTL: &str = "24h";

/// Nodes of each preview's fleet (spec.previews.replicas, its default).
pub const PREVIEW_REPLICAS: usize = 1;

/// Where the previews keep their data, under the bench's bucket.
const PREVIEWS_PREFIX: &str = "previews";

/// The namespace of the parent and its previews: the first of the bench's fleets' namespaces,
/// which the workload of no fleets creates.
pub fn previews_namespace() -> String {
    fleet_namespace(0)
}

/// The name of preview `i` (from 1).
pub fn preview_name(i: usize) -> String {
    format!("pr-{i}")
}

/// The version the parent (0) or preview `i` (from 1) deploys.
fn version(i: usize) -> String {
    format!("{i:016x}")
}

/// The version the node `pod` of the parent or of a preview serves: its fleet's
/// (`web-<ordinal>`, `pr-<i>-<ordinal>`).
pub fn served_version(pod: &str) -> Option<String> {
    let (fleet, _ordinal) = pod.rsplit_once('-')?;
    if fleet == PARENT {
        return Some(version(0));
    }
    let i = fleet.strip_prefix("pr-")?.parse().ok()?;
    Some(version(i))
}

/// The parent: a bench fleet that allows previews of a day, served under
/// `preview.bench.example.com`, with their data under the bucket's `previews/`.
pub fn parent_manifest(s3: &S3Settings) -> Result<CelldFleet> {
    let mut fleet = fleet_json(PARENT, &previews_namespace(), s3);
    fleet["spec"]["previews"] = json!({
        "baseDomain": "preview.bench.example.com",
        "bucket": format!("s3://{}/{PREVIEWS_PREFIX}", s3.bucket),
        "ingressClass": "nginx",
        "ttl": TTL,
        "replicas": PREVIEW_REPLICAS,
        "shareCredentials": true,
    });
    serde_json::from_value(fleet).map_err(manifest("the previews' parent fleet"))
}

/// Preview `i` of the parent.
pub fn preview_manifest(i: usize) -> Result<CelldPreview> {
    let preview = json!({
        "apiVersion": "platform.celld.dev/v1alpha1", "kind": "CelldPreview",
        "metadata": {"name": preview_name(i), "namespace": previews_namespace()},
        "spec": {"fleet": PARENT},
    });
    serde_json::from_value(preview).map_err(manifest("a bench preview"))
}

/// The key prefix of preview `name`'s data in the bucket of `s3`: its bucket URL as the
/// operator derives it from the parent's spec.previews, without the bucket.
fn preview_prefix(parent: &CelldFleet, s3: &S3Settings, name: &str) -> Result<String> {
    let url = parent
        .spec
        .previews
        .as_ref()
        .map(|p| p.preview_bucket(&previews_namespace(), name))
        .unwrap_or_default();
    url.strip_prefix(&format!("s3://{}/", s3.bucket))
        .map(str::to_string)
        .ok_or_else(|| Error::Manifest {
            what: format!("the bucket URL {url:?} of preview {name}"),
            detail: format!("it is not under the bench's bucket s3://{}", s3.bucket),
        })
}

/// The parent and its previews on one control plane.
pub struct PreviewWorkload {
    client: Client,
    parent: CelldFleet,
}

impl PreviewWorkload {
    /// Publishes the deployments of the parent and of `count` previews in their bucket
    /// prefixes, from concurrent tasks.
    pub async fn prepare(client: Client, s3: &S3Settings, count: usize) -> Result<Self> {
        let parent = parent_manifest(s3)?;
        let prefixes = std::iter::once(Ok((bucket_prefix(PARENT), 0)))
            .chain((1..=count).map(|i| Ok((preview_prefix(&parent, s3, &preview_name(i))?, i))))
            .collect::<Result<Vec<_>>>()?;
        futures::stream::iter(prefixes)
            .map(|(prefix, i)| async move {
                publish_pointer(s3, &prefix, &version(i)).await?;
                Ok::<_, Error>(())
            })
            .buffer_unordered(CONCURRENCY)
            .try_collect::<Vec<()>>()
            .await?;
        Ok(PreviewWorkload { client, parent })
    }

    /// Creates the parent fleet.
    pub async fn create_parent(&self) -> Result<()> {
        Api::<CelldFleet>::namespaced(self.client.clone(), &previews_namespace())
            .create(&PostParams::default(), &self.parent)
            .await
            .map_err(Error::kube("creating the previews' parent fleet"))?;
        Ok(())
    }

    /// Creates the previews numbered `numbers` from concurrent client tasks.
    pub async fn create(&self, numbers: RangeInclusive<usize>) -> Result<()> {
        let api: Api<CelldPreview> = Api::namespaced(self.client.clone(), &previews_namespace());
        let previews: Vec<CelldPreview> = numbers.map(preview_manifest).collect::<Result<_>>()?;
        futures::stream::iter(previews)
            .map(|preview| {
                let api = api.clone();
                async move {
                    api.create(&PostParams::default(), &preview)
                        .await
                        .map_err(Error::kube("creating a preview"))
                }
            })
            .buffer_unordered(CONCURRENCY)
            .try_collect::<Vec<_>>()
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::workload::tests::s3;

    #[test]
    fn the_parent_allows_previews_of_a_day_apart_from_its_own_prefix() {
        let parent = parent_manifest(&s3()).unwrap();
        assert_eq!(parent.spec.object_storage.bucket, "s3://b/bench/web");
        let previews = parent.spec.previews.as_ref().unwrap();
        assert_eq!(previews.ttl, "24h");
        assert_eq!(previews.replicas, 1);
        assert_eq!(previews.ingress_class.as_deref(), Some("nginx"));
        assert_eq!(
            preview_prefix(&parent, &s3(), "pr-3").unwrap(),
            "previews/bench-0/pr-3"
        );
    }

    #[test]
    fn a_preview_names_the_parent_and_its_nodes_serve_its_version() {
        let preview = preview_manifest(12).unwrap();
        assert_eq!(preview.metadata.name.as_deref(), Some("pr-12"));
        assert_eq!(preview.spec.fleet, PARENT);
        assert_eq!(preview.spec.ttl, None);
        assert_eq!(
            served_version("pr-12-0").as_deref(),
            Some("000000000000000c")
        );
        assert_eq!(served_version("web-1").as_deref(), Some("0000000000000000"));
        assert_eq!(served_version("f3-0"), None);
    }
}
