//! The field families the generator mutates, named as the report names them: a family groups
//! fields that take the same kind of value, whichever kind (fleet, store, rollout) has them.

/// A family of fields that take the same kind of value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    ObjectNames,
    LabelsAndSelectors,
    Annotations,
    DnsNames,
    Hostnames,
    Paths,
    Tolerations,
    TopologySpread,
    Affinity,
    Env,
    Resources,
    Tls,
    GatewayRefs,
    LocalStorage,
    Bucket,
    Endpoint,
    Region,
    Credentials,
    Replicas,
    Autoscaling,
    Previews,
    Image,
    Enums,
    Sources,
    Durations,
    Counts,
    Waves,
    Webhooks,
    Controls,
    Targets,
}

impl Family {
    pub fn as_str(self) -> &'static str {
        match self {
            Family::ObjectNames => "object names",
            Family::LabelsAndSelectors => "label keys and values, node and label selectors",
            Family::Annotations => "annotations (huge ones too)",
            Family::DnsNames => "DNS names (classes, accounts, Secrets, stores, webhooks)",
            Family::Hostnames => "hostnames and IPs",
            Family::Paths => "paths (URL paths, directories in a source)",
            Family::Tolerations => "tolerations",
            Family::TopologySpread => "topology spread",
            Family::Affinity => "affinity",
            Family::Env => "env (names, duplicates, value+valueFrom, fieldPath)",
            Family::Resources => "resources and quantities",
            Family::Tls => "TLS secret names and issuers",
            Family::GatewayRefs => "gatewayRefs",
            Family::LocalStorage => "local storage (size, class)",
            Family::Bucket => "bucket URLs",
            Family::Endpoint => "endpoints",
            Family::Region => "regions",
            Family::Credentials => "credentials references",
            Family::Replicas => "replicas",
            Family::Autoscaling => "autoscaling (bounds, windows, steps)",
            Family::Previews => "previews (domain, bucket, routing, TTLs)",
            Family::Image => "image and pull policy",
            Family::Enums => {
                "enumerations (service type, durability, pathType, approval, onFailure...)"
            }
            Family::Sources => "Worker sources (image reference and layout, sourceRef, deployer)",
            Family::Durations => "durations (bakes, timeouts, deadlines)",
            Family::Counts => "counts (retries, maxParallel)",
            Family::Waves => "waves (how far each goes, how many, count and selector together)",
            Family::Webhooks => "webhooks (URLs, link-local and metadata too; names repeated)",
            Family::Controls => "pause, promotion and abort (spec.paused, annotations)",
            Family::Targets => "the fleet a rollout selects (pinned, own source, none)",
        }
    }

    /// Families that decide whether the bucket is readable: combined with a large replica
    /// count they would start that many fake pods, so a case never mixes them with replicas.
    pub fn touches_connection(self) -> bool {
        matches!(
            self,
            Family::Bucket | Family::Endpoint | Family::Region | Family::Credentials
        )
    }
}
