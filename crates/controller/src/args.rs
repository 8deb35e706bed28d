//! Command-line flags, each with an environment fallback.

use crate::buckets::object_store::StoreEndpoints;
use crate::cache::health::WatchSettings;
use crate::cache::watch_scope::WatchScope;
use crate::children::OperatorPods;
use crate::leadership::lease_fence::Leader;
use crate::shared::own_identity::OwnIdentity;
use crate::shared::settings::PublicServiceFirst;
use crate::shared::settings::Settings;
use celld_api::contract::deployer::DeployerDigests;
use clap::{Parser, ValueEnum};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

/// Log output format.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// celld-operator: reconciles CelldFleets into celld StatefulSets, Services and routes.
#[derive(Debug, Parser)]
#[command(version, about, long_about = None)]
pub struct Args {
    /// Watch only these namespaces, separated by commas (default: every namespace): each is
    /// watched on its own, so the operator needs permissions in these namespaces only (the
    /// namespace-scoped install's Roles).
    #[arg(long, alias = "namespace", env = "WATCH_NAMESPACES", default_value = "", value_parser = WatchScope::parse)]
    pub namespaces: WatchScope,

    /// Address of the /healthz and /readyz endpoints (plain HTTP, no authentication: for the
    /// kubelet), and of /metrics unless --metrics-secure.
    #[arg(long, env = "METRICS_ADDR", default_value = "0.0.0.0:8080")]
    pub metrics_addr: SocketAddr,

    /// Serve /metrics over HTTPS (a certificate self-signed at start) on --secure-metrics-addr,
    /// only to requests whose bearer token the API server authenticates (TokenReview) and allows
    /// `get` of /metrics (SubjectAccessReview: the ClusterRole celld-operator-metrics-reader);
    /// others get 401 or 403. The install manifests set it.
    #[arg(long, env = "METRICS_SECURE", default_value_t = false, action = clap::ArgAction::Set)]
    pub metrics_secure: bool,

    /// Address of /metrics over HTTPS, with --metrics-secure.
    #[arg(long, env = "SECURE_METRICS_ADDR", default_value = "0.0.0.0:8443")]
    pub secure_metrics_addr: SocketAddr,

    /// Log format.
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,

    /// Log filter, in RUST_LOG syntax.
    #[arg(long, env = "RUST_LOG", default_value = "info")]
    pub log_level: String,

    /// Elect a leader through a Lease so that only one replica writes.
    #[arg(long, env = "LEADER_ELECT", default_value_t = true, action = clap::ArgAction::Set)]
    pub leader_elect: bool,

    /// Name of the leader Lease.
    #[arg(long, env = "LEASE_NAME", default_value = "celld-operator")]
    pub lease_name: String,

    /// The operator's namespace: where the leader Lease is, and where the fleets'
    /// NetworkPolicies admit the operator's pods to the nodes' internal port from.
    #[arg(long, env = "POD_NAMESPACE", default_value = "celld-system")]
    pub lease_namespace: String,

    /// Labels of the operator's pods (`key=value,...`): the fleets' NetworkPolicies admit pods
    /// with these labels in the operator's namespace to the nodes' internal port.
    #[arg(long, env = "OPERATOR_POD_LABELS", default_value = "app.kubernetes.io/name=celld-operator", value_parser = pod_labels)]
    pub operator_pod_labels: BTreeMap<String, String>,

    /// Connect to this HOST:PORT for every node's internal API (`GET /state` during rolling
    /// upgrades) instead of the node's own name; the request still names the node. For an
    /// operator running outside the cluster behind a forwarding proxy.
    #[arg(long, env = "NODE_API_CONNECT_TO")]
    pub node_api_connect_to: Option<String>,

    /// This replica's identity in the Lease (its pod name).
    #[arg(long, env = "POD_NAME")]
    pub identity: Option<String>,

    /// Seconds the Lease stays valid after its last renewal.
    #[arg(long, env = "LEASE_DURATION_SECONDS", default_value_t = 15)]
    pub lease_duration_seconds: u64,

    /// Seconds between reconciles of a healthy fleet (refreshes the deployed Worker version),
    /// rounded up onto a grid shared by all fleets (at most 5 s, or a twelfth, longer).
    #[arg(long, env = "RESYNC_SECONDS", default_value_t = 60)]
    pub resync_seconds: u64,

