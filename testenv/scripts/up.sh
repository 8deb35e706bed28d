#!/usr/bin/env bash
# Starts the local control plane on 127.0.0.1 (free ports): etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kwok (fake nodes, pods, volumes, exec and logs), the
# object store emulators: S3 (s3s-fs), GCS (fake-gcs-server) and Azure Blob (Azurite), an OCI
# registry (oci-registry) and Flux's source-controller with its CRDs; the Gateway API's and
# KEDA's CRDs; tools (gitops-health, promtool, adapter-config) linked into bin/. Binaries come
# from the cache filled by build.sh; all state goes to the gitignored .testenv/ at the
# repository root.
# Idempotent: when everything is already up and healthy it says so; when it is half up, it tears
# it down first.
#
# Environment:
#   CELLD_TESTENV_NODES    number of fake nodes (default 1)
#   CELLD_TESTENV_SERVICE_CIDR  the Service ClusterIP range (default 10.96.0.0/16: 65,534 Services)
#   CELLD_TESTENV_AUDIT=1  write an audit log of every request (metadata only, JSON lines) to
#                          logs/audit.log, to count requests per user, verb and resource
#   CELLD_TESTENV_APISERVER_FLAGS  extra kube-apiserver flags, split on spaces
#   CELLD_TESTENV_CONTROLLER_MANAGER_FLAGS  extra kube-controller-manager flags, split on spaces
#   CELLD_TESTENV_GATEWAY_API=0  do not install the Gateway API CRDs (a cluster without them)
#   CELLD_TESTENV_FLUX=0   no Flux: neither its CRDs nor source-controller (the OCI registry runs)
#   CELLD_TESTENV_KEDA=0   do not install KEDA's keda.sh CRDs (ScaledObject...)
#   CELLD_TESTENV_TIMEOUT  seconds to wait for each component (default 45)
#   CELLD_TESTENV_KEEP_ON_FAILURE=1  leave a failed start running for inspection
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../versions.env
. "$here/versions.env"
. "$here/scripts/lib.sh"

need openssl; need curl; need ss; need setsid; need python3; need node
nodes=${CELLD_TESTENV_NODES:-1}
service_cidr=${CELLD_TESTENV_SERVICE_CIDR:-10.96.0.0/16}
read -r -a apiserver_flags <<<"${CELLD_TESTENV_APISERVER_FLAGS:-}"
read -r -a kcm_flags <<<"${CELLD_TESTENV_CONTROLLER_MANAGER_FLAGS:-}"
timeout=${CELLD_TESTENV_TIMEOUT:-45}
flux=${CELLD_TESTENV_FLUX:-1}
keda=${CELLD_TESTENV_KEDA:-1}
state=$(state_dir)
pki=$state/pki run=$state/run logs=$state/logs bin=$state/bin
kubeconfig=$state/kubeconfig
started=$SECONDS

k8s_bin=$(cache_dir kubernetes "$KUBERNETES_VERSION")/bin
etcd_bin=$(cache_dir etcd "$ETCD_VERSION")/bin
kwok_dir=$(kwok_cache_dir)
gateway_crds=$(cache_dir gateway-api "$GATEWAY_API_VERSION")/crds
s3_bin=$(s3s_fs_cache_dir)/bin
gcs_bin=$(cache_dir fake-gcs-server "$FAKE_GCS_SERVER_VERSION")/bin
azurite_bin=$(cache_dir azurite "$AZURITE_VERSION")/bin
gitops_health_bin=$(gitops_health_cache_dir)/bin
oci_bin=$(oci_registry_cache_dir)/bin
flux_dir=$(source_controller_cache_dir)
promtool_bin=$(promtool_cache_dir)/bin
adapter_config_bin=$(adapter_config_cache_dir)/bin
keda_crds=$(keda_cache_dir)/crds
for f in "$k8s_bin/kube-apiserver" "$k8s_bin/kube-controller-manager" "$k8s_bin/kube-scheduler" \
  "$k8s_bin/kubectl" "$etcd_bin/etcd" "$kwok_dir/bin/kwok" "$s3_bin/s3s-fs" \
  "$gcs_bin/fake-gcs-server" "$azurite_bin/azurite-blob" "$gitops_health_bin/gitops-health" \
  "$oci_bin/oci-registry" "$flux_dir/bin/source-controller" "$promtool_bin/promtool" \
  "$adapter_config_bin/adapter-config"; do
  [ -x "$f" ] || die "$f is missing; run 'make testenv' (testenv/scripts/build.sh all) first"
done
[ -d "$gateway_crds" ] || die "$gateway_crds is missing; run 'make testenv' first"
[ -d "$flux_dir/crds" ] || die "$flux_dir/crds is missing; run 'make testenv' first"
[ -d "$keda_crds" ] || die "$keda_crds is missing; run 'make testenv' first"

