#!/usr/bin/env bash
# The no-Docker demo: the operator reconciles sample fleets on the local control plane
# (testenv: etcd, kube-apiserver, controller-manager, scheduler, kwok fake nodes, an S3 server),
# and `kubectl celld deploy` publishes poc/worker to one of them.
#
#   hack/demo.sh up     start the operator, create two fleets in namespace celld-demo, deploy
#                       poc/worker to fleet hello, show its status and logs, deploy a changed
#                       copy of it, list the versions (history) and show the status again
#   hack/demo.sh down   stop the demo's processes and delete the demo namespace
#
# `make demo` runs `make cluster-up` first. `up` builds the plugin, the operator and the deploy
# test double into bin/ in the cargo profile $CELLD_DEMO_PROFILE: by default dev, the build that
# `make build`, `make check-docs` and the tests share, so it is usually warm (`make plugin` builds
# the release plugin, whose optimised dependencies take minutes).
#
# No celld runs here: in the deploy pod, `celld` is celld-deploy-double, a test double of `celld
# deploy` that writes to the local S3 server what celld writes (modules, manifest, then the
# deployment pointer with compare-and-swap); kwok runs it when the plugin execs `celld`
# (testenv/README.md). `celld-bucket`, the deployer image's bucket agent that `history` and
# `rollback` run, is the real one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
state=${CELLD_TESTENV_DIR:-$root/.testenv}
ns=celld-demo
bin=$root/bin
operator_pid=$state/run/demo-operator.pid
wiring_pid=$state/run/demo-deploy-double.pid
operator_log=$state/logs/demo-operator.log
wiring_log=$state/logs/demo-deploy-double.log
double_dir=$state/demo-deploy-double
agent=$double_dir/agent/celld-bucket
second_worker=$state/demo-worker-v2
# Commands printed for the user name the state directory when it is not the default one.
with_dir=${CELLD_TESTENV_DIR:+CELLD_TESTENV_DIR=$CELLD_TESTENV_DIR }
profile=${CELLD_DEMO_PROFILE:-dev}

die() { printf 'demo: error: %s\n' "$*" >&2; exit 1; }
say() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
now() { printf '%s' "${EPOCHREALTIME:-$(date +%s)}"; }

export KUBECONFIG=$state/kubeconfig CELLD_TESTENV_DIR=$state
export PATH="$bin:$state/bin:$PATH"

stop() { # stop PIDFILE
  if [ -f "$1" ]; then
    kill "$(cat "$1")" 2>/dev/null || true
    rm -f "$1"
  fi
}

# wait_log FILE TEXT WHAT PIDFILE: wait up to 60 s for TEXT in FILE, while the process lives.
wait_log() {
  local i
  for i in $(seq 1 300); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    kill -0 "$(cat "$4")" 2>/dev/null || { tail -n 20 "$1" >&2; die "$3 exited; its log is $1"; }
    [ "$i" -lt 300 ] && sleep 0.2
  done
  tail -n 20 "$1" >&2
  die "$3 did not start within 60 s; its log is $1"
}

up() {
  [ -f "$state/kubeconfig" ] || die "the local control plane is not running: run '${with_dir}make cluster-up' (or '${with_dir}make demo')"
  # shellcheck disable=SC1091
  . "$state/s3.env"
  say "building kubectl-celld, the operator, the bucket agent and the deploy test double (cargo profile $profile)"
  (cd "$root" && cargo build -q --profile "$profile" --locked -p kubectl-celld -p celld-operator -p celld-testkit \
    -p celld-bucket-agent --bin kubectl-celld --bin celld-operator --bin celld-deploy-double \
    --bin testenv-wire-deploy-double --bin celld-bucket)
  local out=$profile
  case "$profile" in dev | test) out=debug ;; bench) out=release ;; esac
  local target=${CARGO_TARGET_DIR:-$root/target}/$out
  mkdir -p "$bin"
  install -m 0755 "$target/kubectl-celld" "$target/celld-operator" "$target/celld-deploy-double" \
    "$target/testenv-wire-deploy-double" "$bin/"
  # Off this shell's PATH: the deploy pods' PATH gets it (a command on the machine's PATH would
  # be run by kwok directly, not through the pod's rule).
  install -D -m 0755 "$target/celld-bucket" "$agent"
  ln -sf kubectl-celld "$bin/kubectl_complete-celld"

  say "installing the CRDs and the demo namespace"
  kubectl apply --server-side -f "$root/config/crd/bases/" >/dev/null
  kubectl wait --for condition=Established crd/celldfleets.platform.celld.dev crd/celldobjectstores.platform.celld.dev >/dev/null
  kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  kubectl -n "$ns" create secret generic demo-s3 \
    --from-literal=AWS_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" --from-literal=AWS_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" \
    --dry-run=client -o yaml | kubectl apply -f - >/dev/null

  mkdir -p "$state/run" "$state/logs"
  say "starting celld-operator on namespace $ns (log: $operator_log)"
  stop "$operator_pid"
  nohup celld-operator --namespace "$ns" --leader-elect=false --metrics-addr 127.0.0.1:0 \
    --resync-seconds 5 --pending-resync-seconds 1 >"$operator_log" 2>&1 &
  echo $! >"$operator_pid"

  say "pointing the deploy pods' celld at the test double, celld-bucket at the agent (log: $wiring_log)"
  stop "$wiring_pid"
  nohup testenv-wire-deploy-double --namespace "$ns" --double "$bin/celld-deploy-double" --dir "$double_dir" \
    --agent "$agent" >"$wiring_log" 2>&1 &
  echo $! >"$wiring_pid"
  wait_log "$wiring_log" "watching pods" "testenv-wire-deploy-double" "$wiring_pid"

  # A fresh bucket prefix each run, so the fleets start without a deployment.
  local run_id
  run_id=demo-$(date +%Y%m%d-%H%M%S)
  say "a shared CelldObjectStore and two fleets, under s3://$S3_BUCKET/$run_id/"
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
  objectStorage: {bucket: "s3://$S3_BUCKET/$run_id/hello"}
  ingress: {hostname: demo.celld.local, ingressClass: nginx}
