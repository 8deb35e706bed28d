//! `init` without a cluster: the YAML/JSON it prints for flags (snapshots), and the admission
//! rules it enforces before printing, run through the real binary.

use std::path::Path;
use std::process::Command;

/// A kubeconfig whose current context has namespace `from-context` (never contacted).
fn kubeconfig(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        r#"apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: not-used}
contexts:
- name: ctx
  context: {cluster: c, user: u, namespace: from-context}
- name: other
  context: {cluster: c, user: u, namespace: other-ns}
current-context: ctx
"#,
    )
    .unwrap();
    path
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn init(args: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    init_with(args, kubeconfig(dir.path()).as_os_str())
}

fn init_with(args: &[&str], kubeconfig_env: &std::ffi::OsStr) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-celld"))
        .arg("init")
        .args(args)
        .env("KUBECONFIG", kubeconfig_env)
        .env_remove("HOME")
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn ok(args: &[&str]) -> String {
    let r = init(args);
    assert_eq!(r.code, 0, "{args:?} failed: {}", r.stderr);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    r.stdout
}

fn refused(args: &[&str]) -> String {
    let r = init(args);
    assert_eq!(
        r.code, 1,
        "{args:?} should be refused, printed {}",
        r.stdout
    );
    assert!(r.stdout.is_empty(), "nothing may be printed: {}", r.stdout);
    r.stderr
}

#[test]
fn store_with_ingress_on_a_subpath() {
    insta::assert_snapshot!(ok(&[
        "web",
        "--store",
        "minio",
        "--bucket",
        "s3://celld/web",
        "--hostname",
        "demo.celld.dev",
        "--ingress-class",
        "nginx",
        "--path",
        "/web",
        "--strip-prefix",
    ]));
}

#[test]
fn inline_storage_with_every_node_flag() {
    let dir = tempfile::tempdir().unwrap();
    let affinity = dir.path().join("affinity.yaml");
    std::fs::write(
        &affinity,
        "nodeAffinity:\n  requiredDuringSchedulingIgnoredDuringExecution:\n    nodeSelectorTerms:\n    - matchExpressions: [{key: pool, operator: In, values: [celld]}]\n",
    )
    .unwrap();
    insta::assert_snapshot!(ok(&[
        "api",
        "-n",
        "apps",
        "--bucket",
        "s3://company-celld/api",
        "--endpoint",
        "https://acct.r2.cloudflarestorage.com",
        "--region",
        "auto",
        "--credentials-secret",
        "r2",
        "--replicas",
        "3",
        "--image",
        "ghcr.io/denoland/celld:v0.4.1",
        "--image-pull-policy",
        "IfNotPresent",
        "--image-pull-secret",
        "regcred",
        "--durability",
        "bucket",
        "--env",
        "RUST_LOG=debug",
        "--env",
        "CELLD_MAX_RSS_MB=512",
        "--cpu-request",
        "250m",
        "--memory-request",
        "256Mi",
        "--memory-limit",
        "1Gi",
        "--service-account",
        "celld",
        "--pod-label",
        "team=web",
        "--pod-annotation",
        "a=b",
        "--node-selector",
        "pool=celld",
        "--toleration",
        "dedicated=celld:NoSchedule",
        "--spread",
        "zone",
        "--affinity-file",
        affinity.to_str().unwrap(),
        "--local-storage",
        "Persistent",
        "--local-storage-size",
        "20Gi",
        "--storage-class",
        "fast",
        "--pvc-retention",
        "Delete",
        "--service-type",
        "LoadBalancer",
        "--service-annotation",
        "lb=internal",
        "--hostname",
        "api.example.com",
        "--ingress-class",
        "nginx",
        "--tls-cluster-issuer",
        "letsencrypt",
        "--route-annotation",
        "x=y",
    ]));
}

#[test]
fn gateway_as_json_in_the_context_namespace() {
    insta::assert_snapshot!(ok(&[
        "gw",
        "--store",
        "minio",
        "--bucket",
        "s3://celld/gw",
        "-o",
        "json",
        "--hostname",
        "gw.celld.dev",
        "--gateway",
        "infra/public:https",
        "--gateway",
        "internal",
        "--path",
        "/api",
        "--path-type",
        "Exact",
    ]));
}