kubectl() { "$k8s_bin/kubectl" --kubeconfig="$kubeconfig" "$@"; }
s3_request() { # KEY:SECRET curl-args...: an empty-bodied, SigV4-signed request to the S3 server
  local user=$1; shift
  curl -fsS -o /dev/null --max-time 5 --aws-sigv4 "aws:amz:us-east-1:s3" --user "$user" \
    -H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" "$@"
}
# The GCS and Azure Blob emulators' bucket and container (create, ping), over raw HTTP.
object_stores() { python3 "$here/scripts/object-stores.py" "$@"; }


# --- processes ---------------------------------------------------------------------------------
# Each component runs in its own session and process group (pgid = pid), so down.sh can end it
# and everything it spawned (kwok's exec commands) with one signal.
start() { # name command...
  local name=$1; shift
  printf '\n==== %s: starting %s\n' "$(date -u +%FT%TZ)" "$*" >>"$logs/$name.log"
  setsid "$@" >>"$logs/$name.log" 2>&1 </dev/null &
  echo $! >"$run/$name.pid"
}
wait_for() { # name what command...: polls until command succeeds, the process dies or time is up
  local name=$1 what=$2; shift 2
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    pid_alive "$run/$name.pid" || fail "$name exited while waiting for $what" "$logs/$name.log"
    [ "$SECONDS" -lt "$deadline" ] || fail "$what did not come up within ${timeout}s" "$logs/$name.log"
    sleep 0.2
  done
}

# --- the GCS and Azure Blob emulators ------------------------------------------------------------
gcs_bucket=celld-test
azure_account=devstoreaccount1 azure_container=celld-test
azure_key=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==
# Starts both on $gcs_port and $azure_port.
start_emulators() {
  # GCS: plain HTTP, no authentication, objects on disk under gcs/. -public-host makes XML-API
  # style GETs (http://127.0.0.1:PORT/BUCKET/OBJECT) work too.
  start fake-gcs-server "$gcs_bin/fake-gcs-server" -scheme=http -host=127.0.0.1 -port="$gcs_port" \
    -backend=filesystem -filesystem-root="$state/gcs" -public-host="127.0.0.1:$gcs_port" \
    -external-url="http://127.0.0.1:$gcs_port" -log-level=warn
  # Azure Blob: blob service only, plain HTTP, Azurite's well-known development account
  # (devstoreaccount1 and its published key; SharedKey or SAS), data on disk under azure/, no telemetry.
  start azurite "$azurite_bin/azurite-blob" --blobHost 127.0.0.1 --blobPort "$azure_port" \
    --location "$state/azure" --disableTelemetry
}
# Writes gcs.env and azure.env, waits for both emulators, creates the bucket and the container.
init_emulators() {
  cat >"$state/gcs.env" <<EOF
GCS_ENDPOINT=http://127.0.0.1:$gcs_port
STORAGE_EMULATOR_HOST=http://127.0.0.1:$gcs_port
GCS_BUCKET=$gcs_bucket
GCS_PROJECT=celld-test
EOF
  cat >"$state/azure.env" <<EOF
AZURITE_BLOB_STORAGE_URL=http://127.0.0.1:$azure_port
AZURE_STORAGE_BLOB_ENDPOINT=http://127.0.0.1:$azure_port/$azure_account
AZURE_STORAGE_ACCOUNT_NAME=$azure_account
AZURE_STORAGE_ACCOUNT_KEY=$azure_key
AZURE_STORAGE_USE_EMULATOR=true
AZURE_STORAGE_CONTAINER=$azure_container
AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=$azure_account;AccountKey=$azure_key;BlobEndpoint=http://127.0.0.1:$azure_port/$azure_account;"
EOF
  gcs_answers() { curl -fsS --max-time 2 "http://127.0.0.1:$gcs_port/_internal/healthcheck"; }
  wait_for fake-gcs-server "the GCS emulator (http://127.0.0.1:$gcs_port)" gcs_answers
  object_stores init-gcs "$state/gcs.env" 2>>"$logs/fake-gcs-server.log" \
    || fail "creating GCS bucket $gcs_bucket failed" "$logs/fake-gcs-server.log"
  azure_answers() { curl -sS -o /dev/null --max-time 2 "http://127.0.0.1:$azure_port/"; }
  wait_for azurite "the Azure Blob emulator (http://127.0.0.1:$azure_port)" azure_answers
  object_stores init-azure "$state/azure.env" 2>>"$logs/azurite.log" \
    || fail "creating Azure container $azure_container failed" "$logs/azurite.log"
}

