//! `deploy`: publish a Worker to a fleet's bucket prefix from a short-lived pod in the fleet's
//! namespace, then make every ready node adopt it at once.
//!
//! Steps: resolve the fleet's storage exactly as the operator does; refuse a fleet whose Worker
//! comes from spec.source (unless it is suspended, or `--force`); create the deploy Job; wait
//! for its pod; stream the directory in as a tar (or use the source baked into `--image` at
//! /app); run `celld deploy` there with the fleet's bucket, endpoint and region, streaming its
//! output; `POST /reload` to each ready node; wait until the operator reports every ready node
//! serving the new version; delete the Job.

pub mod archive;
pub mod sourced;
pub mod upload;
pub mod vars;

use crate::cluster::adoption::{self, WaitArgs};
use crate::cluster::annotate;
use crate::cluster::exec::{self, Sink, Spec};
use crate::cluster::fleet_context::FleetContext;
use crate::cluster::kubeconfig::ConnectArgs;
use crate::error::refused::{GoBack, ReloadRefused};
use crate::error::{Error, Result};
use crate::pod::job::{self, CONTAINER, IMAGE_SOURCE_DIR, UPLOAD_DIR};
use crate::pod::{pod_wait, preflight, refused, reload, vars_volume};
use crate::text::human;
use crate::text::progress::Progress;
use celld_api::{ResolvedStorage, Scheme};
use clap::Args;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, Pod};
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use std::path::PathBuf;
use std::time::Duration;

/// `deploy`.
#[derive(Debug, Args)]
#[command(
    after_help = "\
Examples:
  # Upload ./my-worker (skipping .git, node_modules and what .celldignore lists) and deploy it
  kubectl celld deploy ./my-worker --fleet web -n apps

  # Deploy the source baked into an image at /app; no directory needed
  kubectl celld deploy --image registry.example.com/web-src:1.2.0 --fleet web

  # Check the project builds and uploads, without publishing
  kubectl celld deploy ./my-worker --fleet web --dry-run

  # Keep the deploy pod for inspection; do not ask the nodes to reload
  kubectl celld deploy ./my-worker --fleet web --keep-job --no-reload

  # Merge the keys of Secret web-vars into the Worker's vars (values never printed)
  kubectl celld deploy ./my-worker --fleet web --vars-from-secret web-vars

  # A fleet with spec.source is published by the operator: suspend that first, then deploy
  kubectl annotate celldfleet web platform.celld.dev/source-suspended=\"hotfix by hand\"
  kubectl celld deploy ./hotfix --fleet web",
    override_usage = "kubectl celld deploy [OPTIONS] --fleet <FLEET> [DIR]"
)]
pub struct DeployArgs {
    /// Worker project directory (with wrangler.jsonc or wrangler.json) to upload
    #[arg(
        value_name = "DIR",
        required_unless_present = "image",
        conflicts_with = "image"
    )]
    pub dir: Option<PathBuf>,

    /// Fleet to deploy to
    #[arg(
        long,
        value_name = "FLEET",
        required_unless_present = "stray_fleet",
        add = crate::cluster::complete::fleets()
    )]
    pub fleet: Option<String>,

    /// A second positional argument: a fleet given without --fleet (refused with a hint)
    #[arg(value_name = "FLEET", hide = true)]
    pub stray_fleet: Option<String>,

    /// Deploy from this image, which holds the Worker source at /app (and celld, esbuild, curl),
    /// instead of uploading DIR
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,

    /// Image of the deploy pod when uploading DIR: celld, esbuild, curl and celld-bucket, no
    /// source [default: this release's deployer built on the fleet's celld version,
    /// ghcr.io/anthaathi/celld-operator-deployer:v<plugin>-celld-v<version>, or without the
    /// suffix (the default image's celld) when the fleet's version is unknown]
    #[arg(long, value_name = "IMAGE", conflicts_with = "image")]
    pub deployer_image: Option<String>,

    /// Merge the keys of this Secret (in the fleet's namespace) into the Worker's vars, in the
    /// deploy pod; repeatable. A key already in the config's vars takes the Secret's value
    #[arg(long, value_name = "NAME")]
    pub vars_from_secret: Vec<String>,

    /// Keep the deploy Job and its pod (for inspection) instead of deleting them
    #[arg(long)]
    pub keep_job: bool,

    /// Do not ask the nodes to reload; they adopt the new version within 30s
    #[arg(long)]
    pub no_reload: bool,

    /// Run celld deploy --dry-run: build and check, publish nothing (implies --no-reload)
    #[arg(long)]
    pub dry_run: bool,

    /// Deploy to a fleet whose Worker comes from spec.source, which is refused otherwise: the
    /// operator publishes the source again over the deploy (driftPolicy Correct) or reports it
    /// as drift (Report), unless publishing from the source is suspended
    #[arg(long)]
    pub force: bool,

    /// Longest time the deploy pod lives (the Job's deadline)
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = crate::text::parse::duration)]
    pub timeout: Duration,

    /// How long to wait for the deploy pod to start
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = crate::text::parse::duration)]
    pub pod_timeout: Duration,

    /// The wait for every ready node to serve the new version.
    #[command(flatten)]
    pub wait: WaitArgs,
}

