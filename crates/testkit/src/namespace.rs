//! A fresh, uniquely named namespace per test, deleted when the guard is dropped.

use std::process::{Command, Stdio};

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{DeleteParams, ObjectMeta, PostParams};
use kube::{Api, Client};

use crate::error::{Error, Result};
use crate::names::{sanitize, unique_name};
use crate::paths;
use crate::wait::{DEFAULT_TIMEOUT, wait_for_deletion};

/// Label on every namespace the kit creates (`kubectl delete ns -l testenv.celld.dev/test`
/// removes leftovers).
pub const TEST_LABEL: &str = "testenv.celld.dev/test";

/// Set to `1` to keep test namespaces (and scratch dirs) for debugging.
pub const KEEP_ENV: &str = "CELLD_TEST_KEEP_NAMESPACES";

/// A namespace owned by one test. Dropping it deletes the namespace (through kubectl, since
/// `Drop` cannot await); [`TestNamespace::cleanup`] deletes it through the API and reports errors;
/// [`TestNamespace::cleanup_and_wait`] also waits until it is gone.
pub struct TestNamespace {
    client: Client,
    name: String,
    deleted: bool,
}

impl TestNamespace {
    /// Creates `<prefix>-xxxxxx`, labelled with [`TEST_LABEL`]`=<prefix>`.
    pub async fn create(client: &Client, prefix: &str) -> Result<Self> {
        let name = unique_name(prefix);
        let label = sanitize(prefix, 63);
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                labels: Some([(TEST_LABEL.to_owned(), label)].into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        Api::<Namespace>::all(client.clone())
            .create(&PostParams::default(), &namespace)
            .await
            .map_err(|e| Error::kube(format!("creating test namespace {name}"), e))?;
        Ok(TestNamespace {
            client: client.clone(),
            name,
            deleted: false,
        })
    }

    /// The namespace's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Deletes the namespace (with everything in it) and returns without waiting: the namespace
    /// controller holds every deletion for 5 s before it starts removing the contents.
    pub async fn cleanup(mut self) -> Result<()> {
        self.deleted = true;
        if keep() {
            return Ok(());
        }
        self.delete().await
    }

    /// Deletes the namespace and waits (up to 30 s) until the namespace controller removed it and
    /// everything in it (at least 5 s).
    pub async fn cleanup_and_wait(mut self) -> Result<()> {
        self.deleted = true;
        if keep() {
            return Ok(());
        }
        self.delete().await?;
        let api = Api::<Namespace>::all(self.client.clone());
        wait_for_deletion(&api, &self.name, DEFAULT_TIMEOUT).await
    }

    async fn delete(&self) -> Result<()> {
        let api = Api::<Namespace>::all(self.client.clone());
        match api.delete(&self.name, &DeleteParams::background()).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(e) => Err(Error::kube(
                format!("deleting test namespace {}", self.name),
                e,
            )),
        }
    }
}

impl std::fmt::Debug for TestNamespace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestNamespace")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Drop for TestNamespace {
    fn drop(&mut self) {
        if self.deleted || keep() {
            return;
        }
        // Best effort: a failure here must not turn a passing test into a panic.
        let _ = Command::new(paths::kubectl())
            .arg(format!("--kubeconfig={}", paths::kubeconfig().display()))
            .args([
                "delete",
                "namespace",
                &self.name,
                "--wait=false",
                "--ignore-not-found",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Whether [`KEEP_ENV`] asks to keep test namespaces.
pub(crate) fn keep() -> bool {
    std::env::var(KEEP_ENV).is_ok_and(|v| v == "1")
}
