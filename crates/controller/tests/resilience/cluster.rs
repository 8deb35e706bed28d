//! The control plane a test runs on (the shared one of `make cluster-up`, or a private one), its
//! namespaces and the operator processes the test starts on it.

use celld_fixtures::{Launch, OperatorProcess, operator_bin};
use celld_testkit::faults::PrivateControlPlane;
use celld_testkit::{S3Settings, TestNamespace};
use kube::Client;
use std::path::{Path, PathBuf};

/// Where the suite keeps operator logs and failing cases (kept after the run, for reading).
pub fn work_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("resilience");
    std::fs::create_dir_all(&dir).expect("the suite's work directory");
    dir
}

/// How quickly an operator process looks at fleets again.
#[derive(Debug, Clone, Copy)]
pub struct Tuning {
    /// `--resync-seconds`: a healthy fleet.
    pub resync: u64,
    /// `--pending-resync-seconds`: a fleet without a readable deployment.
    pub pending_resync: u64,
}

/// A control plane, with an admin client and its S3 server.
pub struct Cluster {
    pub client: Client,
    pub kubeconfig: PathBuf,
    pub s3: S3Settings,
    pub gateway_api: bool,
}

impl Cluster {
    /// The shared local control plane; fails saying to run `make cluster-up` when it is not up.
    pub async fn shared() -> Self {
        let client = celld_testkit::client()
            .await
            .expect("the local control plane is up (make cluster-up)");
        let s3 = S3Settings::load().expect("the local control plane's S3 server (make cluster-up)");
        Self::ready(client, celld_testkit::paths::kubeconfig(), s3).await
    }

    /// A private control plane started by the test.
    pub async fn private(plane: &PrivateControlPlane) -> Self {
        let client = plane
            .client()
            .await
            .expect("a client of the private control plane");
        let s3 = plane.s3().expect("the private control plane's S3 server");
        Self::ready(client, plane.kubeconfig(), s3).await
    }

    async fn ready(client: Client, kubeconfig: PathBuf, s3: S3Settings) -> Self {
        celld_testkit::install_crds(&client)
            .await
            .expect("the project's CRDs installed");
        let gateway_api = celld_operator::cache::discovery::http_route_served(&client).await;
        Cluster {
            client,
            kubeconfig,
            s3,
            gateway_api,
        }
    }

    /// A fresh namespace `<prefix>-xxxxxx`, deleted when dropped.
    pub async fn namespace(&self, prefix: &str) -> TestNamespace {
        TestNamespace::create(&self.client, prefix)
            .await
            .expect("a test namespace")
    }

    /// Starts an operator process of [`operator_bin`] watching `namespace` only (every
    /// namespace when `None`), logging to the work directory.
    pub async fn operator(&self, namespace: Option<&str>, tuning: Tuning) -> OperatorProcess {
        let log = work_dir().join(format!(
            "{}.log",
            celld_testkit::unique_name(&format!("operator-{}", namespace.unwrap_or("all")))
        ));
        let resync = tuning.resync.to_string();
        let pending = tuning.pending_resync.to_string();
        let mut args = vec![
            "--leader-elect=false",
            "--resync-seconds",
            &resync,
            "--pending-resync-seconds",
            &pending,
            "--s3-timeout-seconds",
            "2",
        ];
        if let Some(namespace) = namespace {
            args.extend(["--namespace", namespace]);
        }
        let bin = operator_bin().await.expect("the operator binary");
        OperatorProcess::start(Launch::new(bin, &self.kubeconfig, log).args(args))
            .await
            .expect("the operator process started")
    }
}
