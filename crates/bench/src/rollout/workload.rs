//! The rollout run's objects: its fleets `t0000`, `t0001`... in one namespace (a rollout ships
//! to the fleets of its own namespace), each reading its bucket prefix through one of two
//! CelldObjectStores (each store a bucket of its own on the run's S3 server), labelled for the
//! one CelldRollout, each serving [`V1`] (published in its prefix before it is created); and
//! the rollout shipping [`REVISION`] in [`WAVES`].

use super::buckets::{BucketWriter, pointer_key};
use crate::error::{Error, Result};
use crate::settings::{CONCURRENCY, REPLICAS, fleet_namespace};
use crate::workload::manifest;
use celld_api::rollout::selection::Selection;
use celld_api::rollout::{CelldRollout, waves};
use celld_api::{CelldFleet, CelldObjectStore};
use celld_fixtures::pointer_json;
use celld_testkit::S3Settings;
use futures::{StreamExt, TryStreamExt};
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// The rollout's name.
pub const ROLLOUT: &str = "web";

/// The waves (spec.waves[*].fleets): one fleet, then up to a tenth, half, and all of them.
pub const WAVES: [&str; 4] = ["1", "10%", "50%", "100%"];

/// Each wave's bake (spec.waves[*].bake).
pub const BAKE: Duration = Duration::from_secs(5);

/// The label every fleet of the run carries and the rollout selects.
pub const SELECTED: (&str, &str) = ("app.kubernetes.io/part-of", "bench-rollout");

/// The CelldObjectStores the fleets are spread over, in turn; the first reads the S3 server's
/// bucket, the second a bucket of its own ([`second_bucket`]).
pub const STORES: [&str; 2] = ["store-a", "store-b"];

/// The version every fleet serves before the rollout.
pub const V1: &str = "00000000000000b1";

/// The version the rollout's revision becomes in each fleet's bucket (what the bench's
/// stand-in for `celld deploy` writes).
pub const V2: &str = "00000000000000b2";

/// The Worker the pointers name.
pub const SCRIPT: &str = "bench";

/// The revision shipped (kwok never pulls it).
pub const REVISION: &str = "registry.invalid/bench/worker:2@sha256:2222222222222222222222222222222222222222222222222222222222222222";

/// Where the fleets keep their data, under their store's bucket.
const PREFIX: &str = "rollout";

/// The name of the credentials Secret of the stores (the bench's, in its first namespace).
const SECRET: &str = "s3-credentials";

/// The namespace of the fleets and the rollout: the bench's first, which holds the credentials
/// Secret.
pub fn rollout_namespace() -> String {
    fleet_namespace(0)
}

/// The name of fleet `i`: zero-padded, so the rollout's order (by name) is the fleets' order.
pub fn fleet_name(i: usize) -> String {
    format!("t{i:04}")
}

/// The store of fleet `i`: the two in turn.
pub fn store_of(i: usize) -> &'static str {
    STORES[i % STORES.len()]
}

/// The bucket of the second store: the S3 server's with `-b` after it.
pub fn second_bucket(s3: &S3Settings) -> String {
    format!("{}-b", s3.bucket)
}

/// What every node serves before anything else happened: [`V1`].
pub fn served_before(_pod: &str) -> Option<String> {
    Some(V1.to_string())
}

/// The deployment pointer of `version`, as `celld deploy` writes it.
pub fn pointer_body(version: &str) -> Result<Vec<u8>> {
    Ok(pointer_json(SCRIPT, version)?.into_bytes())
}

/// Where one fleet keeps its data: its bucket's writer and its key prefix there.
#[derive(Clone)]
pub struct FleetBucket {
    /// The writer of its store's bucket.
    pub writer: BucketWriter,
    /// Its key prefix in that bucket (no trailing slash).
    pub prefix: String,
}

/// Fleet `i` as JSON: [`REPLICAS`] nodes, an Ingress, its bucket prefix through its store, the
/// label the rollout selects.
fn fleet_json(i: usize, buckets: &[String; 2]) -> serde_json::Value {
    let name = fleet_name(i);
    json!({
        "apiVersion": "platform.celld.dev/v1alpha1", "kind": "CelldFleet",
        "metadata": {
            "name": name, "namespace": rollout_namespace(),
            "labels": {SELECTED.0: SELECTED.1},
        },
        "spec": {
            "replicas": REPLICAS,
            "storeRef": {"name": store_of(i)},
            "objectStorage": {
                "bucket": format!("s3://{}/{PREFIX}/{name}", buckets[i % buckets.len()]),
            },
            "ingress": {"hostname": format!("{name}.bench.example.com"), "ingressClass": "nginx"},
        },
    })
}

