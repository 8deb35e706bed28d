//! The Flux sources the kit creates (`Bucket`, `OCIRepository`): their API, creating one,
//! waiting for its artifact, and asking source-controller to look at it now.

use std::time::Duration;

use kube::api::{ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use kube::{Api, Client};
use serde_json::{Value, json};

use super::artifact::FluxArtifact;
use crate::error::{Error, Result};
use crate::wait::{Check, wait_until};

/// How long source-controller may take to make a new source's first artifact (it usually takes
/// about a second).
pub const ARTIFACT_TIMEOUT: Duration = Duration::from_secs(60);

/// The API group and version of Flux's sources.
const SOURCE_API_VERSION: &str = "source.toolkit.fluxcd.io/v1";

/// The kinds of Flux source the kit creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FluxSourceKind {
    /// `Bucket` (objects of an S3-compatible bucket).
    Bucket,
    /// `OCIRepository` (an artifact in an OCI registry).
    OciRepository,
}

impl FluxSourceKind {
    /// The kind's name (`Bucket`, `OCIRepository`).
    pub fn kind(self) -> &'static str {
        match self {
            FluxSourceKind::Bucket => "Bucket",
            FluxSourceKind::OciRepository => "OCIRepository",
        }
    }

    /// The API resource of the kind (`source.toolkit.fluxcd.io/v1`).
    pub fn api_resource(self) -> ApiResource {
        let plural = match self {
            FluxSourceKind::Bucket => "buckets",
            FluxSourceKind::OciRepository => "ocirepositories",
        };
        let gvk = GroupVersionKind::gvk("source.toolkit.fluxcd.io", "v1", self.kind());
        ApiResource::from_gvk_with_plural(&gvk, plural)
    }
}

