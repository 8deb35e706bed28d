//! Every YAML document under `poc/` and `examples/`, and `install-operator.yaml`, is accepted by a
//! real API server: server-side apply with `dryRun=All` and strict field validation, after the
//! CRDs of `config/crd/bases` are applied (for real). Namespaced objects are sent to the test's
//! own namespace, so files that name `celld-poc` or `celld-system` need neither. Files that are
//! not Kubernetes objects at all are skipped by an explicit list, which the test proves exact.
//!
//! Needs the local control plane (`make cluster-up`), which has the Gateway API CRDs and KEDA's
//! (ScaledObject) installed.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers, outside #[test] functions

use celld_testkit::TestEnv;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Namespace, Pod, PodTemplateSpec, ServiceAccount};
use kube::api::{
    Api, DynamicObject, GroupVersionKind, ObjectMeta, Patch, PatchParams, PostParams,
    ValidationDirective,
};
use kube::discovery::{Scope, pinned_kind};
use kube::{Client, Error as KubeError};
use std::path::{Path, PathBuf};

/// Files under poc/ and examples/ that are configuration for other tools, not Kubernetes
/// objects: each must exist and name an API group the cluster does not serve.
const NOT_KUBERNETES: &[&str] = &[
    // kind's cluster configuration (kind.x-k8s.io/v1alpha4 Cluster), read by `kind create cluster`.
    "poc/kind/cluster.yaml",
];

const FIELD_MANAGER: &str = "celld-manifests-dry-run";

fn root() -> PathBuf {
    PathBuf::from(env!("CELLD_WORKSPACE_ROOT"))
}

/// Every *.yaml / *.yml file under `dir`, relative to the repository root, sorted.
fn yaml_files(dir: &str) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = dir.join(entry.unwrap().file_name());
            if root.join(&path).is_dir() {
                walk(root, &path, out);
            } else if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml")
            ) {
                out.push(path.to_string_lossy().into_owned());
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), Path::new(dir), &mut out);
    out.sort();
    out
}

/// The non-empty YAML documents of a file.
fn documents(file: &str) -> Vec<serde_yaml::Value> {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    serde_yaml::Deserializer::from_str(&text)
        .map(|doc| serde::Deserialize::deserialize(doc).unwrap_or_else(|e| panic!("{file}: {e}")))
        .filter(|doc: &serde_yaml::Value| !doc.is_null())
        .collect()
}

