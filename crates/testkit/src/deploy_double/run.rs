//! One deploy: read the project, compute its version, upload the modules and the manifest, then
//! compare-and-swap the script pointer and last the fleet pointer.

use serde::Serialize;

use super::args::DeployArgs;
use super::bucket::Bucket;
use super::error::DeployError;
use super::project::{self, Project};
use super::store::{Keys, Store};
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

/// Runs `deploy` with `args`.
pub async fn deploy(args: &DeployArgs) -> Result<Report, DeployError> {
    let progress = Progress { json: args.json };
    let bucket = Bucket::parse(&args.bucket)?;
    let project = project::read(&args.dir)?;
    let version = version::of(&project);
    progress.say("celld-deploy-double: a test double of `celld deploy` (no bundling; writes only to a local S3 server)");
    progress.say(&describe(&project));
    progress.say(&format!("Version {version}"));
    let mut report = Report {
        script_name: project.name.clone(),
        version: version.clone(),
        prefix: pointer::version_prefix(&project.name, &version),
        bucket: bucket.to_string(),
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
    let endpoint = endpoint::local(args.endpoint.as_deref())?;
    let store = Store::new(bucket, &endpoint, &args.region(), Keys::from_env()?);
    upload(&store, &project, &version).await?;
    progress.say(&format!(
        "Uploaded {} modules and manifest.json to {}/{}/",
        project.modules.len(),
        store.bucket(),
        report.prefix
    ));

    let body = pointer::pointer(&project.name, &version).into_bytes();
    let script_key = pointer::script_pointer(&project.name);
    let expect = store.expect(&script_key).await?;
    store
        .put_if(&script_key, body.clone(), &expect, &version)
        .await?;
    progress.say(&format!("Wrote {script_key} (compare-and-swap: {expect})"));

    let expect = store.expect(pointer::FLEET_POINTER).await?;
    if let Some(dir) = hold::dir() {
        hold::hold(&dir, pointer::FLEET_POINTER, &expect).await?;
    }
    store
        .put_if(pointer::FLEET_POINTER, body, &expect, &version)
        .await?;
    progress.say(&format!(
        "Wrote {} (compare-and-swap: {expect})",
        pointer::FLEET_POINTER
    ));
    progress.say(&format!(
        "Published version {version} of {} to {}",
        project.name,
        store.bucket()
    ));
    report.published = true;
    Ok(report)
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

async fn upload(store: &Store, project: &Project, version: &str) -> Result<(), DeployError> {
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
