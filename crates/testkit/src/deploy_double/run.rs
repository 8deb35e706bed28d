//! One deploy: read the project, compute its version, upload the modules and the manifest, then
//! compare-and-swap the script pointer and last the fleet pointer.

use serde::Serialize;

use super::args::DeployArgs;
use super::bucket::Bucket;
use super::cloud::CloudStore;
use super::error::DeployError;
use super::project::{self, Project};
use super::store::{Expect, Keys, Store};
use super::{endpoint, hold, pointer, version};

/// One uploaded module in the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportModule {
    /// Path relative to the version prefix.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
}

/// What a deploy did (printed as JSON with `--json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The script name.
    pub script_name: String,
    /// The version id.
    pub version: String,
    /// The version's key prefix, relative to the bucket prefix (`deploy/<script>/<version>`).
    pub prefix: String,
    /// The bucket and prefix (`s3://NAME/PREFIX`).
    pub bucket: String,
    /// The modules.
    pub modules: Vec<ReportModule>,
    /// Whether this was a dry run (nothing written).
    pub dry_run: bool,
    /// Whether the fleet pointer now names this version.
    pub published: bool,
}

/// Where progress lines go: stdout, or stderr when stdout carries the JSON report.
struct Progress {
    json: bool,
}

impl Progress {
    fn say(&self, line: &str) {
        if self.json {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    }
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next() {
        Some("ts" | "mts") => "application/typescript",
        Some("wasm") => "application/wasm",
        _ => "application/javascript",
    }
}

/// Where the double writes: an S3 prefix ([`Store`]) or a GCS or Azure one ([`CloudStore`]).
trait Destination {
    /// What a compare-and-swap write expects.
    type Expect: std::fmt::Display;
    /// The bucket and prefix, for messages.
    fn name(&self) -> String;
    /// Uploads `body` to `rel`, unconditionally.
    async fn put(&self, rel: &str, body: Vec<u8>, content_type: &str) -> Result<(), DeployError>;
    /// What a compare-and-swap write of `rel` must expect now.
    async fn expect(&self, rel: &str) -> Result<Self::Expect, DeployError>;
    /// Writes `body` to `rel` only if it is still as `expect` says.
    async fn put_if(
        &self,
        rel: &str,
        body: Vec<u8>,
        expect: &Self::Expect,
        version: &str,
    ) -> Result<(), DeployError>;
}

impl Destination for Store {
    type Expect = Expect;
    fn name(&self) -> String {
        self.bucket().to_string()
    }
    async fn put(&self, rel: &str, body: Vec<u8>, content_type: &str) -> Result<(), DeployError> {
        Store::put(self, rel, body, content_type).await
    }
    async fn expect(&self, rel: &str) -> Result<Expect, DeployError> {
        Store::expect(self, rel).await
    }
    async fn put_if(
        &self,
        rel: &str,
        body: Vec<u8>,
        expect: &Expect,
        version: &str,
    ) -> Result<(), DeployError> {
        Store::put_if(self, rel, body, expect, version).await
    }
}

impl Destination for CloudStore {
    type Expect = celld_bucket::wire::Expect;
    fn name(&self) -> String {
        self.url().trim_end_matches('/').to_string()
    }
    async fn put(&self, rel: &str, body: Vec<u8>, content_type: &str) -> Result<(), DeployError> {
        CloudStore::put(self, rel, body, content_type).await
    }
    async fn expect(&self, rel: &str) -> Result<Self::Expect, DeployError> {
        CloudStore::expect(self, rel).await
    }
    async fn put_if(
        &self,
        rel: &str,
        body: Vec<u8>,
        expect: &Self::Expect,
        version: &str,
    ) -> Result<(), DeployError> {
        CloudStore::put_if(self, rel, body, expect, version).await
    }
}

/// Whether `bucket` is a GCS or Azure bucket (else S3).
fn is_cloud(bucket: &str) -> bool {
    bucket.starts_with("gs://") || bucket.starts_with("az://")
}

/// Runs `deploy` with `args`.
pub async fn deploy(args: &DeployArgs) -> Result<Report, DeployError> {
    let progress = Progress { json: args.json };
    let cloud = is_cloud(&args.bucket);
    if cloud && args.endpoint.is_some() {
        return Err(DeployError::Bucket {
            value: args.bucket.clone(),
            problem: "--endpoint (S3_ENDPOINT) is for S3 only: celld refuses it for gs:// and az:// buckets".into(),
        });
    }
    let bucket = if cloud {
        None
    } else {
        Some(Bucket::parse(&args.bucket)?)
    };
    let project = project::read(&args.dir)?;
    let version = version::of(&project);
    progress.say("celld-deploy-double: a test double of `celld deploy` (no bundling; writes only to a local S3, GCS or Azure Blob emulator)");
    progress.say(&describe(&project));
    progress.say(&format!("Version {version}"));
    let mut report = Report {
        script_name: project.name.clone(),
        version: version.clone(),
        prefix: pointer::version_prefix(&project.name, &version),
        bucket: bucket
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_else(|| args.bucket.trim_end_matches('/').to_string()),
        modules: project
            .modules
            .iter()
            .map(|m| ReportModule {
                path: m.path.clone(),
                size: m.bytes.len() as u64,
            })
            .collect(),
        dry_run: args.dry_run,
        published: false,
    };
    if args.dry_run {
        progress.say("Dry run: nothing uploaded, nothing published");
        return Ok(report);
    }
    match bucket {
        Some(bucket) => {
            let endpoint = endpoint::local(args.endpoint.as_deref())?;
            let store = Store::new(bucket, &endpoint, &args.region(), Keys::from_env()?);
            publish(&store, &project, &version, &progress).await?;
        }
        None => {
            let store = CloudStore::new(&args.bucket)?;
            publish(&store, &project, &version, &progress).await?;
        }
    }
    report.published = true;
    Ok(report)
}

/// Uploads the version, then compare-and-swaps the script pointer and last the fleet pointer.
async fn publish(
    store: &impl Destination,
    project: &Project,
    version: &str,
    progress: &Progress,
) -> Result<(), DeployError> {
    upload(store, project, version).await?;
    progress.say(&format!(
        "Uploaded {} modules and manifest.json to {}/{}/",
        project.modules.len(),
        store.name(),
        pointer::version_prefix(&project.name, version)
    ));

    let body = pointer::pointer(&project.name, version).into_bytes();
    let script_key = pointer::script_pointer(&project.name);
    let expect = store.expect(&script_key).await?;
    store
        .put_if(&script_key, body.clone(), &expect, version)
        .await?;
    progress.say(&format!("Wrote {script_key} (compare-and-swap: {expect})"));

    let expect = store.expect(pointer::FLEET_POINTER).await?;
    if let Some(dir) = hold::dir() {
        hold::hold(&dir, pointer::FLEET_POINTER, &expect).await?;
    }
    store
        .put_if(pointer::FLEET_POINTER, body, &expect, version)
        .await?;
    progress.say(&format!(
        "Wrote {} (compare-and-swap: {expect})",
        pointer::FLEET_POINTER
    ));
    progress.say(&format!(
        "Published version {version} of {} to {}",
        project.name,
        store.name()
    ));
    Ok(())
}

fn describe(project: &Project) -> String {
    let file = project
        .config_file
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let names: Vec<&str> = project.modules.iter().map(|m| m.path.as_str()).collect();
    format!(
        "Read {file}: script {}, main {}\nNo bundling (test double): {} modules, {} bytes: {}",
        project.name,
        project.main,
        project.modules.len(),
        project.size(),
        names.join(", ")
    )
}

async fn upload(
    store: &impl Destination,
    project: &Project,
    version: &str,
) -> Result<(), DeployError> {
    let prefix = pointer::version_prefix(&project.name, version);
    for module in &project.modules {
        store
            .put(
                &format!("{prefix}/{}", module.path),
                module.bytes.clone(),
                content_type(&module.path),
            )
            .await?;
    }
    let manifest = pointer::manifest(project, version);
    // Serializing a struct of strings and numbers cannot fail.
    let body = serde_json::to_vec_pretty(&manifest).unwrap_or_default();
    store
        .put(&format!("{prefix}/manifest.json"), body, "application/json")
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_by_extension() {
        assert_eq!(content_type("src/index.js"), "application/javascript");
        assert_eq!(content_type("a.mjs"), "application/javascript");
        assert_eq!(content_type("a.ts"), "application/typescript");
        assert_eq!(content_type("a.wasm"), "application/wasm");
    }
}