/// The fleet of `--fleet`; a fleet given as a second argument is refused with the command
/// that was meant.
pub fn fleet_flag(args: &DeployArgs) -> Result<String> {
    match (&args.fleet, &args.stray_fleet) {
        (Some(fleet), None) => Ok(fleet.clone()),
        (_, Some(stray)) => Err(Error::Usage(format!(
            "unexpected argument '{stray}': the fleet is named with --fleet; did you mean --fleet {stray}? (kubectl celld deploy {} --fleet {stray})",
            args.dir
                .as_deref()
                .map(|d| d.display().to_string())
                .unwrap_or_else(|| "DIR".to_string())
        ))),
        (None, None) => Err(Error::Usage(
            "the fleet to deploy to is missing: add --fleet FLEET".to_string(),
        )),
    }
}

/// Where the Worker source comes from.
enum Source {
    /// A packed local directory, uploaded into the pod.
    Upload(archive::Archive),
    /// Baked into the image at /app.
    Image,
}

pub use celld_api::storage_env::deploy_command;

/// The image of the deploy pod: `--image`, `--deployer-image`, or the deployer of the fleet's
/// celld version (`fleet_image`).
pub fn deploy_image(args: &DeployArgs, fleet_image: &str) -> String {
    args.image
        .clone()
        .or_else(|| args.deployer_image.clone())
        .unwrap_or_else(|| job::deployer_for(fleet_image))
}

/// One line naming where the deploy writes (never a credential).
pub fn describe_storage(storage: &ResolvedStorage) -> String {
    let mut s = format!("bucket {}", storage.bucket);
    match storage.bucket.scheme {
        Scheme::S3 => {
            if let Some(e) = &storage.endpoint {
                s.push_str(&format!(", endpoint {e}"));
            }
            s.push_str(&format!(", region {}", storage.region));
        }
        Scheme::Azure => {
            if let Some(account) = &storage.azure_storage_account {
                s.push_str(&format!(", storage account {account}"));
            }
        }
        Scheme::Gcs => {}
    }
    match &storage.store {
        Some(store) => s.push_str(&format!(" (from CelldObjectStore {store}")),
        None => s.push_str(" (inline"),
    }
    match &storage.credentials_secret {
        Some(secret) => s.push_str(&format!(", credentials from Secret {secret})")),
        None => s.push_str(", workload identity)"),
    }
    s
}