# --- the OCI registry and Flux's source-controller -------------------------------------------
# The registry on $oci_port: the OCI distribution API over plain HTTP, in memory (a restart
# empties it). `oci-registry push` (linked into bin/) pushes a directory as a Flux OCI artifact.
start_registry() {
  start oci-registry "$oci_bin/oci-registry" serve -addr="127.0.0.1:$oci_port"
}
registry_answers() { curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$1/v2/"; }
# Waits for the registry, then writes oci.env.
init_registry() {
  wait_for oci-registry "the OCI registry (http://127.0.0.1:$oci_port/v2/)" registry_answers "$oci_port"
  printf 'OCI_REGISTRY=127.0.0.1:%s\n' "$oci_port" >"$state/oci.env"
}
apply_flux_crds() {
  kubectl apply --server-side --force-conflicts -f "$flux_dir/crds" >>"$logs/kubectl.log" 2>&1 \
    || fail "applying the Flux source-controller CRDs failed" "$logs/kubectl.log"
}
# KEDA's keda.sh CRDs alone (no KEDA runs): the API server validates ScaledObjects against them.
apply_keda_crds() {
  kubectl apply --server-side --force-conflicts -f "$keda_crds" >>"$logs/kubectl.log" 2>&1 \
    || fail "applying KEDA's CRDs failed" "$logs/kubectl.log"
}
keda_installed() { kubectl get crd scaledobjects.keda.sh >/dev/null 2>&1; }
# source-controller, out of cluster against the apiserver with the admin kubeconfig, watching
# every namespace. Its artifact server listens on and advertises 127.0.0.1:$flux_storage_port,
# so status.artifact.url is a URL this machine's processes can GET. No leader election, no
# events receiver (Kubernetes Events only). Start it once its CRDs are Established.
start_flux() {
  mkdir -p "$state/flux/artifacts" "$state/flux/tmp"
  KUBECONFIG=$kubeconfig TMPDIR=$state/flux/tmp start source-controller "$flux_dir/bin/source-controller" \
    --watch-all-namespaces=true --enable-leader-election=false --events-addr= \
    --storage-path="$state/flux/artifacts" --storage-addr="127.0.0.1:$flux_storage_port" \
    --storage-adv-addr="127.0.0.1:$flux_storage_port" \
    --health-addr="127.0.0.1:$flux_health_port" --metrics-addr="127.0.0.1:$flux_metrics_port" \
    --log-encoding=console --requeue-dependency=5s
}
flux_answers() { # health-port storage-port
  curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$1/readyz" \
    && curl -sS -o /dev/null --max-time 2 "http://127.0.0.1:$2/"
}
# Waits until source-controller is ready and its artifact server answers, then writes flux.env.
init_flux() {
  wait_for source-controller "Flux source-controller (http://127.0.0.1:$flux_health_port/readyz) and its artifact server (http://127.0.0.1:$flux_storage_port)" \
    flux_answers "$flux_health_port" "$flux_storage_port"
  cat >"$state/flux.env" <<EOF
FLUX_SOURCE_CONTROLLER_VERSION=$SOURCE_CONTROLLER_VERSION
FLUX_STORAGE_ADDR=127.0.0.1:$flux_storage_port
EOF
}

# --- already up? ---------------------------------------------------------------------------
core=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok s3s-fs)
emulators=(fake-gcs-server azurite)
core_healthy() {
  [ -f "$state/ready" ] || return 1
  local c
  for c in "${core[@]}"; do pid_alive "$run/$c.pid" || return 1; done
  kubectl get --raw /readyz >/dev/null 2>&1 || return 1
  # shellcheck disable=SC1091,SC2153
  (. "$state/ports.env" && curl -fsSk -o /dev/null --max-time 5 "https://127.0.0.1:$KWOK_PORT/healthz") || return 1
  # shellcheck disable=SC1091
  (. "$state/s3.env" && s3_request "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" "$S3_ENDPOINT/$S3_BUCKET") || return 1
}
emulators_healthy() {
  local c
  for c in "${emulators[@]}"; do pid_alive "$run/$c.pid" || return 1; done
  object_stores ping-gcs "$state/gcs.env" >/dev/null 2>&1 || return 1
  object_stores ping-azure "$state/azure.env" >/dev/null 2>&1 || return 1
}
registry_healthy() {
  pid_alive "$run/oci-registry.pid" || return 1
  # shellcheck disable=SC1091
  (. "$state/ports.env" && registry_answers "$OCI_REGISTRY_PORT") || return 1
}
flux_healthy() {
  pid_alive "$run/source-controller.pid" && [ -f "$state/flux.env" ] || return 1
  # shellcheck disable=SC1091
  (. "$state/ports.env" && flux_answers "$FLUX_HEALTH_PORT" "$FLUX_STORAGE_PORT") || return 1
}
usage() {
  local dir_env=""
  [ -z "${CELLD_TESTENV_DIR:-}" ] || dir_env="CELLD_TESTENV_DIR=$state "
  cat <<EOF
testenv: the local control plane is up (state in $state, logs in $logs).
Use it from a shell:
  export KUBECONFIG=$kubeconfig PATH=$bin:\$PATH
  set -a; . $state/s3.env; . $state/gcs.env; . $state/azure.env; . $state/oci.env; set +a
  kubectl get nodes
Run the harness tests:   ${dir_env}cargo test -p celld-testkit
Stop it:                 ${dir_env}bash testenv/scripts/down.sh   (or ${dir_env}make cluster-down)
EOF
}
# Up, but started by an up.sh from before some add-on (no trace of it: neither its pid file nor
# its env file): start just those, rather than tear down a control plane others may be using.
# An add-on with a trace that is not healthy makes the control plane half up.
core_up=0 half=0 missing=()
if core_healthy; then core_up=1; fi
if [ "$core_up" = 1 ]; then
  if [ ! -e "$run/fake-gcs-server.pid" ] && [ ! -e "$run/azurite.pid" ] \
    && [ ! -e "$state/gcs.env" ] && [ ! -e "$state/azure.env" ]; then missing+=(emulators)
  elif ! emulators_healthy; then half=1; fi
  if [ ! -e "$run/oci-registry.pid" ] && [ ! -e "$state/oci.env" ]; then missing+=(registry)
  elif ! registry_healthy; then half=1; fi
  if [ "$flux" != 0 ]; then
    if [ ! -e "$run/source-controller.pid" ] && [ ! -e "$state/flux.env" ]; then missing+=(flux)
    elif ! flux_healthy; then half=1; fi
  fi
  if [ "$keda" != 0 ] && ! keda_installed; then missing+=(keda); fi
