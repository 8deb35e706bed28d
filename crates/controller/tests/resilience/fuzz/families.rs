//! The field families the generator mutates, named as the report names them.

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
}

impl Family {
    pub fn as_str(self) -> &'static str {
        match self {
            Family::ObjectNames => "object names",
            Family::LabelsAndSelectors => "label keys and values, node selectors",
            Family::Annotations => "annotations (huge ones too)",
            Family::DnsNames => "DNS names (classes, accounts, Secrets, stores)",
            Family::Hostnames => "hostnames and IPs",
            Family::Paths => "URL paths",
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
            Family::Enums => "enumerations (service type, durability, pathType...)",
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