/// Runs `deploy`; returns the process exit code (celld deploy's).
pub async fn run(cluster: &ConnectArgs, args: DeployArgs) -> Result<u8> {
    let fleet_name = fleet_flag(&args)?;
    let mut progress = Progress::new();
    let source = match (&args.dir, &args.image) {
        (Some(dir), None) => {
            let d = dir.clone();
            let packed = tokio::task::spawn_blocking(move || archive::pack(&d))
                .await
                .map_err(|e| Error::Deploy(format!("packing the directory failed: {e}")))??;
            progress.note(&format!(
                "Packed {} files ({}) from {}",
                packed.files.len(),
                human::bytes(packed.bytes.len() as u64),
                archive::display(dir).display()
            ));
            Source::Upload(packed)
        }
        (None, Some(_)) => Source::Image,
        _ => {
            return Err(Error::Deploy(
                "pass either DIR or --image IMAGE (not both)".into(),
            ));
        }
    };
    let context = FleetContext::load(cluster, &fleet_name).await?;
    let (target, fleet, storage) = (&context.target, &context.fleet, &context.storage);
    let ns = target.namespace.clone();
    progress.note(&format!(
        "Fleet {ns}/{}: {}",
        fleet_name,
        describe_storage(storage)
    ));
    if let Some(line) = sourced::check(fleet, &ns, args.force, args.dry_run)? {
        progress.note(&line);
    }

    vars::check(
        &context,
        &args.vars_from_secret,
        args.dir.as_deref(),
        &mut progress,
    )
    .await?;

    let image = deploy_image(&args, &fleet.spec.image);
    let jobs: Api<Job> = Api::namespaced(target.client.clone(), &ns);
    let mut job = job::build(&job::Input {
        fleet,
        storage,
        image: &image,
        lifetime: args.timeout,
        keep: args.keep_job,
    });
    vars_volume::mount(&mut job, &args.vars_from_secret);
    let job = jobs
        .create(&PostParams::default(), &job)
        .await
        .map_err(|e| Error::api("create", "jobs.batch", Some(&ns), e))?;
    let job_name = job.metadata.name.clone().unwrap_or_default();
    progress.note(&format!("Created Job {ns}/{job_name} (image {image})"));

    let publishing = progress.publishing();
    let steps = steps(&context, &job, &args, source, &mut progress);
    let result = tokio::select! {
        r = steps => r,
        _ = tokio::signal::ctrl_c() => Err(Error::Interrupted {
            note: interrupted_note(publishing.load(std::sync::atomic::Ordering::SeqCst), args.dry_run, &fleet_name, &ns),
        }),
    };
    finish(&jobs, &job_name, &ns, &args, &mut progress).await;
    result
}

/// What an interruption left behind: before `celld deploy` starts nothing is published (the
/// upload only fills the deploy pod); once it runs the version may already be live.
pub fn interrupted_note(publishing: bool, dry_run: bool, fleet: &str, ns: &str) -> String {
    if dry_run {
        "a dry run publishes nothing".to_string()
    } else if publishing {
        format!(
            "celld deploy had started in the deploy pod, so the version may have been published; check with: kubectl celld status {fleet} -n {ns}"
        )
    } else {
        "before celld deploy started (the upload only fills the deploy pod): nothing was published"
            .to_string()
    }
}

async fn steps(
    context: &FleetContext,
    job: &Job,
    args: &DeployArgs,
    source: Source,
    progress: &mut Progress,
) -> Result<u8> {
    let (target, fleet, storage) = (&context.target, &context.fleet, &context.storage);
    let ns = target.namespace.as_str();
    let pods: Api<Pod> = Api::namespaced(target.client.clone(), ns);
    let events: Api<Event> = Api::namespaced(target.client.clone(), ns);
    let job_name = job.metadata.name.clone().unwrap_or_default();
    let job_uid = job.metadata.uid.clone().unwrap_or_default();
    let pod = pod_wait::wait(
        &pods,
        &events,
        &job_name,
        &job_uid,
        &pod_wait::config_hint(storage),
        args.pod_timeout,
        progress,
    )
    .await?;
    progress.note(&format!("Pod {ns}/{pod} is running"));
    let uploading = matches!(source, Source::Upload(_));
    let mut reloading = !args.no_reload && !args.dry_run;
    let image = deploy_image(args, &fleet.spec.image);
    let image = image.as_str();
    let optional: &[&str] = if reloading {
        &[preflight::RELOAD_TOOL]
    } else {
        &[]
    };
    let mut required = preflight::required(uploading);
    required.extend(vars::tools(&args.vars_from_secret, uploading));
    let missing = preflight::check(&pods, &pod, image, &required, optional).await?;
    if !missing.is_empty() {
        reloading = false;
        progress.note(&format!(
            "warning: the deploy image {image} has no {}: the nodes will not be asked to reload, they adopt the new version within 30s",
            missing.join(", ")
        ));
    }

    let source_dir = match source {
        Source::Upload(packed) => {
            let (files, size) = (packed.files.len(), packed.bytes.len() as u64);
            upload::upload(&pods, &pod, packed).await?;
            progress.note(&format!(
                "Uploaded {files} files ({}) into {pod}:{}/{UPLOAD_DIR}",
                human::bytes(size),
                job::WORK_DIR
            ));
            UPLOAD_DIR
        }
        Source::Image => IMAGE_SOURCE_DIR,
    };
    let source_dir =
        vars::prepare(&pods, &pod, source_dir, &args.vars_from_secret, progress).await?;

    let command = deploy_command(source_dir, storage, args.dry_run);
    progress.note(&format!("Running: {}", command.join(" ")));
    progress
        .publishing()
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let done = exec::run(
        &pods,
        &pod,
        Spec {
            command,
            container: CONTAINER.into(),
            stdout: Sink::Stdout,
            stderr: Sink::Stderr,
            stdin: None,
        },
    )
    .await?;
    if done.code != 0 {
        progress.note(&format!(
            "celld deploy failed with exit code {}; nothing was made live",
            done.code
        ));
        return Ok(u8::try_from(done.code).unwrap_or(1));
    }
    if args.dry_run {
        progress.note("Dry run done: nothing was published");
        return Ok(0);
    }
    let fleet_name = fleet.metadata.name.clone().unwrap_or_default();
    let stamp = annotate::deployed_at(context).await;
    if let Err(warning) = &stamp {
        progress.note(warning);
    }
    if reloading {
        let nodes = context.nodes().await?;
        let results = reload::reload(&pods, &pod, &nodes).await;
        print!("{}", reload::report(&nodes, &results));
        if let Some(nodes) = refused::refusals(&results) {
            return Err(Error::ReloadRefused(Box::new(ReloadRefused {
                fleet: fleet_name,
                namespace: context.namespace().to_string(),
                what: "the new version".into(),
                nodes,
                go_back: GoBack::Previous,
            })));
        }
    } else {
        progress.note(&format!(
            "Deployed to fleet {fleet_name}; its nodes adopt the new version within 30s{}",
            if args.no_reload { " (--no-reload)" } else { "" }
        ));
    }
    adoption::unless_told_not_to(context, stamp.ok(), &args.wait, progress).await?;
    Ok(0)
}

