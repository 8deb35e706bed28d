//! Secrets never leak: every credential value of a Secret the test created is looked for in the
//! operator's log, every Event, every fleet and store (status included), every object the
//! fleets own (as YAML) and what `kubectl celld status -o yaml` prints.

use crate::cluster::Cluster;
use kube::api::{DynamicObject, ListParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::{Api, ResourceExt};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// Kinds searched in each namespace: (group, version, kind, plural).
const KINDS: &[(&str, &str, &str, &str)] = &[
    (
        "platform.celld.dev",
        "v1alpha1",
        "CelldFleet",
        "celldfleets",
    ),
    (
        "platform.celld.dev",
        "v1alpha1",
        "CelldObjectStore",
        "celldobjectstores",
    ),
    ("", "v1", "Event", "events"),
    ("apps", "v1", "StatefulSet", "statefulsets"),
    ("apps", "v1", "ControllerRevision", "controllerrevisions"),
    ("", "v1", "Pod", "pods"),
    ("", "v1", "Service", "services"),
    (
        "networking.k8s.io",
        "v1",
        "NetworkPolicy",
        "networkpolicies",
    ),
    (
        "policy",
        "v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
    ),
    ("networking.k8s.io", "v1", "Ingress", "ingresses"),
    ("batch", "v1", "Job", "jobs"),
];

const HTTP_ROUTE: (&str, &str, &str, &str) =
    ("gateway.networking.k8s.io", "v1", "HTTPRoute", "httproutes");

/// How many fleets per namespace get their own `kubectl celld status FLEET -o yaml`.
const FLEETS_PER_NAMESPACE: usize = 25;

/// What was searched and where a credential value showed up.
#[derive(Debug, Default)]
pub struct LeakScan {
    /// Sources searched, by kind (`operator log`, `StatefulSet`, `kubectl celld status`...).
    pub searched: BTreeMap<String, usize>,
    /// `<value> in <where>`, one per finding.
    pub findings: Vec<String>,
}

impl LeakScan {
    /// Looks for `values` in `text`, found at `place` (a source of `kind`).
    pub fn search(&mut self, kind: &str, place: &str, text: &str, values: &[String]) {
        *self.searched.entry(kind.to_string()).or_default() += 1;
        for value in values.iter().filter(|v| text.contains(v.as_str())) {
            self.findings.push(format!("{value} in {place}"));
        }
    }

    /// Adds what another scan searched and found.
    pub fn merge(&mut self, other: &LeakScan) {
        for (kind, n) in &other.searched {
            *self.searched.entry(kind.clone()).or_default() += n;
        }
        self.findings.extend(other.findings.iter().cloned());
    }

    /// `3 operator logs, 120 Events, ...`.
    pub fn summary(&self) -> String {
        self.searched
            .iter()
            .map(|(kind, n)| format!("{n} × {kind}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Panics naming every place a credential value appeared.
    pub fn assert_clean(&self, test: &str) {
        assert!(
            self.findings.is_empty(),
            "{test}: credential values of the test's Secrets leaked ({} findings):\n{}",
            self.findings.len(),
            self.findings.join("\n")
        );
    }
}

/// Searches `namespaces` of `cluster` and the operator logs for `values`.
pub async fn scan(
    cluster: &Cluster,
    namespaces: &[&str],
    operator_logs: &[&Path],
    values: &[String],
) -> LeakScan {
    assert!(
        !values.is_empty(),
        "a leak check needs the values to look for"
    );
    let mut scan = LeakScan::default();
    for log in operator_logs {
        let text = std::fs::read_to_string(log)
            .unwrap_or_else(|e| panic!("reading the operator log {}: {e}", log.display()));
        assert!(
            !text.is_empty(),
            "the operator log {} is empty",
            log.display()
        );
        scan.search(
            "operator log",
            &format!("operator log {}", log.display()),
            &text,
            values,
        );
    }
    let mut kinds = KINDS.to_vec();
    if cluster.gateway_api {
        kinds.push(HTTP_ROUTE);
    }
    for ns in namespaces {
        let mut fleets = Vec::new();
        for (group, version, kind, plural) in &kinds {
            let resource = ApiResource::from_gvk_with_plural(
                &GroupVersionKind::gvk(group, version, kind),
                plural,
            );
            let api: Api<DynamicObject> =
                Api::namespaced_with(cluster.client.clone(), ns, &resource);
            let list = api
                .list(&ListParams::default())
                .await
                .unwrap_or_else(|e| panic!("listing {kind} in {ns}: {e}"));
            for object in list.items {
                let yaml = serde_yaml::to_string(&object).expect("an object as YAML");
                let place = format!("{kind} {ns}/{}", object.name_any());
                scan.search(kind, &place, &yaml, values);
                if *kind == "CelldFleet" {
                    fleets.push(object.name_any());
                }
            }
        }
        plugin_status(cluster, ns, &fleets, values, &mut scan).await;
    }
    scan
}

/// `kubectl celld status -n NS -o yaml`, then `status FLEET` for some fleets; both outputs must
/// name the fleets they report on.
async fn plugin_status(
    cluster: &Cluster,
    ns: &str,
    fleets: &[String],
    values: &[String],
    scan: &mut LeakScan,
) {
    let table = run_plugin(cluster, &["status", "-n", ns, "-o", "yaml"]).await;
    for fleet in fleets {
        assert!(
            table.contains(fleet.as_str()),
            "`kubectl celld status -n {ns} -o yaml` does not list fleet {fleet}:\n{table}"
        );
    }
    scan.search(
        "kubectl celld status (all fleets)",
        &format!("`kubectl celld status -n {ns} -o yaml`"),
        &table,
        values,
    );
    for fleet in fleets.iter().take(FLEETS_PER_NAMESPACE) {
        let args = [
            "status",
            fleet.as_str(),
            "-n",
            ns,
            "-o",
            "yaml",
            "--events",
            "50",
        ];
        let out = run_plugin(cluster, &args).await;
        assert!(
            out.contains(fleet.as_str()),
            "`kubectl celld {}` does not name the fleet:\n{out}",
            args.join(" ")
        );
        scan.search(
            "kubectl celld status FLEET",
            &format!("`kubectl celld {}`", args.join(" ")),
            &out,
            values,
        );
    }
}

/// The plugin binary, built next to this test's own binary.
fn plugin() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary lives in <target>/<profile>/deps");
    let plugin = dir.join("kubectl-celld");
    assert!(
        plugin.exists(),
        "{} does not exist: build the plugin first with `cargo build -p kubectl-celld`",
        plugin.display()
    );
    plugin
}

/// Runs the plugin against the cluster; returns stdout and stderr together (a broken fleet is
/// reported, not an error, so the exit status is not checked: the output is).
async fn run_plugin(cluster: &Cluster, args: &[&str]) -> String {
    let run = tokio::process::Command::new(plugin())
        .arg("--kubeconfig")
        .arg(&cluster.kubeconfig)
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .unwrap_or_else(|_| {
            panic!(
                "`kubectl celld {}` did not finish within 60 s",
                args.join(" ")
            )
        })
        .unwrap_or_else(|e| panic!("running `kubectl celld {}`: {e}", args.join(" ")));
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