    /// Seconds between checks of a fleet whose bucket has no deployment yet (rounded up onto a
    /// grid like the resync).
    #[arg(long, env = "PENDING_RESYNC_SECONDS", default_value_t = 15)]
    pub pending_resync_seconds: u64,

    /// Base URL of the Google Cloud Storage API the operator reads gs:// buckets from instead
    /// of https://storage.googleapis.com: an emulator, or a private endpoint. The nodes are not
    /// affected (celld takes no endpoint for GCS).
    #[arg(long, env = "GCS_ENDPOINT")]
    pub gcs_endpoint: Option<String>,

    /// URL of the Azure Blob service the operator reads az:// buckets from instead of
    /// https://ACCOUNT.blob.core.windows.net, account included (Azurite:
    /// http://127.0.0.1:10000/devstoreaccount1). The nodes are not affected (celld takes no
    /// endpoint for Azure).
    #[arg(long, env = "AZURE_BLOB_ENDPOINT")]
    pub azure_blob_endpoint: Option<String>,

    /// Seconds one object-storage read may take.
    #[arg(long, env = "S3_TIMEOUT_SECONDS", default_value_t = 5)]
    pub s3_timeout_seconds: u64,

    /// Fleets reconciled at the same time at most, and as many object stores and previews apart:
    /// bounds the operator's load on the API server, and its connections to it, when many
    /// change at once (a start with a thousand fleets).
    #[arg(long, env = "MAX_CONCURRENT_RECONCILES", default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..))]
    pub max_concurrent_reconciles: u16,

    /// Threads that run the operator's work. It mostly waits on the API server and the
    /// buckets: one thread serves 1,000 fleets, and each more adds its own allocator heap
    /// (memory) and wake-ups handed between threads (CPU).
    #[arg(long, env = "WORKER_THREADS", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    pub worker_threads: u16,

    /// Milliseconds a fleet's reconcile waits for more changes after one arrives: a burst of
    /// changes to its children (a rollout) costs one reconcile, not one per change.
    #[arg(long, env = "DEBOUNCE_MILLIS", default_value_t = 500)]
    pub debounce_millis: u64,

    /// Requests per second the reconciles may send to the API server (watches excluded): a
    /// client-side limit, so a thousand fleets starting at once do not time out the API server.
    #[arg(long, env = "API_QPS", default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..))]
    pub api_qps: u32,

    /// Seconds between reads of the capacity (`GET /state`) of the nodes of a fleet without
    /// spec.autoscaling; stretched when the fleets' nodes are more than
    /// --capacity-reads-per-second allows.
    #[arg(long, env = "CAPACITY_READ_SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub capacity_read_seconds: u64,

    /// Seconds between reads of the capacity of the nodes of a fleet with spec.autoscaling (read
    /// first); a reading three times this old is too old to scale in on.
    #[arg(long, env = "AUTOSCALE_READ_SECONDS", default_value_t = 15, value_parser = clap::value_parser!(u64).range(1..))]
    pub autoscale_read_seconds: u64,

    /// Periodic reconciles per second, across all fleets (each reads its fleet's deployment
    /// pointer): above this many fleets per --resync-seconds their resync is stretched (10,000
    /// fleets are each looked at every 200 s at 50).
    #[arg(long, env = "RESYNCS_PER_SECOND", default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    pub resyncs_per_second: u32,

    /// Seconds a settled fleet goes at most without a full reconcile (its plan compared with
    /// its children, status.nodes refreshed) when nothing it watches changed; stretched beyond
    /// 5 fleets a second (10,000 fleets: every 2,000 s).
    #[arg(long, env = "FULL_RECONCILE_SECONDS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub full_reconcile_seconds: u64,

    /// Node `GET /state` reads per second for capacity, across all fleets: bounds the
    /// operator's work (1,000 fleets of 3 nodes are each read every 300 s at 10).
    #[arg(long, env = "CAPACITY_READS_PER_SECOND", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub capacity_reads_per_second: u32,

    /// When a new fleet's pods wait for its public Service (up to 2 s), so that its Ready does
    /// not wait for a Service the API server is slow to create: `auto` once the recent fleets'
    /// Services came more than 1 s after their pods (until 0.5 s), `always`, or `never`.
    #[arg(long, env = "PUBLIC_SERVICE_FIRST", value_enum, default_value = "auto")]
    pub public_service_first: PublicServiceFirst,

