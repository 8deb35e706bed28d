#!/usr/bin/env bash
# The Kind demo (needs Docker, kind and kubectl):
#
#   hack/poc.sh up       make poc-up      the nine steps below, from nothing to a serving Worker
#   hack/poc.sh deploy   make poc-deploy  rebuild the POC deployer image and publish poc/worker again
#   hack/poc.sh check    make poc-check   curl both fleets through ingress-nginx, compare the JSON
#   hack/poc.sh down     make poc-down    delete the Kind cluster
#
# Environment:
#   OPERATOR_IMAGE   use this operator image instead of building celld-operator:poc from the
#                    Dockerfile (for example ghcr.io/anthaathi/celld-operator:v0.1.0)
#   DEPLOYER_IMAGE   base deployer image for poc/deployer.Dockerfile instead of building
#                    celld-deployer:latest from deployer.Dockerfile
#   POC_CLUSTER      Kind cluster name (default celld-poc)
#   KIND, KUBECTL, DOCKER   the tools (default: from PATH)
set -euo pipefail
cd "$(dirname "$0")/.."

CLUSTER=${POC_CLUSTER:-celld-poc}
NS=celld-poc
KIND=${KIND:-kind}
KUBECTL=${KUBECTL:-kubectl}
DOCKER=${DOCKER:-docker}
INGRESS_NGINX_VERSION=${INGRESS_NGINX_VERSION:-controller-v1.14.3}
INGRESS_NGINX_MANIFEST=https://raw.githubusercontent.com/kubernetes/ingress-nginx/${INGRESS_NGINX_VERSION}/deploy/static/provider/kind/deploy.yaml
LOCAL_OPERATOR_IMAGE=celld-operator:poc
LOCAL_DEPLOYER_IMAGE=celld-deployer:latest
POC_DEPLOYER_IMAGE=celld-deployer:poc
EXPECTED='{"message":"hello from a locally deployed multi-file Worker","runtime":"celld","path":"/hello"}'

die() { printf 'poc: error: %s\n' "$*" >&2; exit 1; }
step() { printf '\n==> [%s/9] %s\n' "$1" "$2"; }
k() { "$KUBECTL" --context "kind-$CLUSTER" "$@"; }
need() { command -v "$1" >/dev/null 2>&1 || die "'$1' is not installed; the Kind demo needs Docker, kind and kubectl (the no-Docker demo is 'make demo')"; }

# Waits until `kubectl get "$@"` finds the object (the operator creates it asynchronously).
wait_exists() {
  local _
  for _ in $(seq 1 90); do
    k get "$@" >/dev/null 2>&1 && return 0
    sleep 2
  done
  die "timed out waiting for $* to exist"
}

# Prints what helps when a step fails.
diagnose() {
  echo "--- diagnostics (kubectl --context kind-$CLUSTER) ---" >&2
  k get pods -A -o wide >&2 || true
  k -n "$NS" get celldfleets,celldobjectstores,statefulsets,services,ingresses,jobs >&2 || true
  k -n celld-system logs deployment/celld-operator --tail=80 >&2 || true
  k -n "$NS" logs job/celld-deploy --tail=80 >&2 || true
  k -n "$NS" get events --sort-by=.lastTimestamp >&2 || true
}

operator_image() {
  if [ -n "${OPERATOR_IMAGE:-}" ]; then
    printf '%s' "$OPERATOR_IMAGE"
  else
    printf '%s' "$LOCAL_OPERATOR_IMAGE"
  fi
}

# Builds the POC deployer (poc/worker baked in) and loads it into the cluster.
build_deployer() {
  local base=${DEPLOYER_IMAGE:-}
  if [ -z "$base" ]; then
    "$DOCKER" build -f deployer.Dockerfile -t "$LOCAL_DEPLOYER_IMAGE" .
    base=$LOCAL_DEPLOYER_IMAGE
  fi
  "$DOCKER" build -f poc/deployer.Dockerfile --build-arg "DEPLOYER_IMAGE=$base" -t "$POC_DEPLOYER_IMAGE" poc
  "$KIND" load docker-image "$POC_DEPLOYER_IMAGE" --name "$CLUSTER"
}

# Runs the deploy Job again and waits for it: celld deploy of /app to every POC prefix.
run_deploy_job() {
  k -n "$NS" delete job celld-deploy --ignore-not-found --wait=true
  k apply --server-side -f poc/deploy-job.yaml
  if ! k -n "$NS" wait --for=condition=complete job/celld-deploy --timeout=300s; then
    diagnose
    die "the deploy Job did not complete"
  fi
  k -n "$NS" logs job/celld-deploy --tail=40
}

