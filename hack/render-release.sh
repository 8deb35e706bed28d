#!/usr/bin/env bash
# Renders the release's manifests with every image pinned by digest:
#
#   hack/render-release.sh TAG REFS_DIR OUT_DIR
#
# REFS_DIR holds one file per image the release pushed (*.ref), each one line,
# REGISTRY/NAME:TAG[SUFFIX]@sha256:<64 hex>: what the release workflow's image jobs write from
# docker/build-push-action's digest output. Writes
#
#   OUT_DIR/install-*.yaml   every install manifest of the repository's root (install-operator.yaml
#                            and any other install-*.yaml) with the operator image
#                            REGISTRY/celld-operator:TAG replaced by its reference by digest, and
#                            the operator's DEPLOYER_DIGESTS set to the deployer images' digests
#                            (hack/deployer-digests.sh), so deploy Jobs run them by digest
#   OUT_DIR/images.txt       every image of the release by digest, one a line, sorted
#
# and fails on a reference that is not pinned by digest, on a missing operator or deployer image,
# and on any `image:` of a rendered manifest without @sha256:. hack/check-workflows.py renders
# them with made-up digests and checks the result (run by hack/check-packaging.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

die() { printf 'render-release: error: %s\n' "$*" >&2; exit 1; }

tag=${1:?usage: hack/render-release.sh TAG REFS_DIR OUT_DIR}
refs=${2:?usage: hack/render-release.sh TAG REFS_DIR OUT_DIR}
out=${3:?usage: hack/render-release.sh TAG REFS_DIR OUT_DIR}
[[ "$tag" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "TAG must be vX.Y.Z, not '$tag'"
[ -d "$refs" ] || die "$refs is not a directory"

registry=ghcr.io/anthaathi
digest_ref='^[a-z0-9][a-z0-9./_-]*:[A-Za-z0-9._-]+@sha256:[0-9a-f]{64}$'

images=()
for file in "$refs"/*.ref; do
  [ -e "$file" ] || die "$refs holds no *.ref file"
  ref=$(tr -d '[:space:]' < "$file")
  [[ "$ref" =~ $digest_ref ]] || die "$file: '$ref' is not NAME:TAG@sha256:<64 hex>"
  case "${ref%@*}" in
    "$registry"/*:"$tag"*) ;;
    *) die "$file: '$ref' is not an image of $registry for $tag" ;;
  esac
  images+=("$ref")
done

find_ref() { # NAME:TAG: the one reference by digest of that image
  local want=$1 ref found=''
  for ref in "${images[@]}"; do
    if [ "${ref%@*}" = "$want" ]; then
      [ -z "$found" ] || die "two references of $want"
      found=$ref
    fi
  done
  [ -n "$found" ] || die "no reference of $want in $refs"
  printf '%s' "$found"
}
operator=$(find_ref "$registry/celld-operator:$tag")
find_ref "$registry/celld-operator-deployer:$tag" >/dev/null

grep -q "^ *image: $registry/celld-operator:$tag\$" install-operator.yaml ||
  die "install-operator.yaml does not pin $registry/celld-operator:$tag (run make manifests)"

deployers=$(hack/deployer-digests.sh "$tag" "$refs")

mkdir -p "$out"
for manifest in install-*.yaml; do
  # The image line of the Deployment, the header comment naming the image, and the value after
  # `- name: DEPLOYER_DIGESTS`.
  sed -e "s|^\( *image: \)$registry/celld-operator:$tag\$|\1$operator|" \
      -e "s|($registry/celld-operator:$tag)|($operator)|" \
      -e "/^ *- name: DEPLOYER_DIGESTS\$/{n;s|^\( *value: \)\"\"\$|\1\"$deployers\"|;}" \
      "$manifest" > "$out/$manifest.tmp"
  if grep -A1 -E '^ *- name: DEPLOYER_DIGESTS$' "$out/$manifest.tmp" | grep -qE '^ *value: ""$'; then
    rm -f "$out/$manifest.tmp"
    die "the rendered $manifest runs its deploys without the deployer images' digests"
  fi
  # No image of a rendered manifest may be a tag alone.
  # (`image:` with nothing after it is a key of the CRDs' schemas, not an image.)
  if grep -nE '^ *(- )?image: *[^ ]' "$out/$manifest.tmp" | grep -vE '@sha256:[0-9a-f]{64}"?$' >&2; then
    rm -f "$out/$manifest.tmp"
    die "the rendered $manifest has an image without @sha256: (above)"
  fi
  mv "$out/$manifest.tmp" "$out/$manifest"
  printf 'render-release: %s\n' "$out/$manifest" >&2
done
printf '%s\n' "${images[@]}" | LC_ALL=C sort > "$out/images.txt"
printf 'render-release: the operator runs %s; images.txt lists %d images\n' "$operator" "${#images[@]}" >&2
