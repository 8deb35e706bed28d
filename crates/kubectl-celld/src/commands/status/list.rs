//! `status` without a fleet: one row per fleet of the namespace (or of all namespaces).

use super::gather::resolve_with;
use super::report::StorageReport;
use crate::text::human;
use crate::text::table::Table;
use celld_api::{CelldFleet, CelldObjectStore};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde::Serialize;

/// One fleet in the table; also the `-o yaml|json` form of the list.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetRow {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Ready nodes.
    pub ready_replicas: i32,
    /// Desired nodes.
    pub replicas: i32,
    /// Whether the Ready condition is True (false when False, Unknown or not reported yet).
    pub ready: bool,
    /// The Ready condition's status as the table shows it (True, False, Unknown).
    #[serde(skip)]
    pub ready_condition: Option<String>,
    /// Where the Worker is served.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// celld image.
    pub image: String,
    /// Deployed Worker version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Nodes serving that version, of all nodes (`N/M`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adopted: Option<String>,
    /// Storage resolution.
    pub storage: StorageReport,
    /// Creation time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<Time>,
}

/// The `-o yaml|json` document of the table.
#[derive(Debug, Serialize)]
pub struct FleetList {
    /// The rows.
    pub fleets: Vec<FleetRow>,
}

/// A row from a fleet and the stores of the listed namespaces.
pub fn row(fleet: &CelldFleet, stores: &[CelldObjectStore]) -> FleetRow {
    let status = fleet.status.as_ref();
    let ready = status
        .and_then(|s| celld_api::conditions::find(&s.conditions, celld_api::conditions::READY))
        .map(|c| c.status.clone());
    FleetRow {
        namespace: fleet.metadata.namespace.clone().unwrap_or_default(),
        name: fleet.metadata.name.clone().unwrap_or_default(),
        ready_replicas: status.map(|s| s.ready_replicas).unwrap_or(0),
        replicas: fleet.spec.replicas,
        ready: ready.as_deref() == Some("True"),
        ready_condition: ready,
        url: status.and_then(|s| s.url.clone()),
        image: fleet.spec.image.clone(),
        version: status
            .and_then(|s| s.deployment.as_ref())
            .map(|d| d.version.clone()),
        adopted: status
            .and_then(|s| s.deployment.as_ref())
            .and_then(|d| d.adopted.clone()),
        storage: resolve_with(fleet, stores),
        created: fleet.metadata.creation_timestamp.clone(),
    }
}

fn dash(s: Option<&str>) -> String {
    s.filter(|s| !s.is_empty()).unwrap_or("-").to_string()
}

/// `-o name`: `celldfleet.platform.celld.dev/NAME`, one a line.
pub fn names(rows: &[FleetRow]) -> String {
    rows.iter()
        .map(|r| format!("celldfleet.platform.celld.dev/{}\n", r.name))
        .collect()
}

/// The table; with `namespaces` a NAMESPACE column comes first; `wide` adds the region and
/// the credentials Secret.
pub fn render(rows: &[FleetRow], namespaces: bool, wide: bool, now: Timestamp) -> String {
    let mut headers = vec![
        "NAME", "READY", "NODES", "URL", "IMAGE", "VERSION", "ADOPTED", "STORE", "BUCKET",
        "ENDPOINT", "AGE",
    ];
    if wide {
        headers.extend(["REGION", "SECRET"]);
    }
    if namespaces {
        headers.insert(0, "NAMESPACE");
    }
    let mut t = Table::new(&headers);
    for r in rows {
        let store = match (&r.storage.store, &r.storage.error) {
            (Some(s), Some(e)) => format!("{s} ({e})"),
            (None, Some(e)) => format!("- ({e})"),
            (s, None) => dash(s.as_deref()),
        };
        let mut cells = vec![
            r.name.clone(),
            dash(r.ready_condition.as_deref()),
            format!("{}/{}", r.ready_replicas, r.replicas),
            dash(r.url.as_deref()),
            if wide {
                r.image.clone()
            } else {
                human::image(&r.image)
            },
            dash(r.version.as_deref()),
            dash(r.adopted.as_deref()),
            store,
            r.storage.bucket.clone(),
            dash(r.storage.endpoint.as_deref()),
            human::age(r.created.as_ref().map(|t| t.0), now),
        ];
        if wide {
            cells.push(dash(r.storage.region.as_deref()));
            cells.push(dash(r.storage.credentials_secret.as_deref()));
        }
        if namespaces {
            cells.insert(0, r.namespace.clone());
        }
        t.row(cells);
    }
    t.render("")
}