fi
if [ "$core_up" = 1 ] && [ "$half" = 0 ] && [ "${#missing[@]}" = 0 ]; then
  # Tools, not processes: link the current build, which a control plane up since before may lack.
  ln -sfn "$gitops_health_bin/gitops-health" "$bin/"; ln -sfn "$oci_bin/oci-registry" "$bin/"
  ln -sfn "$promtool_bin/promtool" "$bin/"; ln -sfn "$adapter_config_bin/adapter-config" "$bin/"
  log "already up and healthy"
  usage
  exit 0
fi
upgrading=0 upgraded=()
addons() { # names of the add-ons given, for messages
  local a out=()
  for a in "$@"; do
    case $a in
      emulators) out+=("the GCS and Azure Blob emulators") ;; registry) out+=("the OCI registry") ;;
      flux) out+=("Flux source-controller") ;; keda) out+=("KEDA's CRDs") ;;
    esac
  done
  local IFS=,; printf '%s' "${out[*]}" | sed 's/,/, /g'
}
if [ "$core_up" = 1 ] && [ "$half" = 0 ]; then
  log "up, but without $(addons "${missing[@]}") (started by an older up.sh); starting just those"
  upgrading=1
fi
if [ "$upgrading" = 0 ] && { [ -d "$run" ] || [ -f "$kubeconfig" ]; }; then
  log "found a half-started control plane; tearing it down first"
  bash "$here/scripts/down.sh"
fi

# --- on failure: name what did not come up, then tear down -----------------------------------
fail() {
  printf 'testenv: error: %s\n' "$1" >&2
  if [ -n "${2:-}" ] && [ -f "$2" ]; then
    printf 'testenv: last lines of %s:\n' "$2" >&2
    tail -n 15 "$2" | sed 's/^/    /' >&2
  fi
  if [ "$upgrading" = 1 ]; then
    log "stopping ${upgraded[*]} again; the rest of the control plane keeps running"
    local c
    for c in "${upgraded[@]}"; do
      if [ -s "$run/$c.pid" ]; then kill -TERM -- "-$(cat "$run/$c.pid")" 2>/dev/null || true; fi
      rm -f "$run/$c.pid"
      case $c in
        fake-gcs-server) rm -f "$state/gcs.env" ;; azurite) rm -f "$state/azure.env" ;;
        oci-registry) rm -f "$state/oci.env" ;; source-controller) rm -f "$state/flux.env" ;;
      esac
    done
  elif [ "${CELLD_TESTENV_KEEP_ON_FAILURE:-}" != 1 ]; then
    log "tearing down what was started (logs are kept in $logs; CELLD_TESTENV_KEEP_ON_FAILURE=1 keeps it running)"
    bash "$here/scripts/down.sh" >&2 || true
  fi
  exit 1
}
trap 'fail "up.sh failed at line $LINENO"' ERR

