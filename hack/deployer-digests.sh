#!/usr/bin/env bash
# Prints this release's deployer images by digest in the form the operator's DEPLOYER_DIGESTS
# and the plugin's CELLD_DEPLOYER_DIGESTS (at build time) take:
#
#   hack/deployer-digests.sh TAG REFS_DIR    ->    TAG=sha256:...,TAG-celld-vX.Y.Z=sha256:...
#
# REFS_DIR holds the release's *.ref files (REGISTRY/NAME:TAG[SUFFIX]@sha256:<64 hex>, one per
# pushed image); the deployer's are those of REGISTRY/celld-operator-deployer. Fails when there
# is none, or one is not by digest.
set -euo pipefail

die() { printf 'deployer-digests: error: %s\n' "$*" >&2; exit 1; }

tag=${1:?usage: hack/deployer-digests.sh TAG REFS_DIR}
refs=${2:?usage: hack/deployer-digests.sh TAG REFS_DIR}
repository=ghcr.io/anthaathi/celld-operator-deployer
pairs=()
for file in "$refs"/*.ref; do
  [ -e "$file" ] || die "$refs holds no *.ref file"
  ref=$(tr -d '[:space:]' < "$file")
  case "$ref" in
    "$repository:$tag"*@sha256:*) ;;
    *) continue ;;
  esac
  digest=${ref#*@}
  image_tag=${ref%@*}
  image_tag=${image_tag#"$repository:"}
  [[ "$digest" =~ ^sha256:[0-9a-f]{64}$ ]] || die "$file: '$ref' is not pinned by digest"
  pairs+=("$image_tag=$digest")
done
[ "${#pairs[@]}" -gt 0 ] || die "no $repository:$tag image in $refs"
printf '%s\n' "${pairs[@]}" | LC_ALL=C sort | paste -sd, -
