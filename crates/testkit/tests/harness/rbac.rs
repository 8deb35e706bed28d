//! RBAC is enforced: a service account allowed only `get pods` is refused anything else.

use celld_testkit::{
    Check, DEFAULT_TIMEOUT, TestEnv, client_as_service_account, create_running_pod, fake_pod,
    wait_until,
};
use k8s_openapi::api::core::v1::{ConfigMap, Pod, ServiceAccount};
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use kube::Api;
use kube::api::{ListParams, ObjectMeta, PostParams};

use crate::TestResult;

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        ..ObjectMeta::default()
    }
}

#[tokio::test]
async fn service_account_with_get_pods_only_is_refused_create_configmaps() -> TestResult {
    let env = TestEnv::new("rbac").await?;
    let ns = env.namespace();
    let pp = PostParams::default();
    env.api::<ServiceAccount>()
        .create(
            &pp,
            &ServiceAccount {
                metadata: meta("reader"),
                ..ServiceAccount::default()
            },
        )
        .await?;
    let role = Role {
        metadata: meta("pod-getter"),
        rules: Some(vec![PolicyRule {
            api_groups: Some(vec![String::new()]),
            resources: Some(vec!["pods".into()]),
            verbs: vec!["get".into()],
            ..PolicyRule::default()
        }]),
    };
    env.api::<Role>().create(&pp, &role).await?;
    let binding = RoleBinding {
        metadata: meta("reader-gets-pods"),
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "Role".into(),
            name: "pod-getter".into(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: "reader".into(),
            namespace: Some(ns.into()),
            ..Subject::default()
        }]),
    };
    env.api::<RoleBinding>().create(&pp, &binding).await?;
    create_running_pod(&env.api::<Pod>(), &fake_pod("target")).await?;

    let reader = client_as_service_account(&env.client(), ns, "reader").await?;
    let pods: Api<Pod> = Api::namespaced(reader.clone(), ns);
    // The RBAC authorizer learns of new bindings through a watch: allow it a moment.
    let pod = wait_until(
        "the reader to be allowed get pods",
        DEFAULT_TIMEOUT,
        || async {
            match pods.get("target").await {
                Ok(pod) => Check::Done(pod),
                Err(e) => Check::Pending(e.to_string()),
            }
        },
    )
    .await?;
    assert_eq!(pod.metadata.name.as_deref(), Some("target"));

    let maps: Api<ConfigMap> = Api::namespaced(reader, ns);
    let refused = maps
        .create(
            &pp,
            &ConfigMap {
                metadata: meta("nope"),
                ..ConfigMap::default()
            },
        )
        .await
        .expect_err("create configmaps must be refused");
    assert!(
        matches!(&refused, kube::Error::Api(s) if s.code == 403),
        "{refused:?}"
    );
    let refused = pods
        .list(&ListParams::default())
        .await
        .expect_err("list pods must be refused");
    assert!(
        matches!(&refused, kube::Error::Api(s) if s.code == 403),
        "{refused:?}"
    );
    env.cleanup().await?;
    Ok(())
}