async fn finish(jobs: &Api<Job>, name: &str, ns: &str, args: &DeployArgs, progress: &mut Progress) {
    if args.keep_job {
        progress.note(&format!(
            "Kept Job {ns}/{name}: its pod stays up to {}s for inspection (kubectl exec -n {ns} job/{name} -- sh); delete it with: kubectl delete job -n {ns} {name}",
            args.timeout.as_secs()
        ));
        return;
    }
    match jobs.delete(name, &DeleteParams::background()).await {
        Ok(_) => progress.note(&format!("Deleted Job {ns}/{name}")),
        Err(e) => progress.note(&format!(
            "warning: could not delete Job {ns}/{name} ({}); Kubernetes removes it {}s after it ends",
            Error::api("delete", "jobs.batch", Some(ns), e),
            job::TTL_AFTER_FINISHED
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::BucketUrl;

    fn storage(endpoint: Option<&str>, store: Option<&str>) -> ResolvedStorage {
        ResolvedStorage {
            store: store.map(Into::into),
            bucket: BucketUrl::parse("s3://celld/web").unwrap(),
            endpoint: endpoint.map(Into::into),
            region: "auto".into(),
            allow_http: false,
            azure_storage_account: None,
            credentials_secret: Some("creds".into()),
        }
    }

    #[test]
    fn deploy_command_has_bucket_endpoint_region() {
        let s = storage(Some("https://acct.r2.cloudflarestorage.com"), None);
        assert_eq!(
            deploy_command("src", &s, false).join(" "),
            "celld deploy src --bucket s3://celld/web --endpoint https://acct.r2.cloudflarestorage.com --region auto"
        );
        let s = storage(None, Some("aws"));
        assert_eq!(
            deploy_command("/app", &s, true).join(" "),
            "celld deploy /app --bucket s3://celld/web --region auto --dry-run"
        );
    }

    #[test]
    fn gcs_and_azure_deploys_take_no_endpoint_or_region() {
        let mut s = storage(Some("http://ignored:9000"), None);
        s.bucket = BucketUrl::parse("gs://celld/web").unwrap();
        assert_eq!(
            deploy_command("src", &s, false).join(" "),
            "celld deploy src --bucket gs://celld/web"
        );
        s.bucket = BucketUrl::parse("az://workers/web").unwrap();
        s.azure_storage_account = Some("companycelld".into());
        s.credentials_secret = None;
        assert_eq!(
            deploy_command("src", &s, true).join(" "),
            "celld deploy src --bucket az://workers/web --dry-run"
        );
        insta::assert_snapshot!(describe_storage(&s), @"bucket az://workers/web, storage account companycelld (inline, workload identity)");
    }

    #[test]
    fn storage_line_names_no_secret_value() {
        insta::assert_snapshot!(describe_storage(&storage(Some("http://minio:9000"), Some("minio"))), @"bucket s3://celld/web, endpoint http://minio:9000, region auto (from CelldObjectStore minio, credentials from Secret creds)");
    }
}
