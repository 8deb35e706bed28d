//! A control plane of the suite's own, one test at a time, operator processes on it, and the
//! fleets the tests create.

use celld_api::CelldFleet;
use celld_fixtures::{
    CREDENTIALS, Launch, OperatorProcess, create_credentials, inline_fleet, operator_bin,
};
use celld_testkit::faults::PrivateControlPlane;
use celld_testkit::{Check, S3Settings, TestNamespace, wait_until};
use k8s_openapi::api::apps::v1::StatefulSet;
use kube::api::{Patch, PatchParams};
use kube::{Api, Client, ResourceExt};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::{Duration, Instant};
use tokio::sync::{Mutex, MutexGuard};

/// How long a fleet change may take to be applied once the control plane answers again.
pub const APPLIED_WITHIN: Duration = Duration::from_secs(30);

/// The tests kill components of one control plane: one test at a time.
static ONE_AT_A_TIME: LazyLock<Mutex<()>> = LazyLock::new(|| Mutex::new(()));

/// Where the suite keeps its control plane and operator logs.
pub fn work_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("faults");
    std::fs::create_dir_all(&dir).expect("the suite's work directory");
    dir
}

/// A test's control plane (started for it, stopped after it), with a namespace holding the
/// credentials of its S3 server and a published deployment.
pub struct Plane {
    pub admin: Client,
    pub s3: S3Settings,
    pub ns: String,
    pub prefix: String,
    namespace: Option<TestNamespace>,
    control_plane: Option<PrivateControlPlane>,
    _one_at_a_time: MutexGuard<'static, ()>,
}

impl Plane {
    /// Starts the suite's control plane (waiting for any other test to finish with it first).
    pub async fn start(test: &str) -> Self {
        let one_at_a_time = ONE_AT_A_TIME.lock().await;
        let control_plane = PrivateControlPlane::start(work_dir().join("testenv"))
            .await
            .expect("a control plane of the suite's own (make testenv builds its binaries)");
        let admin = control_plane.client().await.expect("admin client");
        celld_testkit::install_crds(&admin)
            .await
            .expect("CRDs installed");
        let s3 = control_plane.s3().expect("its S3 server's settings");
        let namespace = TestNamespace::create(&admin, test)
            .await
            .expect("test namespace");
        let ns = namespace.name().to_string();
        let prefix = s3.unique_prefix(test).trim_end_matches('/').to_string();
        let plane = Plane {
            admin,
            s3,
            ns,
            prefix,
            namespace: Some(namespace),
            control_plane: Some(control_plane),
            _one_at_a_time: one_at_a_time,
        };
        create_credentials(&plane.api(), CREDENTIALS, &plane.s3)
            .await
            .expect("credentials Secret created");
        plane
    }

    /// The control plane's state directory.
    pub fn dir(&self) -> &Path {
        self.control_plane
            .as_ref()
            .map(PrivateControlPlane::dir)
            .expect("running")
    }

