#!/usr/bin/env bash
# Builds kubectl-celld for one platform and writes its release assets into dist/ (or $DIST):
#
#   kubectl-celld_<os>_<arch>                the binary, as the README's install snippet fetches it
#   kubectl-celld_<os>_<arch>.sha256         `sha256sum -c` format
#   kubectl-celld_<os>_<arch>.tar.gz         kubectl-celld and its kubectl_complete-celld link
#                                            (+ LICENSE, README.md), for krew
#   kubectl-celld_<os>_<arch>.tar.gz.sha256
#
# <os> is `uname -s` in lower case (linux, darwin) and <arch> is `uname -m` on that platform
# (x86_64 and aarch64 on Linux, x86_64 and arm64 on macOS), so
#   curl -fsSLO .../kubectl-celld_$(uname -s | tr '[:upper:]' '[:lower:]')_$(uname -m)
# names the right asset on every supported machine.
#
# Usage:
#   hack/dist-plugin.sh                      # the host platform, cargo build (on glibc Linux
#                                            # statically linked, as `make plugin` builds it)
#   hack/dist-plugin.sh --target TRIPLE      # one of the release targets below
#   hack/dist-plugin.sh --target TRIPLE --binary PATH   # package PATH instead of building
# Linux targets build static (musl) binaries with cargo-zigbuild, which must be on PATH; a Linux
# binary built here is checked to be static, stripped and at most 15 MiB
# (hack/check-static-binary.py).
set -euo pipefail
cd "$(dirname "$0")/.."

die() { printf 'dist-plugin: error: %s\n' "$*" >&2; exit 1; }

target='' binary=''
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target=${2:?--target needs a value}; shift 2 ;;
    --binary) binary=${2:?--binary needs a value}; shift 2 ;;
    *) die "unknown argument $1" ;;
  esac
done

# The release targets and the (os, arch) their asset is named after.
case "$target" in
  x86_64-unknown-linux-musl) os=linux arch=x86_64 ;;
  aarch64-unknown-linux-musl) os=linux arch=aarch64 ;;
  x86_64-apple-darwin) os=darwin arch=x86_64 ;;
  aarch64-apple-darwin) os=darwin arch=arm64 ;;
  "") os=$(uname -s | tr '[:upper:]' '[:lower:]') arch=$(uname -m) ;;
  *) die "unsupported target $target (release targets: x86_64/aarch64-unknown-linux-musl, x86_64/aarch64-apple-darwin)" ;;
esac

built=''
if [ -z "$binary" ]; then
  built=yes
  build=(cargo build)
  case "$target" in *-linux-musl) build=(cargo zigbuild) ;; esac
  out=${CARGO_TARGET_DIR:-target}
  host=$(rustc -vV | sed -n 's/^host: //p')
  if [ -z "$target" ] && [[ "$host" == *-linux-gnu ]]; then
    # The host platform on glibc Linux, as `make plugin` builds it: statically linked.
    RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
      cargo build --release --locked --target "$host" -p kubectl-celld --bin kubectl-celld
    binary=$out/$host/release/kubectl-celld
  elif [ -n "$target" ]; then
    "${build[@]}" --release --locked --target "$target" -p kubectl-celld --bin kubectl-celld
    binary=$out/$target/release/kubectl-celld
  else
    "${build[@]}" --release --locked -p kubectl-celld --bin kubectl-celld
    binary=$out/release/kubectl-celld
  fi
fi
[ -x "$binary" ] || die "$binary is not an executable"
# A Linux binary this script built must be static, stripped and at most 15 MiB.
if [ -n "$built" ] && [ "$os" = linux ]; then
  python3 hack/check-static-binary.py "$binary" || die "$binary is not a static, stripped binary of at most 15 MiB"
fi

sha256() { # FILE: writes FILE.sha256 next to it, in `sha256sum` format
  local dir base sum
  dir=$(dirname "$1") base=$(basename "$1")
  if command -v sha256sum >/dev/null; then sum=$(cd "$dir" && sha256sum "$base")
  else sum=$(cd "$dir" && shasum -a 256 "$base"); fi
  printf '%s\n' "$sum" > "$1.sha256"
}

dist=${DIST:-dist}
name=kubectl-celld_${os}_${arch}
mkdir -p "$dist"
install -m 0755 "$binary" "$dist/$name"
sha256 "$dist/$name"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
install -m 0755 "$binary" "$stage/kubectl-celld"
# kubectl completes `kubectl celld ...` through this name on PATH: a link to the plugin.
ln -s kubectl-celld "$stage/kubectl_complete-celld"
files=(kubectl-celld kubectl_complete-celld)
for f in LICENSE README.md; do
  if [ -f "$f" ]; then cp "$f" "$stage/"; files+=("$f"); fi
done
tar -C "$stage" -czf "$dist/$name.tar.gz" "${files[@]}"
sha256 "$dist/$name.tar.gz"
printf '%s\n' "$dist/$name" "$dist/$name.sha256" "$dist/$name.tar.gz" "$dist/$name.tar.gz.sha256"
