//! The fleets a run creates: each with 2 nodes, an Ingress, inline S3 storage with a
//! credentials Secret, and a deployment already published in its bucket prefix; one in
//! [`SOURCED_EVERY`] also declares its Worker (spec.source, an image pinned by digest).

use crate::error::{Error, Result};
use crate::settings::{
    CONCURRENCY, FLEETS_PER_NAMESPACE, REPLICAS, SOURCED_EVERY, fleet_namespace, fleet_namespaces,
};
use celld_api::CelldFleet;
use celld_fixtures::{create_credentials, pointer_json};
use celld_testkit::S3Settings;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::{Api, Client, ResourceExt};
use serde_json::json;

/// Name of the credentials Secret every fleet reads.
const SECRET: &str = "s3-credentials";

/// Bucket prefix under which every fleet has its own.
const PREFIX: &str = "bench";

/// The Worker every fleet serves.
const SCRIPT: &str = "bench";

/// The name of fleet `i`.
pub fn fleet_name(i: usize) -> String {
    format!("f{i}")
}

/// The image the sourced fleets declare (kwok never pulls it).
const SOURCE_IMAGE: &str = "registry.invalid/bench/worker:1@sha256:0000000000000000000000000000000000000000000000000000000000000001";

/// A bench fleet named `name` in `namespace` as JSON: [`REPLICAS`] nodes, an Ingress, and its
/// deployment read from its own prefix ([`bucket_prefix`]) of the S3 server `s3`.
pub fn fleet_json(name: &str, namespace: &str, s3: &S3Settings) -> serde_json::Value {
    json!({
        "apiVersion": "platform.celld.dev/v1alpha1", "kind": "CelldFleet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": REPLICAS,
            "objectStorage": {
                "bucket": format!("s3://{}/{}", s3.bucket, bucket_prefix(name)),
                "endpoint": s3.endpoint,
                "allowHTTP": true,
                "credentialsSecretRef": {"name": SECRET},
            },
            "ingress": {"hostname": format!("{name}.bench.example.com"), "ingressClass": "nginx"},
        },
    })
}

/// The key prefix of fleet `name`'s data in the bucket.
pub fn bucket_prefix(name: &str) -> String {
    format!("{PREFIX}/{name}")
}

/// Fleet `i`, in its namespace ([`fleet_namespace`]), reading its deployment from the S3
/// server `s3`.
pub fn fleet_manifest(i: usize, s3: &S3Settings) -> Result<CelldFleet> {
    let mut fleet = fleet_json(&fleet_name(i), &fleet_namespace(i), s3);
    if i.is_multiple_of(SOURCED_EVERY) {
        fleet["spec"]["source"] = json!({"image": {"reference": SOURCE_IMAGE}});
    }
    serde_json::from_value(fleet).map_err(manifest("a bench fleet"))
}

/// Whether the fleet `name` declares its Worker (spec.source): its Ready waits for the publish
/// of its source, so its time to Ready is not a status lag.
pub fn has_source(name: &str) -> bool {
    name.strip_prefix('f')
        .and_then(|i| i.parse::<usize>().ok())
        .is_some_and(|i| i.is_multiple_of(SOURCED_EVERY))
}

/// The version deployed for fleet `i`.
fn version(i: usize) -> String {
    format!("{i:016x}")
}

/// The version the node `pod` (`f<i>-<ordinal>`) of a bench fleet serves: its fleet's.
pub fn deployed_version(pod: &str) -> Option<String> {
    let (fleet, _ordinal) = pod.rsplit_once('-')?;
    fleet_index(fleet).map(version)
}

/// The `i` of the bench fleet named `f<i>` ([`fleet_name`]).
fn fleet_index(name: &str) -> Option<usize> {
    name.strip_prefix('f')?.parse().ok()
}

/// The deployment pointer published for fleet `i`, as its bucket holds it.
fn pointer_body(i: usize) -> Result<String> {
    Ok(pointer_json(SCRIPT, &version(i))?)
}

/// The deployment pointer published for the bench fleet `fleet` (`f<i>`), as its bucket holds
/// it; None for a name the bench does not give.
#[cfg(test)]
pub fn published_pointer(fleet: &str) -> Result<Option<String>> {
    fleet_index(fleet).map(pointer_body).transpose()
}

/// The key of fleet `i`'s deployment pointer in the bucket.
fn pointer_key(i: usize) -> String {
    format!("{}/deploy/current.json", bucket_prefix(&fleet_name(i)))
}

/// The fleets' namespaces, their Secrets and the published deployments on one control plane.
#[derive(Clone)]
pub struct Workload {
    client: Client,
    s3: S3Settings,
    /// How many namespaces the fleets are spread over ([`fleet_namespace`]).
    namespaces: usize,
}

impl Workload {
    /// Creates the namespaces of `fleets` fleets and the Secret in each, publishes a
    /// deployment for every fleet, and warms the API server's fleet storage ([`warm`]).
    pub async fn prepare(client: Client, s3: &S3Settings, fleets: usize) -> Result<Self> {
        let namespaces = fleet_namespaces(fleets);
        futures::stream::iter(0..namespaces)
            .map(|n| create_namespace(&client, s3, n))
            .buffer_unordered(CONCURRENCY)
            .try_collect::<Vec<()>>()
            .await?;
        futures::stream::iter(0..fleets)
            .map(|i| async move {
                let body = pointer_body(i)?;
                s3.put_object(&pointer_key(i), body.into_bytes()).await?;
                Ok::<_, Error>(())
            })
            .buffer_unordered(CONCURRENCY)
            .try_collect::<Vec<()>>()
            .await?;
        warm(&client, s3).await?;
        Ok(Workload {
            client,
            s3: s3.clone(),
            namespaces,
        })
    }

