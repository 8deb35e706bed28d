//! Flux's source-controller and the OCI registry of the local control plane, as up.sh records
//! them in `.testenv/flux.env` and `.testenv/oci.env`: Flux sources (`Bucket` on the S3 server,
//! `OCIRepository` on the registry) created in a test's namespace, the artifact source-controller
//! makes of them (`status.artifact`), and that artifact downloaded from its loopback URL.
//!
//! ```no_run
//! # async fn demo(dir: &std::path::Path) -> celld_testkit::Result<()> {
//! use celld_testkit::{ARTIFACT_TIMEOUT, TestEnv, unpack_tar_gz};
//! let env = TestEnv::new("flux").await?;
//! let (flux, registry) = (env.flux()?, env.oci_registry()?);
//! let digest = registry.push_artifact(dir, "worker", "v1").await?;
//! let source = flux
//!     .create_oci_repository(&env.client(), env.namespace(), "worker", &registry, "worker", "v1")
//!     .await?;
//! let artifact = source.wait_for_artifact(&env.client(), ARTIFACT_TIMEOUT).await?;
//! assert_eq!(artifact.revision, format!("v1@{digest}"));
//! let files = unpack_tar_gz(&artifact.download().await?)?;
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{GroupVersionKind, ObjectMeta};
use kube::{Api, Client};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use crate::error::{Error, Result};
use crate::paths;
use crate::s3::S3Settings;
use crate::wait::{Check, wait_until};

/// How long source-controller may take to make a new source's first artifact (it usually takes
/// about a second).
pub const ARTIFACT_TIMEOUT: Duration = Duration::from_secs(60);

/// The API group and version of Flux's sources.
const SOURCE_API_VERSION: &str = "source.toolkit.fluxcd.io/v1";

/// How often source-controller checks a source again by itself; tests that change one make it
/// look at once with [`FluxSource::request_reconcile`].
const SOURCE_INTERVAL: &str = "1m";

/// Longest an `oci-registry push` or an artifact download may take.
const TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// `KEY=value` lines of an env file written by up.sh; fails with [`Error::NotServed`] naming
/// `what` when it does not exist.
fn read_env_file(
    path: &Path,
    what: &'static str,
) -> Result<impl Fn(&'static str) -> Result<String> + use<>> {
    if !path.exists() {
        return Err(Error::NotServed {
            what,
            path: path.to_path_buf(),
        });
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io("reading the control plane's settings", path, e))?;
    let path = path.to_path_buf();
    Ok(move |key: &'static str| {
        text.lines()
            .filter_map(|line| line.trim().split_once('='))
            .find(|(k, _)| k.trim() == key)
            .map(|(_, v)| v.trim().trim_matches('"').to_owned())
            .ok_or_else(|| Error::EmulatorSetting {
                path: path.clone(),
                key,
            })
    })
}

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
        let source = FluxSource::new(FluxSourceKind::OciRepository, namespace, name);
        source
            .create(
                client,
                json!({
                    "interval": SOURCE_INTERVAL,
                    "url": registry.url(repository),
                    "ref": { "tag": tag },
                    "insecure": true,
                }),
            )
            .await?;
        Ok(source)
    }
}

/// The OCI registry of the local control plane: the OCI distribution API over plain HTTP on a
/// loopback port, in memory (testenv/go/oci-registry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciRegistry {
    /// `127.0.0.1:<port>`.
    pub addr: String,
}

impl OciRegistry {
    /// Reads `.testenv/oci.env`; fails with [`Error::NotServed`] when the control plane does not
    /// run the registry.
    pub fn load() -> Result<Self> {
        Self::from_file(&paths::oci_env())
    }

    /// Reads a `KEY=value` env file with `OCI_REGISTRY`.
    pub fn from_file(path: &Path) -> Result<Self> {
        let get = read_env_file(path, "OCI registry")?;
        Ok(OciRegistry {
            addr: get("OCI_REGISTRY")?,
        })
    }

    /// `oci://127.0.0.1:<port>/<repository>`, the URL an `OCIRepository` follows.
    pub fn url(&self, repository: &str) -> String {
        format!("oci://{}/{repository}", self.addr)
    }

