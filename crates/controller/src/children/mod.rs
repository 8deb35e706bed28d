//! One builder per child resource. Builders are pure: they turn a [`Desired`] fleet into the
//! object the operator applies, and make no API calls.

pub mod deploy_jobs;
pub mod httproute;
pub mod ingress;
pub mod metadata_egress;
pub mod network_policy;
pub mod pdb;
pub mod peer_service;
pub mod service;
pub mod source_job;
pub mod statefulset;
pub use celld_api::storage_env;

use crate::upgrade::decide::Upgrade;
use celld_api::{CelldFleet, ResolvedStorage, labels};
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::fmt::Debug;

/// A child kind the operator applies and prunes.
pub trait Child:
    Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Clone
    + Debug
    + Serialize
    + DeserializeOwned
    + Send
    + Sync
    + 'static
{
}

impl<K> Child for K where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + Debug
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static
{
}

/// The field manager of every object the operator applies.
pub const MANAGER: &str = "celld-operator";

pub use celld_api::contract::{HEALTH_PATH, HTTP_PORT, INTERNAL_PORT, SERVICE_PORT};

/// The operator's own pods: besides the fleet's pods, the only ones that may reach a node's
/// internal port (celld's unauthenticated operator API, `/state` included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperatorPods {
    /// Their namespace.
    pub namespace: String,
    /// Labels every operator pod carries, and only operator pods.
    pub labels: BTreeMap<String, String>,
}

impl Default for OperatorPods {
    /// The pods of the operator as the install manifest deploys it.
    fn default() -> Self {
        Self {
            namespace: "celld-system".into(),
            labels: BTreeMap::from([("app.kubernetes.io/name".into(), "celld-operator".into())]),
        }
    }
}

/// Name of the headless peer Service of the fleet `fleet`.
pub fn peer_service_name(fleet: &str) -> String {
    format!("{fleet}-peer")
}

/// Everything a builder needs: the fleet and what the operator resolved for it.
#[derive(Debug, Clone)]
pub struct Desired<'a> {
    /// The fleet.
    pub fleet: &'a CelldFleet,
    /// Its name.
    pub name: String,
    /// Its namespace.
    pub namespace: String,
    /// Its resolved object storage.
    pub storage: ResolvedStorage,
    /// Hash of the configuration the pods must run with (storage and credentials contents).
    pub config_hash: String,
    /// StatefulSet replicas: the spec's, or 0 while the bucket holds no deployment.
    pub replicas: i32,
    /// Whether the route should claim https (TLS is configured on the Ingress or every Gateway
    /// listener the HTTPRoute attaches to is HTTPS).
    pub https: bool,
    /// The operator's pods, admitted to the internal port.
    pub operator: OperatorPods,
    /// Where a change of celld image stands: the image, partition and annotations of the
    /// StatefulSet.
    pub upgrade: Upgrade,
}

impl Desired<'_> {
    /// Name of the headless peer Service.
    pub fn peer_service_name(&self) -> String {
        peer_service_name(&self.name)
    }

    /// Labels on every child object.
    pub fn labels(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("app.kubernetes.io/name".to_string(), "celld".to_string()),
            ("app.kubernetes.io/instance".to_string(), self.name.clone()),
            (
                "app.kubernetes.io/managed-by".to_string(),
                MANAGER.to_string(),
            ),
            (labels::FLEET.to_string(), self.name.clone()),
        ])
    }

    /// The selector of the fleet's celld node pods.
    pub fn node_selector(&self) -> BTreeMap<String, String> {
        labels::node_selector(&self.name)
    }

    /// Metadata of a child named `name`, owned by the fleet.
    pub fn meta(&self, name: String, annotations: Option<BTreeMap<String, String>>) -> ObjectMeta {
        ObjectMeta {
            name: Some(name),
            namespace: Some(self.namespace.clone()),
            labels: Some(self.labels()),
            annotations: annotations.filter(|a| !a.is_empty()),
            owner_references: self.owner_reference().map(|o| vec![o]),
            ..ObjectMeta::default()
        }
    }

    fn owner_reference(&self) -> Option<OwnerReference> {
        self.fleet.controller_owner_ref(&())
    }

    /// The public URL of the Worker: through the route when one is asked for, otherwise the
    /// Service's in-cluster address.
    pub fn url(&self) -> String {
        match &self.fleet.spec.ingress {
            Some(ingress) => {
                let scheme = if self.https { "https" } else { "http" };
                let path = if ingress.path == "/" {
                    ""
                } else {
                    ingress.path.as_str()
                };
                format!("{scheme}://{}{path}", ingress.hostname)
            }
            None => format!("http://{}.{}.svc", self.name, self.namespace),
        }
    }
}

#[cfg(test)]
pub(crate) mod fixtures;
#[cfg(test)]
mod golden_pod_templates;
