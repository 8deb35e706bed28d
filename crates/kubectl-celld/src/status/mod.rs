//! `status`: one fleet in detail, or a table of fleets.

pub mod list;
pub mod render;
pub mod report;

use crate::cli::{Globals, OutputFormat};
use crate::error::{Error, Result};
use crate::kubeconfig::{self, Target};
use crate::output;
use celld_api::CelldObjectStore;
use clap::Args;
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
  kubectl celld status web -o json | jq -r .worker.version",
    override_usage = "kubectl celld status [OPTIONS] [FLEET]"
)]
pub struct StatusArgs {
    /// The fleet to show; omit for a table of all fleets
    #[arg(value_name = "FLEET")]
    pub fleet: Option<String>,

    /// List the fleets of all namespaces
    #[arg(short = 'A', long, conflicts_with = "fleet")]
    pub all_namespaces: bool,

    /// Output format for scripts (default: text)
    #[arg(short = 'o', long, value_enum, value_name = "FORMAT")]
    pub output: Option<OutputFormat>,

    /// How many recent Events to show
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub events: usize,
}

/// Runs `status`.
pub async fn run(globals: &Globals, args: StatusArgs) -> Result<u8> {
    let target = kubeconfig::connect(globals).await?;
    let now = jiff::Timestamp::now();
    let text = match &args.fleet {
        Some(name) => {
            let fleet = crate::fleets::get(&target, name).await?;
            let report = report::gather(&target, &fleet, args.events).await;
            match args.output {
                Some(format) => output::serialize(&report, format)?,
                None => render::render(&report, now),
            }
        }
        None => {
            let ns = (!args.all_namespaces).then_some(target.namespace.as_str());
            let fleets = crate::fleets::list(&target, ns).await?;
            let stores = stores(&target, ns).await?;
            let rows: Vec<list::FleetRow> = fleets.iter().map(|f| list::row(f, &stores)).collect();
            match args.output {
                Some(format) => output::serialize(&list::FleetList { fleets: rows }, format)?,
                None if rows.is_empty() => {
                    eprintln!(
                        "No CelldFleets found {}; create one with: kubectl celld init NAME --bucket s3://BUCKET/PREFIX ...",
                        match ns {
                            Some(ns) => format!("in namespace {ns}"),
                            None => "in any namespace".to_string(),
                        }
                    );
                    String::new()
                }
                None => list::render(&rows, args.all_namespaces, now),
            }
        }
    };
    output::print(&text)?;
    Ok(0)
}

async fn stores(target: &Target, ns: Option<&str>) -> Result<Vec<CelldObjectStore>> {
    let api: Api<CelldObjectStore> = match ns {
        Some(ns) => Api::namespaced(target.client.clone(), ns),
        None => Api::all(target.client.clone()),
    };
    match api.list(&ListParams::default()).await {
        Ok(l) => Ok(l.items),
        Err(e) if crate::error::is_unknown_resource(&e) => {
            Err(crate::fleets::unknown_resource(&target.client, "celldobjectstores").await)
        }
        Err(e) => Err(Error::api(
            "list",
            "celldobjectstores.platform.celld.dev",
            ns,
            e,
        )),
    }
}