if [ "$upgrading" = 1 ]; then
  ln -sfn "$gitops_health_bin/gitops-health" "$bin/"; ln -sfn "$promtool_bin/promtool" "$bin/"
  ln -sfn "$adapter_config_bin/adapter-config" "$bin/"
  taken=()
  port() { local p; p=$(free_port "${taken[@]}"); printf '%s' "$p"; }
  for m in "${missing[@]}"; do
    case $m in
      emulators)
        mkdir -p "$state/gcs" "$state/azure"
        ln -sfn "$gcs_bin/fake-gcs-server" "$bin/"; ln -sfn "$azurite_bin/azurite-blob" "$bin/"
        gcs_port=$(port); taken+=("$gcs_port"); azure_port=$(port); taken+=("$azure_port")
        upgraded+=("${emulators[@]}")
        start_emulators
        printf 'GCS_PORT=%s\nAZURE_BLOB_PORT=%s\n' "$gcs_port" "$azure_port" >>"$state/ports.env"
        init_emulators
        ;;
      registry)
        ln -sfn "$oci_bin/oci-registry" "$bin/"
        oci_port=$(port); taken+=("$oci_port")
        upgraded+=(oci-registry)
        start_registry
        printf 'OCI_REGISTRY_PORT=%s\n' "$oci_port" >>"$state/ports.env"
        init_registry
        ;;
      flux)
        ln -sfn "$flux_dir/bin/source-controller" "$bin/"
        flux_storage_port=$(port); taken+=("$flux_storage_port")
        flux_health_port=$(port); taken+=("$flux_health_port")
        flux_metrics_port=$(port); taken+=("$flux_metrics_port")
        apply_flux_crds
        kubectl wait --for=condition=Established --timeout="${timeout}s" -f "$flux_dir/crds" >>"$logs/kubectl.log" 2>&1 \
          || fail "the Flux source-controller CRDs were not Established within ${timeout}s" "$logs/kubectl.log"
        upgraded+=(source-controller)
        start_flux
        printf 'FLUX_STORAGE_PORT=%s\nFLUX_HEALTH_PORT=%s\nFLUX_METRICS_PORT=%s\n' \
          "$flux_storage_port" "$flux_health_port" "$flux_metrics_port" >>"$state/ports.env"
        init_flux
        ;;
      keda)
        apply_keda_crds
        kubectl wait --for=condition=Established --timeout="${timeout}s" -f "$keda_crds" >>"$logs/kubectl.log" 2>&1 \
          || fail "KEDA's CRDs were not Established within ${timeout}s" "$logs/kubectl.log"
        ;;
    esac
  done
  trap - ERR
  log "$(addons "${missing[@]}") up"
  usage
  exit 0
fi

mkdir -p "$pki" "$run" "$logs" "$bin" "$state/etcd" "$state/s3" "$state/gcs" "$state/azure" "$state/kwok" \
  "$state/exec-root" "$state/pod-path"
