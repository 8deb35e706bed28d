//! `/metrics` with `--metrics-secure`: the endpoints served as the operator binary serves them,
//! with the test operator's client (its ServiceAccount holding the installs' rules for the
//! reviews, `metrics_auth_rules`) against the local control plane. Over HTTPS, a request without
//! a token is answered 401, a ServiceAccount's token without the ClusterRole
//! `celld-operator-metrics-reader` 403, and one bound to it (the role as
//! `config/rbac/metrics_reader.yaml` ships it) gets the metrics; `/healthz` and `/readyz` stay
//! plain HTTP without a token, and plain `/metrics` is not served.

use crate::operator_rbac::OPERATOR_SA;
use crate::support::*;
use celld_operator::cache::health::{WatchHealth, WatchSettings};
use celld_operator::metrics::Metrics;
use celld_operator::runtime::endpoints;
use celld_operator::runtime::server::Health;
use celld_testkit::{Check, TestEnv, service_account_token, wait_until};
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::{Api, Client, ResourceExt};
use serde_json::json;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

const TESTS: &str = "celld-operator-tests";
/// The ClusterRole holding the operator's review rules in the tests.
const AUTH_ROLE: &str = "celld-operator-tests-metrics-auth";
const READER: &str = "celld-operator-metrics-reader";

/// A ClusterRoleBinding of `role` to the ServiceAccount `ns`/`sa`.
async fn bind_cluster_role(admin: &Client, name: &str, role: &str, ns: &str, sa: &str) {
    let binding: ClusterRoleBinding = serde_json::from_value(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": ns}],
    }))
    .expect("ClusterRoleBinding");
    Api::<ClusterRoleBinding>::all(admin.clone())
        .patch(
            name,
            &PatchParams::apply(TESTS).force(),
            &Patch::Apply(&binding),
        )
        .await
        .expect("ClusterRoleBinding applied");
}

async fn apply_cluster_role(admin: &Client, role: &ClusterRole) {
    Api::<ClusterRole>::all(admin.clone())
        .patch(
            &role.name_any(),
            &PatchParams::apply(TESTS).force(),
            &Patch::Apply(role),
        )
        .await
        .expect("ClusterRole applied");
}

async fn service_account(env: &TestEnv, name: &str) -> String {
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}});
    env.api::<ServiceAccount>()
        .patch(name, &PatchParams::apply(TESTS).force(), &Patch::Apply(&sa))
        .await
        .expect("ServiceAccount applied");
    service_account_token(&env.client(), env.namespace(), name)
        .await
        .expect("a token")
}

/// An HTTPS GET of `/metrics` at `addr` (the certificate is self-signed: not verified) with
/// `token`: the status code and the body.
async fn scrape(addr: SocketAddr, token: Option<&str>) -> Result<(u16, String), String> {
    let client = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .map_err(|e| e.to_string())?;
    let mut request = client.get(format!("https://{addr}/metrics"));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.map_err(|e| format!("{e:?}"))?;
    let status = response.status().as_u16();
    Ok((status, response.text().await.map_err(|e| e.to_string())?))
}

/// Waits until a scrape with `token` is answered `status`; returns the body.
async fn scraped(addr: SocketAddr, token: Option<&str>, status: u16, what: &str) -> String {
    wait_until(what, TIMEOUT, || async move {
        match scrape(addr, token).await {
            Ok((got, body)) if got == status => Check::Done(body),
            Ok((got, body)) => Check::Pending(format!("{got}: {body}")),
            Err(e) => Check::Pending(e),
        }
    })
    .await
    .expect(what)
}

#[tokio::test]
async fn metrics_are_served_to_authorized_tokens_only() {
    let env = env_with_crds("metrics-auth").await;
    let admin = env.client();
    let ns = env.namespace().to_string();

    // The operator's identity, with the reviews' rules bound cluster-wide as the installs do.
    let operator = operator_client(&env).await;
    apply_cluster_role(
        &admin,
        &ClusterRole {
            metadata: kube::api::ObjectMeta {
                name: Some(AUTH_ROLE.into()),
                ..Default::default()
            },
            rules: Some(celld_operator::rbac::metrics_auth_rules()),
            ..ClusterRole::default()
        },
    )
    .await;
    let operator_binding = format!("{AUTH_ROLE}-{ns}");
    bind_cluster_role(&admin, &operator_binding, AUTH_ROLE, &ns, OPERATOR_SA).await;

    // The scrapers' role as shipped, bound to one ServiceAccount and not to another.
    let reader: ClusterRole = serde_json::from_value(
        yaml_docs("config/rbac/metrics_reader.yaml")
            .into_iter()
            .next()
            .expect("the metrics reader ClusterRole"),
    )
    .expect("a ClusterRole");
    assert_eq!(reader.name_any(), READER);
    apply_cluster_role(&admin, &reader).await;
    let scraper = service_account(&env, "scraper").await;
    let stranger = service_account(&env, "stranger").await;
    let scraper_binding = format!("{READER}-{ns}");
    bind_cluster_role(&admin, &scraper_binding, READER, &ns, "scraper").await;

    let metrics = Arc::new(Metrics::default());
    metrics.reconciled(true, 0.01);
    let watches = Arc::new(WatchHealth::new(
        WatchSettings::new(20, 120),
        metrics.clone(),
    ));
    let health = Health {
        metrics,
        ready: Arc::new(AtomicBool::new(true)),
        watches,
    };
    let plain = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let secure = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let plain_port = plain.local_addr().unwrap().port();
    let secure_addr = secure.local_addr().unwrap();
    let server = tokio::spawn(endpoints::serve_on(plain, Some(secure), health, operator));

    let (status, body) = scrape(secure_addr, None).await.expect("an HTTPS answer");
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("no bearer token"), "{body}");
    let (status, body) = scrape(secure_addr, Some("not-a-token"))
        .await
        .expect("an HTTPS answer");
    // 503 until the operator's own binding reaches the authorizer.
    let body = if status == 401 {
        body
    } else {
        scraped(secure_addr, Some("not-a-token"), 401, "a bad token refused").await
    };
    assert!(body.contains("not accepted"), "{body}");

    let body = scraped(secure_addr, Some(&stranger), 403, "a stranger forbidden").await;
    assert!(
        body.contains(&format!("system:serviceaccount:{ns}:stranger")) && body.contains(READER),
        "{body}"
    );
    let body = scraped(secure_addr, Some(&scraper), 200, "the scraper served").await;
    assert!(
        body.contains("celld_operator_reconciles_total{result=\"ok\"} 1"),
        "{body}"
    );

    let plain_get = |path: &'static str| async move {
        reqwest::get(format!("http://127.0.0.1:{plain_port}{path}"))
            .await
            .expect("a plain HTTP answer")
            .status()
            .as_u16()
    };
    assert_eq!(plain_get("/healthz").await, 200, "probes need no token");
    assert_eq!(plain_get("/readyz").await, 200, "probes need no token");
    assert_eq!(plain_get("/metrics").await, 404, "no plain /metrics");

    server.abort();
    let bindings = Api::<ClusterRoleBinding>::all(admin);
    for name in [operator_binding, scraper_binding] {
        let _ = bindings.delete(&name, &DeleteParams::default()).await;
    }
}