/// The store `name` reading the S3 server `s3` with the bench's credentials Secret.
fn store_json(name: &str, s3: &S3Settings) -> serde_json::Value {
    json!({
        "apiVersion": "platform.celld.dev/v1alpha1", "kind": "CelldObjectStore",
        "metadata": {"name": name, "namespace": rollout_namespace()},
        "spec": {
            "endpoint": s3.endpoint, "allowHTTP": true, "region": s3.region,
            "credentialsSecretRef": {"name": SECRET},
        },
    })
}

/// spec.waves[*].fleets as the API takes it: a number, or a percentage as a string.
fn wave_fleets(text: &str) -> serde_json::Value {
    text.parse::<i64>()
        .map_or_else(|_| json!(text), |n| json!(n))
}

/// The rollout: [`REVISION`] to every fleet carrying [`SELECTED`], in [`WAVES`], each baking
/// [`BAKE`], no bound on the fleets of a wave publishing at once, no webhook.
pub fn rollout_manifest() -> Result<CelldRollout> {
    let bake = format!("{}s", BAKE.as_secs());
    let waves: Vec<serde_json::Value> = WAVES
        .iter()
        .map(|w| json!({"fleets": wave_fleets(w), "bake": bake}))
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "platform.celld.dev/v1alpha1", "kind": "CelldRollout",
        "metadata": {"name": ROLLOUT, "namespace": rollout_namespace()},
        "spec": {
            "source": {"image": {"reference": REVISION}},
            "selector": {"matchLabels": {SELECTED.0: SELECTED.1}},
            "waves": waves,
        },
    }))
    .map_err(manifest("the bench's rollout"))
}

/// How many fleets each wave of the rollout takes over `fleets` fleets, as the operator plans
/// them (`celld_api::rollout::waves::plan`).
pub fn wave_sizes(fleets: usize) -> Result<Vec<usize>> {
    let rollout = rollout_manifest()?;
    let selection = Selection {
        fleets: (0..fleets).map(fleet_name).collect(),
        labels: vec![BTreeMap::from([(SELECTED.0.into(), SELECTED.1.into())]); fleets],
        skipped: Vec::new(),
    };
    let (planned, _left) = waves::plan(&rollout.spec.waves, &selection);
    Ok(planned.iter().map(Vec::len).collect())
}

/// The run's fleets, stores and buckets on one control plane.
pub struct RolloutWorkload {
    client: Client,
    fleets: usize,
    buckets: [String; 2],
    /// Each fleet's bucket, by name.
    pub fleet_buckets: HashMap<String, FleetBucket>,
    /// The writer of the first bucket (the floor's pointers go there).
    pub first: BucketWriter,
}

impl RolloutWorkload {
    /// Creates the second store's bucket and both stores, and publishes [`V1`] for each of
    /// `fleets` fleets in its prefix, from concurrent tasks. The namespace and its credentials
    /// Secret exist (the operator's setup made them).
    pub async fn prepare(client: Client, s3: &S3Settings, fleets: usize) -> Result<Self> {
        let second = S3Settings {
            bucket: second_bucket(s3),
            ..s3.clone()
        };
        BucketWriter::create_bucket(&second).await?;
        let writers = [BucketWriter::new(s3), BucketWriter::new(&second)];
        let stores: Api<CelldObjectStore> = Api::namespaced(client.clone(), &rollout_namespace());
        for name in STORES {
            let store: CelldObjectStore = serde_json::from_value(store_json(name, s3))
                .map_err(manifest("a bench CelldObjectStore"))?;
            stores
                .create(&PostParams::default(), &store)
                .await
                .map_err(Error::kube(format!("creating the CelldObjectStore {name}")))?;
        }
        let fleet_buckets: HashMap<String, FleetBucket> = (0..fleets)
            .map(|i| {
                let name = fleet_name(i);
                let bucket = FleetBucket {
                    writer: writers[i % writers.len()].clone(),
                    prefix: format!("{PREFIX}/{name}"),
                };
                (name, bucket)
            })
            .collect();
        let body = pointer_body(V1)?;
        futures::stream::iter(fleet_buckets.values().cloned())
            .map(|b| {
                let body = body.clone();
                async move { b.writer.put(&pointer_key(&b.prefix), body).await }
            })
            .buffer_unordered(CONCURRENCY)
            .try_collect::<Vec<()>>()
            .await?;
        let [first, _] = writers;
        Ok(RolloutWorkload {
            client,
            fleets,
            buckets: [s3.bucket.clone(), second.bucket],
            fleet_buckets,
            first,
        })
    }

