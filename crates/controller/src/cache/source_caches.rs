//! The caches a fleet with spec.source (or a CelldRollout shipping to it) reads: the deploy
//! Jobs the operator started (indexed by their fleet), their pods, the Flux sources of every
//! kind the cluster served when the operator started, and the rollouts. Deploy Jobs and pods are selected by label, so the caches hold nothing for
//! fleets without a source.

use crate::cache::owner_index::Owned;
use crate::cache::owner_index::controller_uid;
use crate::source::wanted::FluxLookup;
use celld_api::rollout::RolloutTarget;
use celld_api::{CelldRollout, FluxSourceKind};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ApiResource, DynamicObject};
use kube::core::DeserializeGuard;
use kube::discovery::{self, Scope};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt};
use std::sync::Arc;

/// The API group of Flux's sources.
pub const FLUX_SOURCE_GROUP: &str = "source.toolkit.fluxcd.io";

/// Label selector of the deploy Jobs of spec.source.
pub fn deploy_selector() -> String {
    format!(
        "app.kubernetes.io/managed-by={},{}={}",
        crate::children::MANAGER,
        celld_api::labels::ROLE,
        celld_api::labels::ROLE_DEPLOY
    )
}

/// Label selector of the pods the operator watches: the deploy pods of spec.source (cached)
/// and every fleet's node pods (read for their exits, kept nowhere), in one watch.
pub fn pod_selector() -> String {
    format!(
        "app.kubernetes.io/managed-by={},{} in ({},{})",
        crate::children::MANAGER,
        celld_api::labels::ROLE,
        celld_api::labels::ROLE_DEPLOY,
        celld_api::labels::ROLE_NODE
    )
}

/// Whether `pod` is a deploy pod (else, by [`pod_selector`], a node pod).
pub fn is_deploy_pod(pod: &Pod) -> bool {
    pod.labels()
        .get(celld_api::labels::ROLE)
        .map(String::as_str)
        == Some(celld_api::labels::ROLE_DEPLOY)
}

/// The caches of deploy Jobs, their pods and Flux's sources.
#[derive(Clone)]
pub struct SourceCaches {
    /// The deploy Jobs, by owner.
    pub jobs: Owned<Job>,
    /// Their pods.
    pub pods: Store<Pod>,
    /// A cache per Flux source kind the cluster serves, with the resource its objects are
    /// keyed by.
    pub flux: Vec<(FluxSourceKind, ApiResource, Store<DynamicObject>)>,
    /// The CelldRollouts; None when the cluster did not serve them at start.
    pub rollouts: Option<Store<DeserializeGuard<CelldRollout>>>,
}

/// What a CelldRollout hands a fleet: its name and the revision the fleet publishes.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    /// The rollout.
    pub rollout: String,
    /// The revision, as the rollout fixed it.
    pub target: RolloutTarget,
}

impl SourceCaches {
    /// The deploy Job `name` of namespace `ns`.
    pub fn job(&self, ns: &str, name: &str) -> Option<Arc<Job>> {
        self.jobs.store.get(&ObjectRef::new(name).within(ns))
    }

    /// The newest pod of the Job `job` in namespace `ns`.
    pub fn newest_pod(&self, ns: &str, job: &str) -> Option<Arc<Pod>> {
        self.pods
            .state()
            .into_iter()
            .filter(|p| p.namespace().as_deref() == Some(ns))
            .filter(|p| {
                let labels = p.labels();
                labels
                    .get("batch.kubernetes.io/job-name")
                    .map(String::as_str)
                    == Some(job)
                    || labels.get("job-name").map(String::as_str) == Some(job)
            })
            .max_by(|a, b| a.creation_timestamp().cmp(&b.creation_timestamp()))
    }

    /// The deploy Jobs of the fleet `owner_uid` in namespace `ns`.
    pub fn jobs_of(&self, ns: &str, owner_uid: &str) -> Vec<Arc<Job>> {
        self.jobs
            .owners
            .owned_by(owner_uid)
            .into_iter()
            .filter_map(|name| self.job(ns, &name))
            .filter(|job| controller_uid(job.as_ref()) == Some(owner_uid))
            .collect()
    }

    /// The Flux source `kind`/`name` of namespace `ns`, and whether its kind is served.
    pub fn flux(&self, kind: FluxSourceKind, ns: &str, name: &str) -> FluxLookup {
        match self.flux.iter().find(|(k, _, _)| *k == kind) {
            None => FluxLookup::default(),
            Some((_, resource, store)) => FluxLookup {
                installed: true,
                object: store
                    .get(&ObjectRef::new_with(name, resource.clone()).within(ns))
                    .map(|o| o.as_ref().clone()),
            },
        }
    }

    /// What a rollout of namespace `ns` hands the fleet `fleet`, if one does: of two (which
    /// their status writer never makes), the older.
    pub fn assignment(&self, ns: &str, fleet: &str) -> Option<Assignment> {
        let rollouts = self.rollouts.as_ref()?.state();
        rollouts
            .iter()
            .filter_map(|g| g.0.as_ref().ok())
            .filter(|r| r.namespace().as_deref() == Some(ns))
            .filter_map(|r| r.target_for(fleet).map(|t| (r, t)))
            .min_by_key(|(r, _)| (r.metadata.creation_timestamp.clone(), r.name_any()))
            .map(|(r, target)| Assignment {
                rollout: r.name_any(),
                target: target.clone(),
            })
    }
}

/// The Flux source kinds the cluster serves, each at its preferred version.
pub async fn flux_kinds(client: &Client) -> Vec<(FluxSourceKind, ApiResource)> {
    let Ok(group) = discovery::group(client, FLUX_SOURCE_GROUP).await else {
        return Vec::new();
    };
    FluxSourceKind::ALL
        .into_iter()
        .filter_map(|kind| {
            let (resource, caps) = group.recommended_kind(kind.as_str())?;
            (caps.scope == Scope::Namespaced).then_some((kind, resource))
        })
        .collect()
}
