//! The checked-in generated files are what the generator writes now (`make manifests` fixes a
//! failure), and the install manifest is complete and pinned.

#![allow(clippy::unwrap_used)] // test helpers, outside #[test] functions

use celld_manifests::{generated, install};
use k8s_openapi::api::apps::v1::Deployment;
use std::path::{Path, PathBuf};

fn config_dir() -> PathBuf {
    Path::new(env!("CELLD_WORKSPACE_ROOT")).join("config")
}

#[test]
fn checked_in_manifests_match_the_generator() {
    let mut stale = Vec::new();
    for (path, content) in generated().unwrap() {
        let on_disk = std::fs::read_to_string(config_dir().join(&path)).unwrap_or_default();
        if on_disk != content {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files (relative to config/), run `make manifests`: {stale:?}"
    );
}

fn documents(yaml: &str) -> Vec<serde_yaml::Value> {
    yaml.split("\n---\n")
        .map(|doc| serde_yaml::from_str(doc).unwrap())
        .collect()
}

fn kind_and_name(doc: &serde_yaml::Value) -> String {
    format!(
        "{}/{}",
        doc["kind"].as_str().unwrap(),
        doc["metadata"]["name"].as_str().unwrap()
    )
}

#[test]
fn install_manifest_has_every_object_in_apply_order() {
    let (_, install) = generated()
        .unwrap()
        .into_iter()
        .find(|(path, _)| path.ends_with("install-operator.yaml"))
        .unwrap();
    let kinds: Vec<String> = documents(&install).iter().map(kind_and_name).collect();
    assert_eq!(
        kinds,
        [
            "Namespace/celld-system",
            "CustomResourceDefinition/celldfleets.platform.celld.dev",
            "CustomResourceDefinition/celldobjectstores.platform.celld.dev",
            "CustomResourceDefinition/celldpreviews.platform.celld.dev",
            "CustomResourceDefinition/celldrollouts.platform.celld.dev",
            "ValidatingAdmissionPolicy/celld-previews",
            "ValidatingAdmissionPolicyBinding/celld-previews",
            "ValidatingAdmissionPolicy/celld-operator-guard",
            "ValidatingAdmissionPolicyBinding/celld-operator-guard",
            "ServiceAccount/celld-operator",
            "ClusterRole/celld-operator",
            "Role/celld-operator-leader-election",
            "ClusterRoleBinding/celld-operator",
            "RoleBinding/celld-operator-leader-election",
            "ClusterRole/celld-fleet-viewer",
            "ClusterRole/celld-fleet-editor",
            "ClusterRole/celld-operator-metrics-reader",
            "Service/celld-operator-metrics",
            "NetworkPolicy/celld-operator",
            "Deployment/celld-operator",
        ]
    );
}

fn generated_file(name: &str) -> String {
    generated()
        .unwrap()
        .into_iter()
        .find(|(path, _)| path.ends_with(name))
        .unwrap()
        .1
}

/// The rules of every ClusterRole a manifest binds to the operator.
fn operator_cluster_rules(docs: &[serde_yaml::Value]) -> Vec<serde_yaml::Value> {
    let bound: Vec<&str> = docs
        .iter()
        .filter(|d| d["kind"] == "ClusterRoleBinding")
        .filter(|d| {
            d["subjects"]
                .as_sequence()
                .unwrap()
                .iter()
                .any(|s| s["name"] == "celld-operator")
        })
        .map(|d| d["roleRef"]["name"].as_str().unwrap())
        .collect();
    docs.iter()
        .filter(|d| d["kind"] == "ClusterRole")
        .filter(|d| bound.contains(&d["metadata"]["name"].as_str().unwrap()))
        .flat_map(|d| d["rules"].as_sequence().unwrap().clone())
        .collect()
}

/// Whether `rule` names `resource` (any group).
fn names_resource(rule: &serde_yaml::Value, resource: &str) -> bool {
    rule["resources"]
        .as_sequence()
        .is_some_and(|r| r.iter().any(|r| r == resource))
}

#[test]
fn the_namespaced_install_grants_nothing_cluster_wide_but_the_gateway_read_and_the_metrics_reviews()
{
    let install = generated_file("install-operator-namespaced.yaml");
    let docs = documents(&install);
    let cluster_scoped: Vec<String> = docs
        .iter()
        .filter(|d| d["metadata"]["namespace"].is_null())
        .map(kind_and_name)
        .collect();
    assert_eq!(
        cluster_scoped,
        [
            "Namespace/celld-system",
            "CustomResourceDefinition/celldfleets.platform.celld.dev",
            "CustomResourceDefinition/celldobjectstores.platform.celld.dev",
            "CustomResourceDefinition/celldpreviews.platform.celld.dev",
            "CustomResourceDefinition/celldrollouts.platform.celld.dev",
            "ValidatingAdmissionPolicy/celld-previews",
            "ValidatingAdmissionPolicyBinding/celld-previews",
            "ValidatingAdmissionPolicy/celld-operator-guard",
            "ValidatingAdmissionPolicyBinding/celld-operator-guard",
            "ClusterRole/celld-operator-gateways",
            "ClusterRoleBinding/celld-operator-gateways",
            "ClusterRole/celld-operator-metrics-auth",
            "ClusterRoleBinding/celld-operator-metrics-auth",
            "ClusterRole/celld-fleet-viewer",
            "ClusterRole/celld-fleet-editor",
            "ClusterRole/celld-operator-metrics-reader",
        ]
    );
    let rules = operator_cluster_rules(&docs);
    let granted: Vec<(String, String, Vec<String>)> = rules
        .iter()
        .map(|r| {
            let text = |v: &serde_yaml::Value| v.as_str().unwrap().to_string();
            let all = |v: &serde_yaml::Value| v.as_sequence().unwrap().iter().map(text).collect();
            (
                text(&r["apiGroups"][0]),
                text(&r["resources"][0]),
                all(&r["verbs"]),
            )
        })
        .collect();
    let one = |group: &str, resource: &str, verb: &str| {
        (
            group.to_string(),
            resource.to_string(),
            vec![verb.to_string()],
        )
    };
    assert_eq!(
        granted,
        [
            one("gateway.networking.k8s.io", "gateways", "get"),
            one("authentication.k8s.io", "tokenreviews", "create"),
            one("authorization.k8s.io", "subjectaccessreviews", "create"),
        ],
        "{rules:?}"
    );
    for kind in ["secrets", "jobs", "pods"]
        .into_iter()
        .map(str::to_string)
        .chain(
            celld_operator::cache::caches::ChildCaches::kinds()
                .into_iter()
                .map(|k| k.plural),
        )
    {
        assert!(
            !rules.iter().any(|r| names_resource(r, &kind)),
            "no cluster-wide rule on {kind}"
        );
    }
    assert!(
        !docs
            .iter()
            .any(|d| d["kind"] == "RoleBinding" && d["roleRef"]["kind"] == "ClusterRole"),
        "no ClusterRole bound in a namespace"
    );

    // The Deployment takes its namespaces from the ConfigMap.
    let deployment = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
    let env = deployment["spec"]["template"]["spec"]["containers"][0]["env"]
        .as_sequence()
        .unwrap();
    let watch = env
        .iter()
        .find(|e| e["name"] == "WATCH_NAMESPACES")
        .unwrap();
    assert_eq!(
        watch["valueFrom"]["configMapKeyRef"]["name"],
        "celld-operator-namespaces"
    );

    // A watched namespace gets a Role and its binding, with no namespace of their own.
    let watched = documents(&generated_file("install-watched-namespace.yaml"));
    assert_eq!(
        watched.iter().map(kind_and_name).collect::<Vec<_>>(),
        ["Role/celld-operator", "RoleBinding/celld-operator"]
    );
    assert!(watched.iter().all(|d| d["metadata"]["namespace"].is_null()));
    assert_eq!(watched[1]["subjects"][0]["namespace"], "celld-system");
}

#[test]
fn the_cluster_wide_install_binds_one_cluster_role() {
    let docs = documents(&generated_file("install-operator.yaml"));
    let rules = operator_cluster_rules(&docs);
    assert!(
        rules.iter().any(|r| r["resources"][0] == "secrets"),
        "{rules:?}"
    );
    for review in ["tokenreviews", "subjectaccessreviews"] {
        assert!(
            rules.iter().any(|r| names_resource(r, review)),
            "{review}: {rules:?}"
        );
    }
}

#[test]
fn both_installs_ship_the_metrics_reader_and_the_operators_network_policy() {
    for file in ["install-operator.yaml", "install-operator-namespaced.yaml"] {
        let docs = documents(&generated_file(file));
        let reader = docs
            .iter()
            .find(|d| kind_and_name(d) == "ClusterRole/celld-operator-metrics-reader")
            .unwrap();
        assert_eq!(
            reader["rules"][0]["nonResourceURLs"][0], "/metrics",
            "{file}"
        );
        assert_eq!(reader["rules"][0]["verbs"][0], "get", "{file}");
        assert_eq!(reader["rules"].as_sequence().unwrap().len(), 1, "{file}");
        assert!(
            !docs
                .iter()
                .any(|d| d["roleRef"]["name"] == "celld-operator-metrics-reader"),
            "{file}: bound to nobody by the install"
        );

        let policy = docs
            .iter()
            .find(|d| kind_and_name(d) == "NetworkPolicy/celld-operator")
            .unwrap();
        let spec = &policy["spec"];
        assert_eq!(
            spec["podSelector"]["matchLabels"]["app.kubernetes.io/name"],
            "celld-operator"
        );
        assert_eq!(spec["policyTypes"].as_sequence().unwrap().len(), 1);
        let ingress = spec["ingress"].as_sequence().unwrap();
        assert_eq!(ingress.len(), 1, "{file}: one way in");
        assert_eq!(ingress[0]["ports"][0]["port"], "https-metrics");
        assert_eq!(
            ingress[0]["from"][0]["namespaceSelector"]["matchLabels"]["platform.celld.dev/metrics-scraper"],
            "true"
        );

        let deployment = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
        let manager = &deployment["spec"]["template"]["spec"]["containers"][0];
        assert!(
            manager["env"]
                .as_sequence()
                .unwrap()
                .iter()
                .any(|e| e["name"] == "METRICS_SECURE" && e["value"] == "true"),
            "{file}: /metrics served to authorized scrapers only"
        );
        let ports: Vec<(&str, i64)> = manager["ports"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["name"].as_str().unwrap(),
                    p["containerPort"].as_i64().unwrap(),
                )
            })
            .collect();
        assert_eq!(ports, [("http", 8080), ("https-metrics", 8443)], "{file}");
    }
}

