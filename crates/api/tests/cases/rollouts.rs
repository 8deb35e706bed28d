//! CelldRollout cases: what a rollout ships, which fleets, its waves and its gates.

use super::{Case, bad, ok};

/// A rollout manifest: metadata.name `$name`, an image source, and the spec lines `$spec`
/// (indented by two spaces).
macro_rules! rollout {
    ($name:literal, $spec:literal) => {
        concat!(
            "metadata: {name: ",
            $name,
            "}\nspec:\n  source: {image: {reference: \"registry.example.com/web@sha256:0000000000000000000000000000000000000000000000000000000000000000\"}}\n",
            $spec
        )
    };
}

pub const ROLLOUTS: &[Case] = &[
    ok(
        "rollout-minimal",
        rollout!("web", "  selector: {}\n  waves: [{}]\n"),
    ),
    ok(
        "rollout-every-field",
        rollout!(
            "web-all",
            "  selector: {matchLabels: {tier: web}, matchExpressions: [{key: region, operator: In, values: [eu, us]}]}\n  waves:\n  - {fleets: 1, bake: 10m, approval: Manual}\n  - {selector: {matchLabels: {ring: canary}}, bake: 0s, maxParallel: 5}\n  - {fleets: \"10%\", bake: 1h30m}\n  - {fleets: \"100%\"}\n  gates:\n    progressDeadline: 30m\n    webhooks:\n    - {name: smoke, url: \"http://gate.tests.svc:8080/check\", timeout: 30s, retries: 0}\n    - {name: slo, url: \"https://slo.example.com/celld?x=1\"}\n  onFailure: Halt\n  paused: true\n"
        ),
    ),
    ok(
        "rollout-flux-source",
        "metadata: {name: web-flux}\nspec:\n  source: {sourceRef: {kind: OCIRepository, name: web}, path: workers/web, timeout: 20m, retries: 5}\n  selector: {}\n  waves: [{fleets: 2}, {}]\n",
    ),
    bad(
        "rollout-two-sources",
        "metadata: {name: two}\nspec:\n  source: {image: {reference: \"r/w:1\"}, sourceRef: {kind: Bucket, name: w}}\n  selector: {}\n  waves: [{}]\n",
        "spec.source needs exactly one of image",
    ),
    bad(
        "rollout-no-waves",
        rollout!("none", "  selector: {}\n  waves: []\n"),
        "spec.waves needs at least one wave",
    ),
    bad(
        "rollout-wave-zero-fleets",
        rollout!("zero", "  selector: {}\n  waves: [{fleets: 0}]\n"),
        "spec.waves[*].fleets must be a number of fleets from 1 to 1000",
    ),
    bad(
        "rollout-wave-bad-percentage",
        rollout!("pct", "  selector: {}\n  waves: [{fleets: \"150%\"}]\n"),
        "or a percentage from 1% to 100%",
    ),
    bad(
        "rollout-wave-count-and-selector",
        rollout!(
            "both",
            "  selector: {}\n  waves: [{fleets: 1, selector: {matchLabels: {a: b}}}]\n"
        ),
        "either by count (fleets) or by label (selector)",
    ),
    bad(
        "rollout-wave-bad-bake",
        rollout!("bake", "  selector: {}\n  waves: [{bake: 2d}]\n"),
        "spec.waves[*].bake must be a duration",
    ),
    bad(
        "rollout-wave-bake-too-long",
        rollout!("bake-long", "  selector: {}\n  waves: [{bake: 25h}]\n"),
        "from 0s to 24h",
    ),
    bad(
        "rollout-bad-selector-operator",
        rollout!(
            "sel",
            "  selector: {matchExpressions: [{key: tier, operator: Equals, values: [web]}]}\n  waves: [{}]\n"
        ),
        "spec.selector.matchExpressions: operator must be In, NotIn, Exists or DoesNotExist",
    ),
    bad(
        "rollout-webhook-not-a-url",
        rollout!(
            "hook",
            "  selector: {}\n  waves: [{}]\n  gates: {webhooks: [{name: smoke, url: \"gate.tests.svc/check\"}]}\n"
        ),
        "spec.gates.webhooks[*].url must be an http:// or https:// URL",
    ),
    bad(
        "rollout-webhook-metadata-endpoint",
        rollout!(
            "meta",
            "  selector: {}\n  waves: [{}]\n  gates: {webhooks: [{name: steal, url: \"http://169.254.169.254/latest/meta-data\"}]}\n"
        ),
        "must not name a link-local address or a cloud metadata endpoint",
    ),
    bad(
        "rollout-webhook-link-local-v6",
        rollout!(
            "meta6",
            "  selector: {}\n  waves: [{}]\n  gates: {webhooks: [{name: steal, url: \"http://[fe90::1]/x\"}]}\n"
        ),
        "must not name a link-local address or a cloud metadata endpoint",
    ),
    bad(
        "rollout-webhook-mapped-metadata",
        rollout!(
            "mapped",
            "  selector: {}\n  waves: [{}]\n  gates: {webhooks: [{name: steal, url: \"http://[::ffff:169.254.169.254]/x\"}]}\n"
        ),
        "must not name a link-local address or a cloud metadata endpoint",
    ),
    bad(
        "rollout-webhook-metadata-name-with-dot",
        rollout!(
            "dotted",
            "  selector: {}\n  waves: [{}]\n  gates: {webhooks: [{name: steal, url: \"http://metadata.google.internal./x\"}]}\n"
        ),
        "must not name a link-local address or a cloud metadata endpoint",
    ),
    bad(
        "rollout-webhook-octal-metadata",
        rollout!(
            "octal",
            "  selector: {}\n  waves: [{}]\n  gates: {webhooks: [{name: steal, url: \"http://0251.0376.0251.0376/latest/meta-data/\"}]}\n"
        ),
        "must be four decimal numbers from 0 to 255 without leading zeros",
    ),
    bad(
        "rollout-webhook-decimal-metadata",
        rollout!(
            "decimal",
            "  selector: {}\n  waves: [{}]\n  gates: {webhooks: [{name: steal, url: \"http://2852039166/\"}]}\n"
        ),
        "must be four decimal numbers from 0 to 255 without leading zeros",
    ),
    bad(
        "rollout-webhook-hex-metadata",
        rollout!(
            "hex",
            "  selector: {}\n  waves: [{}]\n  gates: {webhooks: [{name: steal, url: \"http://169.0xfe.169.254/\"}]}\n"
        ),
        "must be four decimal numbers from 0 to 255 without leading zeros",
    ),
    ok(
        "rollout-webhook-ip-and-digit-names",
        rollout!(
            "digits",
            "  selector: {}\n  waves: [{}]\n  gates: {webhooks: [{name: a, url: \"http://10.0.0.7:8080/check\"}, {name: b, url: \"https://1password.example.com/x\"}]}\n"
        ),
    ),
    bad(
        "rollout-webhook-names-repeat",
        rollout!(
            "twice",
            "  selector: {}\n  waves: [{}]\n  gates: {webhooks: [{name: a, url: \"http://a.b\"}, {name: a, url: \"http://c.d\"}]}\n"
        ),
        "each webhook needs a name of its own",
    ),
    bad(
        "rollout-progress-deadline-too-short",
        rollout!(
            "deadline",
            "  selector: {}\n  waves: [{}]\n  gates: {progressDeadline: 10s}\n"
        ),
        "spec.gates.progressDeadline must be a duration",
    ),
    bad(
        "rollout-image-with-a-scheme",
        "metadata: {name: scheme}\nspec:\n  source: {image: {reference: \"https://registry.example.com/web:1\"}}\n  selector: {}\n  waves: [{}]\n",
        "no scheme such as https://",
    ),
    bad(
        "rollout-bad-path",
        "metadata: {name: path}\nspec:\n  source: {image: {reference: \"r/w:1\"}, path: ../up}\n  selector: {}\n  waves: [{}]\n",
        "spec.source.path must be a relative directory",
    ),
];
