//! Cases of spec.previews on a fleet, and of CelldPreview objects on their own (what the
//! admission policy checks against the fleet is tested on the cluster).

use super::{Case, bad, ok};

pub const CASES: &[Case] = &[
    ok(
        "previews-ingress",
        fleet!(
            "previews-ingress",
            "  previews: {baseDomain: preview.example.com, bucket: \"s3://celld-previews/app\", ingressClass: nginx}\n"
        ),
    ),
    ok(
        "previews-every-field",
        fleet!(
            "previews-full",
            "  previews: {baseDomain: preview.example.com, bucket: \"s3://celld/previews\", ingressClass: nginx, tls: {secretName: preview-wildcard}, ttl: 24h, maxTtl: 72h, replicas: 2, resources: {requests: {cpu: 100m, memory: 256Mi}, limits: {memory: 512Mi}}}\n"
        ),
    ),
    ok(
        "previews-gateway",
        fleet!(
            "previews-gateway",
            "  previews: {baseDomain: preview.example.com, bucket: \"celld/previews\", gatewayRefs: [{name: public}]}\n"
        ),
    ),
    ok(
        "previews-own-credentials",
        fleet!(
            "previews-creds",
            "  previews: {baseDomain: preview.example.com, bucket: \"s3://celld-previews/app\", ingressClass: nginx, credentials: {credentialsSecretRef: {name: previews-s3}}, allowSourceDeployer: true}\n"
        ),
    ),
    ok(
        "previews-shared-credentials",
        fleet!(
            "previews-shared",
            "  previews: {baseDomain: preview.example.com, bucket: \"s3://celld-previews/app\", ingressClass: nginx, shareCredentials: true}\n"
        ),
    ),
    bad(
        "previews-two-credentials",
        fleet!(
            "previews-two-creds",
            "  previews: {baseDomain: preview.example.com, bucket: \"s3://celld-previews/app\", ingressClass: nginx, credentials: {credentialsSecretRef: {name: previews-s3}, serviceAccountName: previews}}\n"
        ),
        "spec.previews.credentials: set exactly one of credentialsSecretRef",
    ),
    bad(
        "previews-secret-with-store",
        "metadata: {name: previews-store}\nspec:\n  storeRef: {name: minio}\n  objectStorage: {bucket: \"s3://celld/app\"}\n  previews: {baseDomain: preview.example.com, bucket: \"s3://celld-previews/app\", ingressClass: nginx, credentials: {credentialsSecretRef: {name: previews-s3}}}\n",
        "need the fleet's inline connection",
    ),
    bad(
        "previews-without-routing",
        fleet!(
            "previews-no-route",
            "  previews: {baseDomain: preview.example.com, bucket: \"s3://celld-previews/app\"}\n"
        ),
        "spec.previews: set exactly one of ingressClass",
    ),
    bad(
        "previews-tls-with-gateway",
        fleet!(
            "previews-gw-tls",
            "  previews: {baseDomain: preview.example.com, bucket: \"s3://celld-previews/app\", gatewayRefs: [{name: public}], tls: {secretName: wild}}\n"
        ),
        "spec.previews.tls applies to Ingresses",
    ),
    bad(
        "previews-bucket-is-the-fleets",
        fleet!(
            "previews-same",
            "  previews: {baseDomain: preview.example.com, bucket: \"celld/app\", ingressClass: nginx}\n"
        ),
        "spec.previews.bucket must use the scheme of spec.objectStorage.bucket",
    ),
    bad(
        "previews-bucket-under-the-fleets",
        fleet!(
            "previews-under",
            "  previews: {baseDomain: preview.example.com, bucket: \"s3://celld/app/previews\", ingressClass: nginx}\n"
        ),
        "be apart from the fleet's own prefix",
    ),
    bad(
        "previews-bucket-above-the-fleets",
        fleet!(
            "previews-above",
            "  previews: {baseDomain: preview.example.com, bucket: \"s3://celld\", ingressClass: nginx}\n"
        ),
        "not the same, not under it, not above it",
    ),
    bad(
        "previews-bucket-other-scheme",
        fleet!(
            "previews-scheme",
            "  previews: {baseDomain: preview.example.com, bucket: \"gs://celld-previews/app\", ingressClass: nginx}\n"
        ),
        "spec.previews.bucket must use the scheme of spec.objectStorage.bucket",
    ),
    bad(
        "previews-ttl-above-max",
        fleet!(
            "previews-ttl",
            "  previews: {baseDomain: preview.example.com, bucket: \"s3://celld-previews/app\", ingressClass: nginx, ttl: 200h}\n"
        ),
        "spec.previews.ttl must not be longer than spec.previews.maxTtl",
    ),
    bad(
        "previews-ttl-in-days",
        fleet!(
            "previews-days",
            "  previews: {baseDomain: preview.example.com, bucket: \"s3://celld-previews/app\", ingressClass: nginx, maxTtl: 7d}\n"
        ),
        "spec.previews.maxTtl must be a duration in hours, minutes and seconds",
    ),
    bad(
        "previews-wildcard-domain",
        fleet!(
            "previews-wild",
            "  previews: {baseDomain: \"*.preview.example.com\", bucket: \"s3://celld-previews/app\", ingressClass: nginx}\n"
        ),
        "spec.previews.baseDomain must be a lowercase DNS name",
    ),
];

/// CelldPreview cases.
pub const PREVIEWS: &[Case] = &[
    ok(
        "preview-minimal",
        "metadata: {name: pr-123}\nspec: {fleet: web}\n",
    ),
    ok(
        "preview-ttl-and-source",
        "metadata: {name: pr-7}\nspec: {fleet: web, ttl: 1h30m, source: {image: {reference: \"registry.example.com/web-src@sha256:0000000000000000000000000000000000000000000000000000000000000000\"}}}\n",
    ),
    bad(
        "preview-name-not-a-host",
        "metadata: {name: pr.123}\nspec: {fleet: web}\n",
        "metadata.name: a CelldPreview name becomes its host",
    ),
    bad(
        "preview-name-too-long",
        "metadata: {name: a-very-long-preview-name-that-is-longer-than-the-limit}\nspec: {fleet: web}\n",
        "at most 52 characters",
    ),
    bad(
        "preview-ttl-too-short",
        "metadata: {name: pr-1}\nspec: {fleet: web, ttl: 30s}\n",
        "spec.ttl must be a duration in hours, minutes and seconds",
    ),
    bad(
        "preview-ttl-in-days",
        "metadata: {name: pr-2}\nspec: {fleet: web, ttl: 3d}\n",
        "spec.ttl must be a duration",
    ),
    bad(
        "preview-fleet-not-a-name",
        "metadata: {name: pr-3}\nspec: {fleet: Web_App}\n",
        "spec.fleet must be the name of a CelldFleet",
    ),
];
