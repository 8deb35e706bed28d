//! `deploy --fleet FLEET`: one fleet, with celld's output streamed live, exiting with celld's
//! exit code when it fails.

use super::args::DeployArgs;
use super::pipeline::{self, Done, Output};
use crate::cluster::kubeconfig::{self, ConnectArgs};
use crate::error::{Error, Result};
use crate::text::progress::Progress;
use std::sync::atomic::Ordering;

/// Runs `deploy` to `fleet_name`, the fleet of `--fleet`; returns the process exit code
/// (celld deploy's).
pub async fn run(cluster: &ConnectArgs, args: DeployArgs, fleet_name: String) -> Result<u8> {
    let mut progress = Progress::new();
    let source = pipeline::source(&args, &mut progress).await?;
    let target = kubeconfig::connect(cluster).await?;
    let context =
        pipeline::prepare(target, &fleet_name, &args, args.dry_run, &mut progress).await?;
    let ns = context.namespace().to_string();
    let job = pipeline::create_job(&context, &args, &mut progress).await?;
    let job_name = job.metadata.name.clone().unwrap_or_default();

    let publishing = progress.publishing();
    let steps = pipeline::steps(&context, &job, &args, &source, &mut progress, Output::Live);
    let result = tokio::select! {
        r = steps => r,
        _ = tokio::signal::ctrl_c() => Err(Error::Interrupted {
            note: interrupted_note(publishing.load(Ordering::SeqCst), args.dry_run, &fleet_name, &ns),
        }),
    };
    pipeline::finish(&context, &job_name, &args, &mut progress).await;
    match result? {
        Done::CelldFailed { code, .. } => Ok(code),
        Done::Checked => Ok(0),
        Done::Published { adoption, .. } => adoption.map(|()| 0),
    }
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
