//! The deploy of one fleet, step by step, as `deploy --fleet` runs it and as a fan-out runs it
//! for each of its fleets: check the fleet ([`prepare`]), create the deploy Job
//! ([`create_job`]), run the deploy in its pod ([`steps`]: upload, `celld deploy`, reload, the
//! wait for the nodes) and delete the Job ([`finish`]).

use super::archive::{self, Archive};
use super::args::{DeployArgs, deploy_image};
pub use super::celld_run::Output;
use super::celld_run::{failed_note, last_line, run_celld};
use super::storage_text::describe_storage;
use super::{python_gate, sourced, upload, vars};
use crate::bucket::{BucketClient, versions};
use crate::cluster::adoption;
use crate::cluster::annotate;
use crate::cluster::fleet_context::FleetContext;
use crate::cluster::kubeconfig::Target;
use crate::error::refused::{GoBack, ReloadRefused};
use crate::error::{Error, Result};
use crate::pod::job::{self, IMAGE_SOURCE_DIR, UPLOAD_DIR};
use crate::pod::source_links;
use crate::pod::{pod_wait, preflight, refused, reload, vars_volume};
use crate::text::human;
use crate::text::progress::Progress;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, Pod};
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use celld_api::storage_env::deploy_command;

/// Where the Worker source comes from.
pub enum Source {
    /// A local directory, packed once, uploaded into each deploy pod.
    Upload(Arc<Archive>),
    /// Baked into the image at /app.
    Image,
}

/// Packs DIR (once, however many fleets it goes to), or takes the source of `--image`.
pub async fn source(args: &DeployArgs, progress: &mut Progress) -> Result<Source> {
    match (&args.dir, &args.image) {
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
            Ok(Source::Upload(Arc::new(packed)))
        }
        (None, Some(_)) => Ok(Source::Image),
        _ => Err(Error::Deploy(
            "pass either DIR or --image IMAGE (not both)".into(),
        )),
    }
}

/// How a deploy in the pod ended, when no step failed.
#[derive(Debug)]
pub enum Done {
    /// `celld deploy` failed with this exit code; nothing was made live. `why`: the last line
    /// it wrote.
    CelldFailed {
        /// Its exit code.
        code: u8,
        /// Its last line of output.
        why: String,
    },
    /// `celld deploy --dry-run` passed: nothing was published.
    Checked,
    /// The version is published.
    Published {
        /// The version the fleet pointer names now, when it was read back.
        version: Option<String>,
        /// Whether every ready node serves it: the reload's refusals, or the wait's outcome.
        adoption: Result<()>,
    },
}

/// Loads fleet `name` in `target`'s namespace and checks it can be deployed to, before anything
/// is created: its storage resolves and its credentials Secret exists, its Worker does not come
/// from spec.source (see [`sourced::check`]; `dry_run`: a dry run of `celld deploy` goes
/// ahead), the Secrets of `--vars-from-secret` can be merged, and a Python Worker meets
/// celld 0.6.1's gate (see [`python_gate`]).
pub async fn prepare(
    target: Target,
    name: &str,
    args: &DeployArgs,
    dry_run: bool,
    progress: &mut Progress,
) -> Result<FleetContext> {
    let context = FleetContext::load_in(target, name).await?;
    let ns = context.namespace();
    progress.note(&format!(
        "Fleet {ns}/{name}: {}",
        describe_storage(&context.storage)
    ));
    if let Some(line) = sourced::check(&context.fleet, ns, args.force, dry_run)? {
        progress.note(&line);
    }
    vars::check(
        &context,
        &args.vars_from_secret,
        args.dir.as_deref(),
        progress,
    )
    .await?;
    if let Some(line) = python_gate::check(&context, args.dir.as_deref(), args.force).await? {
        progress.note(&line);
    }
    Ok(context)
}

/// Creates the deploy Job of `context`'s fleet.
pub async fn create_job(
    context: &FleetContext,
    args: &DeployArgs,
    progress: &mut Progress,
) -> Result<Job> {
    let ns = context.namespace();
    let image = deploy_image(args, &context.fleet.spec.image);
    let jobs: Api<Job> = Api::namespaced(context.target.client.clone(), ns);
    let mut job = job::build(&job::Input {
        fleet: &context.fleet,
        storage: &context.storage,
        image: &image,
        lifetime: args.timeout,
        keep: args.keep_job,
    });
    vars_volume::mount(&mut job, &args.vars_from_secret);
    let job = jobs
        .create(&PostParams::default(), &job)
        .await
        .map_err(|e| Error::api("create", "jobs.batch", Some(ns), e))?;
    let job_name = job.metadata.name.clone().unwrap_or_default();
    progress.note(&format!("Created Job {ns}/{job_name} (image {image})"));
    Ok(job)
}