---
apiVersion: platform.celld.dev/v1alpha1
kind: CelldFleet
metadata: {name: hello-api, namespace: $ns}
spec:
  storeRef: {name: local-s3}
  objectStorage: {bucket: "s3://$S3_BUCKET/$run_id/api"}
  ingress: {hostname: demo.celld.local, ingressClass: nginx, path: /api, stripPrefix: true}
YAML
  local i
  for i in $(seq 1 300); do
    [ "$(kubectl -n "$ns" get statefulset hello hello-api -o jsonpath='{.items[*].spec.replicas}' 2>/dev/null)" = "0 0" ] && break
    [ "$i" -lt 300 ] || die "the operator did not create the fleets' StatefulSets within 60 s; its log is $operator_log"
    sleep 0.2
  done

  say "kubectl celld status -n $ns (no Worker deployed yet: each fleet is held at 0 nodes)"
  kubectl celld status -n "$ns"

  say "kubectl celld deploy poc/worker --fleet hello -n $ns --no-wait"
  echo "(the deploy pod's PATH holds celld-deploy-double as celld, and no curl: no celld runs on"
  echo " kwok's fake nodes, so the plugin asks none of them to reload; --no-wait: none reports the"
  echo " version it serves either, which deploy waits for on a real cluster)"
  local started ready
  started=$(now)
  (cd "$root" && kubectl celld deploy poc/worker --fleet hello -n "$ns" --no-wait)
  kubectl -n "$ns" wait --for condition=Ready --timeout 120s celldfleet/hello >/dev/null
  ready=$(now)
  say "deploy to Ready: $(awk -v a="$started" -v b="$ready" 'BEGIN { printf "%.1f", b - a }') s (the plugin's Job, upload and deploy, the operator seeing the pointer, 2 nodes up)"

  say "kubectl celld status hello -n $ns"
  kubectl celld status hello -n "$ns"
  say "kubectl celld logs hello -n $ns (kwok's fake nodes print two lines each)"
  kubectl celld logs hello -n "$ns"

  # A second version: poc/worker with one line added.
  rm -rf "$second_worker"
  cp -R "$root/poc/worker" "$second_worker"
  printf '// the demo'"'"'s second version\n' >>"$second_worker/src/greeting.js"
  local first second
  first=$(kubectl celld status hello -n "$ns" -o jsonpath='{.worker.version}')
  say "kubectl celld deploy $second_worker --fleet hello -n $ns --no-reload --no-wait (poc/worker with one line added)"
  echo "(--no-reload --no-wait: the nodes are kwok's fakes, no celld answers a reload or reports its"
  echo " version; the operator reads the new pointer at once, as the plugin marks the fleet deployed-at)"
  kubectl celld deploy "$second_worker" --fleet hello -n "$ns" --no-reload --no-wait
  for i in $(seq 1 300); do
    second=$(kubectl celld status hello -n "$ns" -o jsonpath='{.worker.version}')
    [ -n "$second" ] && [ "$second" != "$first" ] && break
    [ "$i" -lt 300 ] || die "the operator did not report the second version within 60 s; its log is $operator_log"
    sleep 0.2
  done

  say "kubectl celld history hello -n $ns (the deploy pod's celld-bucket lists the bucket prefix; * is live)"
  kubectl celld history hello -n "$ns"
  say "kubectl celld status hello -n $ns (version $second; it was $first)"
  kubectl celld status hello -n "$ns"

  cat <<TXT

The operator and the deploy wiring keep running in the background. Try:
  export KUBECONFIG=$KUBECONFIG PATH=$bin:$state/bin:\$PATH
  kubectl celld deploy poc/worker --fleet hello-api -n $ns --no-wait
  kubectl celld rollback hello -n $ns --no-reload --no-wait
  kubectl celld history hello -n $ns
  kubectl celld status -n $ns
  kubectl -n $ns get statefulsets,services,ingresses,networkpolicies,poddisruptionbudgets,pods
  kubectl -n $ns patch celldfleet hello --type merge -p '{"spec":{"replicas":3}}'
  kubectl -n $ns get events --sort-by=.lastTimestamp
Edit poc/worker and deploy again: the version changes (kubectl celld status hello -n $ns shows it).
Stop it with '${with_dir}make demo-down', then '${with_dir}make cluster-down' for the control plane.
TXT
}

down() {
  stop "$operator_pid"
  stop "$wiring_pid"
  rm -rf "$double_dir" "$second_worker"
  if [ -f "$KUBECONFIG" ]; then
    # Waits, so that a demo started next does not find the namespace still terminating.
    kubectl delete namespace "$ns" --ignore-not-found --timeout=120s >/dev/null
    echo "demo: operator and deploy wiring stopped, namespace $ns deleted"
  else
    echo "demo: operator and deploy wiring stopped (the control plane is not running)"
  fi
}

case ${1:-} in
  up) up ;;
  down) down ;;
  *) die "usage: hack/demo.sh up|down" ;;
esac
