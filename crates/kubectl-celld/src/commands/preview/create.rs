//! `preview create NAME --fleet FLEET DIR`: apply the CelldPreview, wait for the operator to
//! create its fleet, deploy DIR to that fleet as `deploy` does, and print the preview's URL.
//! Run again for the same preview (a pull request pushed again), it updates the preview and
//! deploys again; a preview past its TTL, or being deleted, is replaced.

use super::apply::{self, Existing};
use super::deploy_line::{self, DeployFlags};
use super::wait;
use crate::cluster::fleets;
use crate::cluster::kubeconfig::{self, ConnectArgs, Target};
use crate::cluster::previews;
use crate::commands::deploy;
use crate::error::preview::PreviewError;
use crate::error::{Error, Result};
use crate::text::output;
use crate::text::progress::Progress;
use celld_api::CelldFleet;
use clap::{ArgGroup, Args};
use kube::Api;
use kube::api::DeleteParams;
use std::path::PathBuf;
use std::time::Duration;

/// `preview create`.
#[derive(Debug, Args)]
#[command(
    after_help = "\
Examples:
  # Build and deploy ./my-worker to a new preview of fleet web; print its URL
  kubectl celld preview create pr-123 --fleet web ./my-worker

  # Live for 24 hours, and wait until it serves the new version
  kubectl celld preview create pr-123 --fleet web ./my-worker --ttl 24h --wait

  # The same command again (a pull request pushed again) updates the preview and redeploys
  kubectl celld preview create pr-123 --fleet web ./my-worker --ttl 24h --wait

  # Deploy the source baked into an image at /app, with the Worker's vars from a Secret
  kubectl celld preview create pr-123 --fleet web \\
    --image registry.example.com/web-src:pr-123 --vars-from-secret web-vars

  # Let the operator publish the Worker from an image (the preview's spec.source)
  kubectl celld preview create pr-123 --fleet web \\
    --source-image registry.example.com/web-worker:pr-123 --wait",
    override_usage = "kubectl celld preview create [OPTIONS] --fleet <FLEET> <NAME> [DIR]"
)]
#[command(group(
    ArgGroup::new("worker")
        .required(true)
        .args(["dir", "image", "source_image"])
))]
pub struct CreateArgs {
    /// Name of the preview: its host (NAME.<baseDomain>) and its fleet's name; a DNS label of
    /// at most 52 characters, such as pr-123
    #[arg(value_name = "NAME", value_parser = crate::text::parse::preview_name)]
    pub name: String,

    /// Worker project directory (with wrangler.jsonc or wrangler.json) to build and deploy to
    /// the preview
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// The fleet to preview: a fleet of the namespace with spec.previews
    #[arg(long, value_name = "FLEET", add = crate::cluster::complete::fleets())]
    pub fleet: String,

    /// How long the preview lives from its creation (72h, 90m, 1h30m; at most the fleet's
    /// spec.previews.maxTtl) [default: the fleet's spec.previews.ttl]
    #[arg(long, value_name = "DURATION", value_parser = crate::text::parse::preview_ttl)]
    pub ttl: Option<String>,

    /// Wait until every ready node serves the deployed version and the preview is Ready; fail
    /// with the operator's reason when it cannot be served
    #[arg(long)]
    pub wait: bool,

    /// Longest wait for the operator to delete a preview past its TTL (replaced) and to create
    /// the preview's fleet, and with --wait for the nodes and the preview
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = crate::text::parse::duration)]
    pub wait_timeout: Duration,

    /// Have the operator publish the Worker from this OCI image, mounted at /src in its deploy
    /// Job (the preview's spec.source.image), instead of deploying now
    #[arg(long, value_name = "IMAGE", conflicts_with_all = ["dir", "image", "deployer_image", "vars_from_secret", "keep_job", "no_reload", "timeout", "pod_timeout"])]
    pub source_image: Option<String>,

    /// The flags passed on to deploy.
    #[command(flatten)]
    pub deploy: DeployFlags,
}

