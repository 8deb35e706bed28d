//! The flags of `init`: one for every field a CelldFleet allows.

use crate::text::output_format::OutputFormat;
use crate::text::parse::{self, GatewayArg, KeyValue, TolerationArg};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// `init`.
#[derive(Debug, Args)]
#[command(
    after_help = "\
Examples:
  # A fleet on a shared CelldObjectStore, behind ingress-nginx on a subpath
  kubectl celld init web --store minio --bucket s3://celld/web \\
    --hostname demo.celld.dev --ingress-class nginx --path /web --strip-prefix

  # An inline connection to Cloudflare R2, three nodes with persistent work storage
  kubectl celld init api --bucket s3://company-celld/api \\
    --endpoint https://ACCOUNT.r2.cloudflarestorage.com --region auto --credentials-secret r2 \\
    --replicas 3 --local-storage Persistent --local-storage-size 20Gi

  # Behind a Gateway API Gateway (HTTPRoute), created or updated in the cluster
  kubectl celld init web --store minio --bucket s3://celld/web \\
    --hostname web.example.com --gateway infra/public:https --apply

The spec is checked with the API server's own admission rules before it is printed or
applied. --apply uses server-side apply (field manager kubectl-celld): running it again
updates the fleet to the new flags.",
    override_usage = "kubectl celld init [OPTIONS] --bucket <s3://NAME[/PREFIX]> <NAME>"
)]
pub struct InitArgs {
    /// Name of the fleet (lowercase letters, digits and '-', at most 52 characters)
    #[arg(value_name = "NAME")]
    pub name: String,

    /// Create or update the fleet in the cluster (server-side apply) instead of printing it
    #[arg(long, help_heading = "Output")]
    pub apply: bool,

    /// With --apply: take over fields another manager (kubectl, a GitOps tool) set
    #[arg(long, requires = "apply", help_heading = "Output")]
    pub force_conflicts: bool,

