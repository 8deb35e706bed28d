//! Starting an operator under the generated RBAC, and the fixtures tests share.

use celld_api::CelldFleet;
use celld_fixtures::NodeDouble;
pub use celld_fixtures::{create_credentials, fleet, inline_fleet};
use celld_operator::cache::watch_scope::WatchScope;
use celld_operator::leadership::lease_fence::Leader;
use celld_operator::metrics::Metrics;
use celld_operator::runtime::run::run;
use celld_operator::shared::settings::Settings;
use celld_testkit::{Check, S3Settings, TestEnv, wait_until};
use kube::api::{Patch, PatchParams};
use kube::{Client, ResourceExt};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Once};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tracing_subscriber::EnvFilter;

pub const TIMEOUT: Duration = Duration::from_secs(60);

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CELLD_WORKSPACE_ROOT")).join(path)
}

/// The non-empty YAML documents of the repository file `path`.
pub fn yaml_docs(path: &str) -> Vec<serde_json::Value> {
    let text =
        std::fs::read_to_string(repo(path)).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    serde_yaml::Deserializer::from_str(&text)
        .map(|d| serde::Deserialize::deserialize(d).expect("YAML document"))
        .filter(|v: &serde_json::Value| !v.is_null())
        .collect()
}

/// A running operator: its metrics and how to stop it.
pub struct Operator {
    pub metrics: Arc<Metrics>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<(), celld_operator::runtime::run::RunError>>,
}

impl Operator {
    /// Stops the operator gracefully and waits for it.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = tokio::time::timeout(Duration::from_secs(20), &mut self.task).await;
    }

    /// Asks the operator to stop and tells whether it stopped within `within`.
    pub async fn stops_within(mut self, within: Duration) -> bool {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        tokio::time::timeout(within, &mut self.task).await.is_ok()
    }

    /// Kills the operator without a graceful shutdown (its Lease is left to expire).
    pub fn kill(self) {
        self.task.abort();
    }

    /// Whether this operator holds the leader Lease.
    pub fn leads(&self) -> bool {
        self.metrics.leading()
    }
}

pub use crate::operator_rbac::{Grants, operator_client, operator_client_with};

/// Settings that make the operator quick in tests.
pub fn settings(env: &TestEnv, identity: &str) -> Settings {
    Settings {
        namespaces: WatchScope::one(env.namespace()),
        resync: Duration::from_secs(2),
        pending_resync: Duration::from_secs(1),
        s3_timeout: Duration::from_secs(3),
        reporter: "celld-operator".into(),
        instance: Some(identity.to_string()),
        ..Settings::default()
    }
}

/// Applies the fleet `name` with `spec`, inline S3 storage with its credentials Secret, and a
/// bucket prefix whose pointer names `version`.
pub async fn deployed_fleet(env: &TestEnv, name: &str, version: &str, spec: serde_json::Value) {
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, env.namespace());
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(&s3, &prefix, version).await;
    apply_fleet(
        env,
        &inline_fleet(name, &s3, &prefix, spec).expect("a CelldFleet"),
    )
    .await;
}

/// A namespace, the node double playing `release` nodes that serve `version`, and an operator
/// reading them every second (with spec.autoscaling or without), its settings changed further
/// by `tweak`.
pub async fn env_reading_nodes(
    test: &str,
    release: &str,
    version: &str,
    tweak: impl FnOnce(&mut Settings),
) -> (TestEnv, NodeDouble, Operator) {
    let env = env_with_crds(test).await;
    let nodes = NodeDouble::start(release, version)
        .await
        .expect("the node double");
    let mut settings = settings(&env, "op-1");
    settings.node_api_connect_to = Some(nodes.address.clone());
    settings.autoscale_interval = Duration::from_secs(1);
    settings.capacity_interval = Duration::from_secs(1);
    tweak(&mut settings);
    let op = start(operator_client(&env).await, settings);
    (env, nodes, op)
}

/// The operators' logs go to the output of the test that started them, which the test harness
/// shows when that test fails: `celld_operator` at debug, everything else at warn, or as
/// `RUST_LOG` says.
fn capture_logs() {
    static LOGS: Once = Once::new();
    LOGS.call_once(|| {
        let filter = EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| EnvFilter::new("warn,celld_operator=debug"));
        // Another subscriber set first (none is, in this binary) would keep its own.
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_test_writer()
            .with_ansi(false)
            .try_init();
    });
}

