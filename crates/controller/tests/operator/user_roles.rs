//! The users' ClusterRoles of install-operator.yaml, aggregated into the built-in `edit` and
//! `view`: a user holding `edit` in a namespace creates, scales and deletes fleets there and
//! nowhere else; a user holding `view` reads them and changes nothing. Needs the
//! clusterrole-aggregation-controller in the control plane's kube-controller-manager.

use crate::support::*;
use celld_api::CelldFleet;
use celld_testkit::{Check, TestEnv, TestNamespace, client_as_user, wait_until};
use k8s_openapi::api::rbac::v1::{ClusterRole, RoleBinding};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use serde_json::json;

const EDITOR: &str = "celld-test-editor";
const VIEWER: &str = "celld-test-viewer";

/// The ClusterRoles of install-operator.yaml that aggregate into a built-in role.
fn generated_user_roles() -> Vec<ClusterRole> {
    let roles: Vec<ClusterRole> = yaml_docs("install-operator.yaml")
        .into_iter()
        .filter(|d| d["kind"] == "ClusterRole")
        .map(|d| serde_json::from_value(d).expect("a ClusterRole"))
        .filter(|r: &ClusterRole| {
            r.labels()
                .keys()
                .any(|k| k.starts_with("rbac.authorization.k8s.io/aggregate-to-"))
        })
        .collect();
    let mut names: Vec<String> = roles.iter().map(|r| r.name_any()).collect();
    names.sort();
    assert_eq!(
        names,
        ["celld-fleet-editor", "celld-fleet-viewer"],
        "install-operator.yaml's aggregated ClusterRoles (run `make manifests`)"
    );
    roles
}

/// Whether the built-in ClusterRole `role` holds `verb` on `resource` of platform.celld.dev.
fn grants(role: &ClusterRole, resource: &str, verb: &str) -> bool {
    role.rules.iter().flatten().any(|r| {
        r.api_groups
            .iter()
            .flatten()
            .any(|g| g == "platform.celld.dev")
            && r.resources.iter().flatten().any(|x| x == resource)
            && r.verbs.iter().any(|v| v == verb)
    })
}

/// Applies the generated ClusterRoles and waits until `view` and `edit` aggregate them.
async fn install_user_roles(admin: &Client) {
    let roles = Api::<ClusterRole>::all(admin.clone());
    let pp = PatchParams::apply("celld-operator-tests").force();
    for role in generated_user_roles() {
        roles
            .patch(&role.name_any(), &pp, &Patch::Apply(&role))
            .await
            .expect("aggregated ClusterRole applied");
    }
    for (builtin, resource, verb) in [
        ("view", "celldfleets", "list"),
        ("edit", "celldfleets", "create"),
        ("edit", "celldfleets/scale", "patch"),
    ] {
        let roles = &roles;
        wait_until(
            format!(
                "ClusterRole {builtin} to aggregate {verb} on {resource}; nothing aggregates without \
                 the clusterrole-aggregation-controller in the kube-controller-manager's \
                 --controllers (testenv/scripts/up.sh): restart the control plane with \
                 `make cluster-down cluster-up`"
            ),
            TIMEOUT,
            || async move {
                match roles.get(builtin).await {
                    Ok(r) if grants(&r, resource, verb) => Check::Done(()),
                    Ok(r) => Check::Pending(format!("rules: {:?}", r.rules)),
                    Err(e) => Check::Pending(e.to_string()),
                }
            },
        )
        .await
        .expect("built-in roles aggregate the generated ClusterRoles");
    }
}

/// Binds the built-in ClusterRole `role` to `user` in `namespace`.
async fn bind(admin: &Client, namespace: &str, role: &str, user: &str) {
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": format!("{user}-{role}")},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    }))
    .expect("RoleBinding");
    Api::<RoleBinding>::namespaced(admin.clone(), namespace)
        .create(&PostParams::default(), &binding)
        .await
        .expect("RoleBinding created");
}

fn a_fleet(name: &str) -> CelldFleet {
    fleet(
        name,
        json!({"objectStorage": {"bucket": "s3://celld/app", "credentialsSecretRef": {"name": "creds"}}}),
    ).expect("a valid CelldFleet")
}

