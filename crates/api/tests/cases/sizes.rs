//! Cases too large to write out: maps with more entries than allowed and annotations larger than
//! an object may carry.

use super::Case;

/// A fleet with the spec lines `spec`, leaked to live as long as the static cases.
fn fleet(name: &str, spec: String) -> &'static str {
    let yaml = format!(
        "metadata: {{name: {name}}}\nspec:\n  objectStorage: {{bucket: \"s3://celld/app\", credentialsSecretRef: {{name: creds}}}}\n{spec}"
    );
    Box::leak(yaml.into_boxed_str())
}

/// A flow map of `count` entries `key-N: value`.
fn map(count: usize, value: &str) -> String {
    let entries: Vec<String> = (0..count)
        .map(|i| format!("key-{i}: \"{value}\""))
        .collect();
    format!("{{{}}}", entries.join(", "))
}

pub fn cases() -> Vec<Case> {
    let kib_100 = "x".repeat(100 * 1024);
    let kib_85 = "日".repeat(85 * 1024 / 3);
    vec![
        Case {
            name: "annotations-near-the-limit",
            yaml: fleet(
                "annotations-near-limit",
                format!(
                    "  podAnnotations: {}\n  service: {{annotations: {}}}\n",
                    map(2, &kib_100),
                    map(2, &kib_100)
                ),
            ),
            refused_with: None,
        },
        Case {
            name: "service-annotations-over-256-kib",
            yaml: fleet(
                "service-annotations-size",
                format!("  service: {{annotations: {}}}\n", map(3, &kib_100)),
            ),
            refused_with: Some("spec.service.annotations keys and values may total at most"),
        },
        Case {
            name: "ingress-annotations-over-256-kib-in-utf-8",
            yaml: fleet(
                "ingress-annotations-size",
                format!(
                    "  ingress: {{hostname: app.example.com, ingressClass: nginx, annotations: {}}}\n",
                    map(4, &kib_85)
                ),
            ),
            refused_with: Some("spec.ingress.annotations keys and values may total at most"),
        },
        Case {
            name: "too-many-pod-annotations",
            yaml: fleet(
                "pod-annotations-count",
                format!("  podAnnotations: {}\n", map(65, "x")),
            ),
            refused_with: Some("spec.podAnnotations: Too many"),
        },
        Case {
            name: "too-many-pod-labels",
            yaml: fleet(
                "pod-labels-count",
                format!("  podLabels: {}\n", map(65, "x")),
            ),
            refused_with: Some("spec.podLabels: Too many"),
        },
        Case {
            name: "too-many-node-selector-terms",
            yaml: fleet(
                "node-selector-terms-count",
                format!(
                    "  affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{}]}}}}}}\n",
                    ["{matchExpressions: [{key: disk, operator: Exists}]}"; 9].join(", ")
                ),
            ),
            refused_with: Some(
                "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Too many",
            ),
        },
    ]
}