    /// Its admin kubeconfig.
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir().join("kubeconfig")
    }

    /// The API of `K` in the test namespace.
    pub fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        Api::namespaced(self.admin.clone(), &self.ns)
    }

    /// A fleet `name` with `replicas` nodes and `env`, on a prefix of its own under the test's
    /// S3 prefix (two fleets may not share one), whose pointer is published.
    pub async fn fleet(&self, name: &str, replicas: i32, env: &[(&str, &str)]) -> CelldFleet {
        let prefix = format!("{}/{name}", self.prefix);
        celld_fixtures::publish_pointer(&self.s3, &prefix, "0000000000000101")
            .await
            .expect("pointer written to the S3 server");
        let env: Vec<_> = env
            .iter()
            .map(|(n, v)| json!({"name": n, "value": v}))
            .collect();
        inline_fleet(
            name,
            &self.s3,
            &prefix,
            json!({"replicas": replicas, "env": env}),
        )
        .expect("a valid CelldFleet")
    }

    /// Applies `fleet` as a user would, retrying while the API server does not answer.
    pub async fn apply(&self, fleet: &CelldFleet) {
        let api = self.api::<CelldFleet>();
        let name = fleet.name_any();
        wait_until(format!("fleet {name} applied"), APPLIED_WITHIN, || async {
            let pp = PatchParams::apply("faults-test").force();
            match api.patch(&name, &pp, &Patch::Apply(fleet)).await {
                Ok(_) => Check::Done(()),
                Err(e) => Check::Pending(e.to_string()),
            }
        })
        .await
        .expect("the API server takes the fleet");
    }

    /// Waits until the API server answers reads again.
    pub async fn wait_answering(&self) {
        let api = self.api::<CelldFleet>();
        wait_until(
            "the API server to answer",
            Duration::from_secs(60),
            || async {
                match api.list(&Default::default()).await {
                    Ok(_) => Check::Done(()),
                    Err(e) => Check::Pending(e.to_string()),
                }
            },
        )
        .await
        .expect("the API server answers");
    }

    /// Waits until the StatefulSet `name` satisfies `test`; returns when it first did.
    pub async fn wait_statefulset(
        &self,
        name: &str,
        what: &str,
        timeout: Duration,
        test: impl Fn(&StatefulSet) -> bool,
    ) -> Instant {
        let api = self.api::<StatefulSet>();
        let test = &test;
        wait_until(format!("StatefulSet {name}: {what}"), timeout, || {
            let api = api.clone();
            async move {
                match api.get_opt(name).await {
                    Ok(Some(sts)) if test(&sts) => Check::Done(()),
                    Ok(Some(sts)) => Check::Pending(format!("{:?}", sts.spec)),
                    Ok(None) => Check::Pending("absent".into()),
                    Err(e) => Check::Pending(e.to_string()),
                }
            }
        })
        .await
        .expect("the operator applies the change");
        Instant::now()
    }

    /// Waits until every fleet in `names` is Ready and its status is of its generation.
    pub async fn wait_ready(&self, names: &[String], timeout: Duration) {
        let api = self.api::<CelldFleet>();
        wait_until("every fleet Ready", timeout, || async {
            let mut pending = Vec::new();
            for name in names {
                let fleet = api.get_opt(name).await.ok().flatten();
                let ready = fleet.as_ref().is_some_and(|f| {
                    f.status.as_ref().is_some_and(|s| {
                        s.observed_generation == f.metadata.generation
                            && s.conditions
                                .iter()
                                .any(|c| c.type_ == "Ready" && c.status == "True")
                    })
                });
                if !ready {
                    pending.push(name.clone());
                }
            }
            if pending.is_empty() {
                Check::Done(())
            } else {
                Check::Pending(format!("not Ready yet: {pending:?}"))
            }
        })
        .await
        .expect("the fleets converge");
    }

    /// Starts an operator process of [`operator_bin`] (`CELLD_OPERATOR_BIN` runs another one,
    /// to check that a test fails on an older build) with `args`, logging to
    /// `<work dir>/<ns>-<log>.log`.
    pub async fn operator(&self, log: &str, args: &[&str]) -> OperatorProcess {
        let log = work_dir().join(format!("{}-{log}.log", self.ns));
        let _ = std::fs::remove_file(&log);
        let bin = operator_bin().await.expect("the operator binary");
        OperatorProcess::start(Launch::new(bin, self.kubeconfig(), log).args(args.iter().copied()))
            .await
            .expect("the operator starts")
    }

    /// Deletes the namespace and stops the control plane.
    pub async fn stop(mut self) {
        if let Some(namespace) = self.namespace.take() {
            let _ = namespace.cleanup().await;
        }
        if let Some(control_plane) = self.control_plane.take() {
            control_plane.stop().await.expect("the control plane stops");
        }
    }
}

/// Sends `signal` (STOP, CONT...) to process `pid`.
pub fn signal(pid: u32, signal: &str) {
    let status = std::process::Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{signal} {pid}");
}
