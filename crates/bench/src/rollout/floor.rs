//! The rollout's floor: what one wave's publishes take when nothing but the control plane and
//! the stand-in for the deploy pods acts. For a wave of N fleets the bench creates N deploy
//! Jobs at once (rendered by the operator's own builder, `celld_operator::children::source_job`,
//! for the wave's fleets, so their pods are the operator's), in the fleets' namespace (where
//! the control plane's Endpoints, EndpointSlice and PodDisruptionBudget controllers look at
//! every Service and budget of the namespace on each change of a pod, as they do for the
//! operator's deploy pods), without an owner and without the operator's label (so the
//! operator neither caches nor deletes them), from [`CONCURRENCY`] client tasks; the Job controller makes their pods, the
//! scheduler binds them, kwok runs them, the same [player](super::player) writes a pointer for
//! each and ends it, and the Job controller marks each Job `Complete`. From the first create
//! until a watch has seen every one of them `Complete` is the wave's publish round trip: no
//! operator that publishes with deploy Jobs sees a wave's last publish end sooner after the
//! wave starts (it creates its Jobs only once it knows the wave started, and reads a publish as
//! done from its Job). A wave then bakes, so its floor is the round trip and the bake.

use crate::error::{Error, Result};
use crate::measure::readiness::{Shared, lock, watch};
use crate::results::rollout::Round;
use crate::rollout::player::{Player, ROUND_LABEL};
use crate::settings::{CONCURRENCY, REPLICAS};
use celld_api::rollout::CelldRollout;
use celld_api::{CelldFleet, CelldObjectStore, labels};
use celld_operator::children::source_job::{self, Publish};
use celld_operator::children::{self, Desired};
use celld_operator::upgrade::decide;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Secret;
use kube::api::PostParams;
use kube::{Api, Client, ResourceExt};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// The operator's label on its deploy Jobs and their pods, which its caches select by: left
/// off the floor's.
const MANAGED_BY: &str = "app.kubernetes.io/managed-by";

/// Whether a Job has completed.
pub fn job_complete(job: &Job) -> bool {
    job.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| {
            c.iter()
                .any(|c| c.type_ == "Complete" && c.status == "True")
        })
}

/// What the floor's Jobs are rendered from: the rollout and the stores' and Secret's objects.
pub struct Sources {
    /// The rollout (its source is what the Jobs publish).
    pub rollout: CelldRollout,
    /// The stores, by name.
    pub stores: BTreeMap<String, CelldObjectStore>,
    /// Their credentials Secret.
    pub secret: Secret,
}

/// The deploy Job the operator would create for `fleet` publishing the rollout's revision,
/// named `name`, in the fleet's namespace without its owner or the operator's label.
fn floor_job(fleet: &CelldFleet, sources: &Sources, name: &str, round: usize) -> Result<Job> {
    let fleet_name = fleet.name_any();
    let namespace = fleet.namespace().unwrap_or_default();
    let store = fleet
        .spec
        .store_ref
        .as_ref()
        .and_then(|r| sources.stores.get(&r.name));
    let storage = celld_api::resolve::resolve(&fleet.spec, &namespace, store).map_err(|e| {
        Error::Manifest {
            what: format!("the storage of fleet {fleet_name}"),
            detail: e.to_string(),
        }
    })?;
    let desired = Desired {
        fleet,
        name: fleet_name.clone(),
        namespace,
        config_hash: celld_operator::fleet::config_hash::compute(&storage, Some(&sources.secret)),
        storage,
        replicas: REPLICAS,
        https: false,
        operator: children::OperatorPods::default(),
        upgrade: decide::decide(&fleet.spec, REPLICAS, None, &decide::Probed::default()),
    };
    let source = sources.rollout.spec.source.for_fleet();
    let mut job = source_job::build(
        &desired,
        &Publish {
            source: &source,
            name,
            key: "00000000000f1008",
            artifact: None,
        },
    );
    job.metadata.owner_references = None;
    let relabel = |labels: &mut Option<BTreeMap<String, String>>| {
        let map = labels.get_or_insert_with(BTreeMap::new);
        map.remove(MANAGED_BY);
        map.remove(labels::FLEET);
        map.insert(ROUND_LABEL.to_string(), round.to_string());
    };
    relabel(&mut job.metadata.labels);
    if let Some(template) = job.spec.as_mut().and_then(|s| s.template.metadata.as_mut()) {
        relabel(&mut template.labels);
    }
    Ok(job)
}

/// The name of the floor's Job `i` of round `round`.
fn job_name(round: usize, i: usize) -> String {
    format!("floor-r{round}-{i}")
}

/// The floor's rounds on one control plane: its client, the watch of its Jobs (started
/// with it, stopped when it is dropped), what its Jobs are rendered from, and where the logs
/// are.
pub struct Floor {
    client: Client,
    namespace: String,
    seen: Shared,
    task: JoinHandle<()>,
    sources: Sources,
    logs: PathBuf,
}

impl Drop for Floor {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Floor {
    /// Starts watching the floor's Jobs in the fleets' namespace `namespace`.
    pub fn start(client: &Client, namespace: &str, sources: Sources, logs: PathBuf) -> Self {
        let (seen, task) = watch::<Job>(
            Api::namespaced(client.clone(), namespace),
            job_complete,
            |_| false,
        );
        Floor {
            client: client.clone(),
            namespace: namespace.to_string(),
            seen,
            task,
            sources,
            logs,
        }
    }