/// Runs `preview create`; returns the process exit code (the deploy's when it failed).
pub async fn run(cluster: &ConnectArgs, args: CreateArgs) -> Result<u8> {
    let target = kubeconfig::connect(cluster).await?;
    let (ns, name) = (target.namespace.as_str(), args.name.as_str());
    let mut progress = Progress::new();

    let parent = fleets::get(&target, &args.fleet).await?;
    let Some(policy) = parent.spec.previews.as_ref() else {
        return Err(PreviewError::NotAllowed {
            fleet: args.fleet.clone(),
            namespace: ns.to_string(),
        }
        .into());
    };
    make_way(&target, &args, &mut progress).await?;
    let body = apply::body(
        name,
        &args.fleet,
        args.ttl.as_deref(),
        args.source_image.as_deref(),
    );
    let preview = apply::apply(&target, name, &body).await?;
    progress.note(&format!(
        "Applied CelldPreview {ns}/{name}: a preview of fleet {}, living {}",
        args.fleet,
        match &args.ttl {
            Some(ttl) => ttl.clone(),
            None => format!("{} (the fleet's spec.previews.ttl)", policy.ttl),
        }
    ));
    wait::fleet(&target, &preview, args.wait_timeout, &mut progress).await?;

    let version = match &args.source_image {
        None => match deploy_worker(cluster, &target, &args, &mut progress).await? {
            Deployed::Version(version) => version,
            Deployed::Failed(code) => return Ok(code),
        },
        Some(image) => {
            progress.note(&format!(
                "The operator publishes {image} to CelldFleet {ns}/{name} (spec.source)"
            ));
            None
        }
    };
    let url = if args.wait {
        let ready = wait::ready(
            &target,
            &preview,
            version.as_deref(),
            args.wait_timeout,
            &mut progress,
        )
        .await?;
        ready.status.and_then(|s| s.url)
    } else {
        None
    };
    output::print(&format!("{}\n", url.unwrap_or_else(|| policy.url(name))))?;
    Ok(0)
}

/// Clears the way for the preview asked for: an existing one of the same fleet is updated
/// (nothing to do here); one past its TTL, or being deleted, is deleted and waited for; one of
/// another fleet is refused.
async fn make_way(target: &Target, args: &CreateArgs, progress: &mut Progress) -> Result<()> {
    let (ns, name) = (target.namespace.as_str(), args.name.as_str());
    let Some(found) = previews::get_opt(target, name).await? else {
        return Ok(());
    };
    match apply::existing(&found, &args.fleet) {
        Existing::Update => progress.note(&format!(
            "CelldPreview {ns}/{name} exists: updating it and deploying again"
        )),
        Existing::Replace(why) => {
            progress.note(&format!(
                "CelldPreview {ns}/{name} exists but {why}: replacing it once the operator has deleted its fleet and data"
            ));
            if found.metadata.deletion_timestamp.is_none() {
                previews::api(target)
                    .delete(name, &DeleteParams::background())
                    .await
                    .map_err(|e| Error::api("delete", previews::RESOURCE, Some(ns), e))?;
            }
            wait::gone(target, name, args.wait_timeout, progress).await?;
        }
        Existing::OtherFleet(fleet) => {
            return Err(PreviewError::OtherFleet {
                name: name.to_string(),
                namespace: ns.to_string(),
                fleet,
                wanted: args.fleet.clone(),
            }
            .into());
        }
    }
    Ok(())
}

/// What deploying the preview's Worker came to.
enum Deployed {
    /// Published; with `--wait`, the version every ready node serves.
    Version(Option<String>),
    /// The deploy failed with this exit code.
    Failed(u8),
}

/// Deploys DIR (or `--image`) to the preview's fleet with the deploy command line built from
/// `args`.
async fn deploy_worker(
    cluster: &ConnectArgs,
    target: &Target,
    args: &CreateArgs,
    progress: &mut Progress,
) -> Result<Deployed> {
    let (ns, name) = (target.namespace.as_str(), args.name.as_str());
    let line = deploy_line::words(
        name,
        args.dir.as_deref(),
        &args.deploy,
        args.wait.then_some(args.wait_timeout),
    );
    progress.note(&format!(
        "Deploying: kubectl celld {} -n {ns}",
        line.join(" ")
    ));
    let code = deploy::run(cluster, deploy_line::parse(&line)?).await?;
    if code != 0 {
        progress.note(&format!(
            "The deploy failed: CelldPreview {ns}/{name} stays, serving what it served before, if anything; run the command again once the Worker is fixed"
        ));
        return Ok(Deployed::Failed(code));
    }
    if !args.wait {
        return Ok(Deployed::Version(None));
    }
    let fleet = Api::<CelldFleet>::namespaced(target.client.clone(), ns)
        .get(name)
        .await
        .map_err(|e| Error::api("get", fleets::RESOURCE, Some(ns), e))?;
    Ok(Deployed::Version(
        fleet.status.and_then(|s| s.deployment).map(|d| d.version),
    ))
}
