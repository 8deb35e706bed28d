//! The measurements: one operator process per fleet count, on its own namespace.

use celld_api::CelldFleet;
use celld_testkit::{Check, S3Settings, TestEnv, wait_until};
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{ListParams, PostParams};
use serde_json::json;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

/// Why a measurement could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The operator binary was not given.
    #[error("set CELLD_OPERATOR_BIN to the celld-operator binary (make bench does)")]
    NoOperator,
    /// The local control plane is missing or failed.
    #[error(transparent)]
    Testkit(#[from] celld_testkit::Error),
    /// An API call failed.
    #[error("{0}: {1}")]
    Kube(String, Box<kube::Error>),
    /// The operator process failed.
    #[error("the operator process: {0}")]
    Process(std::io::Error),
    /// The operator's metrics could not be read.
    #[error("reading the operator's metrics: {0}")]
    Metrics(String),
}

/// What one fleet count measured.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Fleets created.
    pub fleets: usize,
    /// Operator resident memory before the fleets were created, KiB.
    pub baseline_kib: u64,
    /// From the first create to the last fleet Ready.
    pub to_ready: Duration,
    /// Operator resident memory once all were Ready, KiB.
    pub rss_kib: u64,
    /// Operator peak resident memory, KiB.
    pub peak_kib: u64,
    /// API writes the operator sent until all were Ready (children, status, events).
    pub writes_to_converge: u64,
    /// API writes during the idle window.
    pub idle_writes: u64,
    /// Reconciles during the idle window.
    pub idle_reconciles: u64,
}

/// Everything the report shows.
#[derive(Debug, Clone)]
pub struct Results {
    /// One sample per fleet count.
    pub samples: Vec<Sample>,
    /// Mean time to build every child of one fleet (pure builders), microseconds.
    pub build_micros: f64,
    /// The idle window.
    pub idle_window: Duration,
}

const RESYNC_SECONDS: u64 = 5;

fn kube_err(what: &str) -> impl FnOnce(kube::Error) -> Error + '_ {
    move |e| Error::Kube(what.to_string(), Box::new(e))
}

fn rss(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

async fn metrics(port: u16) -> Result<String, Error> {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|e| Error::Metrics(e.to_string()))?;
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .map_err(|e| Error::Metrics(e.to_string()))?;
    let mut body = String::new();
    stream
        .read_to_string(&mut body)
        .await
        .map_err(|e| Error::Metrics(e.to_string()))?;
    Ok(body)
}

fn sum(metrics: &str, name: &str) -> u64 {
    metrics
        .lines()
        .filter(|l| l.starts_with(name))
        .filter_map(|l| l.rsplit(' ').next())
        .filter_map(|v| v.parse::<f64>().ok())
        .sum::<f64>() as u64
}

fn free_port() -> Result<u16, Error> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(Error::Process)?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(Error::Process)
}

struct Operator {
    child: Child,
    port: u16,
}

impl Operator {
    async fn start(bin: &PathBuf, namespace: &str) -> Result<Self, Error> {
        let port = free_port()?;
        let child = Command::new(bin)
            .args([
                "--leader-elect=false",
                "--namespace",
                namespace,
                "--resync-seconds",
                &RESYNC_SECONDS.to_string(),
            ])
            .args(["--metrics-addr", &format!("127.0.0.1:{port}")])
            .env("KUBECONFIG", celld_testkit::paths::kubeconfig())
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(Error::Process)?;
        wait_until(
            "the operator's metrics endpoint",
            Duration::from_secs(20),
            || async move {
                match metrics(port).await {
                    Ok(m) if m.contains("celld_operator_leader 1") => Check::Done(()),
                    other => Check::Pending(format!("{other:?}")),
                }
            },
        )
        .await?;
        Ok(Self { child, port })
    }

    fn pid(&self) -> u32 {
        self.child.id().unwrap_or(0)
    }
}

