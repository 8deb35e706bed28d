//! Flux's source-controller of the local control plane, and the sources it is given.

use std::collections::BTreeMap;
use std::path::Path;

use k8s_openapi::api::core::v1::Secret;
use kube::api::PostParams;
use kube::core::ObjectMeta;
use kube::{Api, Client};
use serde_json::json;

use super::registry::OciRegistry;
use super::settings::read_env_file;
use super::source::{FluxSource, FluxSourceKind};
use crate::error::{Error, Result};
use crate::paths;
use crate::s3::S3Settings;

/// How often source-controller checks a source again by itself; tests that change one make it
/// look at once with [`FluxSource::request_reconcile`].
const SOURCE_INTERVAL: &str = "1m";

/// Flux's source-controller of the local control plane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flux {
    /// `127.0.0.1:<port>`: where its artifact server listens, and the host of every
    /// `status.artifact.url` it writes.
    pub storage_addr: String,
    /// The source-controller release (`v1.9.0`).
    pub version: String,
}

impl Flux {
    /// Reads `.testenv/flux.env`; fails with [`Error::NotServed`] when the control plane runs no
    /// source-controller (it is not up, or was started with `CELLD_TESTENV_FLUX=0`).
    pub fn load() -> Result<Self> {
        Self::from_file(&paths::flux_env())
    }

    /// Reads a `KEY=value` env file with `FLUX_STORAGE_ADDR` and `FLUX_SOURCE_CONTROLLER_VERSION`.
    pub fn from_file(path: &Path) -> Result<Self> {
        let get = read_env_file(path, "Flux source-controller")?;
        Ok(Flux {
            storage_addr: get("FLUX_STORAGE_ADDR")?,
            version: get("FLUX_SOURCE_CONTROLLER_VERSION")?,
        })
    }

    /// Creates a `Bucket` source `name` in `namespace` that reads the objects under `prefix` in
    /// the S3 server's bucket (provider `generic`, the server's loopback endpoint over plain
    /// HTTP, path-style), with a Secret `<name>-s3` holding the server's keys (`accesskey`,
    /// `secretkey`). Its artifact holds the objects with their whole keys as paths.
    pub async fn create_bucket(
        &self,
        client: &Client,
        namespace: &str,
        name: &str,
        s3: &S3Settings,
        prefix: &str,
    ) -> Result<FluxSource> {
        let (endpoint, insecure) = match s3.endpoint.strip_prefix("http://") {
            Some(host) => (host, true),
            None => (
                s3.endpoint
                    .strip_prefix("https://")
                    .unwrap_or(s3.endpoint.as_str()),
                false,
            ),
        };
        let secret = format!("{name}-s3");
        let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
        secrets
            .create(
                &PostParams::default(),
                &Secret {
                    metadata: ObjectMeta {
                        name: Some(secret.clone()),
                        ..ObjectMeta::default()
                    },
                    string_data: Some(BTreeMap::from([
                        ("accesskey".to_owned(), s3.access_key_id.clone()),
                        ("secretkey".to_owned(), s3.secret_access_key.clone()),
                    ])),
                    ..Secret::default()
                },
            )
            .await
            .map_err(|e| Error::kube(format!("creating Secret {namespace}/{secret}"), e))?;
        let source = FluxSource::new(FluxSourceKind::Bucket, namespace, name);
        source
            .create(
                client,
                json!({
                    "provider": "generic",
                    "interval": SOURCE_INTERVAL,
                    "bucketName": s3.bucket,
                    "endpoint": endpoint,
                    "insecure": insecure,
                    "region": s3.region,
                    "prefix": prefix,
                    "secretRef": { "name": secret },
                }),
            )
            .await?;
        Ok(source)
    }

    /// Creates an `OCIRepository` source `name` in `namespace` that follows `repository:tag` on
    /// the registry (`oci://127.0.0.1:<port>/<repository>`, plain HTTP). Its artifact holds the
    /// files of the pushed artifact's layer ([`OciRegistry::push_artifact`]).
    pub async fn create_oci_repository(
        &self,
        client: &Client,
        namespace: &str,
        name: &str,
        registry: &OciRegistry,
        repository: &str,
        tag: &str,
    ) -> Result<FluxSource> {
        oci_repository(
            client,
            namespace,
            name,
            registry,
            repository,
            json!({ "tag": tag }),
        )
        .await
    }

    /// Creates an `OCIRepository` source `name` in `namespace` that follows the newest tag of
    /// `repository` on the registry within the semver `range` (`>=1.0.0`): a tag pushed later
    /// becomes its next artifact once source-controller looks again
    /// ([`FluxSource::request_reconcile`]).
    pub async fn create_oci_repository_semver(
        &self,
        client: &Client,
        namespace: &str,
        name: &str,
        registry: &OciRegistry,
        repository: &str,
        range: &str,
    ) -> Result<FluxSource> {
        oci_repository(
            client,
            namespace,
            name,
            registry,
            repository,
            json!({ "semver": range }),
        )
        .await
    }
}

/// Creates an `OCIRepository` source `name` in `namespace` on `repository` of the registry
/// (plain HTTP), with `reference` as its `spec.ref`.
async fn oci_repository(
    client: &Client,
    namespace: &str,
    name: &str,
    registry: &OciRegistry,
    repository: &str,
    reference: serde_json::Value,
) -> Result<FluxSource> {
    let source = FluxSource::new(FluxSourceKind::OciRepository, namespace, name);
    source
        .create(
            client,
            json!({
                "interval": SOURCE_INTERVAL,
                "url": registry.url(repository),
                "ref": reference,
                "insecure": true,
            }),
        )
        .await?;
    Ok(source)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::unique_name;

    #[test]
    fn missing_settings_name_the_component_and_make_cluster_up() {
        let dir = std::env::temp_dir().join(unique_name("celld-testkit-flux"));
        let flux = Flux::from_file(&dir.join("flux.env")).expect_err("no file");
        let message = flux.to_string();
        assert!(
            message.contains("runs no Flux source-controller")
                && message.contains("make cluster-up"),
            "{message}"
        );
        let registry = OciRegistry::from_file(&dir.join("oci.env")).expect_err("no file");
        assert!(
            registry.to_string().contains("runs no OCI registry"),
            "{registry}"
        );
    }

    #[test]
    fn reads_the_env_files() {
        let dir = std::env::temp_dir().join(unique_name("celld-testkit-flux"));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(
            dir.join("flux.env"),
            "FLUX_SOURCE_CONTROLLER_VERSION=v1.9.0\nFLUX_STORAGE_ADDR=127.0.0.1:1234\n",
        )
        .expect("write");
        std::fs::write(dir.join("oci.env"), "OCI_REGISTRY=127.0.0.1:5678\n").expect("write");
        let flux = Flux::from_file(&dir.join("flux.env")).expect("parse");
        assert_eq!(flux.storage_addr, "127.0.0.1:1234");
        assert_eq!(flux.version, "v1.9.0");
        let registry = OciRegistry::from_file(&dir.join("oci.env")).expect("parse");
        assert_eq!(registry.url("worker"), "oci://127.0.0.1:5678/worker");
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}