/// Runs the deploy in the pod of `job`: waits for the pod, checks its tools, uploads the
/// source, runs `celld deploy`, then (unless a dry run) annotates the fleet, asks the nodes to
/// reload and waits until they serve the new version. Sets the progress's publishing flag when
/// `celld deploy` starts.
pub async fn steps(
    context: &FleetContext,
    job: &Job,
    args: &DeployArgs,
    source: &Source,
    progress: &mut Progress,
    output: Output,
) -> Result<Done> {
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
    let mut reading_version = output == Output::PerFleet && !args.dry_run;
    let image = deploy_image(args, &fleet.spec.image);
    let image = image.as_str();
    let mut optional = Vec::new();
    if reloading {
        optional.push(preflight::RELOAD_TOOL);
    }
    if reading_version {
        optional.push(crate::bucket::client::AGENT);
    }
    let mut required = preflight::required(uploading);
    if !uploading {
        required.extend(source_links::TOOLS);
    }
    required.extend(vars::tools(&args.vars_from_secret, uploading));
    let missing = preflight::check(&pods, &pod, image, &required, &optional).await?;
    if missing.iter().any(|m| m == preflight::RELOAD_TOOL) {
        reloading = false;
        progress.note(&format!(
            "warning: the deploy image {image} has no {}: the nodes will not be asked to reload, they adopt the new version within 30s",
            preflight::RELOAD_TOOL
        ));
    }
    if missing.iter().any(|m| m == crate::bucket::client::AGENT) {
        reading_version = false;
        progress.note(&format!(
            "note: the deploy image {image} has no {}: the version published is not read back",
            crate::bucket::client::AGENT
        ));
    }

    let source_dir = match source {
        Source::Upload(packed) => {
            let (files, size) = (packed.files.len(), packed.bytes.len() as u64);
            upload::upload(&pods, &pod, Arc::clone(packed), progress.fork()).await?;
            progress.note(&format!(
                "Uploaded {files} files ({}) into {pod}:{}/{UPLOAD_DIR}",
                human::bytes(size),
                job::WORK_DIR
            ));
            UPLOAD_DIR
        }
        Source::Image => {
            source_links::check(&pods, &pod, IMAGE_SOURCE_DIR, image).await?;
            IMAGE_SOURCE_DIR
        }
    };
    let source_dir =
        vars::prepare(&pods, &pod, source_dir, &args.vars_from_secret, progress).await?;

    let command = deploy_command(source_dir, storage, args.dry_run);
    progress.note(&format!("Running: {}", command.join(" ")));
    progress.publishing().store(true, Ordering::SeqCst);
    let (done, attempts) = run_celld(&pods, &pod, command, output, progress).await?;
    if done.code != 0 {
        progress.note(&failed_note(&done, attempts));
        return Ok(Done::CelldFailed {
            code: u8::try_from(done.code).unwrap_or(1),
            why: last_line(&done),
        });
    }
    if args.dry_run {
        progress.note("Dry run done: nothing was published");
        return Ok(Done::Checked);
    }
    let version = match reading_version {
        true => read_version(context, &pods, &pod, progress).await,
        false => None,
    };
    let stamp = annotate::deployed_at(context).await;
    if let Err(warning) = &stamp {
        progress.note(warning);
    }
    let adoption = async {
        if reloading {
            reload_nodes(context, &pods, &pod, output, progress).await?;
        } else {
            progress.note(&format!(
                "Deployed to fleet {}; its nodes adopt the new version within 30s{}",
                context.name(),
                if args.no_reload { " (--no-reload)" } else { "" }
            ));
        }
        adoption::unless_told_not_to(context, stamp.ok(), &args.wait, progress).await
    }
    .await;
    Ok(Done::Published { version, adoption })
}

/// The version the fleet pointer names, read with `celld-bucket` in the deploy pod; None (with
/// a warning) when it cannot be read.
async fn read_version(
    context: &FleetContext,
    pods: &Api<Pod>,
    pod: &str,
    progress: &mut Progress,
) -> Option<String> {
    let bucket = BucketClient::in_pod(context, pods, pod);
    match versions::pointer(&bucket).await {
        Ok(Some((pointer, _))) => {
            progress.note(&format!(
                "The fleet pointer names version {}",
                pointer.version
            ));
            Some(pointer.version)
        }
        Ok(None) => {
            progress.note(&format!(
                "warning: no deployment pointer under {} after celld deploy",
                bucket.bucket()
            ));
            None
        }
        Err(e) => {
            progress.note(&format!("warning: could not read the version back: {e}"));
            None
        }
    }
}

/// `POST /reload` to each ready node from the deploy pod; the report on stdout (or, for one
/// fleet of a fan-out, in its progress); a node that refused the version is an error.
async fn reload_nodes(
    context: &FleetContext,
    pods: &Api<Pod>,
    pod: &str,
    output: Output,
    progress: &mut Progress,
) -> Result<()> {
    let nodes = context.nodes().await?;
    let results = reload::reload(pods, pod, &nodes).await;
    let report = reload::report(&nodes, &results);
    match output {
        Output::Live => print!("{report}"),
        Output::PerFleet => progress.block(&report),
    }
    match refused::refusals(&results) {
        Some(nodes) => Err(Error::ReloadRefused(Box::new(ReloadRefused {
            fleet: context.name().to_string(),
            namespace: context.namespace().to_string(),
            what: "the new version".into(),
            nodes,
            go_back: GoBack::Previous,
        }))),
        None => Ok(()),
    }
}

/// Deletes the Job `name` in `ns`, or says how to reach it when `--keep-job` keeps it.
pub async fn finish(
    context: &FleetContext,
    name: &str,
    args: &DeployArgs,
    progress: &mut Progress,
) {
    let ns = context.namespace();
    if args.keep_job {
        progress.note(&format!(
            "Kept Job {ns}/{name}: its pod stays up to {}s for inspection (kubectl exec -n {ns} job/{name} -- sh); delete it with: kubectl delete job -n {ns} {name}",
            args.timeout.as_secs()
        ));
        return;
    }
    let jobs: Api<Job> = Api::namespaced(context.target.client.clone(), ns);
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
    use celld_api::{BucketUrl, ResolvedStorage};

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
    }
}
