//! Which node pods `logs` reads: those of one fleet, or of every fleet a label selector (`-l`)
//! picks in the namespace or in all of them (`-A`).

use crate::cluster::fleet_context;
use crate::cluster::kubeconfig::Target;
use crate::error::Result;
use celld_api::{CelldFleet, labels};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use std::collections::BTreeSet;

/// The fleets whose node pods are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// Their namespace; None for all namespaces.
    pub namespace: Option<String>,
    /// The fleets, as (namespace, name).
    pub fleets: BTreeSet<(String, String)>,
    /// The label selector that matches their node pods (and maybe more; see [`Selection::keeps`]).
    pub pod_selector: String,
    /// Whether the fleet was named (`logs web`) rather than picked by `-l` or `-A`.
    pub named: bool,
    /// The label selector of `-l`.
    pub selector: Option<String>,
}

impl Selection {
    /// The one fleet `fleet` in the target namespace; an error (with near names) when it does
    /// not exist.
    pub async fn one(target: &Target, fleet: &str) -> Result<Self> {
        fleet_context::find(target, fleet).await?;
        Ok(Self {
            namespace: Some(target.namespace.clone()),
            fleets: BTreeSet::from([(target.namespace.clone(), fleet.to_string())]),
            pod_selector: fleet_context::node_selector(fleet),
            named: true,
            selector: None,
        })
    }

    /// The fleets whose labels match `selector` (all when None), in the target namespace or,
    /// with `all_namespaces`, in every namespace.
    pub async fn matching(
        target: &Target,
        selector: Option<&str>,
        all_namespaces: bool,
    ) -> Result<Self> {
        let namespace = (!all_namespaces).then(|| target.namespace.clone());
        let fleets =
            crate::cluster::fleets::list_selected(target, namespace.as_deref(), selector).await?;
        Ok(Self::of(namespace, &fleets, selector))
    }

    /// The selection of `fleets`, listed in `namespace` (None: all namespaces) with the label
    /// selector `selector`.
    pub fn of(namespace: Option<String>, fleets: &[CelldFleet], selector: Option<&str>) -> Self {
        let fleets: BTreeSet<(String, String)> = fleets
            .iter()
            .filter_map(|f| {
                Some((
                    f.metadata.namespace.clone().unwrap_or_default(),
                    f.metadata.name.clone()?,
                ))
            })
            .collect();
        let names: BTreeSet<&str> = fleets.iter().map(|(_, name)| name.as_str()).collect();
        let pod_selector = format!(
            "{} in ({}),{}={}",
            labels::FLEET,
            names.into_iter().collect::<Vec<_>>().join(","),
            labels::ROLE,
            labels::ROLE_NODE
        );
        Self {
            namespace,
            fleets,
            pod_selector,
            named: false,
            selector: selector.map(str::to_string),
        }
    }

    /// Whether the selection holds no fleet.
    pub fn is_empty(&self) -> bool {
        self.fleets.is_empty()
    }

    /// Whether `pod` is a node pod of a selected fleet: across namespaces the pod selector also
    /// matches fleets of the same name that the label selector did not pick.
    pub fn keeps(&self, pod: &Pod) -> bool {
        let ns = pod.metadata.namespace.clone().unwrap_or_default();
        let fleet = pod
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(labels::FLEET))
            .cloned()
            .unwrap_or_default();
        self.fleets.contains(&(ns, fleet))
    }

    /// Whether lines are prefixed `namespace/pod` rather than `pod`.
    pub fn prefixes_namespace(&self) -> bool {
        self.namespace.is_none()
    }

    /// The pods API the selection is watched through.
    pub fn pods(&self, target: &Target) -> Api<Pod> {
        match &self.namespace {
            Some(ns) => Api::namespaced(target.client.clone(), ns),
            None => Api::all(target.client.clone()),
        }
    }

    /// The selected fleets' node pods now, in namespace and ordinal order.
    pub async fn node_pods(&self, target: &Target) -> Result<Vec<Pod>> {
        let pods = fleet_context::node_pods(
            &target.client,
            self.namespace.as_deref(),
            &self.pod_selector,
        )
        .await?;
        Ok(pods.into_iter().filter(|p| self.keeps(p)).collect())
    }

    /// `fleet apps/web`, or `fleets apps/api, apps/web`: what the messages call the selection.
    pub fn describe(&self) -> String {
        let names: Vec<String> = self
            .fleets
            .iter()
            .map(|(ns, name)| format!("{ns}/{name}"))
            .collect();
        match names.len() {
            1 => format!("fleet {}", names[0]),
            _ => format!("fleets {}", names.join(", ")),
        }
    }

    /// What to run to see why the selected fleets have no node pods.
    pub fn status_command(&self) -> String {
        let mut command = "kubectl celld status".to_string();
        if self.named
            && let Some((_, name)) = self.fleets.iter().next()
        {
            command.push_str(&format!(" {name}"));
        }
        if let Some(selector) = &self.selector {
            command.push_str(&format!(" -l {selector}"));
        }
        match &self.namespace {
            Some(ns) => command.push_str(&format!(" -n {ns}")),
            None => command.push_str(" -A"),
        }
        command
    }

    /// What to say when the flags picked no fleet.
    pub fn none_found(&self) -> String {
        format!(
            "No CelldFleets found {}{}; list them with: kubectl celld status {}",
            match &self.namespace {
                Some(ns) => format!("in namespace {ns}"),
                None => "in any namespace".to_string(),
            },
            self.selector
                .as_deref()
                .map(|s| format!(" matching {s}"))
                .unwrap_or_default(),
            match &self.namespace {
                Some(ns) => format!("-n {ns}"),
                None => "-A".to_string(),
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::api::ObjectMeta;
    use std::collections::BTreeMap;

    fn fleet(ns: &str, name: &str) -> CelldFleet {
        let mut f = CelldFleet::new(
            name,
            celld_api::CelldFleetSpec::with_bucket("s3://celld/web"),
        );
        f.metadata.namespace = Some(ns.to_string());
        f
    }

    fn pod(ns: &str, fleet: &str, name: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(ns.into()),
                labels: Some(BTreeMap::from([(
                    labels::FLEET.to_string(),
                    fleet.to_string(),
                )])),
                ..ObjectMeta::default()
            },
            ..Pod::default()
        }
    }

    #[test]
    fn selects_the_listed_fleets_only() {
        let s = Selection::of(
            None,
            &[fleet("apps", "web"), fleet("team", "api")],
            Some("tier=front"),
        );
        assert_eq!(
            s.pod_selector,
            "platform.celld.dev/fleet in (api,web),platform.celld.dev/role=node"
        );
        assert!(s.keeps(&pod("apps", "web", "web-0")));
        assert!(s.keeps(&pod("team", "api", "api-0")));
        // A fleet named web in another namespace was not picked by -l.
        assert!(!s.keeps(&pod("team", "web", "web-0")));
        assert!(s.prefixes_namespace());
        assert_eq!(s.describe(), "fleets apps/web, team/api");
        assert_eq!(s.status_command(), "kubectl celld status -l tier=front -A");
    }

    #[test]
    fn says_what_found_nothing() {
        let s = Selection::of(Some("apps".into()), &[], Some("team=web"));
        assert!(s.is_empty());
        assert_eq!(
            s.none_found(),
            "No CelldFleets found in namespace apps matching team=web; list them with: kubectl celld status -n apps"
        );
        let s = Selection::of(None, &[], None);
        assert_eq!(
            s.none_found(),
            "No CelldFleets found in any namespace; list them with: kubectl celld status -A"
        );
    }
}
