//! `preview status NAME`: one preview as the operator reports it, with the short state of the
//! fleet it serves from; as text, `-o yaml|json`, or kubectl's `-o jsonpath=TEMPLATE`.

use super::report;
use crate::cluster::kubeconfig::{self, ConnectArgs};
use crate::cluster::{fleets, previews};
use crate::error::{Error, Result};
use crate::text::output;
use crate::text::output_format::OutputFormat;
use celld_api::CelldFleet;
use clap::Args;
use kube::{Api, Resource};

/// An output format of `preview status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreviewOutput {
    /// The document as YAML or JSON.
    Document(OutputFormat),
    /// kubectl's jsonpath template against the JSON document.
    JsonPath(String),
}

/// Parses `-o`.
pub fn parse_output(value: &str) -> Result<PreviewOutput, String> {
    match value {
        "yaml" => Ok(PreviewOutput::Document(OutputFormat::Yaml)),
        "json" => Ok(PreviewOutput::Document(OutputFormat::Json)),
        other => match other.strip_prefix("jsonpath=") {
            Some(t) if !t.is_empty() => Ok(PreviewOutput::JsonPath(t.to_string())),
            _ => Err("use yaml, json or jsonpath=TEMPLATE (e.g. jsonpath='{.url}')".to_string()),
        },
    }
}

/// `preview status`.
#[derive(Debug, Args)]
#[command(
    after_help = "\
Examples:
  # Phase, URL, version, its fleet, bucket, expiry and conditions
  kubectl celld preview status pr-123 -n apps

  # For scripts: its URL
  kubectl celld preview status pr-123 -o jsonpath='{.url}'",
    override_usage = "kubectl celld preview status [OPTIONS] <NAME>"
)]
pub struct StatusArgs {
    /// The preview
    #[arg(value_name = "NAME", add = crate::cluster::complete::previews())]
    pub name: String,

    /// Output format: yaml, json or jsonpath=TEMPLATE (default: text)
    #[arg(short = 'o', long, value_name = "FORMAT", value_parser = parse_output)]
    pub output: Option<PreviewOutput>,
}

/// Runs `preview status`.
pub async fn run(cluster: &ConnectArgs, args: StatusArgs) -> Result<u8> {
    let target = kubeconfig::connect(cluster).await?;
    let ns = target.namespace.clone();
    let preview = previews::get(&target, &args.name).await?;
    let fleet = Api::<CelldFleet>::namespaced(target.client.clone(), &ns)
        .get_opt(&args.name)
        .await
        .map_err(|e| Error::api("get", fleets::RESOURCE, Some(&ns), e))?;
    let uid = preview.meta().uid.as_deref();
    let own = fleet.filter(|f| {
        f.metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| Some(o.uid.as_str()) == uid)
    });
    let report = report::build(&preview, own.as_ref());
    let text = match &args.output {
        None => report::render(&report, jiff::Timestamp::now()),
        Some(PreviewOutput::Document(format)) => output::serialize(&report, *format)?,
        Some(PreviewOutput::JsonPath(template)) => {
            let doc = serde_json::to_value(&report).map_err(|e| Error::Output(e.to_string()))?;
            crate::text::jsonpath_template::render(template, &doc).map_err(Error::Usage)?
        }
    };
    output::print(&text)?;
    Ok(0)
}
