//! The plugin's errors. Each message says what went wrong and what to do about it.

pub mod bucket;
pub mod fan_out;
pub mod kube_error;
mod messages;
pub mod preview;
pub mod refused;
pub mod rollout;

use messages::{
    fleet_not_found, hint_note, ns_flag, ns_note, path_note, place, release_manifest, server_note,
    unreachable,
};
use std::path::PathBuf;

/// Everything that can stop a command.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No kubeconfig was found and the plugin does not run inside a cluster.
    #[error(
        "no kubeconfig found: pass --kubeconfig PATH, set KUBECONFIG, create ~/.kube/config, or run the plugin inside a cluster"
    )]
    NoKubeconfig,

    /// The kubeconfig could not be read or does not have the asked-for context.
    #[error("cannot use the kubeconfig{}: {source}; check --kubeconfig, KUBECONFIG and --context (list contexts with: kubectl config get-contexts)", path_note(.path))]
    Kubeconfig {
        /// The file, when one was named with --kubeconfig.
        path: Option<PathBuf>,
        /// What kube could not do with it.
        #[source]
        source: Box<kube::config::KubeconfigError>,
    },

    /// The in-cluster configuration could not be read.
    #[error(
        "no kubeconfig found and the in-cluster configuration is unusable ({0}); pass --kubeconfig PATH or set KUBECONFIG"
    )]
    InCluster(#[source] Box<kube::config::InClusterError>),

    /// The client could not be built from the configuration (TLS, auth plugin, proxy).
    #[error(
        "cannot create a Kubernetes client: {}; check the cluster and user entries of the kubeconfig context",
        kube_error::describe(.0)
    )]
    Client(#[source] Box<kube::Error>),

    /// The cluster has no CelldFleet/CelldObjectStore resources.
    #[error(
        "the celld CRDs are not installed in this cluster (the API server does not know {resource}.platform.celld.dev): install the operator and its CRDs with: kubectl apply --server-side -f {} (from a source checkout: kubectl apply --server-side -f config/crd/bases/), or check --context",
        release_manifest()
    )]
    CrdsMissing {
        /// The plural resource name that was missing.
        resource: &'static str,
    },

    /// The API server could not be reached at all.
    #[error("{}", unreachable(.server, *.refused, .detail))]
    Unreachable {
        /// The server URL of the kubeconfig, once known.
        server: Option<String>,
        /// Whether the TCP connection was refused.
        refused: bool,
        /// The chain of causes.
        detail: String,
    },

    /// The cluster has the fleets' CRD but not the previews': its operator predates them.
    #[error(
        "this cluster's celld operator is too old for previews: the API server knows celldfleets.platform.celld.dev but not celldpreviews.platform.celld.dev; upgrade the operator and its CRDs with: kubectl apply --server-side -f {}, or check --context",
        release_manifest()
    )]
    PreviewsNotInstalled,

    /// Something answered at the server address, but it is not a Kubernetes API server.
    #[error(
        "the server{} is not a Kubernetes API server: it answered 404 to {resource}.platform.celld.dev and to /version; check the cluster's server URL (kubectl config view --minify) or pick another context with --context",
        server_note(.server)
    )]
    NotKubernetes {
        /// The server URL of the kubeconfig, once known.
        server: Option<String>,
        /// The resource that was asked for.
        resource: &'static str,
    },

    /// The named fleet does not exist.
    #[error("{}", fleet_not_found(.name, .namespace, .near, .elsewhere))]
    FleetNotFound {
        /// The name asked for.
        name: String,
        /// The namespace looked in.
        namespace: String,
        /// Fleets in that namespace with similar names.
        near: Vec<String>,
        /// Other namespaces holding a fleet of exactly that name.
        elsewhere: Vec<String>,
    },

    /// RBAC refused a request.
    #[error(
        "forbidden: you may not {verb} {resource}{}: ask a cluster admin for a Role granting '{verb}' on '{resource}' (check with: kubectl auth can-i {verb} {resource}{})",
        ns_note(.namespace), ns_flag(.namespace)
    )]
    Forbidden {
        /// The verb, as RBAC names it (get, list, create, patch, delete, watch).
        verb: &'static str,
        /// The resource, as RBAC names it (pods/exec, jobs.batch, celldfleets.platform.celld.dev).
        resource: String,
        /// The namespace, unless the request was cluster-wide.
        namespace: Option<String>,
    },

    /// Any other API error.
    #[error(
        "{verb} {resource}{} failed: {}{}",
        ns_note(.namespace),
        kube_error::describe(.source),
        hint_note(.source, .namespace)
    )]
    Api {
        /// The verb that failed.
        verb: &'static str,
        /// The resource it was applied to.
        resource: String,
        /// The namespace, unless cluster-wide.
        namespace: Option<String>,
        /// The client error.
        #[source]
        source: Box<kube::Error>,
    },

    /// The fleet's object storage does not resolve.
    #[error("fleet '{fleet}': {source}")]
    Storage {
        /// The fleet.
        fleet: String,
        /// Why (the message says what to fix).
        #[source]
        source: Box<celld_api::ResolveError>,
    },

    /// The spec built from the flags would be refused by the API server.
    #[error("{0}")]
    InvalidSpec(String),

    /// A local file or directory problem.
    #[error("{what} '{}': {source}", .path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },

    /// A request to the fleet's bucket failed.
    #[error(transparent)]
    Bucket(#[from] Box<bucket::BucketFailure>),

    /// A compare-and-swap write found the object changed by another writer.
    #[error(transparent)]
    LostRace(#[from] Box<bucket::LostRace>),

    /// The pointers name the new version, but some node refused to adopt it (HTTP 422).
    #[error(transparent)]
    ReloadRefused(#[from] Box<refused::ReloadRefused>),

    /// The operator reports that some nodes refused the version the pointers name.
    #[error(
        "fleet {namespace}/{fleet}: {message} (the version stays published; kubectl celld status {fleet} -n {namespace} lists every node)"
    )]
    NotAdopted {
        /// The fleet.
        fleet: String,
        /// Its namespace.
        namespace: String,
        /// The operator's Adopted condition: the nodes, their reasons and what to do.
        message: String,
    },

    /// Not every ready node served the new version within the wait.
    #[error(
        "fleet {namespace}/{fleet}: not every ready node serves the new version after {}s: {last}. The version stays published; follow it with: kubectl celld status {fleet} -n {namespace} (or deploy with --no-wait, or a longer --wait-timeout)",
        .waited.as_secs()
    )]
    AdoptionTimedOut {
        /// The fleet.
        fleet: String,
        /// Its namespace.
        namespace: String,
        /// How long the wait was.
        waited: std::time::Duration,
        /// Where it stood last, as the operator reported it.
        last: String,
    },

    /// A `preview` command could not go on.
    #[error(transparent)]
    Preview(#[from] preview::PreviewError),

    /// A `rollout` command, or `deploy --waves`, could not go on.
    #[error(transparent)]
    Rollout(#[from] rollout::RolloutError),

    /// A rollback the bucket's contents do not allow.
    #[error("{0}")]
    Rollback(String),

    /// A deploy step failed in the pod.
    #[error("{0}")]
    Deploy(String),

    /// `deploy` refused a fleet whose Worker comes from spec.source, which the operator
    /// publishes: the message names the source, its drift policy and how to go on. Nothing was
    /// created.
    #[error("{0}")]
    SourceOwned(String),

    /// `deploy` refused a Python Worker: a node or spec.image of the fleet runs a celld older
    /// than 0.6.1, or one whose version cannot be told. Nothing was created.
    #[error("{0}")]
    PythonWorkerHeld(String),

    /// `rollback` could not suspend publishing from the fleet's spec.source, so it rolled
    /// nothing back.
    #[error(
        "fleet {namespace}/{fleet} publishes its Worker from spec.source, and suspending that failed ({source}), so nothing was rolled back: the operator would publish the source over the rollback. Suspend it yourself with: {suspend}, then run the rollback again"
    )]
    SourceSuspendFailed {
        /// The fleet.
        fleet: String,
        /// Its namespace.
        namespace: String,
        /// The command that suspends it.
        suspend: String,
        /// Why the patch failed.
        #[source]
        source: Box<Error>,
    },

    /// A fan-out's `--selector` matched no fleet.
    #[error(
        "no CelldFleet {} matches the selector '{selector}', so nothing was deployed: list the fleets with their labels with: kubectl get celldfleets{} --show-labels, then fix the selector{}",
        place(.namespace),
        ns_flag(.namespace),
        if .namespace.is_some() { " (or add -A for every namespace)" } else { "" }
    )]
    NoFleetsMatch {
        /// The selector.
        selector: String,
        /// The namespace looked in; None with `-A`.
        namespace: Option<String>,
    },

    /// A fan-out deploy after which some or all fleets do not serve the new version.
    #[error(transparent)]
    FanOut(#[from] Box<fan_out::FanOutIncomplete>),

    /// A Secret named by `--vars-from-secret` does not exist.
    #[error(
        "Secret '{secret}' (--vars-from-secret) does not exist in namespace '{namespace}', the fleet's: create it with: kubectl create secret generic {secret} -n {namespace} --from-literal=NAME=VALUE (or --from-env-file=FILE), or fix the name; nothing was uploaded"
    )]
    VarsSecretMissing {
        /// The Secret.
        secret: String,
        /// The fleet's namespace.
        namespace: String,
    },

    /// The Secrets of `--vars-from-secret` cannot become the Worker's vars.
    #[error("{0}; nothing was uploaded")]
    Vars(#[from] celld_bucket::vars::VarsError),

    /// Writing output failed (a closed pipe, for example).
    #[error("writing output failed: {0}")]
    Output(String),

    /// The command line is not what the command takes.
    #[error("{0}")]
    Usage(String),

    /// The user interrupted the command.
    #[error("interrupted: {note}")]
    Interrupted {
        /// What the interruption left behind.
        note: String,
    },
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps a client error for `verb` on `resource`: 403 names the verb and the resource, a 404
    /// of a celld resource means the CRDs are missing, anything else keeps the client's message.
    pub fn api(
        verb: &'static str,
        resource: impl Into<String>,
        namespace: Option<&str>,
        source: kube::Error,
    ) -> Self {
        let resource = resource.into();
        let namespace = namespace.map(str::to_string);
        if kube_error::is_transport(&source) {
            return Self::Unreachable {
                server: None,
                refused: kube_error::is_refused(&source),
                detail: kube_error::transport_detail(&source),
            };
        }
        match status_code(&source) {
            Some(403) => Self::Forbidden {
                verb,
                resource,
                namespace,
            },
            _ => Self::Api {
                verb,
                resource,
                namespace,
                source: Box::new(source),
            },
        }
    }

    /// Names the kubeconfig's server in errors that are about it.
    pub fn with_server(mut self, url: Option<String>) -> Self {
        if let Self::Unreachable { server, .. } | Self::NotKubernetes { server, .. } = &mut self
            && server.is_none()
        {
            *server = url;
        }
        self
    }

    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Interrupted { .. } => 130,
            Self::Usage(_) => 2,
            Self::ReloadRefused(_) | Self::NotAdopted { .. } => refused::REFUSED_EXIT_CODE,
            Self::FanOut(incomplete) => incomplete.exit_code(),
            Self::Rollout(e) => e.exit_code(),
            _ => 1,
        }
    }
}

