#!/usr/bin/env bash
# The no-Docker demo: the operator reconciles sample fleets on the local control plane
# (testenv: etcd, kube-apiserver, controller-manager, scheduler, kwok fake nodes, an S3 server).
#
#   hack/demo.sh up     start the operator and create three sample fleets in namespace celld-demo
#   hack/demo.sh down   stop the operator and delete the demo namespace
#
# `make demo` runs `make cluster-up` first; `make cluster-down` stops the control plane.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
state=${CELLD_TESTENV_DIR:-$root/.testenv}
ns=celld-demo
pidfile=$state/run/demo-operator.pid
log=$state/logs/demo-operator.log

die() { printf 'demo: error: %s\n' "$*" >&2; exit 1; }
say() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

[ -f "$state/kubeconfig" ] || die "the local control plane is not running: run 'make cluster-up' (or 'make demo')"
export KUBECONFIG=$state/kubeconfig
export PATH="$root/target/debug:$state/bin:$PATH"
# shellcheck disable=SC1091
. "$state/s3.env"

stop_operator() {
  if [ -f "$pidfile" ]; then
    kill "$(cat "$pidfile")" 2>/dev/null || true
    rm -f "$pidfile"
  fi
}

# put_pointer PREFIX VERSION: what `celld deploy` writes last, so the fleet's nodes may start.
put_pointer() {
  local body
  body=$(printf '{"script_name":"hello","version":"%s","prefix":"deploy/hello/%s","rollout":{"percent":100}}' "$2" "$2")
  curl -fsS --aws-sigv4 "aws:amz:${AWS_REGION}:s3" --user "${AWS_ACCESS_KEY_ID}:${AWS_SECRET_ACCESS_KEY}" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -H 'content-type: application/json' \
    -X PUT --data-binary "$body" "${S3_ENDPOINT}/${S3_BUCKET}/$1/deploy/current.json" >/dev/null
}

up() {
  say "building the operator and the kubectl plugin"
  (cd "$root" && cargo build -q -p celld-operator -p kubectl-celld)

  say "installing the CRDs and the demo namespace"
  kubectl apply --server-side -f "$root/config/crd/bases/" >/dev/null
  kubectl wait --for condition=Established crd/celldfleets.platform.celld.dev crd/celldobjectstores.platform.celld.dev >/dev/null
  kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  kubectl -n "$ns" create secret generic demo-s3 \
    --from-literal=AWS_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" --from-literal=AWS_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" \
    --dry-run=client -o yaml | kubectl apply -f - >/dev/null

  say "starting celld-operator (log: $log)"
  stop_operator
  mkdir -p "$(dirname "$pidfile")" "$(dirname "$log")"
  nohup celld-operator --leader-elect=false --metrics-addr 127.0.0.1:0 --resync-seconds 10 --pending-resync-seconds 5 \
    >"$log" 2>&1 &
  echo $! >"$pidfile"

  say "a shared CelldObjectStore and three fleets"
  kubectl apply --server-side -f - <<YAML
apiVersion: platform.celld.dev/v1alpha1
kind: CelldObjectStore
metadata: {name: local-s3, namespace: $ns}
spec: {endpoint: "$S3_ENDPOINT", region: $AWS_REGION, allowHTTP: true, credentialsSecretRef: {name: demo-s3}}
---
apiVersion: platform.celld.dev/v1alpha1
kind: CelldFleet
metadata: {name: hello, namespace: $ns}
spec:
  replicas: 2
  storeRef: {name: local-s3}
  objectStorage: {bucket: "s3://$S3_BUCKET/demo/hello"}
  ingress: {hostname: demo.celld.local, ingressClass: nginx}
---
apiVersion: platform.celld.dev/v1alpha1
kind: CelldFleet
metadata: {name: hello-api, namespace: $ns}
spec:
  storeRef: {name: local-s3}
  objectStorage: {bucket: "s3://$S3_BUCKET/demo/api"}
  ingress: {hostname: demo.celld.local, ingressClass: nginx, path: /api, stripPrefix: true}
---
apiVersion: platform.celld.dev/v1alpha1
kind: CelldFleet
metadata: {name: not-deployed-yet, namespace: $ns}
spec:
  storeRef: {name: local-s3}
  objectStorage: {bucket: "s3://$S3_BUCKET/demo/pending"}
YAML

  say "publishing a Worker version for hello and hello-api (a stand-in for 'celld deploy')"
  put_pointer demo/hello 0123456789abcdef
  put_pointer demo/api fedcba9876543210
  kubectl -n "$ns" wait --for condition=Ready --timeout 90s celldfleet/hello celldfleet/hello-api

  say "kubectl get celldfleets -n $ns"
  kubectl get celldfleets -n "$ns"
  say "kubectl celld status -n $ns"
  kubectl celld status -n "$ns"
  say "kubectl celld status hello -n $ns"
  kubectl celld status hello -n "$ns"
  say "kubectl celld status not-deployed-yet -n $ns (held at 0 nodes until a Worker is deployed)"
  kubectl celld status not-deployed-yet -n "$ns" || true

  cat <<TXT

The operator keeps running in the background. Try:
  export KUBECONFIG=$KUBECONFIG PATH=$root/target/debug:$state/bin:\$PATH
  kubectl -n $ns get statefulsets,services,ingresses,networkpolicies,poddisruptionbudgets,pods
  kubectl -n $ns patch celldfleet hello --type merge -p '{"spec":{"replicas":3}}'
  kubectl -n $ns get events --sort-by=.lastTimestamp
  kubectl celld logs hello -n $ns
Stop it with 'make demo-down' (and 'make cluster-down' for the control plane).
TXT
}

down() {
  stop_operator
  kubectl delete namespace "$ns" --ignore-not-found --wait=false >/dev/null
  echo "demo: operator stopped, namespace $ns deleted"
}

case ${1:-} in
  up) up ;;
  down) down ;;
  *) die "usage: hack/demo.sh up|down" ;;
esac
