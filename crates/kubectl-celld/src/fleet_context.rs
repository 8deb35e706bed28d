//! The one lookup every fleet command starts from: connect, read the CelldFleet, resolve its
//! storage exactly as the operator does, check its credentials Secret exists, and list its node
//! pods. `deploy`, `history` and `rollback` need all of it and fail at the first problem;
//! `status` and `logs` use the parts they report on.

use crate::cluster_flags::Globals;
use crate::deploy::reload::{self, Node};
use crate::error::{Error, Result, status_code};
use crate::fleets;
use crate::kubeconfig::{self, Target};
use celld_api::{CelldFleet, ResolvedStorage};
use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::Api;

/// A fleet, where it stores its Workers, and how to reach its namespace.
#[derive(Clone)]
pub struct FleetContext {
    /// The client and the fleet's namespace.
    pub target: Target,
    /// The CelldFleet as read now.
    pub fleet: CelldFleet,
    /// Its bucket, endpoint, region and credentials Secret's name.
    pub storage: ResolvedStorage,
}

impl FleetContext {
    /// Connects with `globals` and loads fleet `name`: a fleet that does not exist, storage
    /// that does not resolve, or a credentials Secret that is missing is an error naming the fix.
    pub async fn load(globals: &Globals, name: &str) -> Result<Self> {
        let target = kubeconfig::connect(globals).await?;
        Self::load_in(target, name).await
    }

    /// The first step of every lookup, alone (for `status` and `logs`, which report on a
    /// fleet whose storage is broken too): the fleet, or an error naming similar fleets, other
    /// namespaces holding one of that name, or missing CRDs.
    pub async fn find(target: &Target, name: &str) -> Result<CelldFleet> {
        fleets::get(target, name).await
    }

    /// [`FleetContext::load`] with a client already built.
    pub async fn load_in(target: Target, name: &str) -> Result<Self> {
        let fleet = Self::find(&target, name).await?;
        let storage = celld_api::resolve::fetch(&target.client, &target.namespace, &fleet.spec)
            .await
            .map_err(|source| Error::Storage {
                fleet: name.to_string(),
                source: Box::new(source),
            })?;
        let context = FleetContext {
            target,
            fleet,
            storage,
        };
        context.check_secret().await?;
        Ok(context)
    }

    /// The fleet's name.
    pub fn name(&self) -> &str {
        self.fleet.metadata.name.as_deref().unwrap_or_default()
    }

    /// The fleet's namespace.
    pub fn namespace(&self) -> &str {
        &self.target.namespace
    }

    /// The pods API of the fleet's namespace.
    pub fn pods(&self) -> Api<Pod> {
        Api::namespaced(self.target.client.clone(), self.namespace())
    }

    /// The fleet's node pods, in ordinal order.
    pub async fn nodes(&self) -> Result<Vec<Node>> {
        reload::nodes(&self.pods(), self.name()).await
    }

    /// Fails when the credentials Secret does not exist. Reads only its metadata (never the
    /// values); skipped when RBAC does not allow it.
    async fn check_secret(&self) -> Result<()> {
        let ns = self.namespace();
        let secrets: Api<Secret> = Api::namespaced(self.target.client.clone(), ns);
        match secrets
            .get_metadata_opt(&self.storage.credentials_secret)
            .await
        {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err(Error::Storage {
                fleet: self.name().to_string(),
                source: Box::new(celld_api::ResolveError::SecretNotFound {
                    name: self.storage.credentials_secret.clone(),
                    namespace: ns.to_string(),
                }),
            }),
            Err(e) if status_code(&e) == Some(403) => Ok(()),
            Err(e) => Err(Error::api("get", "secrets", Some(ns), e)),
        }
    }
}
