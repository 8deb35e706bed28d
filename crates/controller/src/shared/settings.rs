//! The operator's settings, from its flags ([`crate::args`]): what every controller reads.

use crate::buckets::object_store::StoreEndpoints;
use crate::cache::watch_scope::WatchScope;
use crate::children::OperatorPods;
use crate::shared::own_identity::OwnIdentity;
use std::time::Duration;

/// The longest a fleet goes without a full reconcile, up to 3,000 fleets, by default
/// (--full-reconcile-seconds).
pub const FULL_EVERY: Duration = Duration::from_secs(600);

/// When a new fleet's pods wait for its public Service (`--public-service-first`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum PublicServiceFirst {
    /// Once the recent fleets' public Services came more than 1 s after their pods, until they
    /// come less than 0.5 s after.
    #[default]
    Auto,
    /// Always: every new fleet's Ready comes with its pods, and its pods up to 2 s later.
    Always,
    /// Never: the pods start at once, and the fleet's Ready waits for its Service.
    Never,
}

/// Settings of the controller.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The namespaces watched.
    pub namespaces: WatchScope,
    /// How often a healthy fleet is reconciled again (to refresh the deployed version).
    pub resync: Duration,
    /// How often a fleet without a deployment is checked again.
    pub pending_resync: Duration,
    /// Time bound of one object-storage read.
    pub s3_timeout: Duration,
    /// Fleets reconciled at the same time at most.
    pub concurrency: u16,
    /// How long a reconcile waits for more changes after one arrives.
    pub debounce: Duration,
    /// Requests per second the reconciles may send to the API server (watches excluded).
    pub api_qps: u32,
    /// The name reported on Events (the operator Deployment's name).
    pub reporter: String,
    /// The instance reported on Events (the pod's name).
    pub instance: Option<String>,
    /// The operator's own pods, admitted to the nodes' internal port.
    pub operator_pods: OperatorPods,
    /// Where to connect for every node's internal API instead of the node's name.
    pub node_api_connect_to: Option<String>,
    /// Where the operator reads gs:// and az:// buckets instead of the public endpoints.
    pub store_endpoints: StoreEndpoints,
    /// The wait after a first failed publish of a spec.source revision (it doubles with every
    /// failure, up to 10 minutes).
    pub publish_backoff: Duration,
    /// How often the nodes of a fleet without spec.autoscaling are read for their capacity.
    pub capacity_interval: Duration,
    /// How often the nodes of a fleet with spec.autoscaling are read for their capacity.
    pub autoscale_interval: Duration,
    /// Node `GET /state` reads per second for capacity, across all fleets.
    pub capacity_reads_per_second: u32,
    /// Periodic reconciles per second, across all fleets: the resync of many fleets is
    /// stretched to keep under it.
    pub resyncs_per_second: u32,
    /// The longest a settled fleet goes without a full reconcile, before it is stretched.
    pub full_every: Duration,
    /// When a new fleet's pods wait for its public Service.
    pub public_service_first: PublicServiceFirst,
    /// The namespaces whose fleets without a credentials Secret the operator reads with its
    /// own cloud identity.
    pub own_identity: OwnIdentity,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            namespaces: WatchScope::All,
            resync: Duration::from_secs(60),
            pending_resync: Duration::from_secs(15),
            s3_timeout: Duration::from_secs(5),
            concurrency: 16,
            debounce: Duration::from_millis(500),
            api_qps: 200,
            reporter: "celld-operator".into(),
            instance: None,
            operator_pods: OperatorPods::default(),
            node_api_connect_to: None,
            store_endpoints: StoreEndpoints::default(),
            publish_backoff: crate::source::terms::FIRST_BACKOFF,
            capacity_interval: Duration::from_secs(60),
            autoscale_interval: Duration::from_secs(15),
            capacity_reads_per_second: 10,
            resyncs_per_second: 50,
            full_every: FULL_EVERY,
            public_service_first: PublicServiceFirst::Auto,
            own_identity: OwnIdentity::Nowhere,
        }
    }
}
