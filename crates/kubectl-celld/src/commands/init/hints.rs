//! Admission messages name spec fields; `init` users typed flags. This names the flags too.

use celld_api::SpecError;

/// Words of admission messages and the `init` flags that set those fields, most specific first.
const FLAGS: &[(&str, &str)] = &[
    ("metadata.name", "NAME"),
    ("spec.storeRef", "--store"),
    ("credentialsSecretRef", "--credentials-secret"),
    ("azureStorageAccount", "--azure-storage-account"),
    ("bucket", "--bucket"),
    ("endpoint", "--endpoint"),
    ("region", "--region"),
    ("allowHTTP", "--allow-http"),
    ("hostname", "--hostname"),
    ("ingressClass", "--ingress-class"),
    ("gatewayRefs", "--gateway"),
    ("ImplementationSpecific", "--path-type"),
    ("pathType", "--path-type"),
    ("stripPrefix", "--strip-prefix"),
    ("ingress.path", "--path"),
    ("path /", "--path"),
    ("clusterIssuer", "--tls-cluster-issuer"),
    ("secretName", "--tls-secret"),
    ("ingress.tls", "--tls-cluster-issuer"),
    ("ingress.tls", "--tls-secret"),
    ("storageClassName", "--storage-class"),
    ("localStorage.size", "--local-storage-size"),
    ("type Persistent", "--local-storage"),
    ("localStorage.type", "--local-storage"),
    ("spec.env", "--env"),
    ("podAnnotations", "--pod-annotation"),
    ("podLabels", "--pod-label"),
    ("spec.nodeSelector", "--node-selector"),
    ("spec.tolerations", "--toleration"),
    ("spec.topologySpreadConstraints", "--spread"),
    ("spec.affinity", "--affinity-file"),
    ("serviceAccountName", "--service-account"),
    ("service.annotations", "--service-annotation"),
    ("ingress.annotations", "--route-annotation"),
    ("spec.resources", "--cpu-request"),
    ("spec.resources", "--memory-request"),
    ("spec.resources", "--cpu-limit"),
    ("spec.resources", "--memory-limit"),
];

/// The flags a message is about, in the order of [`FLAGS`], without repeats.
pub fn flags_for(message: &str) -> Vec<&'static str> {
    // "... keep only spec.objectStorage.bucket" names a field to keep, not to change.
    let message = message.split("keep only").next().unwrap_or(message);
    let mut out: Vec<&'static str> = Vec::new();
    for (word, flag) in FLAGS {
        if message.contains(word) && !out.contains(flag) {
            out.push(flag);
        }
    }
    out
}

/// The error text for a refused spec: every broken rule, each with the flags to change.
pub fn explain(err: &SpecError) -> String {
    let mut out = String::from("the fleet would be refused by the API server:");
    for v in &err.violations {
        out.push_str("\n  - ");
        out.push_str(&v.message);
        let flags = flags_for(&v.message);
        if !flags.is_empty() {
            out.push_str(&format!(" [flags: {}]", flags.join(", ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::flags_for;

    #[test]
    fn names_the_flags_of_a_message() {
        assert_eq!(
            flags_for(
                "spec.storeRef excludes spec.objectStorage.credentialsSecretRef: the CelldObjectStore names the credentials Secret, so remove credentialsSecretRef (or remove storeRef for an inline connection)"
            ),
            vec!["--store", "--credentials-secret"]
        );
        assert_eq!(
            flags_for(
                "spec.ingress.stripPrefix needs spec.ingress.path other than /: with path / there is no prefix to strip"
            ),
            vec!["--strip-prefix", "--path"]
        );
        assert_eq!(
            flags_for("spec.ingress.annotations keys must be a qualified name [PREFIX/]NAME"),
            vec!["--route-annotation"]
        );
        assert_eq!(
            flags_for("spec.resources: a request may not exceed the limit of the same resource"),
            vec![
                "--cpu-request",
                "--memory-request",
                "--cpu-limit",
                "--memory-limit"
            ]
        );
    }
}