#[test]
fn minimal_fleet_omits_defaults() {
    let yaml = ok(&["min", "--store", "s", "--bucket", "s3://celld/min"]);
    assert_eq!(
        yaml,
        "apiVersion: platform.celld.dev/v1alpha1\nkind: CelldFleet\nmetadata:\n  name: min\n  namespace: from-context\nspec:\n  objectStorage:\n    bucket: s3://celld/min\n  storeRef:\n    name: s\n"
    );
    // --context picks the namespace of another context.
    let yaml = ok(&[
        "min",
        "--store",
        "s",
        "--bucket",
        "s3://celld/min",
        "--context",
        "other",
    ]);
    assert!(yaml.contains("namespace: other-ns"), "{yaml}");
}

/// KUBECONFIG lists several files, like kubectl: missing ones are skipped, the rest merged
/// (the first file to set current-context wins).
#[test]
fn kubeconfig_list_is_merged_and_missing_files_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let full = kubeconfig(dir.path());
    let first = dir.path().join("first");
    std::fs::write(
        &first,
        "apiVersion: v1\nkind: Config\ncurrent-context: other\n",
    )
    .unwrap();
    let list = std::env::join_paths([dir.path().join("missing"), first, full]).unwrap();
    let r = init_with(&["m", "--store", "s", "--bucket", "s3://celld/m"], &list);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("namespace: other-ns"), "{}", r.stdout);
}

#[test]
fn refuses_what_admission_refuses() {
    let cases: &[(&str, &[&str])] = &[
        (
            "store_and_inline",
            &[
                "x",
                "--store",
                "s",
                "--bucket",
                "s3://celld/x",
                "--endpoint",
                "https://s3.example.com",
            ],
        ),
        (
            "store_and_credentials",
            &[
                "x",
                "--store",
                "s",
                "--credentials-secret",
                "c",
                "--bucket",
                "s3://celld/x",
            ],
        ),
        (
            "s3_region_on_gcs",
            &["x", "--bucket", "gs://celld/x", "--region", "eu-west-1"],
        ),
        (
            "bad_bucket",
            &["x", "--store", "s", "--bucket", "s3://Celld_Bucket/x"],
        ),
        (
            "http_without_allow",
            &[
                "x",
                "--credentials-secret",
                "c",
                "--bucket",
                "s3://celld/x",
                "--endpoint",
                "http://minio:9000",
            ],
        ),
        (
            "strip_prefix_at_root",
            &[
                "x",
                "--store",
                "s",
                "--bucket",
                "s3://celld/x",
                "--hostname",
                "x.dev",
                "--ingress-class",
                "nginx",
                "--strip-prefix",
            ],
        ),
        (
            "ingress_and_gateway",
            &[
                "x",
                "--store",
                "s",
                "--bucket",
                "s3://celld/x",
                "--hostname",
                "x.dev",
                "--ingress-class",
                "nginx",
                "--gateway",
                "gw",
            ],
        ),
        (
            "no_route_kind",
            &[
                "x",
                "--store",
                "s",
                "--bucket",
                "s3://celld/x",
                "--hostname",
                "x.dev",
            ],
        ),
        (
            "tls_with_gateway",
            &[
                "x",
                "--store",
                "s",
                "--bucket",
                "s3://celld/x",
                "--hostname",
                "x.dev",
                "--gateway",
                "gw",
                "--tls-secret",
                "t",
            ],
        ),
        (
            "two_tls_sources",
            &[
                "x",
                "--store",
                "s",
                "--bucket",
                "s3://celld/x",
                "--hostname",
                "x.dev",
                "--ingress-class",
                "nginx",
                "--tls-secret",
                "t",
                "--tls-cluster-issuer",
                "i",
            ],
        ),
        (
            "reserved_env",
            &[
                "x",
                "--store",
                "s",
                "--bucket",
                "s3://celld/x",
                "--env",
                "CELLD_BUCKET=s3://other",
            ],
        ),
        (
            "owned_pod_label",
            &[
                "x",
                "--store",
                "s",
                "--bucket",
                "s3://celld/x",
                "--pod-label",
                "platform.celld.dev/fleet=y",
            ],
        ),
        (
            "bad_name",
            &["Web_App", "--store", "s", "--bucket", "s3://celld/x"],
        ),
        (
            "storage_class_on_ephemeral",
            &[
                "x",
                "--store",
                "s",
                "--bucket",
                "s3://celld/x",
                "--storage-class",
                "fast",
            ],
        ),
        (
            "uppercase_hostname",
            &[
                "x",
                "--store",
                "s",
                "--bucket",
                "s3://celld/x",
                "--hostname",
                "X.dev",
                "--ingress-class",
                "nginx",
            ],
        ),
    ];
    let mut all = String::new();
    for (name, args) in cases {
        all.push_str(&format!("## {name}\n{}\n", refused(args)));
    }
    insta::assert_snapshot!(all);
}
