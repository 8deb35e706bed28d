//! CelldPreviews on the local control plane with the node double: a preview gets a fleet of
//! its own (its prefix under the previews bucket, its host, owned by the preview), serves a
//! version, and at its TTL loses its fleet and the objects under its prefix while a neighbour
//! prefix (`pr-12` beside `pr-1`) and the previewed fleet's own prefix survive. Admission
//! refuses a preview of a fleet that does not allow previews, a TTL above the fleet's maximum
//! and a name another fleet has; a deleted preview takes its fleet and data with it; an
//! operator replaced during an expiry finishes it once.

use crate::support::*;
use celld_api::{CelldFleet, CelldPreview, PreviewPhase};
use celld_fixtures::NodeDouble;
use celld_testkit::{Check, S3Settings, TestEnv, wait_until};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use serde_json::{Value, json};
use std::time::Duration;

pub(crate) const V1: &str = "00000000000000b1";

/// Long enough for a preview to be Ready first, then expire, within one test.
const SHORT_TTL: &str = "1m";

/// How long an expiry may take: the TTL, then the nodes stopping and the prefix emptied.
const EXPIRY: Duration = Duration::from_secs(150);

pub(crate) struct Setup {
    pub(crate) env: TestEnv,
    pub(crate) s3: S3Settings,
    /// The previewed fleet's own prefix.
    pub(crate) prefix: String,
    /// The previews bucket's prefix (beside the fleet's own).
    previews: String,
    nodes: NodeDouble,
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
        publish_pointer(&s3, &prefix, V1).await;
        let extra = if allow_previews {
            json!({"previews": {
                    "baseDomain": "preview.example.com",
                    "bucket": format!("s3://{}/{previews}", s3.bucket),
                    "ingressClass": "nginx",
                    "ttl": "1h",
            "maxTtl": "2h",
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
    async fn fill(&self, name: &str) {
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

async fn start_operator(env: &TestEnv, nodes: &NodeDouble, identity: &str) -> Operator {
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

fn condition<'a>(
    p: &'a CelldPreview,
    type_: &str,
) -> &'a k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition {
    p.status
        .as_ref()
        .and_then(|s| s.conditions.iter().find(|c| c.type_ == type_))
        .unwrap_or_else(|| panic!("no {type_} condition: {:?}", p.status))
}

#[tokio::test]
async fn a_preview_serves_its_own_fleet_until_its_ttl_then_loses_it_and_its_prefix_only() {
    let (s, _op) = Setup::new("preview-ttl", true).await;
    let ns = s.env.namespace();
    s.fill("pr-1").await;
    s.fill("pr-12").await;
    let created = create(
        &s.env,
        &preview("pr-1", json!({"fleet": "web", "ttl": SHORT_TTL})),
    )
    .await
    .expect("the preview is admitted");

    let ready = wait_phase(&s.env, "pr-1", PreviewPhase::Ready, TIMEOUT).await;
    let status = ready.status.clone().expect("status");
    assert_eq!(
        status.url.as_deref(),
        Some("http://pr-1.preview.example.com/")
    );
    assert_eq!(status.version.as_deref(), Some(V1));
    assert_eq!(status.fleet.as_deref(), Some("pr-1"));
    let bucket = format!("s3://{}/{}", s.s3.bucket, s.preview_prefix("pr-1"));
    assert_eq!(status.bucket.as_deref(), Some(bucket.as_str()));
    let expires = status.expires_at.expect("expiresAt").0;
    let born = created
        .metadata
        .creation_timestamp
        .clone()
        .expect("created")
        .0;
    assert_eq!(expires.duration_since(born).as_secs(), 60);

    let fleet = s
        .env
        .api::<CelldFleet>()
        .get("pr-1")
        .await
        .expect("the preview's fleet");
    assert_eq!(fleet.spec.object_storage.bucket, bucket);
    assert_eq!(fleet.spec.replicas, 1);
    assert_eq!(
        fleet.spec.ingress.as_ref().map(|i| i.hostname.as_str()),
        Some("pr-1.preview.example.com")
    );
    assert_eq!(
        fleet
            .labels()
            .get("platform.celld.dev/preview-of")
            .map(String::as_str),
        Some("web")
    );
    let owner = fleet.owner_references().first().cloned().expect("an owner");
    assert_eq!(
        (owner.kind.as_str(), owner.uid.as_str(), owner.controller),
        (
            "CelldPreview",
            created.uid().unwrap_or_default().as_str(),
            Some(true)
        )
    );
    let ingress = s
        .env
        .api::<Ingress>()
        .get("pr-1")
        .await
        .expect("the preview's Ingress");
    let host = ingress
        .spec
        .and_then(|sp| sp.rules)
        .and_then(|r| r.first().and_then(|r| r.host.clone()));
    assert_eq!(host.as_deref(), Some("pr-1.preview.example.com"));
    assert!(has_event(&s.env, "pr-1", "Serving", Some("Normal")).await);

    let expired = wait_phase(&s.env, "pr-1", PreviewPhase::Expired, EXPIRY).await;
    let removed = condition(&expired, "DataRemoved");
    assert_eq!(
        (removed.status.as_str(), removed.reason.as_str()),
        ("True", "DataRemoved"),
        "{removed:?}"
    );
    assert!(
        removed.message.contains("deleted 3 object(s)"),
        "{}",
        removed.message
    );
    assert!(
        expired
            .status
            .as_ref()
            .and_then(|st| st.expired_at.as_ref())
            .is_some()
    );
    wait_gone(&s.env.api::<CelldFleet>(), "pr-1", "CelldFleet").await;
    assert_eq!(
        s.keys(&s.preview_prefix("pr-1")).await,
        Vec::<String>::new(),
        "the preview's prefix is emptied"
    );
    assert_eq!(
        s.keys(&s.preview_prefix("pr-12")).await.len(),
        3,
        "the neighbour prefix pr-12 survives"
    );
    assert!(
        !s.keys(&s.prefix).await.is_empty(),
        "the previewed fleet's prefix survives"
    );
    assert_eq!(events(&s.env, "pr-1", "Normal", "Expired").await.len(), 1);
    assert_eq!(
        s.env
            .api::<CelldFleet>()
            .get("web")
            .await
            .expect("web stays")
            .spec
            .replicas,
        2
    );
    let _ = (ns, &s.nodes);
}

#[tokio::test]
async fn admission_refuses_a_preview_its_fleet_does_not_allow_and_the_status_says_what_it_cannot_see()
 {
    let (s, _op) = Setup::new("preview-refused", false).await;
    // The API server loads a new policy within a second or so: wait until it refuses.
    let refused = wait_until("the previews policy refuses", TIMEOUT, || async {
        match create(&s.env, &preview("pr-1", json!({"fleet": "web"}))).await {
            Err(kube::Error::Api(e)) => Check::Done(e.message),
            Ok(admitted) => {
                let _ = previews_api(&s.env)
                    .delete(&admitted.name_any(), &DeleteParams::default())
                    .await;
                Check::Pending("admitted".into())
            }
            Err(e) => Check::Pending(e.to_string()),
        }
    })
    .await
    .expect("refused");
    assert!(
        refused
            .contains("spec.fleet: CelldFleet web does not allow previews: set its spec.previews"),
        "{refused}"
    );

    let allowing = json!({"previews": {
        "baseDomain": "preview.example.com",
        "bucket": format!("s3://{}/{}", s.s3.bucket, s.previews),
        "ingressClass": "nginx",
        "ttl": "1h",
        "maxTtl": "2h",
    }});
    apply_fleet(
        &s.env,
        &inline_fleet("web", &s.s3, &s.prefix, allowing).expect("a CelldFleet"),
    )
    .await;
    let too_long = wait_until("a TTL above the maximum refused", TIMEOUT, || async {
        match create(
            &s.env,
            &preview("pr-2", json!({"fleet": "web", "ttl": "3h"})),
        )
        .await
        {
            Err(kube::Error::Api(e)) if e.message.contains("spec.ttl") => Check::Done(e.message),
            other => Check::Pending(format!("{other:?}")),
        }
    })
    .await
    .expect("refused");
    assert!(
        too_long.contains(
            "spec.ttl: 3h is longer than the 2h CelldFleet web allows (spec.previews.maxTtl)"
        ),
        "{too_long}"
    );
    let taken = create(&s.env, &preview("web", json!({"fleet": "web"})))
        .await
        .expect_err("a preview named like a fleet is refused");
    assert!(
        taken
            .to_string()
            .contains("metadata.name: a CelldFleet named web already exists"),
        "{taken}"
    );

    // A fleet that does not exist yet is not refused (it may come next): the status says so.
    create(&s.env, &preview("pr-3", json!({"fleet": "api"})))
        .await
        .expect("admitted");
    let failed = wait_phase(&s.env, "pr-3", PreviewPhase::Failed, TIMEOUT).await;
    let ready = condition(&failed, "Ready");
    assert_eq!(ready.reason, "FleetNotFound");
    assert!(
        ready
            .message
            .contains("spec.fleet names CelldFleet api, which does not exist"),
        "{}",
        ready.message
    );
    assert_eq!(
        events(&s.env, "pr-3", "Warning", "FleetNotFound")
            .await
            .len(),
        1
    );
    assert!(
        s.env
            .api::<CelldFleet>()
            .get_opt("pr-3")
            .await
            .expect("read")
            .is_none()
    );
}

#[tokio::test]
async fn a_preview_deleted_before_its_ttl_takes_its_fleet_and_prefix_with_it() {
    let (s, _op) = Setup::new("preview-delete", true).await;
    s.fill("pr-4").await;
    s.fill("pr-41").await;
    create(&s.env, &preview("pr-4", json!({"fleet": "web"})))
        .await
        .expect("admitted");
    let ready = wait_phase(&s.env, "pr-4", PreviewPhase::Ready, TIMEOUT).await;
    assert!(
        ready
            .finalizers()
            .iter()
            .any(|f| f == "platform.celld.dev/preview-data")
    );
    // At rest nothing is written: three resyncs later the preview and its fleet are as they were.
    let fleets = s.env.api::<CelldFleet>();
    let before = fleets
        .get("pr-4")
        .await
        .expect("its fleet")
        .resource_version();
    tokio::time::sleep(Duration::from_secs(7)).await;
    let still = previews_api(&s.env).get("pr-4").await.expect("the preview");
    assert_eq!(
        still.resource_version(),
        ready.resource_version(),
        "the preview was rewritten at rest"
    );
    assert_eq!(
        fleets
            .get("pr-4")
            .await
            .expect("its fleet")
            .resource_version(),
        before,
        "its fleet was rewritten at rest"
    );
    previews_api(&s.env)
        .delete("pr-4", &DeleteParams::default())
        .await
        .expect("deleted");
    wait_gone(&previews_api(&s.env), "pr-4", "CelldPreview").await;
    wait_gone(&s.env.api::<CelldFleet>(), "pr-4", "CelldFleet").await;
    assert_eq!(
        s.keys(&s.preview_prefix("pr-4")).await,
        Vec::<String>::new()
    );
    assert_eq!(
        s.keys(&s.preview_prefix("pr-41")).await.len(),
        3,
        "the neighbour survives"
    );
}

#[tokio::test]
async fn an_operator_replaced_during_an_expiry_finishes_it_once() {
    let (s, op) = Setup::new("preview-restart", true).await;
    s.fill("pr-5").await;
    s.fill("pr-55").await;
    create(
        &s.env,
        &preview("pr-5", json!({"fleet": "web", "ttl": SHORT_TTL})),
    )
    .await
    .expect("admitted");
    wait_phase(&s.env, "pr-5", PreviewPhase::Ready, TIMEOUT).await;
    // Hold the preview's node in Terminating, so the expiry waits in its middle.
    let pods = s.env.api::<Pod>();
    let hold = json!({"metadata": {"finalizers": ["celld.test/hold"]}});
    pods.patch("pr-5-0", &PatchParams::default(), &Patch::Merge(&hold))
        .await
        .expect("the node's pod held");
    let expiring = wait_phase(&s.env, "pr-5", PreviewPhase::Expiring, EXPIRY).await;
    let waiting = condition(&expiring, "DataRemoved");
    assert!(
        waiting
            .message
            .contains("the nodes of CelldFleet pr-5 to stop"),
        "{}",
        waiting.message
    );
    op.stop().await;
    assert_eq!(
        s.keys(&s.preview_prefix("pr-5")).await.len(),
        3,
        "nothing deleted while a node runs"
    );

    let _op2 = start_operator(&s.env, &s.nodes, "op-2").await;
    let release = json!({"metadata": {"finalizers": null}});
    pods.patch("pr-5-0", &PatchParams::default(), &Patch::Merge(&release))
        .await
        .expect("the node's pod released");
    let expired = wait_phase(&s.env, "pr-5", PreviewPhase::Expired, EXPIRY).await;
    assert_eq!(condition(&expired, "DataRemoved").status, "True");
    wait_gone(&s.env.api::<CelldFleet>(), "pr-5", "CelldFleet").await;
    assert_eq!(
        s.keys(&s.preview_prefix("pr-5")).await,
        Vec::<String>::new()
    );
    assert_eq!(
        s.keys(&s.preview_prefix("pr-55")).await.len(),
        3,
        "the neighbour survives"
    );
    assert_eq!(
        events(&s.env, "pr-5", "Normal", "Expired").await.len(),
        1,
        "expired once"
    );
}