up() {
  need "$DOCKER"; need "$KIND"; need "$KUBECTL"
  "$DOCKER" info >/dev/null 2>&1 || die "no Docker daemon is reachable"

  step 1 "Kind cluster $CLUSTER with host ports 80/443 (poc/kind/cluster.yaml)"
  if "$KIND" get clusters 2>/dev/null | grep -qx "$CLUSTER"; then
    echo "cluster $CLUSTER exists"
  else
    "$KIND" create cluster --name "$CLUSTER" --config poc/kind/cluster.yaml --wait 120s
  fi

  step 2 "build and install the operator (install-operator.yaml)"
  local image
  image=$(operator_image)
  if [ -z "${OPERATOR_IMAGE:-}" ]; then
    "$DOCKER" build -t "$LOCAL_OPERATOR_IMAGE" .
    "$KIND" load docker-image "$LOCAL_OPERATOR_IMAGE" --name "$CLUSTER"
  fi
  sed "s#image: ghcr.io/anthaathi/celld-operator:.*#image: ${image}#" install-operator.yaml |
    k apply --server-side --force-conflicts -f -
  k wait --for=condition=established --timeout=60s \
    crd/celldfleets.platform.celld.dev crd/celldobjectstores.platform.celld.dev
  k -n celld-system rollout status deployment/celld-operator --timeout=240s || { diagnose; die "the operator did not become ready"; }

  step 3 "ingress-nginx ($INGRESS_NGINX_VERSION, kind provider)"
  k apply -f "$INGRESS_NGINX_MANIFEST"
  k -n ingress-nginx rollout status deployment/ingress-nginx-controller --timeout=300s
  k -n ingress-nginx wait --for=condition=complete job --all --timeout=120s || true

  step 4 "MinIO, the local S3-compatible store, and its credentials Secret"
  k apply --server-side -f poc/namespace.yaml
  k apply --server-side -f poc/credentials.yaml -f poc/minio.yaml
  k -n "$NS" rollout status deployment/minio --timeout=240s

  step 5 "the celld bucket"
  k -n "$NS" delete job minio-create-bucket --ignore-not-found --wait=true
  k apply --server-side -f poc/bucket-job.yaml
  k -n "$NS" wait --for=condition=complete job/minio-create-bucket --timeout=180s || { diagnose; die "creating the bucket failed"; }

  step 6 "build the deployer image (celld + esbuild + poc/worker)"
  build_deployer

  step 7 "celld deploy of poc/worker (poc/deploy-job.yaml)"
  run_deploy_job

  step 8 "CelldObjectStore minio and fleet local on http://local.celld.dev/"
  k apply --server-side -f poc/objectstore.yaml -f poc/fleet.yaml

  step 9 "fleet local-api on http://local.celld.dev/api (stripPrefix)"
  k apply --server-side -f poc/fleet-api.yaml
  local fleet
  for fleet in local local-api; do
    wait_exists -n "$NS" "statefulset/$fleet"
    k -n "$NS" rollout status "statefulset/$fleet" --timeout=300s || { diagnose; die "fleet $fleet did not become ready"; }
  done
  k -n "$NS" get celldfleets

  cat <<EOF

The POC is up. Map the hostname to 127.0.0.1 once, then call both fleets:

  grep -q 'local.celld.dev' /etc/hosts || echo '127.0.0.1 local.celld.dev' | sudo tee -a /etc/hosts
  curl http://local.celld.dev/hello
  curl http://local.celld.dev/api/hello

Both answer $EXPECTED
(or run 'make poc-check', which needs no /etc/hosts entry). Edit poc/worker and run
'make poc-deploy' to publish a new version; 'make poc-down' removes everything.
EOF
}

deploy() {
  need "$DOCKER"; need "$KIND"; need "$KUBECTL"
  step 6 "build the deployer image (celld + esbuild + poc/worker)"
  build_deployer
  step 7 "celld deploy of poc/worker (poc/deploy-job.yaml)"
  run_deploy_job
  echo "Published. Nodes adopt the new version within 30 seconds, without restarting."
}

# curl through ingress-nginx on 127.0.0.1:80 without an /etc/hosts entry.
check() {
  need curl
  local path body ok=1 _
  for path in /hello /api/hello; do
    body=''
    for _ in $(seq 1 30); do
      body=$(curl -fsS --max-time 5 --resolve local.celld.dev:80:127.0.0.1 "http://local.celld.dev$path" 2>/dev/null) && [ "$body" = "$EXPECTED" ] && break
      sleep 2
    done
    if [ "$body" = "$EXPECTED" ]; then
      echo "ok   GET http://local.celld.dev$path -> $body"
    else
      echo "FAIL GET http://local.celld.dev$path -> ${body:-<no answer>} (want $EXPECTED)"
      ok=0
    fi
  done
  [ "$ok" = 1 ] || { diagnose; exit 1; }
}

down() {
  need "$KIND"
  "$KIND" delete cluster --name "$CLUSTER"
}

case "${1:-}" in
  up) up ;;
  deploy) deploy ;;
  check) check ;;
  down) down ;;
  *) die "usage: hack/poc.sh up|deploy|check|down" ;;
esac
