//! A `kube::Client` for the local control plane.

use std::path::Path;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use crate::error::{Error, Result};
use crate::paths;

/// The client configuration for the local control plane, read from [`paths::kubeconfig`].
///
/// Fails with [`Error::NotRunning`] (which says to run `make cluster-up`) when the kubeconfig
/// does not exist.
pub async fn config() -> Result<Config> {
    config_from(&paths::kubeconfig()).await
}

/// The client configuration read from the kubeconfig at `path`.
pub async fn config_from(path: &Path) -> Result<Config> {
    if !path.exists() {
        return Err(Error::NotRunning {
            path: path.to_path_buf(),
        });
    }
    let kubeconfig = Kubeconfig::read_from(path).map_err(|source| Error::Kubeconfig {
        path: path.to_path_buf(),
        source: Box::new(source),
    })?;
    Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|source| Error::Kubeconfig {
            path: path.to_path_buf(),
            source: Box::new(source),
        })
}

/// A client for the local control plane, authenticated as the admin (`system:masters`).
pub async fn client() -> Result<Client> {
    let config = config().await?;
    Client::try_from(config)
        .map_err(|e| Error::kube("building a client for the local control plane", e))
}
