//! `status`: one fleet in detail, or a table of fleets.

pub mod capacity;
pub mod format;
pub mod gather;
pub mod list;
pub mod render;
pub mod report;
pub mod source;

use crate::cluster::kubeconfig::ConnectArgs;
use crate::cluster::kubeconfig::{self, Target};
use crate::error::{Error, Result};
use crate::text::output;
use crate::text::output_format::OutputFormat;
use celld_api::CelldObjectStore;
use clap::Args;
use format::StatusOutput;
use kube::Api;
use kube::api::ListParams;

/// `status`.
#[derive(Debug, Args)]
#[command(
    after_help = "\
Examples:
  # One fleet: URL, image, Worker version, storage, rollout, pods, conditions, Events
  kubectl celld status web -n apps

  # Every fleet of the namespace, or of all namespaces
  kubectl celld status
  kubectl celld status -A

  # For scripts
  kubectl celld status web -o json | jq -r .worker.version
  kubectl celld status -l team=web -o jsonpath='{range .fleets[*]}{.name}{\"\\t\"}{.ready}{\"\\n\"}{end}'",
    override_usage = "kubectl celld status [OPTIONS] [FLEET]"
)]
pub struct StatusArgs {
    /// The fleet to show; omit for a table of all fleets
    #[arg(value_name = "FLEET", add = crate::cluster::complete::fleets())]
    pub fleet: Option<String>,

    /// List the fleets of all namespaces
    #[arg(short = 'A', long, conflicts_with = "fleet")]
    pub all_namespaces: bool,

    /// Output format: yaml, json, wide, name or jsonpath=TEMPLATE (default: text)
    #[arg(short = 'o', long, value_name = "FORMAT", value_parser = format::parse)]
    pub output: Option<StatusOutput>,

    /// Only fleets whose labels match this selector (e.g. team=web,tier!=canary)
    #[arg(short = 'l', long, value_name = "SELECTOR", conflicts_with = "fleet")]
    pub selector: Option<String>,

    /// Watch: after the first output, look again every 2 seconds and print again when it
    /// changed (Ctrl-C to stop)
    #[arg(short = 'w', long)]
    pub watch: bool,

    /// How many recent Events to show
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub events: usize,
}

/// Runs `status`.
pub async fn run(cluster: &ConnectArgs, args: StatusArgs) -> Result<u8> {
    let target = kubeconfig::connect(cluster).await?;
    let mut last = snapshot(&target, &args).await?;
    output::print(&last)?;
    if !args.watch {
        return Ok(0);
    }
    loop {
        tokio::select! {
            () = tokio::time::sleep(WATCH_INTERVAL) => {}
            _ = tokio::signal::ctrl_c() => break,
        }
        let next = snapshot(&target, &args).await?;
        if next != last {
            output::print(&next)?;
            last = next;
        }
    }
    Ok(0)
}

/// How often `status -w` looks again.
const WATCH_INTERVAL: std::time::Duration = std::time::Duration::from_secs(2);

/// The output of one look at the cluster.
async fn snapshot(target: &Target, args: &StatusArgs) -> Result<String> {
    let now = jiff::Timestamp::now();
    match &args.fleet {
        Some(name) => {
            let fleet = crate::cluster::fleet_context::find(target, name).await?;
            let report = gather::gather(target, &fleet, args.events).await;
            match &args.output {
                None => Ok(render::render(&report, now)),
                Some(StatusOutput::Wide) => {
                    let stores = stores(target, Some(&target.namespace)).await?;
                    Ok(list::render(
                        &[list::row(&fleet, &stores)],
                        false,
                        true,
                        now,
                    ))
                }
                Some(other) => document(&report, other, || {
                    format!("celldfleet.platform.celld.dev/{name}\n")
                }),
            }
        }
        None => {
            let ns = (!args.all_namespaces).then_some(target.namespace.as_str());
            let fleets =
                crate::cluster::fleets::list_selected(target, ns, args.selector.as_deref()).await?;
            let stores = stores(target, ns).await?;
            let rows: Vec<list::FleetRow> = fleets.iter().map(|f| list::row(f, &stores)).collect();
            match &args.output {
                None | Some(StatusOutput::Wide) if rows.is_empty() => {
                    eprintln!(
                        "No CelldFleets found {}{}; create one with: kubectl celld init NAME --bucket s3://BUCKET/PREFIX ...",
                        match ns {
                            Some(ns) => format!("in namespace {ns}"),
                            None => "in any namespace".to_string(),
                        },
                        args.selector
                            .as_deref()
                            .map(|s| format!(" matching {s}"))
                            .unwrap_or_default()
                    );
                    Ok(String::new())
                }
                None => Ok(list::render(&rows, args.all_namespaces, false, now)),
                Some(StatusOutput::Wide) => Ok(list::render(&rows, args.all_namespaces, true, now)),
                Some(other) => {
                    let names = list::names(&rows);
                    document(&list::FleetList { fleets: rows }, other, || names)
                }
            }
        }
    }
}

/// A document format of `value`: yaml, json, name (from `name`) or a jsonpath template.
fn document<T: serde::Serialize>(
    value: &T,
    format: &StatusOutput,
    name: impl FnOnce() -> String,
) -> Result<String> {
    match format {
        StatusOutput::Yaml => output::serialize(value, OutputFormat::Yaml),
        StatusOutput::Json | StatusOutput::Wide => output::serialize(value, OutputFormat::Json),
        StatusOutput::Name => Ok(name()),
        StatusOutput::JsonPath(template) => {
            let doc = serde_json::to_value(value).map_err(|e| Error::Output(e.to_string()))?;
            crate::text::jsonpath_template::render(template, &doc)
                .map_err(|e| Error::Usage(format!("-o jsonpath: {e}")))
        }
    }
}

async fn stores(target: &Target, ns: Option<&str>) -> Result<Vec<CelldObjectStore>> {
    let api: Api<CelldObjectStore> = match ns {
        Some(ns) => Api::namespaced(target.client.clone(), ns),
        None => Api::all(target.client.clone()),
    };
    match api.list(&ListParams::default()).await {
        Ok(l) => Ok(l.items),
        Err(e) if crate::error::is_unknown_resource(&e) => {
            Err(crate::cluster::fleets::unknown_resource(&target.client, "celldobjectstores").await)
        }
        Err(e) => Err(Error::api(
            "list",
            "celldobjectstores.platform.celld.dev",
            ns,
            e,
        )),
    }
}
