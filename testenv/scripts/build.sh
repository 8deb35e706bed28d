#!/usr/bin/env bash
# Builds the local control plane from Go modules (and the object store emulators: the S3 server
# from crates.io, fake-gcs-server from the Go module proxy, Azurite from npm; Flux's
# source-controller, an OCI registry, promtool and adapter-config from the Go module proxy; the
# Gateway API's and KEDA's CRDs from their Go modules) into a cache outside the repository,
# keyed by version. A component already in the cache is not rebuilt.
# Prints nothing but progress; exits non-zero naming the component that failed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../versions.env
. "$here/versions.env"
. "$here/scripts/lib.sh"

export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
need go; need cargo; need patch

check_pin() { # module-dir module version [how to pin it]
  local got
  got=$(cd "$here/go/$1" && go list -m -f '{{.Version}}' "$2")
  [ "$got" = "$3" ] || die "testenv/go/$1 pins $2 $got but versions.env says $3; pin it with: (cd testenv/go/$1 && ${4:-go get $2@$3 && go mod tidy})"
}

# Downloads MODULE@VERSION into the module cache (a no-op when it is there) and prints its
# directory. `go list -m` alone prints nothing for a module not yet downloaded, so always download.
module_dir() { # module-dir module version
  local dir
  dir=$(cd "$here/go/$1" && go mod download -json "$2@$3" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') \
    || die "downloading $2 $3 failed (is the Go module proxy reachable? GOPROXY=$(go env GOPROXY))"
  [ -n "$dir" ] && [ -d "$dir" ] || die "go mod download printed no directory for $2 $3"
  printf '%s' "$dir"
}

build_kubernetes() {
  local dir; dir=$(cache_dir kubernetes "$KUBERNETES_VERSION")
  [ -x "$dir/bin/kubectl" ] && return 0
  check_pin kubernetes k8s.io/kubernetes "$KUBERNETES_VERSION"
  log "building kube-apiserver, kube-controller-manager, kube-scheduler, kubectl $KUBERNETES_VERSION (first time: about 15 minutes)"
  local minor=${KUBERNETES_VERSION#v1.}; minor=${minor%%.*}
  local v=k8s.io/component-base/version c=k8s.io/client-go/pkg/version now
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  local ld="-s -w"
  for p in $v $c; do
    ld="$ld -X $p.gitVersion=$KUBERNETES_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=$now"
  done
  mkdir -p "$dir.tmp/bin"
  (cd "$here/go/kubernetes" && go build -trimpath -tags selinux,notest,grpcnotrace -ldflags "$ld" -o "$dir.tmp/bin/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl) || die "building Kubernetes $KUBERNETES_VERSION failed"
  publish "$dir"
}

build_etcd() {
  local dir; dir=$(cache_dir etcd "$ETCD_VERSION")
  [ -x "$dir/bin/etcd" ] && return 0
  check_pin etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION"
  log "building etcd $ETCD_VERSION"
  mkdir -p "$dir.tmp/bin"
  (cd "$here/go/etcd" && go build -trimpath -ldflags "-s -w" -o "$dir.tmp/bin/etcd" go.etcd.io/etcd/server/v3) \
    || die "building etcd $ETCD_VERSION failed"
  publish "$dir"
}

# Prepares a patched copy of the kwok module in WORK: WORK/kwok (the module's source with
# testenv/go/kwok/patches applied) and WORK/go.mod, a throwaway go.mod that replaces
# sigs.k8s.io/kwok with that copy (the module cache is read-only and go build refuses overlays
# inside it). Prints the module cache directory of the unpatched module.
prepare_kwok() { # work-dir
  local work=$1 src p
  check_pin kwok sigs.k8s.io/kwok "$KWOK_VERSION"
  src=$(module_dir kwok sigs.k8s.io/kwok "$KWOK_VERSION")
  mkdir -p "$work"
  cp -r "$src" "$work/kwok" && chmod -R u+w "$work/kwok" || die "copying kwok $KWOK_VERSION from $src failed"
  for p in "$here"/go/kwok/patches/*.patch; do
    patch -s -d "$work/kwok" -p1 <"$p" || die "$p does not apply to kwok $KWOK_VERSION"
  done
  cp "$here/go/kwok/go.mod" "$work/go.mod" && cp "$here/go/kwok/go.sum" "$work/go.sum"
  (cd "$here/go/kwok" && go mod edit -modfile="$work/go.mod" -replace="sigs.k8s.io/kwok=$work/kwok") \
    || die "pointing kwok's go.mod at the patched copy failed"
  printf '%s' "$src"
}

build_kwok() {
  local dir; dir=$(kwok_cache_dir)
  [ -x "$dir/bin/kwok" ] && return 0
  log "building kwok $KWOK_VERSION (with testenv/go/kwok/patches)"
  local work=$dir.tmp/work src
  mkdir -p "$dir.tmp/bin"
  src=$(prepare_kwok "$work")
  (cd "$here/go/kwok" && go build -modfile="$work/go.mod" -trimpath -ldflags "-s -w" -o "$dir.tmp/bin/kwok" sigs.k8s.io/kwok/cmd/kwok) \
    || die "building kwok $KWOK_VERSION failed"
  rm -rf "$work"
  cp -r "$src/kustomize" "$dir.tmp/kustomize" && chmod -R u+w "$dir.tmp/kustomize"
  publish "$dir"
}

fetch_gateway_api() {
  local dir; dir=$(cache_dir gateway-api "$GATEWAY_API_VERSION")
  [ -d "$dir/crds" ] && return 0
  log "fetching Gateway API $GATEWAY_API_VERSION standard CRDs"
  local src; src=$(module_dir gateway-api sigs.k8s.io/gateway-api "$GATEWAY_API_VERSION")
  [ -d "$src/config/crd/standard" ] || die "Gateway API $GATEWAY_API_VERSION has no config/crd/standard"
  mkdir -p "$dir.tmp/crds"
  cp "$src"/config/crd/standard/gateway.networking.k8s.io_*.yaml "$dir.tmp/crds/"
  rm -f "$dir.tmp/crds/"*vap*
  publish "$dir"
}

# KEDA's keda.sh CRDs from the Go module's config/crd/bases (no build: the module is only
# downloaded). Copies all four keda.sh kinds (ScaledObject, ScaledJob, TriggerAuthentication,
# ClusterTriggerAuthentication), not the eventing.keda.sh ones.
fetch_keda() {
  local dir; dir=$(keda_cache_dir)
  [ -d "$dir/crds" ] && return 0
  check_pin keda github.com/kedacore/keda/v2 "$KEDA_VERSION" \
    "go mod edit -require=github.com/kedacore/keda/v2@$KEDA_VERSION && go mod download github.com/kedacore/keda/v2"
  log "fetching KEDA $KEDA_VERSION's keda.sh CRDs"
  local src; src=$(module_dir keda github.com/kedacore/keda/v2 "$KEDA_VERSION")
  [ -f "$src/config/crd/bases/keda.sh_scaledobjects.yaml" ] \
    || die "KEDA $KEDA_VERSION has no config/crd/bases/keda.sh_scaledobjects.yaml"
  rm -rf "$dir.tmp"; mkdir -p "$dir.tmp/crds"
  cp "$src"/config/crd/bases/keda.sh_*.yaml "$dir.tmp/crds/" && chmod -R u+w "$dir.tmp/crds" \
    || die "copying KEDA $KEDA_VERSION's CRDs failed"
  publish "$dir"
}

# promtool, Prometheus's own checker (`promtool check metrics` lints an exposition), from
# testenv/go/promtool: a module that requires github.com/prometheus/prometheus (go.mod's `tool`
# line; Prometheus's go.mod has no replace directive to repeat). The version it prints is the
# Prometheus release the module version stands for (v0.316.0 is v3.16.0).
promtool_pin_hint() { echo "go get -tool github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS_VERSION && go mod tidy"; }
prometheus_release() { # v0.316.0 -> 3.16.0
  local v=${PROMETHEUS_VERSION#v0.} minor
  minor=${v%%.*}
  printf '%d.%d.%s' $((10#$minor / 100)) $((10#$minor % 100)) "${v#*.}"
}
build_promtool() {
  local dir; dir=$(promtool_cache_dir)
  [ -x "$dir/bin/promtool" ] && return 0
  check_pin promtool github.com/prometheus/prometheus "$PROMETHEUS_VERSION" "$(promtool_pin_hint)"
  local release; release=$(prometheus_release)
  log "building promtool $release (github.com/prometheus/prometheus $PROMETHEUS_VERSION; first time: about 8 minutes)"
  rm -rf "$dir.tmp"; mkdir -p "$dir.tmp/bin"
  local v=github.com/prometheus/common/version
  (cd "$here/go/promtool" && go build -trimpath \
    -ldflags "-s -w -X $v.Version=$release -X $v.Revision=$PROMETHEUS_VERSION -X $v.Branch=HEAD -X $v.BuildUser=celld-testenv" \
    -o "$dir.tmp/bin/promtool" github.com/prometheus/prometheus/cmd/promtool) \
    || die "building promtool (Prometheus $PROMETHEUS_VERSION) failed"
  "$dir.tmp/bin/promtool" --version >/dev/null || die "the promtool built from Prometheus $PROMETHEUS_VERSION does not run"
  publish "$dir"
}

# Prepares a patched copy of the s3s-fs crate in WORK/s3s-fs: cargo downloads the published crate
# as the one dependency of a throwaway package (WORK/fetch), and testenv/s3s-fs/patches are
# applied to a copy of it (the crate ships its Cargo.lock, so `cargo install --locked` builds
# with the dependency versions it was published with).
prepare_s3s_fs() { # work-dir
  local work=$1 src p
  rm -rf "$work"; mkdir -p "$work/fetch/src"
  printf '[package]\nname = "s3s-fs-fetch"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n[dependencies]\ns3s-fs = { version = "=%s", default-features = false }\n\n[workspace]\n' \
    "$S3S_FS_VERSION" >"$work/fetch/Cargo.toml"
  : >"$work/fetch/src/lib.rs"
  src=$(cd "$work/fetch" && cargo metadata --quiet --format-version 1 \
    | grep -o "\"manifest_path\":\"[^\"]*/s3s-fs-${S3S_FS_VERSION//./\\.}/Cargo\\.toml\"") \
    || die "downloading s3s-fs $S3S_FS_VERSION from crates.io failed"
  src=${src#\"manifest_path\":\"}; src=$(dirname "${src%\"}")
  [ -f "$src/Cargo.lock" ] || die "the s3s-fs $S3S_FS_VERSION crate ($src) has no Cargo.lock"
  cp -r "$src" "$work/s3s-fs" && chmod -R u+w "$work/s3s-fs" || die "copying s3s-fs $S3S_FS_VERSION from $src failed"
  for p in "$here"/s3s-fs/patches/*.patch; do
    patch -s -d "$work/s3s-fs" -p1 <"$p" || die "$p does not apply to s3s-fs $S3S_FS_VERSION"
  done
}

build_s3s_fs() {
  local dir; dir=$(s3s_fs_cache_dir)
  [ -x "$dir/bin/s3s-fs" ] && return 0
  log "building s3s-fs $S3S_FS_VERSION (S3-compatible test server, with testenv/s3s-fs/patches)"
  rm -rf "$dir.tmp"; mkdir -p "$dir.tmp"
  prepare_s3s_fs "$dir.tmp/work"
  cargo install --quiet --locked --root "$dir.tmp" --target-dir "$dir.tmp/work/target" \
    --path "$dir.tmp/work/s3s-fs" --features binary || die "building s3s-fs $S3S_FS_VERSION failed"
  rm -rf "$dir.tmp/work" "$dir.tmp/.crates.toml" "$dir.tmp/.crates2.json"
  publish "$dir"
}

build_fake_gcs_server() {
  local dir; dir=$(cache_dir fake-gcs-server "$FAKE_GCS_SERVER_VERSION")
  [ -x "$dir/bin/fake-gcs-server" ] && return 0
  check_pin fake-gcs-server github.com/fsouza/fake-gcs-server "$FAKE_GCS_SERVER_VERSION"
  log "building fake-gcs-server $FAKE_GCS_SERVER_VERSION (GCS emulator)"
  mkdir -p "$dir.tmp/bin"
  (cd "$here/go/fake-gcs-server" && go build -trimpath -ldflags "-s -w" -o "$dir.tmp/bin/fake-gcs-server" \
    github.com/fsouza/fake-gcs-server) || die "building fake-gcs-server $FAKE_GCS_SERVER_VERSION failed"
  publish "$dir"
}

# Flux's source-controller, built from testenv/go/source-controller: a module that requires it
# (go.mod's `tool` line) and repeats the replace directives of its go.mod, which apply only in
# the main module (`go install MODULE@VERSION` refuses a module that has any). `go mod tidy`
# fails there (a module only source-controller's own tests import is not served), hence -e.
source_controller_pin_hint() { echo "go get -tool github.com/fluxcd/source-controller@$SOURCE_CONTROLLER_VERSION && go mod tidy -e, and copy the replace directives of its go.mod"; }

# Fails unless testenv/go/source-controller repeats every replace directive of source-controller's
# go.mod that points at another module (its ./api replace needs none: the api module is published
# at the same version). Prints the module cache directory of source-controller.
check_source_controller() {
  check_pin source-controller github.com/fluxcd/source-controller "$SOURCE_CONTROLLER_VERSION" "$(source_controller_pin_hint)"
  need python3
  local src theirs ours missing
  src=$(module_dir source-controller github.com/fluxcd/source-controller "$SOURCE_CONTROLLER_VERSION")
  theirs=$(cd "$here/go/source-controller" && go mod edit -json "$src/go.mod" | replaces) \
    || die "reading the replace directives of $src/go.mod failed"
  ours=$(cd "$here/go/source-controller" && go mod edit -json | replaces) \
    || die "reading the replace directives of testenv/go/source-controller/go.mod failed"
  grep -q 'github.com/fluxcd/source-controller/api => \./api' <<<"$theirs" \
    || die "source-controller $SOURCE_CONTROLLER_VERSION's go.mod no longer replaces its api module with ./api; check which replace directives testenv/go/source-controller needs"
  missing=$(comm -23 <(grep -v ' => \./' <<<"$theirs" | sort) <(sort <<<"$ours"))
  [ -z "$missing" ] || die "testenv/go/source-controller/go.mod lacks these replace directives of source-controller $SOURCE_CONTROLLER_VERSION's go.mod: $missing"
  printf '%s' "$src"
}
# The replace directives of `go mod edit -json` output, one "old[@version] => new[ version]" a line.
replaces() {
  python3 -c 'import json, sys
for r in json.load(sys.stdin).get("Replace") or []:
    old = r["Old"]["Path"] + ("@" + r["Old"]["Version"] if r["Old"].get("Version") else "")
    print(old, "=>", r["New"]["Path"], r["New"].get("Version", "")) '
}

# Copies source-controller's CRDs (source.toolkit.fluxcd.io) from its module directory to DEST.
copy_flux_crds() { # module-dir dest
  [ -d "$1/config/crd/bases" ] || die "source-controller $SOURCE_CONTROLLER_VERSION has no config/crd/bases"
  mkdir -p "$2"
  cp "$1"/config/crd/bases/source.toolkit.fluxcd.io_*.yaml "$2/" && chmod -R u+w "$2" \
    || die "copying the source-controller CRDs failed"
  local kind
  for kind in buckets gitrepositories helmcharts helmrepositories ocirepositories; do
    [ -f "$2/source.toolkit.fluxcd.io_$kind.yaml" ] \
      || die "source-controller $SOURCE_CONTROLLER_VERSION has no CRD source.toolkit.fluxcd.io_$kind.yaml"
  done
}

build_source_controller() {
  local dir; dir=$(source_controller_cache_dir)
  [ -x "$dir/bin/source-controller" ] && [ -d "$dir/crds" ] && return 0
  local src; src=$(check_source_controller)
  log "building Flux source-controller $SOURCE_CONTROLLER_VERSION (first time: about 6 minutes)"
  rm -rf "$dir.tmp"; mkdir -p "$dir.tmp/bin"
  copy_flux_crds "$src" "$dir.tmp/crds"
  (cd "$here/go/source-controller" && go build -trimpath -ldflags "-s -w" -o "$dir.tmp/bin/source-controller" \
    github.com/fluxcd/source-controller) || die "building source-controller $SOURCE_CONTROLLER_VERSION failed"
  publish "$dir"
}

# oci-registry: this repository's OCI registry for tests and pusher of Flux OCI artifacts
# (go-containerregistry), from testenv/go/oci-registry.
build_oci_registry() {
  local dir; dir=$(oci_registry_cache_dir)
  [ -x "$dir/bin/oci-registry" ] && return 0
  check_pin oci-registry github.com/google/go-containerregistry "$GO_CONTAINERREGISTRY_VERSION"
  log "building oci-registry (go-containerregistry $GO_CONTAINERREGISTRY_VERSION)"
  rm -rf "$dir.tmp"; mkdir -p "$dir.tmp/bin"
  (cd "$here/go/oci-registry" && go build -trimpath -ldflags "-s -w" -o "$dir.tmp/bin/oci-registry" .) \
    || die "building oci-registry failed"
  publish "$dir"
}

# gitops-health: this repository's small judge of objects as GitOps tools judge them (Argo CD's
# Lua health checks in gopher-lua, kstatus), from testenv/go/gitops-health.
build_gitops_health() {
  local dir; dir=$(gitops_health_cache_dir)
  [ -x "$dir/bin/gitops-health" ] && return 0
  check_pin gitops-health github.com/yuin/gopher-lua "$GOPHER_LUA_VERSION"
  check_pin gitops-health sigs.k8s.io/cli-utils "$CLI_UTILS_VERSION"
  log "building gitops-health (gopher-lua $GOPHER_LUA_VERSION, kstatus from cli-utils $CLI_UTILS_VERSION)"
  mkdir -p "$dir.tmp/bin"
  (cd "$here/go/gitops-health" && go build -trimpath -ldflags "-s -w" -o "$dir.tmp/bin/gitops-health" .) \
    || die "building gitops-health failed"
  publish "$dir"
}

# adapter-config: this repository's reader of prometheus-adapter configurations with the
# adapter's own loader and rule namers (sigs.k8s.io/prometheus-adapter), from
# testenv/go/adapter-config.
build_adapter_config() {
  local dir; dir=$(adapter_config_cache_dir)
  [ -x "$dir/bin/adapter-config" ] && return 0
  check_pin adapter-config sigs.k8s.io/prometheus-adapter "$PROMETHEUS_ADAPTER_VERSION"
  log "building adapter-config (prometheus-adapter $PROMETHEUS_ADAPTER_VERSION)"
  rm -rf "$dir.tmp"; mkdir -p "$dir.tmp/bin"
  (cd "$here/go/adapter-config" && go build -trimpath -ldflags "-s -w" -o "$dir.tmp/bin/adapter-config" .) \
    || die "building adapter-config failed"
  publish "$dir"
}

# Azurite (the Azure Storage emulator) from the npm registry, with its exact dependency versions
# recorded in the cache's package-lock.json. bin/azurite-blob links to the blob-only entry point.
install_azurite() {
  local dir; dir=$(cache_dir azurite "$AZURITE_VERSION")
  [ -x "$dir/bin/azurite-blob" ] && return 0
  need node; need npm
  log "installing Azurite $AZURITE_VERSION (Azure Blob emulator) from npm"
  rm -rf "$dir.tmp"; mkdir -p "$dir.tmp/bin"
  npm install --prefix "$dir.tmp" --no-audit --no-fund --omit=dev --loglevel=error \
    --save-exact "azurite@$AZURITE_VERSION" >&2 || die "installing Azurite $AZURITE_VERSION from npm failed"
  [ -f "$dir.tmp/node_modules/azurite/dist/src/blob/main.js" ] \
    || die "Azurite $AZURITE_VERSION has no dist/src/blob/main.js"
  # Relative, so the link survives publish's rename.
  ln -s ../node_modules/.bin/azurite-blob "$dir.tmp/bin/azurite-blob"
  "$dir.tmp/bin/azurite-blob" --version >/dev/null || die "Azurite $AZURITE_VERSION does not run on node $(node --version)"
  publish "$dir"
}

# Runs every step that turns the pinned modules into build inputs (pins, downloads, copies,
# patches, CRD files; also s3s-fs's patched copy of its crate) against an empty, temporary
# module cache and binary cache, without compiling anything: a step that only works because a
# warm cache hides it fails here.
check_sources() {
  local tmp; tmp=$(mktemp -d)
  # shellcheck disable=SC2064 # expand now: the trap runs after tmp is out of scope
  trap "GOMODCACHE='$tmp/gomod' go clean -modcache 2>/dev/null; rm -rf '$tmp'" EXIT
  export GOMODCACHE=$tmp/gomod CELLD_TESTENV_CACHE=$tmp/cache
  log "preparing every Go component's sources from an empty module cache (no compiling)"
  check_pin kubernetes k8s.io/kubernetes "$KUBERNETES_VERSION"
  module_dir kubernetes k8s.io/kubernetes "$KUBERNETES_VERSION" >/dev/null
  check_pin etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION"
  module_dir etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION" >/dev/null
  check_pin fake-gcs-server github.com/fsouza/fake-gcs-server "$FAKE_GCS_SERVER_VERSION"
  module_dir fake-gcs-server github.com/fsouza/fake-gcs-server "$FAKE_GCS_SERVER_VERSION" >/dev/null
  local src; src=$(prepare_kwok "$tmp/kwok")
  [ -d "$src/kustomize" ] || die "kwok $KWOK_VERSION has no kustomize/ directory to copy"
  (cd "$here/go/kwok" && go list -modfile="$tmp/kwok/go.mod" -m -f '{{.Replace.Dir}}' sigs.k8s.io/kwok) \
    | grep -qx "$tmp/kwok/kwok" || die "kwok's throwaway go.mod does not replace sigs.k8s.io/kwok with the patched copy"
  check_pin gitops-health github.com/yuin/gopher-lua "$GOPHER_LUA_VERSION"
  check_pin gitops-health sigs.k8s.io/cli-utils "$CLI_UTILS_VERSION"
  (cd "$here/go/gitops-health" && go mod download) || die "downloading gitops-health's modules failed"
  prepare_s3s_fs "$tmp/s3s-fs"
  local flux; flux=$(check_source_controller)
  copy_flux_crds "$flux" "$tmp/flux-crds"
  check_pin oci-registry github.com/google/go-containerregistry "$GO_CONTAINERREGISTRY_VERSION"
  (cd "$here/go/oci-registry" && go mod download) || die "downloading oci-registry's modules failed"
  fetch_gateway_api
  ls "$(cache_dir gateway-api "$GATEWAY_API_VERSION")"/crds/*httproutes*.yaml >/dev/null 2>&1 \
    || die "the Gateway API CRDs copied from $GATEWAY_API_VERSION lack the HTTPRoute CRD"
  check_pin promtool github.com/prometheus/prometheus "$PROMETHEUS_VERSION" "$(promtool_pin_hint)"
  # Every module of promtool's build list resolves (their go.mod files: a version the proxy
  # refuses fails here); only Prometheus's own source is downloaded, the rest (1.8 GB) at build.
  (cd "$here/go/promtool" && go list -m all >/dev/null) || die "resolving promtool's module graph failed"
  [ -d "$(module_dir promtool github.com/prometheus/prometheus "$PROMETHEUS_VERSION")/cmd/promtool" ] \
    || die "github.com/prometheus/prometheus $PROMETHEUS_VERSION has no cmd/promtool"
  fetch_keda
  check_pin adapter-config sigs.k8s.io/prometheus-adapter "$PROMETHEUS_ADAPTER_VERSION"
  (cd "$here/go/adapter-config" && go mod download) || die "downloading adapter-config's modules failed"
  log "ok: every Go component's sources prepare from an empty module cache (and s3s-fs's patches apply)"
}

what=${1:-all}
case $what in
  all) build_etcd; build_kwok; fetch_gateway_api; fetch_keda; build_s3s_fs; build_fake_gcs_server; install_azurite; build_gitops_health; build_oci_registry; build_source_controller; build_promtool; build_adapter_config; build_kubernetes ;;
  kubernetes) build_kubernetes ;; etcd) build_etcd ;; kwok) build_kwok ;;
  gateway-api) fetch_gateway_api ;; keda) fetch_keda ;; s3s-fs) build_s3s_fs ;;
  fake-gcs-server) build_fake_gcs_server ;; azurite) install_azurite ;;
  gitops-health) build_gitops_health ;; promtool) build_promtool ;; adapter-config) build_adapter_config ;;
  oci-registry) build_oci_registry ;; source-controller) build_source_controller ;;
  check-sources) check_sources ;;
  *) die "unknown component '$what' (all, kubernetes, etcd, kwok, gateway-api, keda, s3s-fs, fake-gcs-server, azurite, gitops-health, promtool, adapter-config, oci-registry, source-controller, check-sources)" ;;
esac