/// A Flux source the kit created: what to wait for, and what a test refers to (a `sourceRef`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FluxSource {
    /// Its kind.
    pub kind: FluxSourceKind,
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl FluxSource {
    pub(super) fn new(kind: FluxSourceKind, namespace: &str, name: &str) -> Self {
        FluxSource {
            kind,
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }

    /// The API of the source's kind in its namespace.
    pub fn api(&self, client: &Client) -> Api<DynamicObject> {
        Api::namespaced_with(client.clone(), &self.namespace, &self.kind.api_resource())
    }

    fn describe(&self) -> String {
        format!("{} {}/{}", self.kind.kind(), self.namespace, self.name)
    }

    pub(super) async fn create(&self, client: &Client, spec: Value) -> Result<()> {
        let object: DynamicObject = serde_json::from_value(json!({
            "apiVersion": SOURCE_API_VERSION,
            "kind": self.kind.kind(),
            "metadata": { "name": self.name, "namespace": self.namespace },
            "spec": spec,
        }))
        .map_err(|e| Error::Invalid {
            what: "Flux source",
            value: format!("{}: {e}", self.describe()),
            reason: "is not an object",
        })?;
        self.api(client)
            .create(&PostParams::default(), &object)
            .await
            .map_err(|e| {
                Error::kube(
                    format!(
                        "creating {} (are the Flux CRDs installed? run `make cluster-up`)",
                        self.describe()
                    ),
                    e,
                )
            })?;
        Ok(())
    }

    /// Waits until source-controller reports the source Ready (condition `Ready` True for its
    /// current generation) with an artifact, and returns that artifact. On timeout the error
    /// shows the source's last status (its conditions say why it is not ready).
    pub async fn wait_for_artifact(
        &self,
        client: &Client,
        timeout: Duration,
    ) -> Result<FluxArtifact> {
        self.wait_for(client, None, timeout).await
    }

    /// Waits until source-controller reports the source Ready with an artifact of `revision`
    /// (`v1.1.0@sha256:…` for an `OCIRepository`), and returns that artifact: a source that
    /// moves to a new revision. On timeout the error shows the source's last status.
    pub async fn wait_for_revision(
        &self,
        client: &Client,
        revision: &str,
        timeout: Duration,
    ) -> Result<FluxArtifact> {
        self.wait_for(client, Some(revision), timeout).await
    }

    /// Waits for the source's ready artifact, of `revision` when given.
    async fn wait_for(
        &self,
        client: &Client,
        revision: Option<&str>,
        timeout: Duration,
    ) -> Result<FluxArtifact> {
        let api = self.api(client);
        let api = &api;
        let wanted = revision.map_or_else(String::new, |r| format!(" of revision {r}"));
        wait_until(
            format!("{} to be Ready with an artifact{wanted}", self.describe()),
            timeout,
            || async move {
                match api.get_opt(&self.name).await {
                    Ok(Some(object)) => match ready_artifact(&object)
                        .filter(|a| revision.is_none_or(|r| a.revision == r))
                    {
                        Some(artifact) => Check::Done(artifact),
                        None => Check::Pending(format!(
                            "generation {:?}, status {}",
                            object.metadata.generation,
                            object.data.get("status").unwrap_or(&Value::Null)
                        )),
                    },
                    Ok(None) => Check::Pending("not found".to_owned()),
                    Err(e) => Check::Pending(format!("error reading it: {e}")),
                }
            },
        )
        .await
    }

    /// Asks source-controller to look at the source now rather than at its next interval (the
    /// `reconcile.fluxcd.io/requestedAt` annotation, as `flux reconcile source` sets it).
    pub async fn request_reconcile(&self, client: &Client) -> Result<()> {
        let now = jiff::Timestamp::now().to_string();
        self.api(client)
            .patch(
                &self.name,
                &PatchParams::default(),
                &Patch::Merge(json!({
                    "metadata": { "annotations": { "reconcile.fluxcd.io/requestedAt": now } }
                })),
            )
            .await
            .map_err(|e| Error::kube(format!("annotating {}", self.describe()), e))?;
        Ok(())
    }
}

/// The artifact of a source whose `Ready` condition is True for its current generation.
fn ready_artifact(object: &DynamicObject) -> Option<FluxArtifact> {
    let status = object.data.get("status")?;
    let generation = object.metadata.generation?;
    if status.get("observedGeneration")?.as_i64()? != generation {
        return None;
    }
    let ready = status
        .get("conditions")?
        .as_array()?
        .iter()
        .any(|c| c["type"] == "Ready" && c["status"] == "True");
    if !ready {
        return None;
    }
    let artifact = status.get("artifact")?;
    let text = |key: &str| artifact.get(key)?.as_str().map(str::to_owned);
    Some(FluxArtifact {
        url: text("url")?,
        digest: text("digest")?,
        revision: text("revision")?,
        size: artifact.get("size").and_then(Value::as_u64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(status: Value, generation: i64) -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": SOURCE_API_VERSION,
            "kind": "Bucket",
            "metadata": { "name": "b", "namespace": "ns", "generation": generation },
            "spec": {},
            "status": status,
        }))
        .expect("object")
    }

    #[test]
    fn an_artifact_counts_only_when_ready_for_the_current_generation() {
        let artifact = json!({
            "url": "http://127.0.0.1:1/bucket/ns/b/x.tar.gz",
            "digest": "sha256:aa",
            "revision": "sha256:bb",
            "size": 75,
        });
        let ready = json!([{ "type": "Ready", "status": "True" }]);
        let got = ready_artifact(&source(
            json!({ "observedGeneration": 2, "conditions": ready, "artifact": artifact }),
            2,
        ))
        .expect("ready");
        assert_eq!(got.digest, "sha256:aa");
        assert_eq!(got.revision, "sha256:bb");
        assert_eq!(got.size, Some(75));
        // An older generation's artifact, a source not Ready, or one without an artifact: no.
        assert!(
            ready_artifact(&source(
                json!({ "observedGeneration": 1, "conditions": ready, "artifact": artifact }),
                2,
            ))
            .is_none()
        );
        assert!(
            ready_artifact(&source(
                json!({
                    "observedGeneration": 2,
                    "conditions": [{ "type": "Ready", "status": "False" }],
                    "artifact": artifact,
                }),
                2,
            ))
            .is_none()
        );
        assert!(
            ready_artifact(&source(
                json!({ "observedGeneration": 2, "conditions": ready }),
                2
            ))
            .is_none()
        );
    }
}