    /// Creates every fleet from concurrent client tasks; returns them as created.
    pub async fn create_fleets(&self) -> Result<Vec<CelldFleet>> {
        let api: Api<CelldFleet> = Api::namespaced(self.client.clone(), &rollout_namespace());
        let fleets: Vec<CelldFleet> = (0..self.fleets)
            .map(|i| {
                serde_json::from_value(fleet_json(i, &self.buckets))
                    .map_err(manifest("a bench rollout fleet"))
            })
            .collect::<Result<_>>()?;
        futures::stream::iter(fleets)
            .map(|fleet| {
                let api = api.clone();
                async move {
                    api.create(&PostParams::default(), &fleet)
                        .await
                        .map_err(Error::kube("creating a rollout fleet"))
                }
            })
            .buffer_unordered(CONCURRENCY)
            .try_collect()
            .await
    }

    /// The store `name`.
    pub async fn store(&self, name: &str) -> Result<CelldObjectStore> {
        Api::<CelldObjectStore>::namespaced(self.client.clone(), &rollout_namespace())
            .get(name)
            .await
            .map_err(Error::kube(format!("reading the CelldObjectStore {name}")))
    }

    /// Applies the rollout (server-side apply, as a person's `kubectl apply` would).
    pub async fn apply_rollout(&self) -> Result<()> {
        Api::<CelldRollout>::namespaced(self.client.clone(), &rollout_namespace())
            .patch(
                ROLLOUT,
                &PatchParams::apply("bench").force(),
                &Patch::Apply(rollout_manifest()?),
            )
            .await
            .map_err(Error::kube("applying the rollout"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::tests::s3;

    #[test]
    fn the_fleets_alternate_between_two_stores_each_on_its_own_bucket() {
        let buckets = ["b".to_string(), second_bucket(&s3())];
        let even: CelldFleet = serde_json::from_value(fleet_json(4, &buckets)).unwrap();
        let odd: CelldFleet = serde_json::from_value(fleet_json(7, &buckets)).unwrap();
        assert_eq!(even.metadata.name.as_deref(), Some("t0004"));
        assert_eq!(even.metadata.namespace.as_deref(), Some("bench-0"));
        assert_eq!(
            even.spec.store_ref.as_ref().map(|r| r.name.as_str()),
            Some("store-a")
        );
        assert_eq!(even.spec.object_storage.bucket, "s3://b/rollout/t0004");
        assert_eq!(
            odd.spec.store_ref.as_ref().map(|r| r.name.as_str()),
            Some("store-b")
        );
        assert_eq!(odd.spec.object_storage.bucket, "s3://b-b/rollout/t0007");
        assert_eq!(
            even.metadata
                .labels
                .unwrap()
                .get(SELECTED.0)
                .map(String::as_str),
            Some(SELECTED.1)
        );
        assert_eq!(even.spec.replicas, REPLICAS);
        let store: CelldObjectStore = serde_json::from_value(store_json("store-b", &s3())).unwrap();
        assert_eq!(store.spec.allow_http, Some(true));
    }

    #[test]
    fn the_rollout_ships_to_every_fleet_in_four_waves_of_a_short_bake() {
        let rollout = rollout_manifest().unwrap();
        assert_eq!(rollout.spec.waves.len(), 4);
        assert!(rollout.spec.waves.iter().all(|w| w.max_parallel.is_none()));
        assert!(rollout.spec.waves.iter().all(|w| w.bake() == Some(BAKE)));
        assert!(rollout.spec.gates.webhooks.is_empty());
        assert_eq!(wave_sizes(200).unwrap(), [1, 19, 80, 100]);
        assert_eq!(wave_sizes(10).unwrap(), [1, 0, 4, 5]);
        assert!(
            fleet_name(9) < fleet_name(10),
            "the name order is the fleets'"
        );
    }
}
