//! [`TestEnv`]: everything one integration test needs, in one value.

use std::path::PathBuf;

use kube::{Api, Client, Resource};

use crate::client::client;
use crate::error::{Error, Result};
use crate::flux::{Flux, OciRegistry};
use crate::kubectl::Kubectl;
use crate::namespace::{TestNamespace, keep};
use crate::paths;
use crate::s3::S3Settings;

/// A test's view of the local control plane: an admin client, a fresh namespace (deleted when
/// this is dropped, or by [`TestEnv::cleanup`]), kubectl bound to both, and a scratch directory.
///
/// ```no_run
/// # async fn demo() -> celld_testkit::Result<()> {
/// let env = celld_testkit::TestEnv::new("my-test").await?;
/// let pods: kube::Api<k8s_openapi::api::core::v1::Pod> = env.api();
/// let out = env.kubectl().run(["get", "pods"]).await?;
/// env.cleanup().await?;
/// # Ok(()) }
/// ```
pub struct TestEnv {
    client: Client,
    namespace: TestNamespace,
    kubectl: Kubectl,
    scratch: ScratchDir,
}

impl std::fmt::Debug for TestEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestEnv")
            .field("namespace", &self.namespace.name())
            .field("scratch", &self.scratch.0)
            .finish_non_exhaustive()
    }
}

/// The test's scratch directory, removed when dropped (unless namespaces are kept).
#[derive(Debug)]
struct ScratchDir(PathBuf);

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if !keep() && self.0.exists() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

impl TestEnv {
    /// Connects as the admin and creates a namespace `<test>-xxxxxx`. Fails (never skips) when
    /// the control plane is not up, saying to run `make cluster-up`.
    pub async fn new(test: &str) -> Result<Self> {
        let client = client().await?;
        let namespace = TestNamespace::create(&client, test).await?;
        let kubectl = Kubectl::new().in_namespace(namespace.name());
        let scratch = ScratchDir(paths::scratch_root().join(namespace.name()));
        Ok(TestEnv {
            client,
            namespace,
            kubectl,
            scratch,
        })
    }

    /// The admin client.
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// The test's namespace.
    pub fn namespace(&self) -> &str {
        self.namespace.name()
    }

    /// The API of a namespaced kind in the test's namespace.
    pub fn api<K>(&self) -> Api<K>
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as Resource>::DynamicType: Default,
    {
        Api::namespaced(self.client.clone(), self.namespace())
    }

    /// kubectl with the test kubeconfig and `--namespace=<test namespace>`.
    pub fn kubectl(&self) -> &Kubectl {
        &self.kubectl
    }

    /// The S3 settings of the local control plane.
    pub fn s3(&self) -> Result<S3Settings> {
        S3Settings::load()
    }

    /// Flux's source-controller of the local control plane; fails, saying to run `make
    /// cluster-up`, when it runs none.
    pub fn flux(&self) -> Result<Flux> {
        Flux::load()
    }

    /// The OCI registry of the local control plane; fails, saying to run `make cluster-up`,
    /// when it runs none.
    pub fn oci_registry(&self) -> Result<OciRegistry> {
        OciRegistry::load()
    }

    /// A directory for this test's files (`.testenv/scratch/<namespace>/`), created on first use,
    /// removed by [`TestEnv::cleanup`], on drop and by down.sh. kwok's exec commands and log
    /// rules can use it: they run on this machine.
    pub fn scratch_dir(&self) -> Result<PathBuf> {
        let dir = &self.scratch.0;
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io("creating the test's scratch directory", dir, e))?;
        Ok(dir.clone())
    }

    /// Removes the scratch directory and deletes the namespace, without waiting for the namespace
    /// controller (see [`TestNamespace::cleanup`]).
    pub async fn cleanup(self) -> Result<()> {
        let TestEnv {
            namespace, scratch, ..
        } = self;
        drop(scratch);
        namespace.cleanup().await
    }

    /// Like [`TestEnv::cleanup`], then waits until the namespace and its contents are gone.
    pub async fn cleanup_and_wait(self) -> Result<()> {
        let TestEnv {
            namespace, scratch, ..
        } = self;
        drop(scratch);
        namespace.cleanup_and_wait().await
    }
}
