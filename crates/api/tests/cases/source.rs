//! Cases of spec.source: one of an image and a Flux source, a relative path, a bounded timeout.

use super::{Case, bad, ok};

pub const CASES: &[Case] = &[
    ok(
        "source-image-digest",
        fleet!(
            "source-image",
            "  source: {image: {reference: \"ghcr.io/acme/web-worker:1.4.2@sha256:ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12\"}, path: workers/web, timeout: 1h30m}\n"
        ),
    ),
    ok(
        "source-flux-bucket",
        fleet!(
            "source-flux",
            "  source: {sourceRef: {kind: Bucket, name: web-worker}, driftPolicy: Report, retries: 3, suspend: true, timeout: 90s}\n"
        ),
    ),
    ok(
        "source-image-deployer-layout",
        fleet!(
            "source-deployer",
            "  source: {image: {reference: \"registry.example.com/web-src:1.2.0\", layout: Deployer}, deployerImage: \"registry.example.com/deployer:1\"}\n"
        ),
    ),
    bad(
        "source-both",
        fleet!(
            "source-both",
            "  source: {image: {reference: \"r.example.com/w:1\"}, sourceRef: {kind: Bucket, name: w}}\n"
        ),
        "spec.source needs exactly one of image",
    ),
    bad(
        "source-neither",
        fleet!("source-neither", "  source: {path: ./}\n"),
        "spec.source needs exactly one of image",
    ),
    bad(
        "source-path-escapes",
        fleet!(
            "source-path",
            "  source: {image: {reference: \"r.example.com/w:1\"}, path: ../secrets}\n"
        ),
        "spec.source.path must be a relative directory",
    ),
    bad(
        "source-path-absolute",
        fleet!(
            "source-path-abs",
            "  source: {image: {reference: \"r.example.com/w:1\"}, path: /etc}\n"
        ),
        "spec.source.path must be a relative directory",
    ),
    bad(
        "source-timeout-form",
        fleet!(
            "source-timeout",
            "  source: {image: {reference: \"r.example.com/w:1\"}, timeout: 10min}\n"
        ),
        "spec.source.timeout must be a duration",
    ),
    bad(
        "source-timeout-too-short",
        fleet!(
            "source-timeout-short",
            "  source: {image: {reference: \"r.example.com/w:1\"}, timeout: 5s}\n"
        ),
        "spec.source.timeout must be from 30s to 24h",
    ),
    bad(
        "source-timeout-too-long",
        fleet!(
            "source-timeout-long",
            "  source: {image: {reference: \"r.example.com/w:1\"}, timeout: 25h}\n"
        ),
        "spec.source.timeout must be from 30s to 24h",
    ),
    bad(
        "source-image-reference-spaces",
        fleet!(
            "source-ref",
            "  source: {image: {reference: \"r.example.com/w:1 --privileged\"}}\n"
        ),
        "spec.source.image.reference must be an image reference",
    ),
    bad(
        "source-image-short-digest",
        fleet!(
            "source-digest",
            "  source: {image: {reference: \"r.example.com/w@sha256:abc\"}}\n"
        ),
        "spec.source.image.reference must be an image reference",
    ),
    bad(
        "source-ref-name",
        fleet!(
            "source-ref-name",
            "  source: {sourceRef: {kind: GitRepository, name: Web_Worker}}\n"
        ),
        "spec.source.sourceRef.name must be the name of a Flux source",
    ),
];