    /// Format of the printed fleet
    #[arg(
        short = 'o',
        long,
        value_enum,
        value_name = "FORMAT",
        default_value = "yaml",
        help_heading = "Output"
    )]
    pub output: OutputFormat,

    /// Bucket and prefix the fleet serves from: s3://NAME[/PREFIX], gs://NAME[/PREFIX] or
    /// az://CONTAINER[/PREFIX]
    #[arg(long, value_name = "URL", help_heading = "Object storage")]
    pub bucket: String,

    /// CelldObjectStore providing endpoint, region and credentials (excludes the inline flags)
    #[arg(long, value_name = "STORE", help_heading = "Object storage")]
    pub store: Option<String>,

    /// Inline, S3 only: S3-compatible endpoint URL (omit for AWS S3)
    #[arg(long, value_name = "URL", help_heading = "Object storage")]
    pub endpoint: Option<String>,

    /// Inline, S3 only: region of the bucket (us-east-1 unless set; auto for R2)
    #[arg(long, value_name = "REGION", help_heading = "Object storage")]
    pub region: Option<String>,

    /// Inline, S3 only: allow a plain-text http:// endpoint
    #[arg(long, help_heading = "Object storage")]
    pub allow_http: bool,

    /// Inline, az:// only: the Azure storage account holding the container
    #[arg(long, value_name = "ACCOUNT", help_heading = "Object storage")]
    pub azure_storage_account: Option<String>,

    /// Inline: Secret with the bucket's keys (S3: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY;
    /// GCS: GOOGLE_SERVICE_ACCOUNT_KEY; Azure: AZURE_STORAGE_ACCOUNT_KEY); omit it for workload
    /// identity through --service-account
    #[arg(long, value_name = "SECRET", help_heading = "Object storage")]
    pub credentials_secret: Option<String>,

    /// Number of celld nodes (0 stops the fleet)
    #[arg(long, value_name = "N", help_heading = "Nodes")]
    pub replicas: Option<i32>,

    /// celld runtime image
    #[arg(long, value_name = "IMAGE", help_heading = "Nodes")]
    pub image: Option<String>,

    /// When to pull the image
    #[arg(
        long,
        value_enum,
        value_name = "POLICY",
        ignore_case = true,
        help_heading = "Nodes"
    )]
    pub image_pull_policy: Option<PullPolicy>,

    /// Secret for pulling the image (repeatable)
    #[arg(
        long = "image-pull-secret",
        value_name = "SECRET",
        help_heading = "Nodes"
    )]
    pub image_pull_secrets: Vec<String>,

    /// When celld acknowledges a write [default: bucket with Ephemeral local storage, fleet with
    /// Persistent]
    #[arg(
        long,
        value_enum,
        value_name = "MODE",
        ignore_case = true,
        help_heading = "Nodes"
    )]
    pub durability: Option<DurabilityArg>,

    /// Extra environment variable of the celld container (repeatable)
    #[arg(long = "env", value_name = "NAME=VALUE", value_parser = parse::key_value, help_heading = "Nodes")]
    pub env: Vec<KeyValue>,

    /// CPU request of each node
    #[arg(long, value_name = "QUANTITY", value_parser = parse::quantity, help_heading = "Nodes")]
    pub cpu_request: Option<String>,

    /// Memory request of each node
    #[arg(long, value_name = "QUANTITY", value_parser = parse::quantity, help_heading = "Nodes")]
    pub memory_request: Option<String>,

    /// CPU limit of each node
    #[arg(long, value_name = "QUANTITY", value_parser = parse::quantity, help_heading = "Nodes")]
    pub cpu_limit: Option<String>,

    /// Memory limit of each node (celld caps itself at 80% of it)
    #[arg(long, value_name = "QUANTITY", value_parser = parse::quantity, help_heading = "Nodes")]
    pub memory_limit: Option<String>,

    /// ServiceAccount of the node pods (for workload identity)
    #[arg(long, value_name = "NAME", help_heading = "Nodes")]
    pub service_account: Option<String>,

    /// Label of the node pods (repeatable)
    #[arg(long = "pod-label", value_name = "KEY=VALUE", value_parser = parse::key_value, help_heading = "Nodes")]
    pub pod_labels: Vec<KeyValue>,

    /// Annotation of the node pods (repeatable)
    #[arg(long = "pod-annotation", value_name = "KEY=VALUE", value_parser = parse::key_value, help_heading = "Nodes")]
    pub pod_annotations: Vec<KeyValue>,

    /// Node label the pods need (repeatable)
    #[arg(long = "node-selector", value_name = "KEY=VALUE", value_parser = parse::key_value, help_heading = "Scheduling")]
    pub node_selector: Vec<KeyValue>,

    /// Taint the pods tolerate, KEY[=VALUE][:EFFECT] or * (repeatable)
    #[arg(long = "toleration", value_name = "TAINT", value_parser = parse::toleration, help_heading = "Scheduling")]
    pub tolerations: Vec<TolerationArg>,

    /// Spread the pods evenly across zones or nodes (repeatable)
    #[arg(
        long = "spread",
        value_enum,
        value_name = "DOMAIN",
        help_heading = "Scheduling"
    )]
    pub spread: Vec<SpreadArg>,

    /// Affinity of the pods, from a YAML or JSON file holding a Kubernetes Affinity
    #[arg(long, value_name = "FILE", help_heading = "Scheduling")]
    pub affinity_file: Option<PathBuf>,

    /// Local work storage of each node
    #[arg(
        long,
        value_enum,
        value_name = "TYPE",
        ignore_case = true,
        help_heading = "Local storage"
    )]
    pub local_storage: Option<LocalStorageArg>,

    /// Size of each node's work storage (emptyDir limit or PVC request)
    #[arg(long, value_name = "QUANTITY", value_parser = parse::quantity, help_heading = "Local storage")]
    pub local_storage_size: Option<String>,

    /// StorageClass of the PVCs (Persistent only)
    #[arg(long, value_name = "CLASS", help_heading = "Local storage")]
    pub storage_class: Option<String>,

    /// What happens to the PVCs when the fleet is deleted (Persistent only)
    #[arg(
        long,
        value_enum,
        value_name = "POLICY",
        ignore_case = true,
        help_heading = "Local storage"
    )]
    pub pvc_retention: Option<RetentionArg>,

    /// Type of the public Service
    #[arg(
        long,
        value_enum,
        value_name = "TYPE",
        ignore_case = true,
        help_heading = "Service"
    )]
    pub service_type: Option<ServiceTypeArg>,

    /// Annotation of the public Service (repeatable)
    #[arg(long = "service-annotation", value_name = "KEY=VALUE", value_parser = parse::key_value, help_heading = "Service")]
    pub service_annotations: Vec<KeyValue>,

    /// Host name clients use; enables routing through --ingress-class or --gateway
    #[arg(long, value_name = "HOST", help_heading = "Routing")]
    pub hostname: Option<String>,

    /// IngressClass of the Ingress to create (excludes --gateway)
    #[arg(
        long,
        value_name = "CLASS",
        requires = "hostname",
        help_heading = "Routing"
    )]
    pub ingress_class: Option<String>,

    /// Gateway to attach an HTTPRoute to, [NAMESPACE/]NAME[:SECTION] (repeatable; excludes --ingress-class)
    #[arg(long = "gateway", value_name = "GATEWAY", value_parser = parse::gateway, requires = "hostname", help_heading = "Routing")]
    pub gateways: Vec<GatewayArg>,

    /// URL path the Worker is mounted on, e.g. /api (default /)
    #[arg(
        long,
        value_name = "PATH",
        requires = "hostname",
        help_heading = "Routing"
    )]
    pub path: Option<String>,

    /// How the path matches
    #[arg(
        long,
        value_enum,
        value_name = "TYPE",
        ignore_case = true,
        requires = "hostname",
        help_heading = "Routing"
    )]
    pub path_type: Option<PathTypeArg>,

    /// Remove the path before requests reach the Worker (/api/hello arrives as /hello)
    #[arg(long, requires = "hostname", help_heading = "Routing")]
    pub strip_prefix: bool,

    /// TLS for the Ingress from this cert-manager ClusterIssuer
    #[arg(
        long,
        value_name = "ISSUER",
        requires = "hostname",
        help_heading = "Routing"
    )]
    pub tls_cluster_issuer: Option<String>,

    /// TLS for the Ingress from this existing kubernetes.io/tls Secret
    #[arg(
        long,
        value_name = "SECRET",
        requires = "hostname",
        help_heading = "Routing"
    )]
    pub tls_secret: Option<String>,

    /// Annotation of the Ingress or HTTPRoute (repeatable)
    #[arg(long = "route-annotation", value_name = "KEY=VALUE", value_parser = parse::key_value, requires = "hostname", help_heading = "Routing")]
    pub route_annotations: Vec<KeyValue>,
}

