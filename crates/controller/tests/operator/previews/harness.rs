//! What the preview tests share: a namespace with the node double and the previewed fleet
//! `web`, and the helpers that create previews and wait for them.

use crate::support::*;
use celld_api::{CelldPreview, PreviewPhase};
use celld_fixtures::NodeDouble;
use celld_testkit::{Check, S3Settings, TestEnv, wait_until};
use kube::Api;
use kube::api::PostParams;
use serde_json::{Value, json};
use std::time::Duration;

pub(crate) const V1: &str = "00000000000000b1";

/// Long enough for a preview to be Ready first, then expire, within one test.
pub(super) const SHORT_TTL: &str = "1m";

/// How long an expiry may take: the TTL, then the nodes stopping and the prefix emptied.
pub(super) const EXPIRY: Duration = Duration::from_secs(150);

pub(crate) struct Setup {
    pub(crate) env: TestEnv,
    pub(crate) s3: S3Settings,
    /// The previewed fleet's own prefix.
    pub(crate) prefix: String,
    /// The previews bucket's prefix (beside the fleet's own).
    pub(super) previews: String,
    pub(super) nodes: NodeDouble,
}

impl Setup {
    /// A namespace, the node double, and the fleet `web` (Ready) allowing previews (or not).
    pub(crate) async fn new(test: &str, allow_previews: bool) -> (Self, Operator) {
        let env = env_with_crds(test).await;
        let nodes = NodeDouble::start("0.6.0", V1)
            .await
            .expect("the node double");
        let op = start_operator(&env, &nodes, "op-1").await;
        let s3 = env.s3().expect("S3 settings");
        let prefix = prefix(&s3, test);
        let previews = format!("{prefix}-previews");
        create_credentials(&env.api(), "creds", &s3)
            .await
            .expect("credentials Secret created");
        create_credentials(&env.api(), "previews-creds", &s3)
            .await
            .expect("the previews' credentials Secret created");
        publish_pointer(&s3, &prefix, V1).await;
        let extra = if allow_previews {
            json!({"previews": {
                "baseDomain": "preview.example.com",
                "bucket": format!("s3://{}/{previews}", s3.bucket),
                "ingressClass": "nginx",
                "ttl": "1h",
                "maxTtl": "2h",
                "credentials": {"credentialsSecretRef": {"name": "previews-creds"}},
            }})
        } else {
            json!({})
        };
        apply_fleet(
            &env,
            &inline_fleet("web", &s3, &prefix, extra).expect("a CelldFleet"),
        )
        .await;
        wait_condition(&env, "web", "Ready", "True", None).await;
        (
            Self {
                env,
                s3,
                prefix,
                previews,
                nodes,
            },
            op,
        )
    }

    /// The key prefix of preview `name` (no trailing slash).
    pub(crate) fn preview_prefix(&self, name: &str) -> String {
        format!("{}/{}/{name}", self.previews, self.env.namespace())
    }

    /// Fills preview `name`'s prefix as a deploy and its nodes would: a pointer and state.
    pub(super) async fn fill(&self, name: &str) {
        let p = self.preview_prefix(name);
        publish_pointer(&self.s3, &p, V1).await;
        for key in [
            "nodes/pr-node-0.json",
            "deploy/web/00000000000000b1/index.js",
        ] {
            self.s3
                .put_object(&format!("{p}/{key}"), b"{}".to_vec())
                .await
                .expect("object written");
        }
    }

    pub(crate) async fn keys(&self, prefix: &str) -> Vec<String> {
        self.s3
            .list_keys(&format!("{prefix}/"))
            .await
            .expect("keys listed")
    }
}

pub(super) async fn start_operator(env: &TestEnv, nodes: &NodeDouble, identity: &str) -> Operator {
    let mut settings = settings(env, identity);
    settings.node_api_connect_to = Some(nodes.address.clone());
    start(operator_client(env).await, settings)
}

pub(crate) fn previews_api(env: &TestEnv) -> Api<CelldPreview> {
    env.api::<CelldPreview>()
}

pub(crate) fn preview(name: &str, spec: Value) -> CelldPreview {
    serde_json::from_value(json!({
        "apiVersion": "platform.celld.dev/v1alpha1",
        "kind": "CelldPreview",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .expect("a CelldPreview")
}

pub(crate) async fn create(env: &TestEnv, p: &CelldPreview) -> Result<CelldPreview, kube::Error> {
    previews_api(env).create(&PostParams::default(), p).await
}

/// Waits until preview `name` is in `phase`; returns it.
pub(crate) async fn wait_phase(
    env: &TestEnv,
    name: &str,
    phase: PreviewPhase,
    within: Duration,
) -> CelldPreview {
    let api = previews_api(env);
    wait_until(format!("preview {name} {phase:?}"), within, || async {
        match api.get_opt(name).await {
            Ok(Some(p)) if p.status.as_ref().is_some_and(|s| s.phase == phase) => Check::Done(p),
            other => Check::Pending(format!("{other:?}")),
        }
    })
    .await
    .expect("the preview reaches the phase")
}

pub(crate) async fn wait_gone<K>(api: &Api<K>, name: &str, what: &str)
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    wait_until(format!("{what} {name} gone"), TIMEOUT, || async {
        match api.get_opt(name).await {
            Ok(None) => Check::Done(()),
            other => Check::Pending(format!("{other:?}")),
        }
    })
    .await
    .expect("gone");
}

pub(super) fn preview_condition<'a>(
    p: &'a CelldPreview,
    type_: &str,
) -> &'a k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition {
    p.status
        .as_ref()
        .and_then(|s| s.conditions.iter().find(|c| c.type_ == type_))
        .unwrap_or_else(|| panic!("no {type_} condition: {:?}", p.status))
}
