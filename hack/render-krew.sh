#!/usr/bin/env bash
# Renders krew/celld.yaml.tmpl for a release: hack/render-krew.sh VERSION DIST_DIR > celld.yaml
# VERSION is X.Y.Z (no v); DIST_DIR holds the kubectl-celld_<os>_<arch>.tar.gz.sha256 files that
# hack/dist-plugin.sh wrote. Fails if an archive's checksum is missing or a placeholder is left.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: hack/render-krew.sh VERSION DIST_DIR}
dist=${2:?usage: hack/render-krew.sh VERSION DIST_DIR}
case "$version" in v*) echo "render-krew: VERSION without the v, e.g. 0.1.0" >&2; exit 1 ;; esac
manifest=$(sed "s/@VERSION@/$version/g" krew/celld.yaml.tmpl)
for platform in linux_x86_64 linux_aarch64 darwin_x86_64 darwin_arm64; do
  file=$dist/kubectl-celld_$platform.tar.gz.sha256
  [ -s "$file" ] || { echo "render-krew: $file is missing" >&2; exit 1; }
  sum=$(cut -d' ' -f1 "$file")
  [[ "$sum" =~ ^[0-9a-f]{64}$ ]] || { echo "render-krew: $file holds no sha256" >&2; exit 1; }
  manifest=${manifest//@SHA256_${platform}@/$sum}
done
if grep -q '@[A-Z0-9_a-z]*@' <<<"$manifest"; then
  echo "render-krew: placeholders left: $(grep -o '@[A-Z0-9_a-z]*@' <<<"$manifest" | sort -u | tr '\n' ' ')" >&2
  exit 1
fi
printf '%s\n' "$manifest"