for f in "$k8s_bin"/* "$etcd_bin/etcd" "$kwok_dir/bin/kwok" "$s3_bin/s3s-fs" "$gcs_bin/fake-gcs-server" \
  "$azurite_bin/azurite-blob" "$gitops_health_bin/gitops-health" "$oci_bin/oci-registry" \
  "$promtool_bin/promtool" "$adapter_config_bin/adapter-config"; do ln -sfn "$f" "$bin/"; done
if [ "$flux" != 0 ]; then ln -sfn "$flux_dir/bin/source-controller" "$bin/"; fi

# --- ports -----------------------------------------------------------------------------------
taken=()
port() { local p; p=$(free_port "${taken[@]}"); printf '%s' "$p"; }
etcd_port=$(port); taken+=("$etcd_port")
etcd_peer_port=$(port); taken+=("$etcd_peer_port")
api_port=$(port); taken+=("$api_port")
kcm_port=$(port); taken+=("$kcm_port")
sched_port=$(port); taken+=("$sched_port")
kwok_port=$(port); taken+=("$kwok_port")
s3_port=$(port); taken+=("$s3_port")
gcs_port=$(port); taken+=("$gcs_port")
azure_port=$(port); taken+=("$azure_port")
oci_port=$(port); taken+=("$oci_port")
cat >"$state/ports.env" <<EOF
ETCD_PORT=$etcd_port
APISERVER_PORT=$api_port
KWOK_PORT=$kwok_port
S3_PORT=$s3_port
GCS_PORT=$gcs_port
AZURE_BLOB_PORT=$azure_port
OCI_REGISTRY_PORT=$oci_port
EOF
if [ "$flux" != 0 ]; then
  flux_storage_port=$(port); taken+=("$flux_storage_port")
  flux_health_port=$(port); taken+=("$flux_health_port")
  flux_metrics_port=$(port); taken+=("$flux_metrics_port")
  printf 'FLUX_STORAGE_PORT=%s\nFLUX_HEALTH_PORT=%s\nFLUX_METRICS_PORT=%s\n' \
    "$flux_storage_port" "$flux_health_port" "$flux_metrics_port" >>"$state/ports.env"
fi

# --- PKI (openssl; SANs and v3 extensions, since rustls insists on them) ---------------------
ossl() { openssl "$@" 2>>"$logs/openssl.log" >/dev/null || fail "openssl $1 failed" "$logs/openssl.log"; }
ec_key() { ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }
ec_key "$pki/ca.key"
ossl req -x509 -new -key "$pki/ca.key" -days 30 -subj /CN=celld-testenv-ca -out "$pki/ca.crt" \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign,digitalSignature
sign() { # name subject extensions
  ec_key "$pki/$1.key"
  ossl req -new -key "$pki/$1.key" -subj "$2" -out "$pki/$1.csr"
  printf '%b' "$3" >"$pki/$1.ext"
  ossl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 30 \
    -extfile "$pki/$1.ext" -out "$pki/$1.crt"
}
sign apiserver /CN=kube-apiserver \
  'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:10.96.0.1\n'
sign admin '/O=system:masters/CN=celld-testenv-admin' \
  'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n'
ossl genrsa -out "$pki/sa.key" 2048
ossl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub"

b64() { base64 -w0 <"$1"; }
umask 077
cat >"$kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: celld-testenv
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority-data: $(b64 "$pki/ca.crt")
users:
- name: celld-testenv-admin
  user:
    client-certificate-data: $(b64 "$pki/admin.crt")
    client-key-data: $(b64 "$pki/admin.key")
contexts:
- name: celld-testenv
  context: {cluster: celld-testenv, user: celld-testenv-admin, namespace: default}
current-context: celld-testenv
EOF
umask 022

# --- start the components ----------------------------------------------------------------------

start etcd "$etcd_bin/etcd" --name=celld-testenv --data-dir="$state/etcd" \
  --listen-client-urls="http://127.0.0.1:$etcd_port" --advertise-client-urls="http://127.0.0.1:$etcd_port" \
  --listen-peer-urls="http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls="http://127.0.0.1:$etcd_peer_port" \
  --initial-cluster="celld-testenv=http://127.0.0.1:$etcd_peer_port" \
  --unsafe-no-fsync --log-level=warn

s3_key=celld-test-access-key s3_secret=celld-test-secret-key s3_bucket=celld-test
start s3s-fs "$s3_bin/s3s-fs" --host 127.0.0.1 --port "$s3_port" \
  --access-key "$s3_key" --secret-key "$s3_secret" "$state/s3"

start_emulators
start_registry

wait_for etcd "etcd (http://127.0.0.1:$etcd_port/health)" curl -fsS "http://127.0.0.1:$etcd_port/health"

if [ "${CELLD_TESTENV_AUDIT:-0}" = 1 ]; then
  cat >"$state/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
EOF
  apiserver_flags+=(--audit-policy-file="$state/audit-policy.yaml" --audit-log-path="$logs/audit.log"
    --audit-log-format=json --audit-log-mode=batch --audit-log-maxbackup=0)
fi

start kube-apiserver "$k8s_bin/kube-apiserver" \
  --etcd-servers="http://127.0.0.1:$etcd_port" \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$api_port" \
  --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
  --client-ca-file="$pki/ca.crt" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
  --service-cluster-ip-range="$service_cidr" \
  --authorization-mode=RBAC --allow-privileged=true \
  --endpoint-reconciler-type=none \
  --kubelet-preferred-address-types=InternalIP,Hostname \
  --enable-priority-and-fairness=false --max-requests-inflight=0 --max-mutating-requests-inflight=0 \
  --disable-admission-plugins=TaintNodesByCondition --profiling=false ${apiserver_flags[@]+"${apiserver_flags[@]}"}

wait_for kube-apiserver "kube-apiserver (https://127.0.0.1:$api_port/readyz)" \
  curl -fsS --cacert "$pki/ca.crt" "https://127.0.0.1:$api_port/readyz"

# Controllers an operator with StatefulSets, Jobs and PVCs relies on (the apiserver admits pods
# only once the serviceaccount controller made the namespace's "default" ServiceAccount).
controllers=serviceaccount-token-controller,serviceaccount-controller,namespace-controller
controllers+=,garbage-collector-controller,statefulset-controller,replicaset-controller
controllers+=,deployment-controller,job-controller,cronjob-controller,ttl-after-finished-controller
controllers+=,pod-garbage-collector-controller,disruption-controller,resourcequota-controller
controllers+=,persistentvolume-binder-controller,persistentvolumeclaim-protection-controller
controllers+=,persistentvolume-protection-controller,endpoints-controller,endpointslice-controller
controllers+=,endpointslice-mirroring-controller,root-ca-certificate-publisher-controller
controllers+=,clusterrole-aggregation-controller
start kube-controller-manager "$k8s_bin/kube-controller-manager" \
  --kubeconfig="$kubeconfig" --authentication-kubeconfig="$kubeconfig" --authorization-kubeconfig="$kubeconfig" \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port="$kcm_port" \
  --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
  --controllers="$controllers" --concurrent-gc-syncs=5 --kube-api-qps=1000 --kube-api-burst=2000 --profiling=false \
  ${kcm_flags[@]+"${kcm_flags[@]}"}

start kube-scheduler "$k8s_bin/kube-scheduler" \
  --kubeconfig="$kubeconfig" --authentication-kubeconfig="$kubeconfig" --authorization-kubeconfig="$kubeconfig" \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port="$sched_port" --profiling=false

# --- CRDs and cluster objects ------------------------------------------------------------------
crds=$kwok_dir/kustomize/crd/bases
kubectl apply --server-side --force-conflicts \
  -f "$crds/kwok.x-k8s.io_clusterexecs.yaml" -f "$crds/kwok.x-k8s.io_execs.yaml" \
  -f "$crds/kwok.x-k8s.io_clusterlogs.yaml" -f "$crds/kwok.x-k8s.io_logs.yaml" \
  >>"$logs/kubectl.log" 2>&1 || fail "applying the kwok CRDs failed" "$logs/kubectl.log"
if [ "${CELLD_TESTENV_GATEWAY_API:-1}" != 0 ]; then
  kubectl apply --server-side --force-conflicts -f "$gateway_crds" >>"$logs/kubectl.log" 2>&1 \
    || fail "applying the Gateway API CRDs failed" "$logs/kubectl.log"
fi
if [ "$flux" != 0 ]; then apply_flux_crds; fi
if [ "$keda" != 0 ]; then apply_keda_crds; fi
kubectl apply -f "$kwok_dir/kustomize/stage/volume/fast/storage-class.yaml" >>"$logs/kubectl.log" 2>&1 \
  || fail "creating the default StorageClass failed" "$logs/kubectl.log"
kubectl wait --for=condition=Established --timeout="${timeout}s" crd --all >>"$logs/kubectl.log" 2>&1 \
  || fail "the kwok, Gateway API, Flux and KEDA CRDs were not Established within ${timeout}s" "$logs/kubectl.log"
if [ "$flux" != 0 ]; then start_flux; fi

# --- kwok --------------------------------------------------------------------------------------
# A fake runtime log every pod shows unless a Logs rule says otherwise (CRI log format: kwok
# reads log files like a kubelet does).
now=$(date -u +%Y-%m-%dT%H:%M:%S.000000000Z)
cat >"$state/kwok/default-pod.log" <<EOF
$now stdout F [kwok] container started by the celld testenv fake runtime
$now stdout F [kwok] no real process runs here; create a Logs rule to show other lines
EOF
stages=$kwok_dir/kustomize/stage
# kwok resolves a pod exec's command name on its own PATH, not on the PATH an Exec rule sets. So
# pod-path/ comes first on kwok's PATH: a link NAME -> .dispatch there makes `exec POD -- NAME`
# run the NAME found on the PATH of the pod's Exec rule (see testenv/README.md, "exec").
cat >"$state/pod-path/.dispatch" <<'EOF'
#!/bin/sh
# Runs the command this link is named after from the PATH the pod's Exec rule set.
name=${0##*/}
self=$(cd "${0%/*}" && pwd)
IFS=:
for d in $PATH; do
  [ -n "$d" ] && [ "$d" != "$self" ] && [ -f "$d/$name" ] && [ -x "$d/$name" ] && exec "$d/$name" "$@"
