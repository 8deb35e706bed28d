//! What can stop a `preview` command: a preview or a fleet that is not what the command needs,
//! a refusal of the API server's admission, and a wait that ended without what it waited for. Each message names the preview and what to do.

use std::time::Duration;

/// A `preview` command could not go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreviewError {
    /// The named preview does not exist.
    #[error("{}", not_found(.name, .namespace, .near))]
    NotFound {
        /// The name asked for.
        name: String,
        /// The namespace looked in.
        namespace: String,
        /// Previews of that namespace with similar names.
        near: Vec<String>,
    },

    /// The fleet to preview has no spec.previews.
    #[error(
        "CelldFleet '{fleet}' in namespace '{namespace}' does not allow previews (it has no spec.previews): add spec.previews to it, with baseDomain, bucket, and ingressClass or gatewayRefs (described by: kubectl explain celldfleet.spec.previews), for example with: kubectl edit celldfleet {fleet} -n {namespace}; nothing was created"
    )]
    NotAllowed {
        /// The fleet.
        fleet: String,
        /// Its namespace.
        namespace: String,
    },

    /// The API server refused to create or update the preview (its CRD's rules, or the
    /// `celld-previews` admission policy): its message names the field.
    #[error("the API server refused CelldPreview {namespace}/{name}: {message}")]
    Refused {
        /// The preview.
        name: String,
        /// Its namespace.
        namespace: String,
        /// The API server's message.
        message: String,
    },

    /// A preview of that name exists for another fleet; spec.fleet cannot change.
    #[error(
        "CelldPreview {namespace}/{name} already exists as a preview of fleet '{fleet}', not '{wanted}', and a preview's fleet cannot change: delete it first (kubectl celld preview delete {name} -n {namespace} --wait), or choose another name"
    )]
    OtherFleet {
        /// The preview.
        name: String,
        /// Its namespace.
        namespace: String,
        /// The fleet it previews.
        fleet: String,
        /// The fleet asked for.
        wanted: String,
    },

    /// The operator reports that the preview cannot be served as it is.
    #[error(
        "CelldPreview {namespace}/{name} failed: {reason}: {message} (details: kubectl celld preview status {name} -n {namespace})"
    )]
    Failed {
        /// The preview.
        name: String,
        /// Its namespace.
        namespace: String,
        /// The Ready condition's reason.
        reason: String,
        /// The Ready condition's message: why, and what to do.
        message: String,
    },

    /// A wait ended at its timeout.
    #[error(
        "CelldPreview {namespace}/{name}: {what} after {}s: {last}; follow it with: kubectl celld preview status {name} -n {namespace}",
        .waited.as_secs()
    )]
    TimedOut {
        /// The preview.
        name: String,
        /// Its namespace.
        namespace: String,
        /// What did not happen (`its fleet was not created`).
        what: String,
        /// How long the wait was.
        waited: Duration,
        /// Where it stood last.
        last: String,
    },
}

fn not_found(name: &str, namespace: &str, near: &[String]) -> String {
    let mut msg = format!("CelldPreview '{name}' does not exist in namespace '{namespace}'");
    if near.is_empty() {
        msg.push_str(&format!(
            "; list the previews with: kubectl celld preview list -n {namespace} (or -A)"
        ));
    } else {
        msg.push_str(&format!("; did you mean {}?", near.join(", ")));
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_suggests_or_says_how_to_list() {
        let e = PreviewError::NotFound {
            name: "pr-12".into(),
            namespace: "apps".into(),
            near: vec!["pr-1".into(), "pr-123".into()],
        };
        insta::assert_snapshot!(e.to_string(), @"CelldPreview 'pr-12' does not exist in namespace 'apps'; did you mean pr-1, pr-123?");
        let e = PreviewError::NotFound {
            name: "pr-9".into(),
            namespace: "apps".into(),
            near: vec![],
        };
        insta::assert_snapshot!(e.to_string(), @"CelldPreview 'pr-9' does not exist in namespace 'apps'; list the previews with: kubectl celld preview list -n apps (or -A)");
    }

    #[test]
    fn a_fleet_without_previews_is_told_how_to_allow_them() {
        let e = PreviewError::NotAllowed {
            fleet: "web".into(),
            namespace: "apps".into(),
        };
        insta::assert_snapshot!(e.to_string(), @"CelldFleet 'web' in namespace 'apps' does not allow previews (it has no spec.previews): add spec.previews to it, with baseDomain, bucket, and ingressClass or gatewayRefs (described by: kubectl explain celldfleet.spec.previews), for example with: kubectl edit celldfleet web -n apps; nothing was created");
    }
}
