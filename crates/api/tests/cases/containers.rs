//! Cases of the celld container's fields: env and resources.

use super::{Case, bad, ok};

pub const CASES: &[Case] = &[
    ok(
        "env-everything",
        fleet!(
            "env-everything",
            r#"
  env:
    - {name: RUST_LOG, value: info}
    - {name: EMPTY}
    - {name: .dotted-name_1, value: ""}
    - {name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
    - {name: IPS, valueFrom: {fieldRef: {apiVersion: v1, fieldPath: status.podIPs}}}
    - {name: APP, valueFrom: {fieldRef: {fieldPath: "metadata.labels['app.kubernetes.io/name']"}}}
    - {name: OWNER, valueFrom: {fieldRef: {fieldPath: "metadata.annotations['Example.com/owner']"}}}
    - {name: MEMORY_MB, valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}}
    - {name: CPU, valueFrom: {resourceFieldRef: {containerName: celld, resource: requests.cpu, divisor: 1m}}}
    - {name: TOKEN, value: "", valueFrom: {secretKeyRef: {name: api-token, key: token.txt}}}
    - {name: MODE, valueFrom: {configMapKeyRef: {name: celld-settings, key: MODE, optional: true}}}
"#
        ),
    ),
    ok(
        "resources-everything",
        fleet!(
            "resources-everything",
            r#"
  resources:
    requests: {cpu: 500m, memory: 512Mi, ephemeral-storage: "1e9", hugepages-2Mi: 64Mi, example.com/fpga: "2"}
    limits: {cpu: "2", memory: 1.5Gi, ephemeral-storage: 2G, hugepages-2Mi: 64Mi, example.com/fpga: "2"}
"#
        ),
    ),
    ok(
        "resources-limits-only",
        fleet!(
            "resources-limits",
            "  resources: {limits: {cpu: \".5\", memory: 1Gi}}\n"
        ),
    ),
    ok(
        "resources-integers",
        fleet!(
            "resources-integers",
            "  resources: {requests: {cpu: 1, memory: 536870912}, limits: {cpu: 2, memory: 1073741824}}\n"
        ),
    ),
    bad(
        "resources-integer-request-above-limit",
        fleet!(
            "resources-integer-limit",
            "  resources: {requests: {cpu: 3}, limits: {cpu: 2}}\n"
        ),
        "spec.resources: a request may not exceed the limit of the same resource",
    ),
    bad(
        "resources-negative-integer",
        fleet!(
            "resources-negative-integer",
            "  resources: {limits: {cpu: -1}}\n"
        ),
        "spec.resources.limits: a quantity must be a non-negative Kubernetes quantity",
    ),
    bad(
        "env-name-with-equals",
        fleet!("env-equals", "  env: [{name: a=b, value: x}]\n"),
        "spec.env: a name must start with a letter",
    ),
    bad(
        "env-value-and-value-from",
        fleet!(
            "env-both",
            "  env: [{name: NODE, value: x, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]\n"
        ),
        "spec.env: a variable takes value or valueFrom, not both",
    ),
    bad(
        "env-duplicate-name",
        fleet!(
            "env-duplicate",
            "  env: [{name: RUST_LOG, value: info}, {name: RUST_LOG, value: debug}]\n"
        ),
        "spec.env: each name may appear once",
    ),
    bad(
        "env-bad-field-path",
        fleet!(
            "env-field-path",
            "  env: [{name: X, valueFrom: {fieldRef: {fieldPath: metadata.bogus}}}]\n"
        ),
        "spec.env: valueFrom.fieldRef.fieldPath must be one of",
    ),
    bad(
        "env-field-path-bad-label-key",
        fleet!(
            "env-field-path-label",
            "  env: [{name: X, valueFrom: {fieldRef: {fieldPath: \"metadata.labels['bad key']\"}}}]\n"
        ),
        "spec.env: valueFrom.fieldRef.fieldPath must be one of",
    ),
    bad(
        "env-two-sources",
        fleet!(
            "env-two-sources",
            "  env: [{name: X, valueFrom: {fieldRef: {fieldPath: spec.nodeName}, secretKeyRef: {name: s, key: k}}}]\n"
        ),
        "spec.env: valueFrom needs exactly one of",
    ),
    bad(
        "env-bad-resource-field",
        fleet!(
            "env-resource-field",
            "  env: [{name: X, valueFrom: {resourceFieldRef: {resource: limits.gpu}}}]\n"
        ),
        "spec.env: valueFrom.resourceFieldRef.resource must be one of",
    ),
    bad(
        "env-cpu-divisor-in-bytes",
        fleet!(
            "env-divisor",
            "  env: [{name: X, valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: 1Mi}}}]\n"
        ),
        "spec.env: valueFrom.resourceFieldRef.resource must be one of",
    ),
    bad(
        "env-other-container",
        fleet!(
            "env-container",
            "  env: [{name: X, valueFrom: {resourceFieldRef: {containerName: sidecar, resource: limits.cpu}}}]\n"
        ),
        "containerName empty or celld",
    ),
    bad(
        "env-bad-secret-name",
        fleet!(
            "env-secret-name",
            "  env: [{name: X, valueFrom: {secretKeyRef: {name: Bad_Secret, key: token}}}]\n"
        ),
        "spec.env: valueFrom.secretKeyRef needs name, the name of a Secret",
    ),
    bad(
        "env-bad-config-map-key",
        fleet!(
            "env-config-map-key",
            "  env: [{name: X, valueFrom: {configMapKeyRef: {name: settings, key: \"a/b\"}}}]\n"
        ),
        "spec.env: valueFrom.configMapKeyRef needs name, the name of a ConfigMap",
    ),
    bad(
        "resources-request-above-limit",
        fleet!(
            "resources-request-limit",
            "  resources: {requests: {memory: 2Gi}, limits: {memory: 1Gi}}\n"
        ),
        "spec.resources: a request may not exceed the limit of the same resource",
    ),
    bad(
        "resources-negative-cpu",
        fleet!(
            "resources-negative",
            "  resources: {requests: {cpu: \"-1\"}}\n"
        ),
        "spec.resources.requests: a quantity must be a non-negative Kubernetes quantity",
    ),
    bad(
        "resources-unknown-name",
        fleet!("resources-name", "  resources: {limits: {bogus: \"1\"}}\n"),
        "spec.resources.limits: a resource must be cpu, memory, ephemeral-storage",
    ),
    bad(
        "resources-kubernetes-io-name",
        fleet!(
            "resources-k8s-name",
            "  resources: {limits: {kubernetes.io/bogus: \"1\"}}\n"
        ),
        "spec.resources.limits: a resource must be cpu, memory, ephemeral-storage",
    ),
    bad(
        "resources-huge-exponent",
        fleet!(
            "resources-exponent",
            "  resources: {limits: {memory: \"1e1000\"}}\n"
        ),
        "spec.resources.limits: a quantity must be a non-negative Kubernetes quantity",
    ),
    bad(
        "resources-above-2-63",
        fleet!(
            "resources-too-large",
            "  resources: {limits: {memory: 10E}}\n"
        ),
        "spec.resources.limits: a quantity must be a non-negative Kubernetes quantity",
    ),
    bad(
        "resources-not-a-quantity",
        fleet!(
            "resources-not-quantity",
            "  resources: {requests: {memory: lots}}\n"
        ),
        "spec.resources.requests: a quantity must be a non-negative Kubernetes quantity",
    ),
    bad(
        "resources-extended-without-limit",
        fleet!(
            "resources-extended",
            "  resources: {requests: {example.com/fpga: \"1\"}}\n"
        ),
        "spec.resources: huge pages and extended resources cannot be overcommitted",
    ),
    bad(
        "resources-claims",
        fleet!("resources-claims", "  resources: {claims: [{name: gpu}]}\n"),
        "spec.resources.claims is not supported",
    ),
    bad(
        "local-storage-huge-exponent",
        fleet!(
            "local-storage-exponent",
            "  localStorage: {size: \"1e1000\"}\n"
        ),
        "spec.localStorage.size must be a positive Kubernetes quantity",
    ),
    bad(
        "local-storage-zero",
        fleet!("local-storage-zero", "  localStorage: {size: \"0\"}\n"),
        "spec.localStorage.size must be a positive Kubernetes quantity",
    ),
];