    /// Namespaces whose fleets without a credentials Secret the operator reads (their
    /// deployment pointer and manifests) with its own cloud identity: `*` for every namespace,
    /// or names separated by commas. Default: none, since that identity would otherwise read
    /// any bucket it reaches for any tenant; such fleets then say the operator has no
    /// credentials for their bucket.
    #[arg(long, env = "OWN_IDENTITY_NAMESPACES", default_value = "", value_parser = OwnIdentity::parse)]
    pub own_identity_namespaces: OwnIdentity,

    /// Digests of this release's deployer images (`TAG=sha256:...`, separated by commas), which
    /// the release's install manifests set: a fleet's deploy Jobs then run the deployer by
    /// digest. Empty: by tag.
    #[arg(long, env = "DEPLOYER_DIGESTS", default_value = "", value_parser = DeployerDigests::parse)]
    pub deployer_digests: DeployerDigests,

    /// Seconds after which the API server ends each watch (the operator resumes it from its last
    /// bookmark); a watch that delivers nothing for this long plus 5 s is dropped and resumed.
    #[arg(long, env = "WATCH_TIMEOUT_SECONDS", default_value_t = 20)]
    pub watch_timeout_seconds: u64,

    /// Seconds a watch may show no life (no list, watch, event or bookmark) before /healthz
    /// fails so that the replica is restarted; at least twice the watch timeout plus 10.
    #[arg(long, env = "WATCH_STALE_SECONDS", default_value_t = 120)]
    pub watch_stale_seconds: u64,
}

/// Parses `key=value,...` into labels; at least one, each with a key.
fn pod_labels(s: &str) -> Result<BTreeMap<String, String>, String> {
    let mut labels = BTreeMap::new();
    for pair in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                labels.insert(k.trim().to_string(), v.trim().to_string());
            }
            _ => {
                return Err(format!(
                    "'{pair}' is not key=value: give the operator pods' labels as key=value,key=value"
                ));
            }
        }
    }
    if labels.is_empty() {
        return Err("no labels given: give the operator pods' labels as key=value,key=value (app.kubernetes.io/name=celld-operator in the install manifest)".into());
    }
    Ok(labels)
}

impl Args {
    /// The controller settings these flags describe.
    pub fn settings(&self) -> Settings {
        Settings {
            namespaces: self.namespaces.clone(),
            resync: Duration::from_secs(self.resync_seconds.max(1)),
            pending_resync: Duration::from_secs(self.pending_resync_seconds.max(1)),
            s3_timeout: Duration::from_secs(self.s3_timeout_seconds.max(1)),
            concurrency: self.max_concurrent_reconciles,
            debounce: Duration::from_millis(self.debounce_millis),
            api_qps: self.api_qps,
            reporter: "celld-operator".into(),
            instance: self.identity.clone(),
            operator_pods: OperatorPods {
                namespace: self.lease_namespace.clone(),
                labels: self.operator_pod_labels.clone(),
            },
            node_api_connect_to: self.node_api_connect_to.clone(),
            store_endpoints: StoreEndpoints {
                gcs: self.gcs_endpoint.clone(),
                azure_blob: self.azure_blob_endpoint.clone(),
            },
            publish_backoff: crate::source::terms::FIRST_BACKOFF,
            capacity_interval: Duration::from_secs(self.capacity_read_seconds),
            autoscale_interval: Duration::from_secs(self.autoscale_read_seconds),
            capacity_reads_per_second: self.capacity_reads_per_second,
            resyncs_per_second: self.resyncs_per_second,
            full_every: Duration::from_secs(self.full_reconcile_seconds),
            public_service_first: self.public_service_first,
            own_identity: self.own_identity_namespaces.clone(),
        }
    }

    /// Timing of the watches and the bound of `/healthz`.
    pub fn watch_settings(&self) -> WatchSettings {
        WatchSettings::new(self.watch_timeout_seconds, self.watch_stale_seconds)
    }

