# shellcheck shell=bash
# Shared helpers for the testenv scripts (sourced, not run).
log() { printf 'testenv: %s\n' "$*" >&2; }
die() { printf 'testenv: error: %s\n' "$*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "'$1' is not installed; it is needed to build the local control plane"; }

# Root of the binary cache; override with CELLD_TESTENV_CACHE.
cache_root() { printf '%s' "${CELLD_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/celld-operator/testenv}"; }
cache_dir() { printf '%s/%s-%s' "$(cache_root)" "$1" "$2"; }

# Moves a finished build from DIR.tmp to DIR, so an interrupted build never looks complete.
publish() { rm -rf "$1"; mv "$1.tmp" "$1"; }

# --- Running the local control plane (up.sh / down.sh) ---------------------------------------

# Root of the repository (the state dir lives there, gitignored).
repo_root() { (cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd); }
# State of a running local control plane: kubeconfig, PKI, data, pid files, logs. Override with
# CELLD_TESTENV_DIR (an absolute path) to run a second, independent control plane.
state_dir() { printf '%s' "${CELLD_TESTENV_DIR:-$(repo_root)/.testenv}"; }

# Prints a free TCP port on 127.0.0.1 in 20000-32767 (below the kernel's ephemeral range), not
# one of the ports given as arguments (already handed out in this run).
free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$((20000 + RANDOM % 12768))
    case " $* " in *" $p "*) continue ;; esac
    if [ -z "$(ss -Hltn "sport = :$p" 2>/dev/null)" ]; then printf '%s' "$p"; return 0; fi
  done
  die "no free port found on 127.0.0.1"
}

# Is the process whose pid is in FILE alive?
pid_alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null && ! grep -q "^State:.*zombie" "/proc/$(cat "$1")/status" 2>/dev/null; }

# kwok is built with the patches in testenv/go/kwok/patches (see there); the cache key includes
# their hash, so changing a patch rebuilds kwok.
kwok_patches_hash() { cat "$(repo_root)"/testenv/go/kwok/patches/*.patch | sha256sum | cut -c1-8; }
kwok_cache_dir() { cache_dir kwok "$KWOK_VERSION-p$(kwok_patches_hash)"; }

# s3s-fs is built with the patches in testenv/s3s-fs/patches, keyed like kwok.
s3s_fs_patches_hash() { cat "$(repo_root)"/testenv/s3s-fs/patches/*.patch | sha256sum | cut -c1-8; }
s3s_fs_cache_dir() { cache_dir s3s-fs "$S3S_FS_VERSION-p$(s3s_fs_patches_hash)"; }

# gitops-health is this repository's own source (testenv/go/gitops-health) built with pinned
# modules; the cache key holds both pins and a hash of its source, so a change rebuilds it.
gitops_health_hash() { cat "$(repo_root)"/testenv/go/gitops-health/main.go "$(repo_root)"/testenv/go/gitops-health/go.mod | sha256sum | cut -c1-8; }
gitops_health_cache_dir() { cache_dir gitops-health "$GOPHER_LUA_VERSION-$CLI_UTILS_VERSION-s$(gitops_health_hash)"; }

# oci-registry is this repository's own source too (testenv/go/oci-registry), keyed like gitops-health.
oci_registry_hash() { cat "$(repo_root)"/testenv/go/oci-registry/main.go "$(repo_root)"/testenv/go/oci-registry/go.mod | sha256sum | cut -c1-8; }
oci_registry_cache_dir() { cache_dir oci-registry "$GO_CONTAINERREGISTRY_VERSION-s$(oci_registry_hash)"; }
# Flux's source-controller: its binary in bin/, its CRDs in crds/.
source_controller_cache_dir() { cache_dir source-controller "$SOURCE_CONTROLLER_VERSION"; }
# promtool (Prometheus's checker), built from testenv/go/promtool.
promtool_cache_dir() { cache_dir promtool "$PROMETHEUS_VERSION"; }
# KEDA's keda.sh CRDs in crds/.
keda_cache_dir() { cache_dir keda "$KEDA_VERSION"; }
# adapter-config is this repository's own source (testenv/go/adapter-config), keyed like gitops-health.
adapter_config_hash() { cat "$(repo_root)"/testenv/go/adapter-config/main.go "$(repo_root)"/testenv/go/adapter-config/go.mod | sha256sum | cut -c1-8; }
adapter_config_cache_dir() { cache_dir adapter-config "$PROMETHEUS_ADAPTER_VERSION-s$(adapter_config_hash)"; }
