//! Cases of spec.autoscaling: bounds in order, every behavior field.

use super::{Case, bad, ok};

pub const CASES: &[Case] = &[
    ok(
        "autoscaling-defaults",
        fleet!("autoscaling-defaults", "  autoscaling: {maxReplicas: 5}\n"),
    ),
    ok(
        "autoscaling-every-field",
        fleet!(
            "autoscaling-full",
            "  autoscaling: {minReplicas: 2, maxReplicas: 12, scaleUp: {stabilizationWindowSeconds: 0, maxNodesPerStep: 3, periodSeconds: 30}, scaleDown: {stabilizationWindowSeconds: 600, periodSeconds: 120, memoryUtilizationPercent: 80}}\n  resources: {limits: {memory: 2Gi}}\n  env: [{name: CELLD_IDLE_EVICT_S, value: \"300\"}]\n"
        ),
    ),
    ok(
        "autoscaling-fixed-size",
        fleet!(
            "autoscaling-fixed",
            "  autoscaling: {minReplicas: 3, maxReplicas: 3}\n"
        ),
    ),
    bad(
        "autoscaling-min-above-max",
        fleet!(
            "autoscaling-inverted",
            "  autoscaling: {minReplicas: 4, maxReplicas: 2}\n"
        ),
        "spec.autoscaling.minReplicas must not exceed spec.autoscaling.maxReplicas",
    ),
];
