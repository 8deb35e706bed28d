//! `preview list`: the previews of a namespace (or of all namespaces), one row each with its
//! fleet, phase, age, the TTL left, the version it serves and its URL. The rows and their table
//! are pure: the time is an argument of the rows.

use crate::cluster::kubeconfig::{self, ConnectArgs};
use crate::cluster::previews;
use crate::error::Result;
use crate::text::human;
use crate::text::output;
use crate::text::output_format::OutputFormat;
use crate::text::table::Table;
use celld_api::{CelldPreview, PreviewPhase};
use clap::Args;
use jiff::Timestamp;
use serde::Serialize;

/// `preview list`.
#[derive(Debug, Args)]
#[command(
    after_help = "\
Examples:
  # The previews of the namespace
  kubectl celld preview list -n apps

  # Every namespace, as JSON for scripts
  kubectl celld preview list -A -o json",
    override_usage = "kubectl celld preview list [OPTIONS]"
)]
pub struct ListArgs {
    /// List the previews of all namespaces
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,

    /// Output format: yaml or json (default: a table)
    #[arg(short = 'o', long, value_name = "FORMAT", value_enum)]
    pub output: Option<OutputFormat>,
}

/// One preview in `preview list`; also the `-o yaml|json` form of a row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PreviewRow {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The fleet it previews (spec.fleet).
    pub fleet: String,
    /// Its phase; `Pending` until the operator reports one.
    pub phase: PreviewPhase,
    /// When it was created (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// When its TTL ends (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Seconds until then: 0 once past.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_left_seconds: Option<i64>,
    /// The Worker version it serves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Where it is served.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Its age at the time of the row, for the table.
    #[serde(skip)]
    pub age: String,
    /// The TTL left at the time of the row ([`ttl_left`]), for the table.
    #[serde(skip)]
    pub ttl_left: String,
}

/// The `-o yaml|json` document of `preview list`.
#[derive(Debug, Serialize)]
pub struct PreviewList {
    /// The rows, by namespace and name.
    pub previews: Vec<PreviewRow>,
}

/// Whether `phase` is past the preview's TTL.
fn past_ttl(phase: PreviewPhase) -> bool {
    matches!(phase, PreviewPhase::Expiring | PreviewPhase::Expired)
}

/// The TTL left at `now` of a preview expiring at `expires_at`: an age such as `22h` or
/// `3d4h`, `expired` once past (or when the operator reports it past its TTL), `-` when the
/// expiry is unknown.
pub fn ttl_left(expires_at: Option<Timestamp>, phase: PreviewPhase, now: Timestamp) -> String {
    match (past_ttl(phase), expires_at) {
        (true, _) => "expired".to_string(),
        (false, Some(at)) if at.as_second() > now.as_second() => {
            human::duration(at.as_second() - now.as_second())
        }
        (false, Some(_)) => "expired".to_string(),
        (false, None) => "-".to_string(),
    }
}

/// The row of `preview` at `now`.
pub fn row(preview: &CelldPreview, now: Timestamp) -> PreviewRow {
    let status = preview.status.clone().unwrap_or_default();
    let expires = status.expires_at.as_ref().map(|t| t.0);
    PreviewRow {
        namespace: preview.metadata.namespace.clone().unwrap_or_default(),
        name: preview.metadata.name.clone().unwrap_or_default(),
        fleet: preview.spec.fleet.clone(),
        phase: status.phase,
        created: preview
            .metadata
            .creation_timestamp
            .as_ref()
            .map(|t| t.0.to_string()),
        expires_at: expires.map(|t| t.to_string()),
        ttl_left_seconds: expires.map(|at| {
            if past_ttl(status.phase) {
                0
            } else {
                (at.as_second() - now.as_second()).max(0)
            }
        }),
        version: status.version,
        url: status.url,
        age: human::age(
            preview.metadata.creation_timestamp.as_ref().map(|t| t.0),
            now,
        ),
        ttl_left: ttl_left(expires, status.phase, now),
    }
}

/// The table of `rows`, with a NAMESPACE column for `all_namespaces`.
pub fn render(rows: &[PreviewRow], all_namespaces: bool) -> String {
    let mut headers = vec![
        "NAME", "FLEET", "PHASE", "AGE", "TTL LEFT", "VERSION", "URL",
    ];
    if all_namespaces {
        headers.insert(0, "NAMESPACE");
    }
    let mut t = Table::new(&headers);
    for r in rows {
        let mut cells = vec![
            r.name.clone(),
            r.fleet.clone(),
            r.phase.as_str().to_string(),
            r.age.clone(),
            r.ttl_left.clone(),
            r.version.clone().unwrap_or_else(|| "-".into()),
            r.url.clone().unwrap_or_else(|| "-".into()),
        ];
        if all_namespaces {
            cells.insert(0, r.namespace.clone());
        }
        t.row(cells);
    }
    t.render("")
}

/// What an empty listing says, as kubectl does: `No CelldPreviews found in namespace apps.`
pub fn nothing_found(namespace: Option<&str>) -> String {
    match namespace {
        Some(ns) => format!("No CelldPreviews found in namespace {ns}."),
        None => "No CelldPreviews found in any namespace.".to_string(),
    }
}

/// Runs `preview list`.
pub async fn run(cluster: &ConnectArgs, args: ListArgs) -> Result<u8> {
    let target = kubeconfig::connect(cluster).await?;
    let ns = (!args.all_namespaces).then_some(target.namespace.as_str());
    let now = Timestamp::now();
    let rows: Vec<PreviewRow> = previews::list(&target, ns)
        .await?
        .iter()
        .map(|p| row(p, now))
        .collect();
    let text = match args.output {
        None if rows.is_empty() => {
            eprintln!("{}", nothing_found(ns));
            String::new()
        }
        None => render(&rows, args.all_namespaces),
        Some(format) => output::serialize(&PreviewList { previews: rows }, format)?,
    };
    output::print(&text)?;
    Ok(0)
}
