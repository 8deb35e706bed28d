//! Cases of the pod scheduling fields: nodeSelector, tolerations, affinity and
//! topologySpreadConstraints.

use super::{Case, bad, ok};

pub const CASES: &[Case] = &[
    ok(
        "scheduling-everything",
        fleet!(
            "scheduling-everything",
            r#"
  nodeSelector: {kubernetes.io/os: linux, node.example.com/pool: "", disk: ssd}
  tolerations:
    - {operator: Exists}
    - {key: dedicated, operator: Exists, effect: NoSchedule}
    - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 30}
    - {key: dedicated, value: celld, effect: PreferNoSchedule}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
          - matchExpressions:
              - {key: topology.kubernetes.io/zone, operator: In, values: [eu-west-1a, eu-west-1b]}
              - {key: cpu-count, operator: Gt, values: ["4"]}
              - {key: spot, operator: DoesNotExist}
          - matchFields: [{key: metadata.name, operator: NotIn, values: [node-1]}]
      preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 100
          preference: {matchExpressions: [{key: disk, operator: In, values: [ssd]}]}
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        - topologyKey: kubernetes.io/hostname
          labelSelector: {matchLabels: {platform.celld.dev/fleet: scheduling-everything}}
          matchLabelKeys: [controller-revision-hash]
      preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 1
          podAffinityTerm:
            topologyKey: topology.kubernetes.io/zone
            namespaces: [default, edge]
            labelSelector: {matchExpressions: [{key: app, operator: Exists}]}
            namespaceSelector: {matchExpressions: [{key: team, operator: NotIn, values: [other]}]}
    podAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 50
          podAffinityTerm: {topologyKey: topology.kubernetes.io/zone, labelSelector: {matchLabels: {app: cache}}}
  topologySpreadConstraints:
    - maxSkew: 1
      topologyKey: topology.kubernetes.io/zone
      whenUnsatisfiable: DoNotSchedule
      minDomains: 3
      nodeAffinityPolicy: Honor
      nodeTaintsPolicy: Ignore
      labelSelector: {matchLabels: {platform.celld.dev/fleet: scheduling-everything}}
      matchLabelKeys: [controller-revision-hash]
    - maxSkew: 2
      topologyKey: kubernetes.io/hostname
      whenUnsatisfiable: ScheduleAnyway
"#
        ),
    ),
    bad(
        "node-selector-key-two-slashes",
        fleet!("node-selector-slashes", "  nodeSelector: {\"a/b/c\": x}\n"),
        "spec.nodeSelector keys must be a qualified name",
    ),
    bad(
        "node-selector-bad-value",
        fleet!("node-selector-value", "  nodeSelector: {disk: \"ssd!\"}\n"),
        "spec.nodeSelector values must be empty or at most 63",
    ),
    bad(
        "node-selector-value-too-long",
        fleet!(
            "node-selector-long",
            "  nodeSelector: {disk: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}\n"
        ),
        "spec.nodeSelector.disk: Too long",
    ),
    bad(
        "toleration-exists-with-value",
        fleet!(
            "toleration-exists-value",
            "  tolerations: [{key: dedicated, operator: Exists, value: celld}]\n"
        ),
        "spec.tolerations: a toleration with operator Exists matches every value",
    ),
    bad(
        "toleration-bad-effect",
        fleet!(
            "toleration-effect",
            "  tolerations: [{key: dedicated, operator: Exists, effect: Explode}]\n"
        ),
        "spec.tolerations: effect must be NoSchedule, PreferNoSchedule or NoExecute",
    ),
    bad(
        "toleration-bad-key",
        fleet!(
            "toleration-key",
            "  tolerations: [{key: bad key, operator: Exists}]\n"
        ),
        "spec.tolerations: key must be a taint key",
    ),
    bad(
        "toleration-bad-operator",
        fleet!(
            "toleration-operator",
            "  tolerations: [{key: dedicated, operator: Matches, value: x}]\n"
        ),
        "spec.tolerations: operator must be Equal (the default) or Exists",
    ),
    bad(
        "toleration-equal-without-key",
        fleet!("toleration-no-key", "  tolerations: [{value: celld}]\n"),
        "spec.tolerations: a toleration without key matches every taint and needs operator Exists",
    ),
    bad(
        "toleration-seconds-without-no-execute",
        fleet!(
            "toleration-seconds",
            "  tolerations: [{key: dedicated, operator: Exists, effect: NoSchedule, tolerationSeconds: 10}]\n"
        ),
        "spec.tolerations: tolerationSeconds applies to effect NoExecute only",
    ),
    bad(
        "affinity-bad-operator",
        fleet!(
            "affinity-operator",
            r#"
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchExpressions: [{key: disk, operator: Like, values: [ssd]}]}]
"#
        ),
        "matchExpressions: operator must be In, NotIn, Exists, DoesNotExist, Gt or Lt",
    ),
    bad(
        "affinity-no-terms",
        fleet!(
            "affinity-no-terms",
            r#"
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: []}
"#
        ),
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms needs at least one term",
    ),
    bad(
        "affinity-in-without-values",
        fleet!(
            "affinity-in-values",
            r#"
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
        - {weight: 10, preference: {matchExpressions: [{key: disk, operator: In}]}}
"#
        ),
        "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[*].preference.matchExpressions: operators In and NotIn need values",
    ),
    bad(
        "affinity-gt-not-integer",
        fleet!(
            "affinity-gt",
            r#"
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchExpressions: [{key: cpu-count, operator: Gt, values: [four]}]}]
"#
        ),
        "Gt and Lt exactly one integer value",
    ),
    bad(
        "affinity-match-fields-label",
        fleet!(
            "affinity-fields",
            r#"
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchFields: [{key: metadata.labels, operator: In, values: [x]}]}]
"#
        ),
        "matchFields: the only field is metadata.name",
    ),
    bad(
        "affinity-weight-zero",
        fleet!(
            "affinity-weight",
            r#"
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
        - {weight: 0, preference: {matchExpressions: [{key: disk, operator: Exists}]}}
"#
        ),
        "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution: weight must be between 1 and 100",
    ),
    bad(
        "pod-anti-affinity-empty-topology-key",
        fleet!(
            "anti-affinity-topology",
            r#"
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        - topologyKey: ""
          labelSelector: {matchLabels: {app: celld}}
"#
        ),
        "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[*]: topologyKey must be a node label key",
    ),
    bad(
        "pod-affinity-selector-bad-value",
        fleet!(
            "affinity-selector-value",
            r#"
  affinity:
    podAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 5
          podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: "-cache"}}}