/// Asserts the API server refused `result` as forbidden.
fn assert_forbidden<T: std::fmt::Debug>(result: Result<T, kube::Error>, what: &str) {
    match result {
        Err(kube::Error::Api(status)) if status.is_forbidden() => {}
        other => panic!("{what}: expected 403 Forbidden, got {other:?}"),
    }
}

fn scale_to(replicas: i32) -> Patch<serde_json::Value> {
    Patch::Merge(json!({"spec": {"replicas": replicas}}))
}

#[tokio::test]
async fn edit_and_view_aggregate_the_fleet_roles_per_namespace() {
    let env = TestEnv::new("user-roles")
        .await
        .expect("the local control plane is up (make cluster-up)");
    let admin = env.client();
    celld_testkit::install_crds(&admin)
        .await
        .expect("CRDs installed");
    install_user_roles(&admin).await;
    let other = TestNamespace::create(&admin, "user-roles-other")
        .await
        .expect("second namespace");
    let (ns, elsewhere) = (env.namespace(), other.name());
    bind(&admin, ns, "edit", EDITOR).await;
    bind(&admin, ns, "view", VIEWER).await;
    let pp = PostParams::default();
    let patch = PatchParams::default();

    // The editor creates, scales and deletes a fleet in the namespace where it holds edit.
    let editor = client_as_user(EDITOR).await.expect("editor client");
    let fleets = Api::<CelldFleet>::namespaced(editor.clone(), ns);
    fleets
        .create(&pp, &a_fleet("edited"))
        .await
        .expect("the editor creates a fleet");
    fleets
        .patch_scale("edited", &patch, &scale_to(3))
        .await
        .expect("the editor scales the fleet");
    let scale = fleets
        .get_scale("edited")
        .await
        .expect("the editor reads the scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(3));
    assert_eq!(fleets.get("edited").await.expect("fleet").spec.replicas, 3);
    fleets
        .delete("edited", &DeleteParams::default())
        .await
        .expect("the editor deletes the fleet");

    // ...and nothing in a namespace where it holds nothing.
    Api::<CelldFleet>::namespaced(admin.clone(), elsewhere)
        .create(&pp, &a_fleet("theirs"))
        .await
        .expect("admin creates a fleet in the other namespace");
    let foreign = Api::<CelldFleet>::namespaced(editor, elsewhere);
    assert_forbidden(
        foreign.create(&pp, &a_fleet("mine")).await,
        "editor creating in another namespace",
    );
    assert_forbidden(
        foreign.patch_scale("theirs", &patch, &scale_to(2)).await,
        "editor scaling in another namespace",
    );
    assert_forbidden(
        foreign.delete("theirs", &DeleteParams::default()).await,
        "editor deleting in another namespace",
    );

    // The viewer reads fleets and changes nothing.
    env.api::<CelldFleet>()
        .create(&pp, &a_fleet("watched"))
        .await
        .expect("admin creates a fleet");
    let viewer = client_as_user(VIEWER).await.expect("viewer client");
    let fleets = Api::<CelldFleet>::namespaced(viewer.clone(), ns);
    let listed = fleets
        .list(&ListParams::default())
        .await
        .expect("the viewer lists fleets");
    assert_eq!(
        listed
            .items
            .iter()
            .map(|f| f.name_any())
            .collect::<Vec<_>>(),
        ["watched"]
    );
    fleets
        .get("watched")
        .await
        .expect("the viewer gets a fleet");
    assert_forbidden(
        fleets.create(&pp, &a_fleet("viewed")).await,
        "viewer creating",
    );
    assert_forbidden(
        fleets.patch_scale("watched", &patch, &scale_to(2)).await,
        "viewer scaling",
    );
    assert_forbidden(
        fleets.delete("watched", &DeleteParams::default()).await,
        "viewer deleting",
    );
    assert_forbidden(
        Api::<CelldFleet>::namespaced(viewer, elsewhere)
            .list(&ListParams::default())
            .await,
        "viewer listing another namespace",
    );

    other.cleanup().await.expect("other namespace cleaned up");
    env.cleanup().await.expect("cleanup");
}