    /// The credentials Secret (the same in every namespace).
    pub async fn secret(&self) -> Result<Secret> {
        Api::<Secret>::namespaced(self.client.clone(), &fleet_namespace(0))
            .get(SECRET)
            .await
            .map_err(Error::kube("reading the credentials Secret"))
    }

    /// Creates fleets `0..count` from concurrent client tasks; returns them as created.
    pub async fn create(&self, count: usize) -> Result<Vec<CelldFleet>> {
        self.creating(count)?.try_collect().await
    }

    /// Creates fleets `0..count` from concurrent client tasks, yielding each as its create
    /// returns.
    pub fn creating(
        &self,
        count: usize,
    ) -> Result<impl futures::Stream<Item = Result<CelldFleet>> + use<>> {
        let client = self.client.clone();
        let fleets: Vec<CelldFleet> = (0..count)
            .map(|i| fleet_manifest(i, &self.s3))
            .collect::<Result<_>>()?;
        Ok(futures::stream::iter(fleets)
            .map(move |fleet| {
                let api: Api<CelldFleet> =
                    Api::namespaced(client.clone(), &fleet.namespace().unwrap_or_default());
                async move {
                    api.create(&PostParams::default(), &fleet)
                        .await
                        .map_err(Error::kube("creating a fleet"))
                }
            })
            .buffer_unordered(CONCURRENCY))
    }

    /// Deletes every fleet (one request a namespace; their children go by garbage
    /// collection).
    pub async fn delete_all(&self) -> Result<()> {
        for n in 0..self.namespaces {
            let namespace = fleet_namespace(n * FLEETS_PER_NAMESPACE);
            Api::<CelldFleet>::namespaced(self.client.clone(), &namespace)
                .delete_collection(&DeleteParams::background(), &ListParams::default())
                .await
                .map_err(Error::kube(format!(
                    "deleting the fleets of namespace {namespace}"
                )))?;
        }
        Ok(())
    }
}

/// Makes the API server ready to store fleets before any clock starts: it builds a custom
/// resource's storage, and compiles its validation rules, on the first request that needs them,
/// and the creates that come first wait for it (about 2 s for the first 32 fleets here). In the
/// operator's run its start, which lists the fleets, did that before the clock; without this
/// the floor's clock alone would count it. A create of the first fleet sent as a dry run goes
/// through the whole of it and stores nothing.
async fn warm(client: &Client, s3: &S3Settings) -> Result<()> {
    let fleet = fleet_manifest(0, s3)?;
    Api::<CelldFleet>::namespaced(client.clone(), &fleet.namespace().unwrap_or_default())
        .create(
            &PostParams {
                dry_run: true,
                ..PostParams::default()
            },
            &fleet,
        )
        .await
        .map_err(Error::kube("creating the first fleet as a dry run"))?;
    Ok(())
}

/// Creates the `n`th namespace of the fleets and the credentials Secret in it.
async fn create_namespace(client: &Client, s3: &S3Settings, n: usize) -> Result<()> {
    let name = fleet_namespace(n * FLEETS_PER_NAMESPACE);
    let namespace: Namespace = serde_json::from_value(json!({"metadata": {"name": name}}))
        .map_err(manifest("the fleets' Namespace"))?;
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .map_err(Error::kube(format!(
            "creating the fleets' namespace {name}"
        )))?;
    create_credentials(
        &Api::<Secret>::namespaced(client.clone(), &name),
        SECRET,
        s3,
    )
    .await?;
    Ok(())
}

/// Turns a JSON error about `what` into the bench's error.
pub fn manifest(what: &'static str) -> impl FnOnce(serde_json::Error) -> Error {
    move |e| Error::Manifest {
        what: what.into(),
        detail: e.to_string(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// S3 settings for tests that render fleets without a server.
    pub(crate) fn s3() -> S3Settings {
        S3Settings {
            endpoint: "http://127.0.0.1:9000".into(),
            access_key_id: "ak".into(),
            secret_access_key: "sk".into(),
            region: "us-east-1".into(),
            bucket: "b".into(),
        }
    }

    #[test]
    fn a_fleet_has_two_nodes_an_ingress_and_its_own_bucket_prefix() {
        let s3 = crate::workload::tests::s3();
        let fleet = fleet_manifest(7, &s3).unwrap();
        assert_eq!(fleet.metadata.name.as_deref(), Some("f7"));
        assert_eq!(fleet.metadata.namespace.as_deref(), Some("bench-0"));
        assert_eq!(
            fleet_manifest(250, &s3)
                .unwrap()
                .metadata
                .namespace
                .as_deref(),
            Some("bench-2")
        );
        assert_eq!(fleet.spec.replicas, 2);
        assert_eq!(fleet.spec.object_storage.bucket, "s3://b/bench/f7");
        assert!(fleet.spec.ingress.is_some());
        assert_eq!(pointer_key(7), "bench/f7/deploy/current.json");
        assert_eq!(
            deployed_version("f11-1").as_deref(),
            Some("000000000000000b")
        );
        assert_eq!(deployed_version("web-0"), None);
        assert!(fleet.spec.source.is_none());
        assert!(
            fleet_manifest(SOURCED_EVERY, &s3)
                .unwrap()
                .spec
                .source
                .is_some()
        );
    }
}