done
echo "testenv: $name: not found on the pod's PATH ($PATH)" >&2
exit 127
EOF
chmod +x "$state/pod-path/.dispatch"
PATH="$state/pod-path:$PATH" start kwok "$kwok_dir/bin/kwok" \
  --kubeconfig="$kubeconfig" \
  --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --manage-nodes-with-label-selector= --manage-single-node= \
  --cidr=10.244.0.0/16 --node-ip=127.0.0.1 --node-name=localhost \
  --node-port="$kwok_port" --server-address="127.0.0.1:$kwok_port" \
  --node-lease-duration-seconds=40 \
  --enable-crds=ClusterExec,Exec,ClusterLogs,Logs \
  -c "$stages/node/fast/node-initialize.yaml" \
  -c "$stages/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml" \
  -c "$here/kwok/pod-ready.yaml" -c "$stages/pod/fast/pod-delete.yaml" \
  -c "$here/kwok/pod-complete-on-annotation.yaml" -c "$here/kwok/pod-waiting-on-annotation.yaml" \
  -c "$here/kwok/pod-restarted-on-annotation.yaml" -c "$here/kwok/pod-held-until-wired.yaml" \
  -c "$stages/volume/fast/pvc-provision.yaml" -c "$stages/volume/fast/pv-bind.yaml" \
  -c "$stages/volume/fast/pvc-delete.yaml" -c "$stages/volume/fast/pv-delete.yaml"