async fn sample(
    bin: &PathBuf,
    count: usize,
    s3: &S3Settings,
    idle: Duration,
) -> Result<Sample, Error> {
    let env = TestEnv::new(&format!("bench-{count}")).await?;
    let ns = env.namespace().to_string();
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "creds"},
        "stringData": {"AWS_ACCESS_KEY_ID": s3.access_key_id, "AWS_SECRET_ACCESS_KEY": s3.secret_access_key},
    }))
    .map_err(|e| Error::Metrics(e.to_string()))?;
    env.api::<Secret>()
        .create(&PostParams::default(), &secret)
        .await
        .map_err(kube_err("creating the Secret"))?;
    let prefix = s3.unique_prefix("bench").trim_end_matches('/').to_string();
    for i in 0..count {
        let body = json!({"version": format!("{i:016x}"), "prefix": "deploy/w/x", "rollout": {"percent": 100}});
        s3.client()
            .put_object()
            .bucket(&s3.bucket)
            .key(format!("{prefix}/f{i}/deploy/current.json"))
            .body(body.to_string().into_bytes().into())
            .send()
            .await
            .map_err(|e| Error::Metrics(format!("publishing a pointer: {e}")))?;
    }
    let mut operator = Operator::start(bin, &ns).await?;
    let (baseline, _) = rss(operator.pid());
    let fleets: Api<CelldFleet> = env.api();
    let started = Instant::now();
    for i in 0..count {
        let fleet: CelldFleet = serde_json::from_value(json!({
            "apiVersion": "platform.celld.dev/v1alpha1", "kind": "CelldFleet",
            "metadata": {"name": format!("f{i}")},
            "spec": {
                "replicas": 2,
                "objectStorage": {"bucket": format!("s3://{}/{prefix}/f{i}", s3.bucket), "endpoint": s3.endpoint, "allowHTTP": true, "credentialsSecretRef": {"name": "creds"}},
                "ingress": {"hostname": format!("f{i}.example.com"), "ingressClass": "nginx"},
            },
        }))
        .map_err(|e| Error::Metrics(e.to_string()))?;
        fleets
            .create(&PostParams::default(), &fleet)
            .await
            .map_err(kube_err("creating a fleet"))?;
    }
    let fleets_ref = &fleets;
    wait_until(
        format!("{count} fleets Ready"),
        Duration::from_secs(60 + 3 * count as u64),
        || async move {
            match fleets_ref.list(&ListParams::default()).await {
                Ok(list) => {
                    let ready = list
                        .items
                        .iter()
                        .filter(|f| {
                            f.status
                                .as_ref()
                                .and_then(|s| celld_api::conditions::find(&s.conditions, "Ready"))
                                .is_some_and(|c| c.status == "True")
                        })
                        .count();
                    if ready == count {
                        Check::Done(())
                    } else {
                        Check::Pending(format!("{ready}/{count} Ready"))
                    }
                }
                Err(e) => Check::Pending(e.to_string()),
            }
        },
    )
    .await?;
    let to_ready = started.elapsed();
    // Let the last status writes land before counting.
    tokio::time::sleep(Duration::from_secs(RESYNC_SECONDS)).await;
    let m = metrics(operator.port).await?;
    let writes_to_converge = sum(&m, "celld_operator_api_writes_total");
    let reconciles_before = sum(&m, "celld_operator_reconciles_total");
    let (rss_kib, _) = rss(operator.pid());
    tokio::time::sleep(idle).await;
    let m = metrics(operator.port).await?;
    let idle_writes = sum(&m, "celld_operator_api_writes_total") - writes_to_converge;
    let idle_reconciles = sum(&m, "celld_operator_reconciles_total") - reconciles_before;
    let (_, peak_kib) = rss(operator.pid());
    let _ = operator.child.kill().await;
    env.cleanup().await?;
    Ok(Sample {
        fleets: count,
        baseline_kib: baseline,
        to_ready,
        rss_kib,
        peak_kib,
        writes_to_converge,
        idle_writes,
        idle_reconciles,
    })
}

/// Mean time to build all children of one fleet with the pure builders, microseconds.
fn builders() -> f64 {
    use celld_operator::children::{self, Desired};
    let fleet: CelldFleet = match serde_json::from_value(json!({
        "apiVersion": "platform.celld.dev/v1alpha1", "kind": "CelldFleet",
        "metadata": {"name": "web", "namespace": "apps", "uid": "u"},
        "spec": {"replicas": 3, "objectStorage": {"bucket": "s3://b/p", "credentialsSecretRef": {"name": "c"}},
                 "ingress": {"hostname": "a.example.com", "ingressClass": "nginx", "path": "/api", "stripPrefix": true}},
    })) {
        Ok(f) => f,
        Err(_) => return f64::NAN,
    };
    let Ok(storage) = celld_api::resolve::resolve(&fleet.spec, "apps", None) else {
        return f64::NAN;
    };
    let d = Desired {
        fleet: &fleet,
        name: "web".into(),
        namespace: "apps".into(),
        storage,
        config_hash: "h".into(),
        replicas: 3,
        https: false,
    };
    const N: u32 = 20_000;
    let started = Instant::now();
    for _ in 0..N {
        std::hint::black_box((
            children::statefulset::build(&d),
            children::service::build(&d),
            children::peer_service::build(&d),
            children::network_policy::build(&d),
            children::pdb::build(&d),
            children::ingress::build(&d),
            children::httproute::build(&d),
        ));
    }
    started.elapsed().as_secs_f64() * 1e6 / f64::from(N)
}

/// Runs every measurement.
pub async fn run(counts: &[usize]) -> Result<Results, Error> {
    let bin = std::env::var_os("CELLD_OPERATOR_BIN")
        .map(PathBuf::from)
        .ok_or(Error::NoOperator)?;
    let client = celld_testkit::client().await?;
    celld_testkit::install_crds(&client).await?;
    let s3 = S3Settings::load()?;
    let idle = Duration::from_secs(3 * RESYNC_SECONDS);
    let mut samples = Vec::new();
    for &count in counts {
        eprintln!("bench: {count} fleets");
        samples.push(sample(&bin, count, &s3, idle).await?);
    }
    Ok(Results {
        samples,
        build_micros: builders(),
        idle_window: idle,
    })
}