/// `--image-pull-policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PullPolicy {
    /// Pull on every start
    #[value(name = "Always")]
    Always,
    /// Pull when missing
    #[value(name = "IfNotPresent")]
    IfNotPresent,
    /// Never pull
    #[value(name = "Never")]
    Never,
}

/// `--durability`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DurabilityArg {
    /// After a follower's fsync (with Ephemeral local storage a pod's replacement can lose
    /// acknowledged writes)
    Fleet,
    /// After the bucket write
    Bucket,
}

/// `--local-storage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LocalStorageArg {
    /// An emptyDir, lost with the pod
    #[value(name = "Ephemeral")]
    Ephemeral,
    /// A PersistentVolumeClaim per node
    #[value(name = "Persistent")]
    Persistent,
}

/// `--pvc-retention`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RetentionArg {
    /// Keep the PVCs
    #[value(name = "Retain")]
    Retain,
    /// Delete them with the fleet
    #[value(name = "Delete")]
    Delete,
}

/// `--service-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ServiceTypeArg {
    /// Inside the cluster only
    #[value(name = "ClusterIP")]
    ClusterIp,
    /// Also on a port of every node
    #[value(name = "NodePort")]
    NodePort,
    /// Also through a cloud load balancer
    #[value(name = "LoadBalancer")]
    LoadBalancer,
}

/// `--path-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PathTypeArg {
    /// The path and everything below it
    #[value(name = "Prefix")]
    Prefix,
    /// The path only
    #[value(name = "Exact")]
    Exact,
    /// As the ingress controller defines it (Ingress only)
    #[value(name = "ImplementationSpecific")]
    ImplementationSpecific,
}

/// `--spread`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SpreadArg {
    /// topology.kubernetes.io/zone
    Zone,
    /// kubernetes.io/hostname
    Node,
}
