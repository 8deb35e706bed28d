//! `preview delete NAME`: delete a preview. Its finalizer keeps it until the operator has
//! stopped its nodes, emptied its bucket prefix and deleted its fleet; `--wait` waits for that,
//! and says so when the operator kept the data (a `DataKept` Warning).

use super::wait;
use crate::cluster::kubeconfig::{self, ConnectArgs, Target};
use crate::cluster::previews;
use crate::error::preview::PreviewError;
use crate::error::{Error, Result};
use crate::text::output;
use crate::text::progress::Progress;
use celld_api::reasons::Reason;
use clap::Args;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Event;
use kube::Api;
use kube::api::{DeleteParams, ListParams};
use std::time::Duration;

/// `preview delete`.
#[derive(Debug, Args)]
#[command(
    after_help = "\
Examples:
  # Delete a preview; the operator deletes its fleet and data
  kubectl celld preview delete pr-123 -n apps

  # Wait until it is gone, its data removed; no error when it does not exist (a closed pull
  # request that never had a preview)
  kubectl celld preview delete pr-123 --wait --ignore-not-found",
    override_usage = "kubectl celld preview delete [OPTIONS] <NAME>"
)]
pub struct DeleteArgs {
    /// The preview
    #[arg(value_name = "NAME", add = crate::cluster::complete::previews())]
    pub name: String,

    /// Wait until the preview is gone: its nodes stopped, its bucket prefix emptied and its
    /// fleet deleted
    #[arg(long)]
    pub wait: bool,

    /// Longest wait with --wait
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = crate::text::parse::duration)]
    pub wait_timeout: Duration,

    /// Succeed when the preview does not exist
    #[arg(long)]
    pub ignore_not_found: bool,
}

/// Runs `preview delete`.
pub async fn run(cluster: &ConnectArgs, args: DeleteArgs) -> Result<u8> {
    let target = kubeconfig::connect(cluster).await?;
    let (ns, name) = (target.namespace.clone(), args.name.as_str());
    let mut progress = Progress::new();
    let preview = match previews::get(&target, name).await {
        Ok(preview) => preview,
        Err(Error::Preview(PreviewError::NotFound { .. })) if args.ignore_not_found => {
            progress.note(&format!(
                "CelldPreview {ns}/{name} does not exist: nothing to delete"
            ));
            return Ok(0);
        }
        Err(e) => return Err(e),
    };
    let deleted_at = match previews::api(&target)
        .delete(name, &DeleteParams::background())
        .await
    {
        Ok(answer) => answer
            .left()
            .and_then(|p| p.metadata.deletion_timestamp)
            .map(|t| t.0),
        Err(e) if crate::error::status_code(&e) == Some(404) && args.ignore_not_found => None,
        Err(e) => return Err(Error::api("delete", previews::RESOURCE, Some(&ns), e)),
    };
    let bucket = preview
        .status
        .as_ref()
        .and_then(|s| s.bucket.clone())
        .unwrap_or_else(|| "its bucket prefix".to_string());
    progress.note(&format!(
        "Deleting CelldPreview {ns}/{name}: the operator stops its nodes, empties {bucket} and deletes CelldFleet {name} first"
    ));
    if args.wait {
        wait::gone(&target, name, args.wait_timeout, &mut progress).await?;
        if let Some(kept) = data_kept(&target, name, deleted_at).await {
            progress.note(&format!("warning: {kept}"));
        }
    }
    output::print(&format!("celldpreview.platform.celld.dev/{name} deleted\n"))?;
    Ok(0)
}

/// The message of a `DataKept` Warning on preview `name` since `since` (its deletion): the
/// operator deleted it without removing its data. None when there is none, or Events cannot
/// be read.
async fn data_kept(target: &Target, name: &str, since: Option<Timestamp>) -> Option<String> {
    let events: Api<Event> = Api::namespaced(target.client.clone(), &target.namespace);
    let selector = format!("involvedObject.kind=CelldPreview,involvedObject.name={name}");
    let list = events
        .list(&ListParams::default().fields(&selector))
        .await
        .ok()?;
    list.items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some(Reason::DataKept.as_str()))
        .filter(|e| match (since, written(e)) {
            (Some(since), Some(seen)) => seen >= since,
            _ => true,
        })
        .filter_map(|e| e.message)
        .next_back()
}

/// When an Event was written, whichever API wrote it.
fn written(e: &Event) -> Option<Timestamp> {
    e.event_time
        .as_ref()
        .map(|t| t.0)
        .or_else(|| e.last_timestamp.as_ref().map(|t| t.0))
        .or_else(|| e.metadata.creation_timestamp.as_ref().map(|t| t.0))
}