    /// Times round `round`: one deploy Job for each of `fleets` (a wave's), created at once,
    /// until every one is `Complete`, played by `player`; `alive` is asked as it waits.
    pub async fn round(
        &self,
        player: &Player,
        fleets: &[CelldFleet],
        round: usize,
        mut alive: impl FnMut() -> Result<()>,
    ) -> Result<Round> {
        let rendered: Vec<Job> = fleets
            .iter()
            .enumerate()
            .map(|(i, f)| floor_job(f, &self.sources, &job_name(round, i), round))
            .collect::<Result<_>>()?;
        let names: Vec<String> = rendered.iter().map(ResourceExt::name_any).collect();
        let api: Api<Job> = Api::namespaced(self.client.clone(), &self.namespace);
        let started = Instant::now();
        futures::stream::iter(rendered)
            .map(|job| {
                let api = api.clone();
                async move {
                    api.create(&PostParams::default(), &job)
                        .await
                        .map_err(Error::kube("creating a floor deploy Job"))
                }
            })
            .buffer_unordered(CONCURRENCY)
            .try_collect::<Vec<_>>()
            .await?;
        let timeout = Duration::from_secs(120 + names.len() as u64);
        crate::measure::readiness::wait_until(
            &format!("the floor's {} deploy Jobs of round {round}", names.len()),
            timeout,
            self.logs.clone(),
            &mut || {
                alive()?;
                player.failed()
            },
            || {
                let seen = lock(&self.seen);
                let done = names.iter().filter(|n| seen.ready.contains_key(*n)).count();
                (done == names.len())
                    .then_some(())
                    .ok_or_else(|| format!("{done}/{} Jobs Complete", names.len()))
            },
        )
        .await?;
        let seen = lock(&self.seen);
        let last = |times: &mut dyn Iterator<Item = Instant>| {
            times
                .max()
                .map_or(Duration::ZERO, |t| t.saturating_duration_since(started))
        };
        let complete = last(&mut names.iter().filter_map(|n| seen.ready.get(n).copied()));
        let plays = player.plays_of(&self.namespace, &format!("floor-r{round}-"));
        Ok(Round {
            jobs: names.len(),
            complete,
            pods_succeeded: last(&mut plays.iter().filter_map(|p| p.succeeded)),
            played: last(&mut plays.iter().filter_map(|p| p.played)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rollout::workload::{rollout_manifest, store_of};
    use serde_json::json;

    fn fleet(i: usize) -> CelldFleet {
        let name = crate::rollout::workload::fleet_name(i);
        serde_json::from_value(json!({
            "apiVersion": "platform.celld.dev/v1alpha1", "kind": "CelldFleet",
            "metadata": {"name": name, "namespace": "bench-0", "uid": "u-1"},
            "spec": {
                "replicas": 2, "storeRef": {"name": store_of(i)},
                "objectStorage": {"bucket": format!("s3://b/rollout/{name}")},
            },
        }))
        .unwrap()
    }

    fn sources() -> Sources {
        let s3 = crate::workload::tests::s3();
        let stores = crate::rollout::workload::STORES
            .iter()
            .map(|n| {
                let store = celld_fixtures::store(n, &s3, "s3-credentials").unwrap();
                (n.to_string(), store)
            })
            .collect();
        Sources {
            rollout: rollout_manifest().unwrap(),
            stores,
            secret: Secret::default(),
        }
    }

    #[test]
    fn a_floor_job_is_the_operators_deploy_job_moved_out_of_its_reach() {
        let job = floor_job(&fleet(3), &sources(), &job_name(2, 7), 2).unwrap();
        assert_eq!(job.metadata.name.as_deref(), Some("floor-r2-7"));
        assert_eq!(job.metadata.namespace.as_deref(), Some("bench-0"));
        assert!(job.metadata.owner_references.is_none());
        let labels = job.metadata.labels.clone().unwrap();
        assert_eq!(
            labels.get(labels::ROLE).map(String::as_str),
            Some(labels::ROLE_DEPLOY)
        );
        assert!(!labels.contains_key(MANAGED_BY) && !labels.contains_key(labels::FLEET));
        let template = job.spec.as_ref().unwrap().template.clone();
        let pod_labels = template.metadata.unwrap().labels.unwrap();
        assert_eq!(pod_labels.get(ROUND_LABEL).map(String::as_str), Some("2"));
        assert!(!pod_labels.contains_key(MANAGED_BY));
        let pod = template.spec.unwrap();
        assert_eq!(pod.containers[0].name, "publish");
        assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
    }

    #[test]
    fn a_job_is_complete_once_its_condition_says_so() {
        let job = |conditions: serde_json::Value| -> Job {
            serde_json::from_value(json!({"status": {"conditions": conditions}})).unwrap()
        };
        assert!(job_complete(&job(
            json!([{"type": "Complete", "status": "True"}])
        )));
        assert!(!job_complete(&job(
            json!([{"type": "SuccessCriteriaMet", "status": "True"}])
        )));
        assert!(!job_complete(&Job::default()));
    }
}