fn gvk_of(doc: &serde_yaml::Value, what: &str) -> GroupVersionKind {
    let api_version = doc["apiVersion"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: no apiVersion"));
    let kind = doc["kind"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: no kind"));
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    GroupVersionKind::gvk(group, version, kind)
}

/// Server-side applies one document with dryRun=All into `namespace` (when namespaced).
async fn dry_run(
    client: &Client,
    namespace: &str,
    doc: serde_yaml::Value,
    what: &str,
) -> Result<String, String> {
    let gvk = gvk_of(&doc, what);
    let (resource, capabilities) = pinned_kind(client, &gvk)
        .await
        .map_err(|e| format!("the cluster does not serve {gvk:?}: {e}"))?;
    let mut object: DynamicObject =
        serde_yaml::from_value(doc).map_err(|e| format!("not an object: {e}"))?;
    let name = object
        .metadata
        .name
        .clone()
        .ok_or_else(|| "no metadata.name".to_string())?;
    let api: Api<DynamicObject> = match capabilities.scope {
        Scope::Namespaced => {
            object.metadata.namespace = Some(namespace.to_string());
            Api::namespaced_with(client.clone(), namespace, &resource)
        }
        Scope::Cluster => Api::all_with(client.clone(), &resource),
    };
    let mut params = PatchParams::apply(FIELD_MANAGER).force().dry_run();
    params.field_validation = Some(ValidationDirective::Strict);
    api.patch(&name, &params, &Patch::Apply(&object))
        .await
        .map(|_| format!("{}/{name}", resource.kind))
        .map_err(|e| format!("{}/{name}: {e}", resource.kind))
}

#[tokio::test]
async fn every_yaml_in_poc_and_examples_and_the_install_manifest_passes_a_dry_run() {
    let env = TestEnv::new("manifests-dry-run").await.unwrap();
    let client = env.client();
    celld_testkit::install_crds(&client).await.unwrap();

    let mut files: Vec<String> = ["poc", "examples"]
        .iter()
        .flat_map(|dir| yaml_files(dir))
        .collect();
    for install in [
        "install-operator.yaml",
        "install-operator-namespaced.yaml",
        "install-watched-namespace.yaml",
        "config/optional/prefix-by-namespace.yaml",
    ] {
        files.push(install.to_string());
    }

    // The skip list is exact: each entry exists and is not something the API server serves.
    for skipped in NOT_KUBERNETES {
        assert!(
            files.iter().any(|f| f == skipped),
            "{skipped} does not exist"
        );
        for (i, doc) in documents(skipped).into_iter().enumerate() {
            let gvk = gvk_of(&doc, skipped);
            assert!(
                pinned_kind(&client, &gvk).await.is_err(),
                "{skipped} document {i} ({gvk:?}) is a Kubernetes object: dry-run it instead of skipping it"
            );
        }
    }

    let mut accepted = Vec::new();
    let mut failures = Vec::new();
    for file in files
        .iter()
        .filter(|f| !NOT_KUBERNETES.contains(&f.as_str()))
    {
        let docs = documents(file);
        assert!(!docs.is_empty(), "{file} has no YAML document");
        for (i, doc) in docs.into_iter().enumerate() {
            let what = format!("{file} document {i}");
            match dry_run(&client, env.namespace(), doc, &what).await {
                Ok(object) => accepted.push(format!("{file}: {object}")),
                Err(e) => failures.push(format!("{what}: {e}")),
            }
        }
    }
    println!(
        "accepted by a server-side dry run:\n  {}",
        accepted.join("\n  ")
    );
    assert!(
        failures.is_empty(),
        "rejected by the API server:\n  {}",
        failures.join("\n  ")
    );
    // poc/ (12 objects), examples/ (24), install-operator.yaml (20),
    // install-operator-namespaced.yaml (22), install-watched-namespace.yaml (2) and
    // config/optional/prefix-by-namespace.yaml (2) at the time of writing.
    assert!(
        accepted.len() >= 82,
        "only {} documents checked",
        accepted.len()
    );
    env.cleanup().await.unwrap();
}

/// The pod templates that claim the restricted Pod Security Standard meet it: pods built from
/// them are admitted (dry run) into a namespace that enforces `restricted`.
#[tokio::test]
async fn operator_and_deploy_job_pods_meet_the_restricted_pod_security_standard() {
    let env = TestEnv::new("manifests-restricted").await.unwrap();
    let client = env.client();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let labels = serde_json::json!({"metadata": {"labels": {
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": "latest",
    }}});
    namespaces
        .patch(
            env.namespace(),
            &PatchParams::default(),
            &Patch::Merge(&labels),
        )
        .await
        .unwrap();
    // The operator's pods run as its ServiceAccount, which must exist for admission.
    let accounts: Api<ServiceAccount> = env.api();
    let account = ServiceAccount {
        metadata: ObjectMeta {
            name: Some("celld-operator".into()),
            ..ObjectMeta::default()
        },
        ..ServiceAccount::default()
    };
    accounts
        .create(&PostParams::default(), &account)
        .await
        .unwrap();

    let find = |file: &str, kind: &str| {
        documents(file)
            .into_iter()
            .find(|d| d["kind"].as_str() == Some(kind))
            .unwrap_or_else(|| panic!("{file} has no {kind}"))
    };
    let deployment: Deployment =
        serde_yaml::from_value(find("install-operator.yaml", "Deployment")).unwrap();
    let job: Job = serde_yaml::from_value(find("poc/deploy-job.yaml", "Job")).unwrap();
    let templates: Vec<(&str, PodTemplateSpec)> = vec![
        (
            "install-operator.yaml Deployment",
            deployment.spec.unwrap().template,
        ),
        ("poc/deploy-job.yaml Job", job.spec.unwrap().template),
    ];

    let pods: Api<Pod> = env.api();
    let params = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    for (what, template) in templates {
        let mut metadata = template.metadata.unwrap_or_default();
        metadata.name = Some("restricted-check".into());
        let pod = Pod {
            metadata,
            spec: template.spec,
            ..Pod::default()
        };
        match pods.create(&params, &pod).await {
            Ok(_) => {}
            Err(KubeError::Api(status)) => {
                panic!(
                    "{what}: pod rejected in a restricted namespace: {}",
                    status.message
                )
            }
            Err(e) => panic!("{what}: {e}"),
        }
    }
    env.cleanup().await.unwrap();
}