"#
        ),
        "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[*].podAffinityTerm.labelSelector.matchLabels: values must be label values",
    ),
    bad(
        "pod-affinity-selector-exists-with-values",
        fleet!(
            "affinity-selector-exists",
            r#"
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        - topologyKey: kubernetes.io/hostname
          namespaceSelector: {matchExpressions: [{key: team, operator: Exists, values: [edge]}]}
"#
        ),
        "namespaceSelector.matchExpressions: operators In and NotIn need values, Exists and DoesNotExist take none",
    ),
    bad(
        "pod-affinity-bad-namespace",
        fleet!(
            "affinity-namespace",
            r#"
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        - {topologyKey: kubernetes.io/hostname, namespaces: [Edge_Team]}
"#
        ),
        "namespaces must be namespace names",
    ),
    bad(
        "spread-max-skew-zero",
        fleet!(
            "spread-skew",
            "  topologySpreadConstraints: [{maxSkew: 0, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}]\n"
        ),
        "spec.topologySpreadConstraints: maxSkew must be at least 1",
    ),
    bad(
        "spread-empty-topology-key",
        fleet!(
            "spread-key",
            "  topologySpreadConstraints: [{maxSkew: 1, topologyKey: \"\", whenUnsatisfiable: DoNotSchedule}]\n"
        ),
        "spec.topologySpreadConstraints: topologyKey must be a node label key",
    ),
    bad(
        "spread-min-domains-schedule-anyway",
        fleet!(
            "spread-min-domains",
            "  topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}]\n"
        ),
        "spec.topologySpreadConstraints: minDomains applies to whenUnsatisfiable DoNotSchedule only",
    ),
    bad(
        "spread-bad-when-unsatisfiable",
        fleet!(
            "spread-when",
            "  topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: Maybe}]\n"
        ),
        "spec.topologySpreadConstraints: whenUnsatisfiable must be DoNotSchedule or ScheduleAnyway",
    ),
    bad(
        "spread-duplicate",
        fleet!(
            "spread-duplicate",
            r#"
  topologySpreadConstraints:
    - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}
    - {maxSkew: 2, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}
"#
        ),
        "spec.topologySpreadConstraints: two constraints have the same topologyKey and whenUnsatisfiable",
    ),
    bad(
        "spread-selector-bad-operator",
        fleet!(
            "spread-selector",
            r#"
  topologySpreadConstraints:
    - maxSkew: 1
      topologyKey: kubernetes.io/hostname
      whenUnsatisfiable: DoNotSchedule
      labelSelector: {matchExpressions: [{key: app, operator: Gt, values: ["1"]}]}
"#
        ),
        "spec.topologySpreadConstraints[*].labelSelector.matchExpressions: operator must be In, NotIn, Exists or DoesNotExist",
    ),
    bad(
        "spread-match-label-keys-without-selector",
        fleet!(
            "spread-label-keys",
            "  topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, matchLabelKeys: [pod-template-hash]}]\n"
        ),
        "spec.topologySpreadConstraints: matchLabelKeys needs a labelSelector",
    ),
    bad(
        "spread-match-label-key-in-selector",
        fleet!(
            "spread-label-key-overlap",
            r#"
  topologySpreadConstraints:
    - maxSkew: 1
      topologyKey: kubernetes.io/hostname
      whenUnsatisfiable: DoNotSchedule
      labelSelector: {matchLabels: {platform.celld.dev/fleet: spread-label-key-overlap}}
      matchLabelKeys: [platform.celld.dev/fleet]
"#
        ),
        "spec.topologySpreadConstraints: a key of matchLabelKeys may not also be in the constraint's labelSelector",
    ),
    bad(
        "pod-affinity-key-in-both-lists",
        fleet!(
            "affinity-key-overlap",
            r#"
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        - topologyKey: kubernetes.io/hostname
          labelSelector: {matchExpressions: [{key: app, operator: Exists}]}
          matchLabelKeys: [tenant]
          mismatchLabelKeys: [tenant]
"#
        ),
        "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[*]: a key may be in only one of matchLabelKeys, mismatchLabelKeys and the labelSelector",
    ),
];