    /// Leader election settings, when enabled.
    pub fn leader(&self) -> Option<Leader> {
        self.leader_elect.then(|| Leader {
            namespace: self.lease_namespace.clone(),
            lease: self.lease_name.clone(),
            identity: self
                .identity
                .clone()
                .unwrap_or_else(|| format!("celld-operator-{}", std::process::id())),
            duration_seconds: self.lease_duration_seconds.max(2),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_elect_a_leader_and_watch_everything() {
        let args = Args::try_parse_from(["celld-operator", "--identity", "pod-a"]).unwrap();
        let settings = args.settings();
        assert_eq!(settings.namespaces, WatchScope::All);
        assert_eq!(settings.resync, Duration::from_secs(60));
        assert_eq!(
            (settings.concurrency, settings.debounce),
            (16, Duration::from_millis(500))
        );
        assert_eq!(args.watch_settings(), WatchSettings::new(20, 120));
        assert_eq!(args.worker_threads, 1);
        assert!(!args.metrics_secure, "plain /metrics unless asked");
        assert_eq!(
            settings.operator_pods,
            OperatorPods::default(),
            "the install manifest's operator pods"
        );
        let leader = args.leader().unwrap();
        assert_eq!(
            (leader.lease.as_str(), leader.identity.as_str()),
            ("celld-operator", "pod-a")
        );
    }

    #[test]
    fn operator_pod_labels_are_key_value_pairs() {
        let args = Args::try_parse_from([
            "celld-operator",
            "--operator-pod-labels",
            "app=op, tier=control",
        ])
        .unwrap();
        assert_eq!(
            args.settings().operator_pods.labels,
            BTreeMap::from([
                ("app".to_string(), "op".to_string()),
                ("tier".to_string(), "control".to_string())
            ])
        );
        for bad in ["", "app", "=op"] {
            let err = Args::try_parse_from(["celld-operator", "--operator-pod-labels", bad])
                .unwrap_err()
                .to_string();
            assert!(err.contains("key=value"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn one_namespace_without_leader_election() {
        let args = Args::try_parse_from([
            "celld-operator",
            "--namespace",
            "apps",
            "--leader-elect",
            "false",
            "--log-format",
            "json",
        ])
        .unwrap();
        assert_eq!(args.settings().namespaces, WatchScope::one("apps"));
        assert!(args.leader().is_none());
        assert!(matches!(args.log_format, LogFormat::Json));
    }

    #[test]
    fn secure_metrics_on_its_own_address() {
        let args = Args::try_parse_from([
            "celld-operator",
            "--metrics-secure=true",
            "--secure-metrics-addr",
            "127.0.0.1:9443",
        ])
        .unwrap();
        assert!(args.metrics_secure);
        assert_eq!(args.secure_metrics_addr.port(), 9443);
    }

    #[test]
    fn namespaces_and_deployer_digests_come_from_flags() {
        let hex = "0f".repeat(32);
        let args = Args::try_parse_from([
            "celld-operator",
            "--namespaces",
            "team-b,team-a",
            "--deployer-digests",
            &format!("v0.1.0=sha256:{hex}"),
        ])
        .unwrap();
        assert_eq!(
            args.settings().namespaces.namespaces(),
            Some(vec!["team-a".to_string(), "team-b".to_string()])
        );
        assert!(!args.deployer_digests.is_empty());
        let err = Args::try_parse_from(["celld-operator", "--deployer-digests", "v0.1.0=latest"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("TAG=sha256:"), "{err}");
    }

    #[test]
    fn watch_bounds_come_from_flags() {
        let args = Args::try_parse_from([
            "celld-operator",
            "--watch-timeout-seconds",
            "5",
            "--watch-stale-seconds",
            "30",
        ])
        .unwrap();
        let watches = args.watch_settings();
        assert_eq!(
            (watches.timeout, watches.stale_after),
            (Duration::from_secs(5), Duration::from_secs(30))
        );
        let too_tight = Args::try_parse_from(["celld-operator", "--watch-stale-seconds", "10"])
            .unwrap()
            .watch_settings();
        assert_eq!(too_tight.stale_after, Duration::from_secs(50));
    }

    #[test]
    fn a_bad_flag_value_is_refused() {
        assert!(Args::try_parse_from(["celld-operator", "--log-format", "xml"]).is_err());
        assert!(
            Args::try_parse_from(["celld-operator", "--max-concurrent-reconciles", "0"]).is_err()
        );
        assert!(Args::try_parse_from(["celld-operator", "--worker-threads", "0"]).is_err());
    }
}