/// The HTTP status of a failed request, if the API server answered.
pub fn status_code(err: &kube::Error) -> Option<u16> {
    match err {
        kube::Error::Api(status) => Some(status.code),
        kube::Error::UpgradeConnection(kube::client::UpgradeConnectionError::ProtocolSwitch(
            code,
        )) => Some(code.as_u16()),
        _ => None,
    }
}

/// Whether the API server answered 404 because the resource type itself is unknown (as opposed
/// to an object that does not exist): its Status then names no object.
pub fn is_unknown_resource(err: &kube::Error) -> bool {
    match err {
        kube::Error::Api(status) if status.code == 404 => status
            .details
            .as_ref()
            .is_none_or(|d| d.name.is_empty() && d.kind.is_empty()),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_names_verb_and_resource() {
        let e = Error::Forbidden {
            verb: "create",
            resource: "pods/exec".into(),
            namespace: Some("team-a".into()),
        };
        insta::assert_snapshot!(e.to_string(), @"forbidden: you may not create pods/exec in namespace 'team-a': ask a cluster admin for a Role granting 'create' on 'pods/exec' (check with: kubectl auth can-i create pods/exec -n team-a)");
    }

    #[test]
    fn unknown_resource_is_told_from_a_missing_object() {
        use kube::core::Status;
        // The API server answers an unknown resource with a plain-text 404, which kube turns
        // into a Status without details.
        let unknown =
            Status::failure("404 page not found\n", "Failed to parse error data").with_code(404);
        assert!(is_unknown_resource(&kube::Error::Api(unknown.boxed())));
        let mut missing = Status::failure(
            "celldfleets.platform.celld.dev \"nope\" not found",
            "NotFound",
        )
        .with_code(404);
        missing.details = Some(kube::core::response::StatusDetails {
            name: "nope".into(),
            group: "platform.celld.dev".into(),
            kind: "celldfleets".into(),
            uid: String::new(),
            causes: Vec::new(),
            retry_after_seconds: 0,
        });
        let missing = kube::Error::Api(missing.boxed());
        assert!(!is_unknown_resource(&missing));
        assert_eq!(status_code(&missing), Some(404));
    }

    #[test]
    fn a_selector_matching_nothing_is_named_with_the_way_to_list_labels() {
        let e = Error::NoFleetsMatch {
            selector: "team=payments".into(),
            namespace: Some("apps".into()),
        };
        insta::assert_snapshot!(e.to_string(), @"no CelldFleet in namespace 'apps' matches the selector 'team=payments', so nothing was deployed: list the fleets with their labels with: kubectl get celldfleets -n apps --show-labels, then fix the selector (or add -A for every namespace)");
        let e = Error::NoFleetsMatch {
            selector: "team=payments".into(),
            namespace: None,
        };
        insta::assert_snapshot!(e.to_string(), @"no CelldFleet in any namespace matches the selector 'team=payments', so nothing was deployed: list the fleets with their labels with: kubectl get celldfleets -A --show-labels, then fix the selector");
        assert_eq!(e.exit_code(), 1);
    }

    #[test]
    fn fleet_not_found_suggests() {
        let e = Error::FleetNotFound {
            name: "demo-ap".into(),
            namespace: "team-a".into(),
            near: vec!["demo-app".into(), "demo-api".into()],
            elsewhere: vec![],
        };
        insta::assert_snapshot!(e.to_string(), @"CelldFleet 'demo-ap' does not exist in namespace 'team-a'; did you mean demo-app, demo-api?");
        let e = Error::FleetNotFound {
            name: "web".into(),
            namespace: "default".into(),
            near: vec![],
            elsewhere: vec!["prod".into()],
        };
        insta::assert_snapshot!(e.to_string(), @"CelldFleet 'web' does not exist in namespace 'default'; a fleet of that name exists in namespace 'prod': add -n prod; list the fleets with: kubectl celld status -n default (or -A), or create one with: kubectl celld init web");
    }
}
