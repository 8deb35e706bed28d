# Shared helpers for the testenv scripts (sourced, not run).
log() { printf 'testenv: %s\n' "$*" >&2; }
die() { printf 'testenv: error: %s\n' "$*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "'$1' is not installed; it is needed to build the local control plane"; }

# Root of the binary cache; override with CELLD_TESTENV_CACHE.
cache_root() { printf '%s' "${CELLD_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/celld-operator/testenv}"; }
cache_dir() { printf '%s/%s-%s' "$(cache_root)" "$1" "$2"; }

# Moves a finished build from DIR.tmp to DIR, so an interrupted build never looks complete.
publish() { rm -rf "$1"; mv "$1.tmp" "$1"; }