    /// Pushes the files and directories under `dir` as a Flux OCI artifact (what `flux push
    /// artifact` writes: one `application/vnd.cncf.flux.content.v1.tar+gzip` layer, config
    /// `application/vnd.cncf.flux.config.v1+json`) to `repository:tag`, with `.testenv/bin/oci-registry
    /// push`; returns the manifest's digest (`sha256:<hex>`). The same tree gives the same layer.
    pub async fn push_artifact(&self, dir: &Path, repository: &str, tag: &str) -> Result<String> {
        let tool = paths::oci_registry();
        let target = format!("{}/{repository}:{tag}", self.addr);
        let shown = format!(
            "{} push -dir {} -ref {target}",
            tool.display(),
            dir.display()
        );
        let failed = |message: String| Error::Tool {
            command: shown.clone(),
            message,
        };
        let run = Command::new(&tool)
            .arg("push")
            .arg("-dir")
            .arg(dir)
            .arg("-ref")
            .arg(&target)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .output();
        let output = tokio::time::timeout(TOOL_TIMEOUT, run)
            .await
            .map_err(|_| failed(format!("still running after {TOOL_TIMEOUT:?} (killed)")))?
            .map_err(|e| {
                failed(format!(
                    "cannot run it ({e}); is the local control plane up? run `make cluster-up`"
                ))
            })?;
        if !output.status.success() {
            return Err(failed(format!(
                "exited with {}: {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        let digest = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        if digest.starts_with("sha256:") {
            Ok(digest)
        } else {
            Err(failed(format!("printed {digest:?}, not a digest")))
        }
    }
}

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

/// What source-controller published of a source (`status.artifact`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FluxArtifact {
    /// `http://127.0.0.1:<port>/<kind>/<namespace>/<name>/<file>.tar.gz`, served by
    /// source-controller's artifact server.
    pub url: String,
    /// `sha256:<hex>` of the file at `url`.
    pub digest: String,
    /// What it was made from: `sha256:<hex>` of the bucket's listing for a `Bucket`,
    /// `<tag>@sha256:<manifest digest>` for an `OCIRepository`.
    pub revision: String,
    /// The file's size in bytes, when source-controller gave it.
    pub size: Option<u64>,
}

impl FluxSource {
    fn new(kind: FluxSourceKind, namespace: &str, name: &str) -> Self {
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

    async fn create(&self, client: &Client, spec: Value) -> Result<()> {
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
        let api = self.api(client);
        let api = &api;
        wait_until(
            format!("{} to be Ready with an artifact", self.describe()),
            timeout,
            || async move {
                match api.get_opt(&self.name).await {
                    Ok(Some(object)) => match ready_artifact(&object) {
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

impl FluxArtifact {
    /// Downloads the artifact (a tar.gz) from source-controller's artifact server, as a client
    /// of a Flux source does. Only plain-HTTP loopback URLs are fetched.
    pub async fn download(&self) -> Result<Vec<u8>> {
        let failed = |message: String| Error::Http {
            url: self.url.clone(),
            message,
        };
        let rest = self
            .url
            .strip_prefix("http://")
            .ok_or_else(|| failed("not a plain-HTTP URL".to_owned()))?;
        let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        if !(host.starts_with("127.") || host.starts_with("localhost:")) {
            return Err(failed(format!("{host} is not a loopback address")));
        }
        let path = if path.is_empty() { "/" } else { path };
        let fetch = async {
            let mut stream = tokio::net::TcpStream::connect(host).await?;
            // HTTP/1.0: the body is not chunked and ends with the connection.
            stream
                .write_all(format!("GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n").as_bytes())
                .await?;
            let mut answer = Vec::new();
            stream.read_to_end(&mut answer).await?;
            Ok::<_, std::io::Error>(answer)
        };
        let answer = tokio::time::timeout(TOOL_TIMEOUT, fetch)
            .await
            .map_err(|_| failed(format!("no answer within {TOOL_TIMEOUT:?}")))?
            .map_err(|e| failed(e.to_string()))?;
        let split = answer
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| failed("the answer has no end of headers".to_owned()))?;
        let head = String::from_utf8_lossy(&answer[..split]);
        let body = answer[split + 4..].to_vec();
        let status = head.lines().next().unwrap_or_default();
        if status.split_whitespace().nth(1) != Some("200") {
            return Err(failed(format!(
                "answered {status:?}: {}",
                String::from_utf8_lossy(&body).trim()
            )));
        }
        let length = head.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.trim()
                .eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        });
        match length {
            Some(length) if length != body.len() => Err(failed(format!(
                "Content-Length is {length} but {} bytes came",
                body.len()
            ))),
            _ => Ok(body),
        }
    }
}

/// The regular files of a tar.gz (a Flux artifact), by path (without a leading `./`).
/// Directories are left out; links and other entries are refused.
pub fn unpack_tar_gz(bytes: &[u8]) -> Result<BTreeMap<String, Vec<u8>>> {
    let invalid = |reason: String| Error::Invalid {
        what: "tar.gz archive",
        value: reason,
        reason: "cannot be unpacked",
    };
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    let mut files = BTreeMap::new();
    for entry in archive.entries().map_err(|e| invalid(e.to_string()))? {
        let mut entry = entry.map_err(|e| invalid(e.to_string()))?;
        let path = entry
            .path()
            .map_err(|e| invalid(e.to_string()))?
            .to_string_lossy()
            .trim_start_matches("./")
            .to_owned();
        match entry.header().entry_type() {
            tar::EntryType::Directory => continue,
            tar::EntryType::Regular => {}
            other => return Err(invalid(format!("{path} is a {other:?} entry"))),
        }
        let mut content = Vec::new();
        entry
            .read_to_end(&mut content)
            .map_err(|e| invalid(format!("{path}: {e}")))?;
        files.insert(path, content);
    }
    Ok(files)
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

    #[tokio::test]
    async fn only_loopback_http_urls_are_downloaded() {
        for url in [
            "https://127.0.0.1:1/a.tar.gz",
            "http://example.com/a.tar.gz",
        ] {
            let artifact = FluxArtifact {
                url: url.to_owned(),
                digest: String::new(),
                revision: String::new(),
                size: None,
            };
            let error = artifact.download().await.expect_err(url).to_string();
            assert!(error.contains(url), "{error}");
        }
    }
}
