//! The same accepted and refused examples as the client-side rule tests, applied to the real
//! API server of the local control plane (`make cluster-up`) with the checked-in CRDs installed:
//! accepted ones are admitted, refused ones are refused with the expected message.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod cases;

use cases::updates::FLEET_UPDATES;
use cases::{Case, previews::PREVIEWS, rollouts::ROLLOUTS, stores::STORES};
use celld_testkit::{Check, TestEnv, wait_until};
use kube::Api;
use kube::api::{DynamicObject, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};
use std::time::Duration;

fn api(env: &TestEnv, kind: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("platform.celld.dev", "v1alpha1", kind);
    Api::namespaced_with(env.client(), env.namespace(), &ApiResource::from_gvk(&gvk))
}

fn object(kind: &str, yaml: &str) -> Value {
    let mut v: Value = serde_yaml::from_str(yaml).expect("case is YAML");
    v["apiVersion"] = json!("platform.celld.dev/v1alpha1");
    v["kind"] = json!(kind);
    v
}

async fn apply(api: &Api<DynamicObject>, obj: &Value, dry_run: bool) -> Result<(), String> {
    let name = obj["metadata"]["name"]
        .as_str()
        .expect("case has a name")
        .to_string();
    let mut params = PatchParams::apply("celld-api-tests").force();
    params.dry_run = dry_run;
    api.patch(&name, &params, &Patch::Apply(obj))
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn check(case: &Case, result: Result<(), String>) -> Option<String> {
    match (case.refused_with, result) {
        (None, Ok(())) => None,
        (None, Err(e)) => Some(format!("{}: expected admission, refused: {e}", case.name)),
        (Some(want), Ok(())) => Some(format!(
            "{}: expected refusal containing {want:?}, was admitted",
            case.name
        )),
        (Some(want), Err(e)) if e.contains(want) => None,
        (Some(want), Err(e)) => Some(format!("{}: expected {want:?}, got: {e}", case.name)),
    }
}

async fn run(kind: &str, cases: &[Case], env: &TestEnv) -> Vec<String> {
    let api = api(env, kind);
    let mut failures = Vec::new();
    for case in cases {
        if let Some(f) = check(case, apply(&api, &object(kind, case.yaml), true).await) {
            failures.push(f);
        }
    }
    failures
}

#[tokio::test]
async fn the_api_server_admits_and_refuses_exactly_like_the_client_side_rules() {
    let env = TestEnv::new("admission")
        .await
        .expect("the local control plane is up (make cluster-up)");
    celld_testkit::install_crds(&env.client())
        .await
        .expect("CRDs installed");
    let mut failures = run("CelldFleet", &cases::fleets(), &env).await;
    failures.extend(run("CelldObjectStore", STORES, &env).await);
    failures.extend(run("CelldPreview", PREVIEWS, &env).await);
    failures.extend(run("CelldRollout", ROLLOUTS, &env).await);

    let fleets = api(&env, "CelldFleet");
    for update in FLEET_UPDATES {
        // Each update starts from a freshly created object.
        let old = object("CelldFleet", update.old);
        apply(&fleets, &old, false)
            .await
            .expect("old object admitted");
        let case = Case {
            name: update.name,
            yaml: update.new,
            refused_with: update.refused_with,
        };
        if let Some(f) = check(
            &case,
            apply(&fleets, &object("CelldFleet", update.new), true).await,
        ) {
            failures.push(f);
        }
        fleets
            .delete("storage", &Default::default())
            .await
            .expect("deleted");
        wait_until("fleet storage deleted", Duration::from_secs(30), || async {
            match fleets.get_opt("storage").await {
                Ok(None) => Check::Done(()),
                other => Check::Pending(format!("{other:?}")),
            }
        })
        .await
        .expect("gone");
    }
    env.cleanup().await.expect("cleanup");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The largest manifest a client-side `kubectl apply` can record in its last-applied
/// annotation, with room for the other annotations.
const LAST_APPLIED_LIMIT: usize = 200 * 1024;

#[tokio::test]
async fn kubectl_apply_refuses_every_bad_fleet_naming_the_field() {
    let env = TestEnv::new("kubectl-apply")
        .await
        .expect("the local control plane is up (make cluster-up)");
    celld_testkit::install_crds(&env.client())
        .await
        .expect("CRDs installed");
    let mut failures = Vec::new();
    for case in &cases::fleets() {
        let manifest = serde_json::to_vec(&object("CelldFleet", case.yaml)).expect("JSON");
        // A client-side apply copies the manifest into the last-applied-configuration
        // annotation, which cannot hold one larger than Kubernetes' 256 KiB of annotations:
        // those are applied server-side, as their users would have to.
        let args: &[&str] = if manifest.len() > LAST_APPLIED_LIMIT {
            &["apply", "--server-side", "--dry-run=server", "-f", "-"]
        } else {
            &["apply", "--dry-run=server", "-f", "-"]
        };
        let out = env
            .kubectl()
            .output(args.iter().copied(), Some(&manifest))
            .await
            .expect("kubectl runs");
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        let result = if out.status.success() {
            Ok(())
        } else {
            Err(stderr)
        };
        if let Some(f) = check(case, result) {
            failures.push(f);
        }
    }
    env.cleanup().await.expect("cleanup");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn the_optional_prefix_policy_keeps_each_fleet_under_its_namespace() {
    use celld_api::fleet::prefix_policy;
    use k8s_openapi::api::admissionregistration::v1::{
        ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    };
    let env = TestEnv::new("prefix-policy").await.expect("control plane");
    let client = env.client();
    celld_testkit::install_crds(&client).await.expect("CRDs");
    let ns = env.namespace().to_string();
    let pp = PatchParams::apply("celld-api-tests").force();
    let policy = prefix_policy::policy();
    Api::<ValidatingAdmissionPolicy>::all(client.clone())
        .patch(prefix_policy::NAME, &pp, &Patch::Apply(&policy))
        .await
        .expect("policy applied");
    // The shipped binding judges every namespace; here only the test's, so the other tests
    // on this control plane are not judged by it.
    let mut binding = prefix_policy::binding();
    let name = format!("{}-{ns}", prefix_policy::NAME);
    binding.metadata.name = Some(name.clone());
    let mut spec = binding.spec.expect("a binding spec");
    spec.match_resources = Some(
        serde_json::from_value(
            json!({"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}}}),
        )
        .expect("match resources"),
    );
    binding.spec = Some(spec);
    let bindings = Api::<ValidatingAdmissionPolicyBinding>::all(client.clone());
    bindings
        .patch(&name, &pp, &Patch::Apply(&binding))
        .await
        .expect("binding applied");

    let fleets = api(&env, "CelldFleet");
    let fleet = |bucket: &str, previews: Option<&str>| {
        let mut spec =
            json!({"objectStorage": {"bucket": bucket, "credentialsSecretRef": {"name": "s3"}}});
        if let Some(p) = previews {
            spec["previews"] = json!({"baseDomain": "preview.example.com", "bucket": p, "ingressClass": "nginx", "shareCredentials": true});
        }
        json!({"apiVersion": "platform.celld.dev/v1alpha1", "kind": "CelldFleet", "metadata": {"name": "web"}, "spec": spec})
    };
    let outside = fleet("s3://celld/other-team/web", None);
    let refusal = wait_until(
        "the prefix policy loaded",
        Duration::from_secs(30),
        || async {
            match apply(&fleets, &outside, true).await {
                Err(e) if e.contains("starts with its namespace") => Check::Done(e),
                other => Check::Pending(format!("{other:?}")),
            }
        },
    )
    .await
    .expect("a prefix outside the namespace is refused");
    assert!(
        refusal.contains(&format!("s3://NAME/{ns}/...")),
        "{refusal}"
    );
    for (what, bucket, previews, admitted) in [
        ("no prefix", "celld".to_string(), None, false),
        (
            "under the namespace",
            format!("s3://celld/{ns}/web"),
            None,
            true,
        ),
        ("no scheme", format!("celld/{ns}/web"), None, true),
        (
            "previews elsewhere",
            format!("gs://celld/{ns}/web"),
            Some("gs://celld-previews/other".to_string()),
            false,
        ),
        (
            "previews under the namespace",
            format!("gs://celld/{ns}/web"),
            Some(format!("gs://celld-previews/{ns}")),
            true,
        ),
    ] {
        let result = apply(&fleets, &fleet(&bucket, previews.as_deref()), true).await;
        assert_eq!(result.is_ok(), admitted, "{what}: {result:?}");
    }
    bindings
        .delete(&name, &Default::default())
        .await
        .expect("binding deleted");
}
