//! The table a fan-out prints on stdout, one row per fleet in namespace and name order: where
//! it stores its Workers, the version its pointer names, how long its deploy took and how it
//! ended (with the reason when it failed). A dry run shows the image each fleet's deploy pod
//! would run instead of a version and a duration.

use super::fleet_result::FleetResult;
use crate::text::human;
use crate::text::table::Table;

/// What a cell shows when there is nothing to show.
const NONE: &str = "-";

/// The table of `results` (sorted here), every line ending in a newline.
pub fn render(results: &[FleetResult], dry_run: bool) -> String {
    let mut rows: Vec<&FleetResult> = results.iter().collect();
    rows.sort_by(|a, b| a.fleet.cmp(&b.fleet));
    let cell = |value: &Option<String>| value.clone().unwrap_or_else(|| NONE.to_string());
    let mut table = if dry_run {
        Table::new(&["NAMESPACE", "FLEET", "STORAGE", "DEPLOY IMAGE", "RESULT"])
    } else {
        Table::new(&[
            "NAMESPACE",
            "FLEET",
            "STORAGE",
            "VERSION",
            "DURATION",
            "RESULT",
        ])
    };
    for r in rows {
        let mut row = vec![
            r.fleet.namespace.clone(),
            r.fleet.name.clone(),
            cell(&r.storage),
        ];
        if dry_run {
            row.push(
                r.image
                    .as_deref()
                    .map(human::image)
                    .unwrap_or_else(|| NONE.to_string()),
            );
        } else {
            row.push(cell(&r.version));
            row.push(
                r.took
                    .map(|d| human::duration(i64::try_from(d.as_secs()).unwrap_or(i64::MAX)))
                    .unwrap_or_else(|| NONE.to_string()),
            );
        }
        row.push(r.outcome.describe());
        table.row(row);
    }
    table.render("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::deploy::fleet_result::Outcome;
    use crate::commands::deploy::targets::FleetId;
    use std::time::Duration;

    fn row(ns: &str, name: &str, storage: &str, outcome: Outcome) -> FleetResult {
        FleetResult {
            fleet: FleetId {
                namespace: ns.into(),
                name: name.into(),
            },
            storage: Some(storage.into()),
            image: Some("ghcr.io/anthaathi/celld-operator-deployer:v0.9.0-celld-v0.6.0".into()),
            version: matches!(outcome, Outcome::Published | Outcome::NotAdopted(_))
                .then(|| "0123456789abcdef".to_string()),
            took: Some(Duration::from_secs(42)),
            outcome,
        }
    }

    fn results() -> Vec<FleetResult> {
        vec![
            row("payments", "pay-us", "gs://celld/pay-us (inline)", Outcome::Published),
            row(
                "payments",
                "pay-eu",
                "s3://celld/pay-eu (store minio)",
                Outcome::Published,
            ),
            row(
                "billing",
                "pay-apac",
                "az://workers/pay-apac (inline)",
                Outcome::NotAdopted(
                    "node pay-apac-1 refused the new version (the reload got HTTP 422: SyntaxError)"
                        .into(),
                ),
            ),
            FleetResult {
                storage: None,
                took: None,
                ..row(
                    "payments",
                    "pay-old",
                    "-",
                    Outcome::Failed(
                        "fleet 'pay-old': Secret 's3-creds' with the object-storage credentials does not exist".into(),
                    ),
                )
            },
            FleetResult {
                took: Some(Duration::from_secs(130)),
                ..row(
                    "payments",
                    "pay-uk",
                    "s3://celld/pay-uk (store minio)",
                    Outcome::Failed(
                        "celld deploy failed with exit code 1: error: PUT\n  deploy/current.json: 403".into(),
                    ),
                )
            },
            FleetResult {
                took: None,
                ..row("payments", "pay-zz", "s3://celld/pay-zz (store minio)", Outcome::Untouched)
            },
        ]
    }

    #[test]
    fn one_row_per_fleet_sorted_with_reasons_last() {
        insta::assert_snapshot!(render(&results(), false));
    }

    #[test]
    fn a_dry_run_shows_the_deploy_images_and_what_would_happen() {
        let dry = vec![
            row(
                "payments",
                "pay-eu",
                "s3://celld/pay-eu (store minio)",
                Outcome::WouldDeploy,
            ),
            row(
                "payments",
                "pay-src",
                "s3://celld/pay-src (store minio)",
                Outcome::WouldFail(
                    "fleet payments/pay-src publishes its Worker from spec.source".into(),
                ),
            ),
        ];
        insta::assert_snapshot!(render(&dry, true));
    }
}
