//! Cases of spec.env against the celld version of spec.image: variables a release refuses at
//! startup, read from the release table.

use super::{Case, bad, ok};

pub const CASES: &[Case] = &[
    ok(
        "env-removed-later-on-v0.4.0",
        fleet!(
            "env-old-ok",
            r#"
  image: ghcr.io/denoland/celld:v0.4.0
  env:
    - {name: CELLD_OTEL_SINK, value: "stdout"}
    - {name: CELLD_VARS_FILE, value: /vars.json}
    - {name: CELLD_VAR_TOKEN, value: "x"}
    - {name: CELLD_SHUTDOWN_TOTAL_MS, value: "10000"}
"#
        ),
    ),
    bad(
        "env-otel-sink-on-v0.5.1",
        fleet!(
            "env-otel-sink",
            r#"
  image: ghcr.io/denoland/celld:v0.5.1
  env:
    - {name: CELLD_OTEL_SINK, value: ""}
"#
        ),
        "spec.env: celld v0.5.0 and later refuse CELLD_OTEL_SINK at startup, even empty, and spec.image runs v0.5.0 or later: use CELLD_OTEL=1 or CELLD_OTEL=<collector URL>",
    ),
    bad(
        "env-var-prefix-on-a-digest-pinned-v0.6.1",
        fleet!(
            "env-var-prefix",
            r#"
  image: ghcr.io/denoland/celld:v0.6.1@sha256:e188a7f2bb0b8cec9fb04ee4c3d1ed7cca0ea0419519ae2a9ba36e5b6fe5161b
  env:
    - {name: CELLD_VAR_API_KEY, valueFrom: {secretKeyRef: {name: api, key: key}}}
"#
        ),
        "celld v0.6.0 and later refuse every CELLD_VAR_* variable at startup, even empty",
    ),
    ok(
        "env-vars-on-v0.5.1",
        fleet!(
            "env-vars-051",
            r#"
  image: ghcr.io/denoland/celld:0.5.1
  env:
    - {name: CELLD_VAR_API_KEY, value: "x"}
    - {name: CELLD_WORKER_LOADER, value: "1"}
"#
        ),
    ),
    ok(
        "env-empty-worker-loader-on-v0.6.0",
        fleet!(
            "env-loader-empty",
            r#"
  image: ghcr.io/denoland/celld:v0.6.0
  env:
    - {name: CELLD_WORKER_LOADER, value: ""}
    - {name: CELLD_OTEL, value: "1"}
"#
        ),
    ),
    bad(
        "env-worker-loader-on-v0.6.0",
        fleet!(
            "env-loader-set",
            r#"
  image: ghcr.io/denoland/celld:v0.6.0
  env:
    - {name: CELLD_WORKER_LOADER, value: "on"}
"#
        ),
        "celld v0.6.0 and later refuse CELLD_WORKER_LOADER at startup, and spec.image runs v0.6.0 or later",
    ),
    ok(
        "env-refused-later-on-an-unknown-version",
        fleet!(
            "env-unknown",
            r#"
  image: ghcr.io/denoland/celld:latest
  env:
    - {name: CELLD_OTEL_SINK, value: "stdout"}
"#
        ),
    ),
    // 0.4.1's bound of the drain-token wait is the operator's to report (Degraded,
    // EnvRefused): its admission rule would cost more than the API server allows.
    ok(
        "env-short-shutdown-on-v0.4.1",
        fleet!(
            "env-short-shutdown",
            r#"
  image: ghcr.io/denoland/celld:v0.4.1
  env:
    - {name: CELLD_SHUTDOWN_TOTAL_MS, value: "30000"}
"#
        ),
    ),
    ok(
        "env-short-shutdown-with-a-short-token-wait-on-v0.4.1",
        fleet!(
            "env-short-both",
            r#"
  image: ghcr.io/denoland/celld:v0.4.1
  env:
    - {name: CELLD_SHUTDOWN_TOTAL_MS, value: "20000"}
    - {name: CELLD_DRAIN_TOKEN_WAIT_MS, value: "15000"}
"#
        ),
    ),
    ok(
        "env-short-shutdown-on-v0.5.0",
        fleet!(
            "env-short-050",
            r#"
  image: ghcr.io/denoland/celld:v0.5.0
  env:
    - {name: CELLD_SHUTDOWN_TOTAL_MS, value: "20000"}
"#
        ),
    ),
    // Settings 0.6.1 holds until every node runs it: refused on an older tag; on 0.6.1 or an
    // unknown version admitted, and held back by the operator until every node runs 0.6.1.
    bad(
        "held-retention-on-v0.6.0",
        fleet!(
            "held-retention-old",
            r#"
  image: ghcr.io/denoland/celld:v0.6.0
  env:
    - {name: CELLD_LTX_RETENTION_SECS, value: "86400"}
"#
        ),
        "spec.env: CELLD_LTX_RETENTION_SECS is used from celld v0.6.1 on, once every node runs it, and spec.image is tagged with an older version: remove CELLD_LTX_RETENTION_SECS, or set spec.image to v0.6.1 or later first and add it once every node runs it",
    ),
    ok(
        "held-retention-unset-on-v0.6.0",
        fleet!(
            "held-retention-zero",
            r#"
  image: ghcr.io/denoland/celld:v0.6.0
  env:
    - {name: CELLD_LTX_RETENTION_SECS, value: "0"}
"#
        ),
    ),
    ok(
        "held-retention-on-v0.6.1",
        fleet!(
            "held-retention-061",
            r#"
  image: ghcr.io/denoland/celld:v0.6.1@sha256:e188a7f2bb0b8cec9fb04ee4c3d1ed7cca0ea0419519ae2a9ba36e5b6fe5161b
  env:
    - {name: CELLD_LTX_RETENTION_SECS, value: "86400"}
"#
        ),
    ),
    ok(
        "held-retention-on-an-unknown-version",
        fleet!(
            "held-retention-latest",
            r#"
  image: ghcr.io/denoland/celld:latest
  env:
    - {name: CELLD_LTX_RETENTION_SECS, valueFrom: {configMapKeyRef: {name: gc, key: secs}}}
"#
        ),
    ),
    // A raised asset limit is the operator's to hold back: its number cannot be read at
    // admission within the cost budget.
    ok(
        "held-asset-limit-on-v0.6.0",
        fleet!(
            "held-assets-old",
            r#"
  image: ghcr.io/denoland/celld:v0.6.0
  env:
    - {name: CELLD_MAX_ASSET_FILE_BYTES, value: "52428800"}
"#
        ),
    ),
];