/// Starts an operator with leader election in the test namespace (the first it watches).
pub fn start(client: Client, settings: Settings) -> Operator {
    let lease = settings
        .namespaces
        .namespaces()
        .and_then(|names| names.into_iter().next())
        .expect("tests watch their namespaces");
    start_leading_in(client, settings, &lease)
}

/// Starts an operator with its leader-election Lease in namespace `lease`.
pub fn start_leading_in(client: Client, settings: Settings, lease: &str) -> Operator {
    capture_logs();
    let metrics = Arc::new(Metrics::default());
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let leader = Leader {
        namespace: lease.to_string(),
        lease: "celld-operator".into(),
        identity: settings.instance.clone().expect("tests name each operator"),
        duration_seconds: 3,
    };
    let task = tokio::spawn(run(
        client,
        settings,
        Some(leader),
        metrics.clone(),
        Arc::new(AtomicBool::new(false)),
        async move {
            let _ = stop_rx.await;
        },
    ));
    Operator {
        metrics,
        stop: Some(stop_tx),
        task,
    }
}

/// A test namespace with the CRDs installed.
pub async fn env_with_crds(test: &str) -> TestEnv {
    let env = TestEnv::new(test)
        .await
        .expect("the local control plane is up (make cluster-up)");
    celld_testkit::install_crds(&env.client())
        .await
        .expect("CRDs installed");
    crate::operator_rbac::install_guard(&env.client()).await;
    env
}

/// A test namespace with the CRDs installed and one operator running in it.
pub async fn env_with_operator(test: &str) -> (TestEnv, Operator) {
    let env = env_with_crds(test).await;
    let client = operator_client(&env).await;
    let op = start(client, settings(&env, "op-1"));
    (env, op)
}

/// A test namespace with the CRDs installed, a stand-in for the nodes' API playing celld
/// `release` nodes that serve `first`, and one operator reaching the nodes through it.
pub async fn env_with_nodes(
    test: &str,
    release: &str,
    first: &str,
) -> (TestEnv, celld_fixtures::NodeDouble, Operator) {
    let env = env_with_crds(test).await;
    let nodes = celld_fixtures::NodeDouble::start(release, first)
        .await
        .expect("the node double");
    let mut settings = settings(&env, "op-1");
    settings.node_api_connect_to = Some(nodes.address.clone());
    let op = start(operator_client(&env).await, settings);
    (env, nodes, op)
}

/// Publishes a deployment pointer for `version` under `prefix` of the test bucket, as
/// `celld deploy` does last.
pub async fn publish_pointer(s3: &S3Settings, prefix: &str, version: &str) {
    celld_fixtures::publish_pointer(s3, prefix, version)
        .await
        .expect("pointer written to the test S3 server");
}

/// Applies a fleet as a user would (server-side apply, the tests' own field manager).
pub async fn apply_fleet(env: &TestEnv, fleet: &CelldFleet) {
    env.api::<CelldFleet>()
        .patch(
            &fleet.name_any(),
            &PatchParams::apply("kubectl-test").force(),
            &Patch::Apply(fleet),
        )
        .await
        .expect("fleet applied");
}

/// Waits until the fleet's condition `type_` has `status` (and `reason`, if given).
pub async fn wait_condition(
    env: &TestEnv,
    name: &str,
    type_: &str,
    status: &str,
    reason: Option<&str>,
) -> CelldFleet {
    wait_condition_in(&env.api::<CelldFleet>(), name, type_, status, reason).await
}

/// [`wait_condition`] for the fleets of `api` (any namespace).
pub async fn wait_condition_in(
    api: &kube::Api<CelldFleet>,
    name: &str,
    type_: &str,
    status: &str,
    reason: Option<&str>,
) -> CelldFleet {
    wait_until(
        format!("fleet {name}: {type_}={status} {reason:?}"),
        TIMEOUT,
        || async {
            match api.get_opt(name).await {
                Ok(Some(f)) => {
                    let hit = f
                        .status
                        .as_ref()
                        .and_then(|s| celld_api::conditions::find(&s.conditions, type_))
                        .is_some_and(|c| {
                            c.status == status && reason.is_none_or(|r| c.reason == r)
                        });
                    if hit {
                        Check::Done(f)
                    } else {
                        Check::Pending(format!("{:?}", f.status))
                    }
                }
                other => Check::Pending(format!("{other:?}")),
            }
        },
    )
    .await
    .expect("condition reached")
}