{
  cat <<EOF
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata: {name: testenv-default}
spec:
  logs:
  - logsFile: $state/kwok/default-pod.log
    previousLogsFile: $state/kwok/default-pod.log
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterExec
metadata: {name: testenv-default}
spec:
  execs:
  - local:
      workDir: $state/exec-root
EOF
  for i in $(seq 0 $((nodes - 1))); do
    cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations: {node.alpha.kubernetes.io/ttl: "0", kwok.x-k8s.io/node: fake}
  labels: {kubernetes.io/hostname: kwok-node-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "1000", ephemeral-storage: 1Ti}
  capacity: {cpu: "32", memory: 256Gi, pods: "1000", ephemeral-storage: 1Ti}
EOF
  done
} >"$state/kwok/objects.yaml"
kubectl apply -f "$state/kwok/objects.yaml" >>"$logs/kubectl.log" 2>&1 \
  || fail "creating the fake nodes and default exec/logs rules failed" "$logs/kubectl.log"

# --- S3 bucket -----------------------------------------------------------------------------------
s3() { s3_request "$s3_key:$s3_secret" "$@"; }
wait_for s3s-fs "the S3 server (http://127.0.0.1:$s3_port)" s3 "http://127.0.0.1:$s3_port/"
s3 -X PUT "http://127.0.0.1:$s3_port/$s3_bucket" 2>>"$logs/s3s-fs.log" || fail "creating bucket $s3_bucket failed" "$logs/s3s-fs.log"
cat >"$state/s3.env" <<EOF
S3_ENDPOINT=http://127.0.0.1:$s3_port
AWS_ACCESS_KEY_ID=$s3_key
AWS_SECRET_ACCESS_KEY=$s3_secret
AWS_REGION=us-east-1
S3_BUCKET=$s3_bucket
EOF

init_emulators
init_registry
if [ "$flux" != 0 ]; then init_flux; fi

# --- ready? --------------------------------------------------------------------------------------
wait_for kwok "kwok's exec/logs server (https://127.0.0.1:$kwok_port/healthz)" \
  curl -fsSk "https://127.0.0.1:$kwok_port/healthz"
for i in $(seq 0 $((nodes - 1))); do
  wait_for kwok "node kwok-node-$i (Ready)" kubectl wait --for=condition=Ready --timeout=2s "node/kwok-node-$i"
done
wait_for kube-scheduler "kube-scheduler (https://127.0.0.1:$sched_port/readyz)" \
  curl -fsSk "https://127.0.0.1:$sched_port/readyz"
for ns in default kube-system; do
  wait_for kube-controller-manager "ServiceAccount $ns/default (made by kube-controller-manager)" \
    kubectl get serviceaccount default --namespace="$ns"
done
# End to end: a pod is scheduled, Running and Ready, and exec and logs reach kwok's default rules.
probe=(--namespace=kube-system testenv-probe)
kubectl run "${probe[@]}" --image=testenv.invalid/probe --restart=Never >>"$logs/kubectl.log" 2>&1 \
  || fail "creating the probe pod kube-system/testenv-probe failed" "$logs/kubectl.log"
wait_for kwok "probe pod kube-system/testenv-probe (Ready; scheduled by kube-scheduler, run by kwok)" \
  kubectl wait --for=condition=Ready --timeout=2s pod "${probe[@]}"
exec_works() { [ "$(kubectl exec "${probe[@]}" -- pwd)" = "$state/exec-root" ]; }
wait_for kwok "kubectl exec into the probe pod (default ClusterExec)" exec_works
logs_work() { kubectl logs "${probe[@]}" | grep -q 'celld testenv fake runtime'; }
wait_for kwok "kubectl logs of the probe pod (default ClusterLogs)" logs_work
kubectl delete pod "${probe[@]}" --wait=false >>"$logs/kubectl.log" 2>&1
trap - ERR
touch "$state/ready"
log "up in $((SECONDS - started))s"
usage
