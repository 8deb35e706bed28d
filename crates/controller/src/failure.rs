//! What kept a reconcile from its goal, as reported on the fleet: a typed reason, what failed,
//! and a message naming the object and quoting the API server.

use celld_api::ResolveError;
use celld_api::reasons::{Reason, transient};
use std::fmt;

/// What a failure is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The object storage or its credentials Secret.
    Storage,
    /// The deployment pointer in the bucket.
    Bucket,
    /// spec.image: a version celld forbids.
    Image,
    /// spec.env: a variable celld refuses at startup.
    Env,
    /// The deployed version's manifest: a feature it requires, or the manifest itself.
    Manifest,
    /// A child object of the fleet.
    Child {
        /// Its kind.
        kind: String,
    },
}

/// One failure met during a reconcile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// Why, as a condition and Event reason.
    pub reason: Reason,
    /// What it is about.
    pub scope: Scope,
    /// What failed, such as `Service web`.
    pub subject: String,
    /// A sentence that names the object and says what happened.
    pub message: String,
    /// What identifies this failure across retries: a refusal by its whole message, which
    /// names the field, so failing on another field is a new failure; a transient one by what
    /// failed, since its message carries timings and request ids.
    pub fingerprint: String,
}

impl Failure {
    /// A failed call that tried to `verb` (read, apply, delete, list) the child `kind` `name`
    /// (empty when listing). An API server's answer found in `error`'s sources is quoted and
    /// judged (refused or transient); any other error is reported as a refusal.
    pub fn child(
        kind: &str,
        name: &str,
        verb: &str,
        error: &(dyn std::error::Error + 'static),
    ) -> Self {
        let subject = if name.is_empty() {
            format!("{kind} objects of the fleet")
        } else {
            format!("{kind} {name}")
        };
        let scope = Scope::Child { kind: kind.into() };
        let api_error = std::iter::successors(Some(error), |e| e.source())
            .find_map(|e| e.downcast_ref::<kube::Error>());
        let Some(source) = api_error else {
            let message = format!("could not {verb} {subject}: {error}");
            return Self {
                reason: Reason::ChildRejected,
                scope,
                subject,
                fingerprint: message.clone(),
                message,
            };
        };
        if transient(source) {
            let fingerprint = format!("could not {verb} {subject}, retrying");
            let message = match source {
                kube::Error::Api(status) => format!(
                    "{fingerprint} ({} {}): {}",
                    status.code, status.reason, status.message
                ),
                other => format!("{fingerprint}: {other}"),
            };
            return Self {
                reason: Reason::ApiUnavailable,
                scope,
                subject,
                message,
                fingerprint,
            };
        }
        let message = match source {
            kube::Error::Api(status) => format!(
                "the API server refused to {verb} {subject} ({} {}): {}",
                status.code, status.reason, status.message
            ),
            other => format!("the API server refused to {verb} {subject}: {other}"),
        };
        Self {
            reason: Reason::ChildRejected,
            scope,
            subject,
            fingerprint: message.clone(),
            message,
        }
    }

    /// The fleet's storage did not resolve.
    pub fn storage(error: &ResolveError) -> Self {
        let message = error.to_string();
        let fingerprint = match error {
            ResolveError::Api { what, .. } => format!("reading {what} from the API server failed"),
            _ => message.clone(),
        };
        Self {
            reason: Reason::of_resolve(error),
            scope: Scope::Storage,
            subject: "the object storage".into(),
            fingerprint,
            message,
        }
    }

    /// The child `kind` `name` cannot be made: an object of that name in the fleet's
    /// namespace `namespace` is not the fleet's (`holder` says whose it is), and the operator
    /// never takes over what it did not create.
    pub fn name_taken(kind: &str, name: &str, namespace: &str, holder: &str) -> Self {
        let subject = format!("{kind} {name}");
        let message = format!(
            "{subject} already exists in namespace {namespace} and is not this fleet's ({holder}), so the operator leaves it alone and the fleet has no {kind} until the name is free: delete or rename that {kind} if nothing needs it, or give the fleet another name"
        );
        Self {
            reason: Reason::NameTaken,
            scope: Scope::Child { kind: kind.into() },
            subject,
            fingerprint: message.clone(),
            message,
        }
    }

    /// spec.image names a version celld forbids; `why` says which and what to do.
    pub fn image_refused(why: &str) -> Self {
        Self {
            reason: Reason::UpgradeRefused,
            scope: Scope::Image,
            subject: "spec.image".into(),
            message: why.to_string(),
            fingerprint: why.to_string(),
        }
    }

    /// spec.env sets `name`, which the nodes' celld refuses at startup; `why` says which
    /// release refuses it and what to set instead.
    pub fn env_refused(name: &str, why: &str) -> Self {
        Self {
            reason: Reason::EnvRefused,
            scope: Scope::Env,
            subject: format!("spec.env {name}"),
            message: why.to_string(),
            fingerprint: why.to_string(),
        }
    }

    /// The deployed version requires `feature`, which the nodes cannot serve; `why` names the
    /// version and the feature and says what to do.
    pub fn feature_unsupported(feature: &str, why: &str) -> Self {
        Self {
            reason: Reason::FeatureUnsupported,
            scope: Scope::Manifest,
            subject: format!("feature {feature}"),
            message: why.to_string(),
            fingerprint: why.to_string(),
        }
    }

    /// The manifest at `url` could not be read or is not a manifest; `why` says which and
    /// what to do. Keyed by `url` alone: a read that keeps failing is one failure.
    pub fn manifest_unreadable(url: &str, why: &str) -> Self {
        Self {
            reason: Reason::ManifestUnreadable,
            scope: Scope::Manifest,
            subject: format!("manifest {url}"),
            message: why.to_string(),
            fingerprint: url.to_string(),
        }
    }

    /// The deployment pointer could not be read; `why` says what the bucket answered.
    pub fn bucket(why: &str) -> Self {
        Self {
            reason: Reason::BucketUnreadable,
            scope: Scope::Bucket,
            subject: "the deployment pointer".into(),
            message: format!(
                "the deployment pointer could not be read, so the deployed version is unknown: {why}"
            ),
            fingerprint: "the deployment pointer could not be read".into(),
        }
    }

    /// The fleet names no credentials Secret and the operator's own identity gives none for its
    /// bucket; `why` says which and what to do.
    pub fn no_operator_credentials(why: &str) -> Self {
        Self {
            reason: Reason::NoOperatorCredentials,
            scope: Scope::Bucket,
            subject: "the deployment pointer".into(),
            message: format!("the deployed version is unknown: {why}"),
            fingerprint: "the operator has no credentials for".into(),
        }
    }

    /// Whether this failure is about a child of kind `kind`.
    pub fn is_child(&self, kind: &str) -> bool {
        matches!(&self.scope, Scope::Child { kind: k } if k == kind)
    }

    /// Whether this failure is about one of the fleet's children.
    pub fn is_any_child(&self) -> bool {
        matches!(self.scope, Scope::Child { .. })
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// The message of the Degraded condition for `failures`: every failure, in the order met.
pub fn summary(failures: &[Failure]) -> String {
    failures
        .iter()
        .map(|f| f.message.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use kube::core::Status;

    fn api(code: u16, reason: &str, message: &str) -> Error {
        Error::kube(
            "calling the API server",
            kube::Error::Api(Box::new(Status::failure(message, reason).with_code(code))),
        )
    }

    #[test]
    fn a_refusal_names_the_child_and_quotes_the_server() {
        let f = Failure::child(
            "Service",
            "web",
            "apply",
            &api(
                422,
                "Invalid",
                "Service \"web\" is invalid: spec.ports[1].name: Duplicate value: \"http\"",
            ),
        );
        assert_eq!(f.reason, Reason::ChildRejected);
        assert!(f.is_child("Service"));
        assert_eq!(
            f.message,
            "the API server refused to apply Service web (422 Invalid): Service \"web\" is invalid: spec.ports[1].name: Duplicate value: \"http\""
        );
        assert_eq!(f.fingerprint, f.message);
    }

    #[test]
    fn an_unmergeable_patch_is_a_refusal_not_an_outage() {
        let dup = api(
            500,
            "InternalError",
            "failed to create typed patch object (/; apps/v1, Kind=StatefulSet): .spec.template.spec.containers[name=\"celld\"].env: duplicate entries for key [name=\"A\"]",
        );
        assert_eq!(
            Failure::child("StatefulSet", "web", "apply", &dup).reason,
            Reason::ChildRejected
        );
    }

    #[test]
    fn outages_are_transient_and_keyed_by_subject() {
        for e in [
            api(503, "ServiceUnavailable", "etcd is down"),
            api(429, "TooManyRequests", "slow down"),
            api(504, "Timeout", "request timed out"),
        ] {
            let f = Failure::child("NetworkPolicy", "web", "apply", &e);
            assert_eq!(f.reason, Reason::ApiUnavailable, "{}", f.message);
            assert_eq!(f.fingerprint, "could not apply NetworkPolicy web, retrying");
            assert!(
                f.message
                    .starts_with("could not apply NetworkPolicy web, retrying"),
                "{}",
                f.message
            );
        }
        for e in [
            api(403, "Forbidden", "exceeded quota"),
            api(404, "NotFound", "namespace gone"),
            api(400, "BadRequest", "bad"),
        ] {
            assert_eq!(
                Failure::child("Ingress", "web", "apply", &e).reason,
                Reason::ChildRejected
            );
        }
    }

    #[test]
    fn listing_names_the_kind() {
        let f = Failure::child(
            "PodDisruptionBudget",
            "",
            "list",
            &api(403, "Forbidden", "no"),
        );
        assert_eq!(f.subject, "PodDisruptionBudget objects of the fleet");
    }

    /// A failure is reported once while the Degraded message carries its fingerprint, so
    /// every message must carry its own.
    fn carries_its_fingerprint(f: &Failure) {
        assert!(
            f.message.contains(&f.fingerprint),
            "{:?} is not in {:?}",
            f.fingerprint,
            f.message
        );
    }

    #[test]
    fn a_manifest_that_keeps_failing_is_one_failure_its_message_names() {
        use crate::buckets::manifest::Unreadable;
        let url = "s3://b/p/deploy/hello/00000000000000d2/manifest.json".to_string();
        let reads = [
            Unreadable::Failed {
                url: url.clone(),
                why: "503 Slow Down".into(),
            },
            Unreadable::TimedOut {
                url: url.clone(),
                timeout: std::time::Duration::from_secs(5),
            },
            Unreadable::Panicked {
                url: url.clone(),
                panic: "boom".into(),
            },
            Unreadable::Invalid {
                url: url.clone(),
                error: "expected value at line 1 column 1".into(),
            },
        ];
        let failures: Vec<_> = reads
            .iter()
            .map(|r| Failure::manifest_unreadable(r.url(), &r.to_string()))
            .collect();
        failures.iter().for_each(carries_its_fingerprint);
        assert!(
            failures
                .iter()
                .all(|f| f.fingerprint == failures[0].fingerprint)
        );
    }

    #[test]
    fn every_other_failure_carries_its_fingerprint() {
        let none = "the operator has no credentials for gs://b/p/deploy/current.json: the fleet names no credentials Secret";
        [
            Failure::no_operator_credentials(none),
            Failure::storage(&ResolveError::Api {
                what: "Secret creds".into(),
                source: Box::new(kube::Error::Api(Box::new(
                    Status::failure("etcdserver: request timed out", "InternalError")
                        .with_code(500),
                ))),
            }),
            Failure::bucket("reading s3://b/p/deploy/current.json failed: 503"),
            Failure::image_refused("v0.3 cannot follow v0.4"),
            Failure::env_refused("CELLD_X", "v0.6 refuses CELLD_X"),
            Failure::feature_unsupported("containers-v1", "needs containers-v1"),
            Failure::child("Service", "web", "apply", &api(422, "Invalid", "no")),
            Failure::child(
                "Service",
                "web",
                "apply",
                &api(503, "ServiceUnavailable", "later"),
            ),
        ]
        .iter()
        .for_each(carries_its_fingerprint);
    }

    #[test]
    fn the_summary_lists_every_failure_in_order() {
        let a = Failure::child("Service", "a", "apply", &api(422, "Invalid", "one"));
        let b = Failure::child("Ingress", "a", "apply", &api(403, "Forbidden", "two"));
        let s = summary(&[a.clone(), b.clone()]);
        assert_eq!(s, format!("{}; {}", a.message, b.message));
    }
}