/// A key prefix in the test bucket that no other test uses (no trailing slash).
pub fn prefix(s3: &S3Settings, test: &str) -> String {
    s3.unique_prefix(test).trim_end_matches('/').to_string()
}

/// Whether an Event with `reason` (and `type_`, if given) was recorded on the object `name`.
pub async fn has_event(env: &TestEnv, name: &str, reason: &str, type_: Option<&str>) -> bool {
    let events = env
        .api::<k8s_openapi::api::core::v1::Event>()
        .list(&kube::api::ListParams::default())
        .await
        .expect("events listed");
    events.items.iter().any(|e| {
        e.involved_object.name.as_deref() == Some(name)
            && e.reason.as_deref() == Some(reason)
            && type_.is_none_or(|t| e.type_.as_deref() == Some(t))
    })
}

/// The Events of `type_` with `reason` recorded on the object `name`, once there is one: the
/// operator writes a status before the Events it is worth.
pub async fn wait_events(
    env: &TestEnv,
    name: &str,
    type_: &str,
    reason: &str,
) -> Vec<k8s_openapi::api::core::v1::Event> {
    let what = format!("a {type_} {reason} Event on {name}");
    celld_testkit::wait_until(&what, TIMEOUT, || async {
        match events(env, name, type_, reason).await {
            found if found.is_empty() => celld_testkit::Check::Pending("none yet".to_string()),
            found => celld_testkit::Check::Done(found),
        }
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"))
}

/// The Events of `type_` with `reason` recorded on the object `name`.
pub async fn events(
    env: &TestEnv,
    name: &str,
    type_: &str,
    reason: &str,
) -> Vec<k8s_openapi::api::core::v1::Event> {
    env.api::<k8s_openapi::api::core::v1::Event>()
        .list(&kube::api::ListParams::default())
        .await
        .expect("events listed")
        .items
        .into_iter()
        .filter(|e| {
            e.involved_object.name.as_deref() == Some(name)
                && e.reason.as_deref() == Some(reason)
                && e.type_.as_deref() == Some(type_)
        })
        .collect()
}

/// The message of condition `type_` of `fleet` (a fleet read back with its status).
pub fn message(fleet: &CelldFleet, type_: &str) -> String {
    fleet
        .status
        .as_ref()
        .and_then(|s| celld_api::conditions::find(&s.conditions, type_))
        .map(|c| c.message.clone())
        .unwrap_or_else(|| panic!("fleet {} has a {type_} condition", fleet.name_any()))
}

/// The condition `type_` of the fleet `name` as it is now.
pub async fn condition(
    env: &TestEnv,
    name: &str,
    type_: &str,
) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition {
    let fleet = env.api::<CelldFleet>().get(name).await.expect("fleet read");
    celld_api::conditions::find(&fleet.status.expect("status").conditions, type_)
        .cloned()
        .unwrap_or_else(|| panic!("fleet {name} has a {type_} condition"))
}

/// The value of the variable `name` in the celld container of StatefulSet `sts`'s template.
pub fn sts_env(sts: &k8s_openapi::api::apps::v1::StatefulSet, name: &str) -> Option<String> {
    sts.spec.as_ref()?.template.spec.as_ref()?.containers[0]
        .env
        .as_ref()?
        .iter()
        .find(|e| e.name == name)
        .and_then(|e| e.value.clone())
}

/// [`sts_env`] of the StatefulSet `sts` of the test namespace, as the API server has it.
pub async fn node_env(env: &TestEnv, sts: &str, name: &str) -> Option<String> {
    let sts = env
        .api::<k8s_openapi::api::apps::v1::StatefulSet>()
        .get(sts)
        .await
        .expect("StatefulSet");
    sts_env(&sts, name)
}