#[test]
fn the_deployment_is_pinned_restricted_and_probed() {
    let image = install::image().unwrap();
    assert_eq!(
        image,
        format!(
            "ghcr.io/anthaathi/celld-operator:v{}",
            std::fs::read_to_string(config_dir().join("../VERSION"))
                .unwrap()
                .trim()
        )
    );
    let deployment: Deployment =
        serde_yaml::from_str(&install::pinned_manager(&image).unwrap()).unwrap();
    let pod = deployment.spec.unwrap().template.spec.unwrap();
    assert_eq!(pod.service_account_name.as_deref(), Some("celld-operator"));
    let pod_security = pod.security_context.unwrap();
    assert_eq!(pod_security.run_as_non_root, Some(true));
    assert_eq!(
        pod_security.seccomp_profile.unwrap().type_,
        "RuntimeDefault"
    );
    let manager = &pod.containers[0];
    assert_eq!(manager.image.as_deref(), Some(image.as_str()));
    let security = manager.security_context.clone().unwrap();
    assert_eq!(security.read_only_root_filesystem, Some(true));
    assert_eq!(security.allow_privilege_escalation, Some(false));
    assert_eq!(
        security.capabilities.unwrap().drop,
        Some(vec!["ALL".to_string()])
    );
    let probe_path = |p: &Option<k8s_openapi::api::core::v1::Probe>| {
        p.as_ref()
            .and_then(|p| p.http_get.as_ref())
            .and_then(|h| h.path.clone())
    };
    assert_eq!(
        probe_path(&manager.liveness_probe).as_deref(),
        Some("/healthz")
    );
    assert_eq!(
        probe_path(&manager.readiness_probe).as_deref(),
        Some("/readyz")
    );
    let resources = manager.resources.clone().unwrap();
    assert!(resources.requests.is_some() && resources.limits.is_some());
    let env = manager.env.clone().unwrap();
    let pod_namespace = env.iter().find(|e| e.name == "POD_NAMESPACE").unwrap();
    assert_eq!(
        pod_namespace
            .value_from
            .as_ref()
            .and_then(|v| v.field_ref.as_ref())
            .map(|f| f.field_path.as_str()),
        Some("metadata.namespace")
    );
}

#[test]
fn docs_field_reference_matches_the_crds() {
    let doc = std::fs::read_to_string(config_dir().join("../docs/reference.md")).unwrap();
    let spliced = celld_manifests::reference::splice(&doc)
        .expect("docs/reference.md has the generated-reference markers");
    assert!(
        spliced == doc,
        "docs/reference.md's field reference is stale: run `make manifests`"
    );
}
