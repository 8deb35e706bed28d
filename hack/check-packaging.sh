#!/usr/bin/env bash
# Packaging checks that need no cluster, no Docker and no network beyond the package registries
# (the pinned tools come from npm, PyPI and the Go module proxy through hack/tools.sh):
#
#   - the three Dockerfiles pass hadolint;
#   - the GitHub workflows pass actionlint (with shellcheck on their run: scripts), and so does
#     the one docs/previews.md shows (Previews from CI);
#   - the workflows pass hack/check-workflows.py (after its self-test proves each rule refuses a
#     bad sample): actions pinned by commit SHA, no write permission at the workflow level, each
#     job's permissions its own, no `secrets: inherit`, no checkout that keeps its token, and the
#     release's install manifest, rendered as release.yml renders it, runs its images by digest;
#   - the workflows pass zizmor, a GitHub Actions security linter (offline audits);
#   - the scripts in hack/, testenv/scripts/ and .ci/run, and the deploy Job's publish script
#     (crates/api/src/contract/publish.sh and links.sh, POSIX sh), pass shellcheck;
#   - versions pinned in two places agree (esbuild, zig, cargo-zigbuild, Rust);
#   - the deployer image builds the bucket agent celld-bucket and holds it where the plugin
#     runs it;
#   - poc/worker bundles with esbuild and its GET /hello answers the demo's exact JSON (node test);
#   - the release names the plugin assets kubectl-celld_<os>_<uname -m>, with checksums, as the
#     README's install snippet fetches them, and the krew template renders for those assets;
#   - config/default builds with kustomize (when kubectl is available).
#
# Usage: hack/check-packaging.sh   (make check-packaging)
set -euo pipefail
cd "$(dirname "$0")/.."

passed=0 failed=0 failures=()
check() { # NAME COMMAND...: runs one check and records the result
  local name=$1; shift
  printf '\n--- %s\n' "$name"
  if "$@"; then
    passed=$((passed + 1)); printf 'ok   %s\n' "$name"
  else
    failed=$((failed + 1)); failures+=("$name"); printf 'FAIL %s\n' "$name"
  fi
}
tool() { hack/tools.sh "$1"; }

# hack/check-static-binary.py (run by `make plugin` and hack/dist-plugin.sh on Linux) must tell a
# dynamically linked executable from a static, stripped one.
static_binary_check() {
  local tmp ok=0 dynamic
  tmp=$(mktemp -d)
  dynamic=$(command -v sh)
  if python3 hack/check-static-binary.py "$dynamic" 2>"$tmp/err"; then
    echo "$dynamic was accepted as static"; ok=1
  fi
  grep -q "dynamically linked" "$tmp/err" || { echo "no 'dynamically linked' for $dynamic"; ok=1; }
  # The smallest static ELF: a 64-bit header with no program or section headers.
  python3 -c 'import struct,sys; open(sys.argv[1],"wb").write(b"\x7fELF\x02\x01\x01"+bytes(9)+struct.pack("<HHIQQQIHHHHHH",2,62,1,0,0,0,0,64,56,0,64,0,0))' "$tmp/static"
  python3 hack/check-static-binary.py "$tmp/static" || { echo "a static ELF was refused"; ok=1; }
  rm -rf "$tmp"
  return "$ok"
}

hadolint_dockerfiles() {
  local hadolint; hadolint=$(tool hadolint)
  "$hadolint" Dockerfile deployer.Dockerfile poc/deployer.Dockerfile
}

actionlint_workflows() {
  local actionlint shellcheck
  actionlint=$(tool actionlint) shellcheck=$(tool shellcheck)
  "$actionlint" -shellcheck "$shellcheck" -pyflakes= .github/workflows/*.yml
}

# hack/check-workflows.py proves each rule on a bad sample first, then checks the workflows and
# renders the release manifests with made-up digests.
workflow_rules() {
  local pyyaml; pyyaml=$(tool pyyaml)
  PYTHONPATH="$pyyaml${PYTHONPATH:+:$PYTHONPATH}" python3 hack/check-workflows.py --self-test &&
    PYTHONPATH="$pyyaml${PYTHONPATH:+:$PYTHONPATH}" python3 hack/check-workflows.py
}

# zizmor's offline audits (no GitHub API); its ignores are inline `# zizmor: ignore[...]` comments,
# each with its reason beside it.
zizmor_workflows() {
  local zizmor; zizmor=$(tool zizmor)
  "$zizmor" --offline --no-progress --color=never .github/
}

# The workflow docs/previews.md shows under "Previews from CI": its first ```yaml block.
docs_workflow() {
  local actionlint shellcheck dir status=0
  actionlint=$(tool actionlint) shellcheck=$(tool shellcheck)
  dir=$(mktemp -d)
  mkdir -p "$dir/.github/workflows"
  awk '/^## Previews from CI/ { ci = 1 } ci && /^```yaml$/ { on = 1; next } on && /^```$/ { exit } on' \
    docs/previews.md >"$dir/.github/workflows/preview.yml"
  if [ ! -s "$dir/.github/workflows/preview.yml" ]; then
    echo "docs/previews.md shows no workflow under 'Previews from CI'"; status=1
  else
    (cd "$dir" && "$actionlint" -shellcheck "$shellcheck" -pyflakes= .github/workflows/preview.yml) || status=1
  fi
  rm -rf "$dir"
  return "$status"
}

shellcheck_scripts() {
  local shellcheck; shellcheck=$(tool shellcheck)
  "$shellcheck" hack/*.sh
  "$shellcheck" --severity=warning testenv/scripts/*.sh .ci/run
  "$shellcheck" crates/api/src/contract/publish.sh crates/api/src/contract/links.sh
}

# ARG NAME=VALUE in a Dockerfile, NAME: "VALUE" in a workflow env, NAME=VALUE in tools.sh.
dockerfile_arg() { sed -n "s/^ARG $2=\(.*\)$/\1/p" "$1"; }
workflow_env() { sed -n "s/^  $2: \"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" "$1"; }
pins_agree() {
  local ok=0 a b
  a=$(dockerfile_arg deployer.Dockerfile ESBUILD_VERSION) b=$(hack/tools.sh version esbuild)
  [ -n "$a" ] && [ "$a" = "$b" ] || { echo "esbuild: deployer.Dockerfile has '$a', hack/tools.sh has '$b'"; ok=1; }
  for pin in ZIG_VERSION CARGO_ZIGBUILD_VERSION; do
    a=$(dockerfile_arg Dockerfile "$pin") b=$(workflow_env .github/workflows/release.yml "$pin")
    [ -n "$a" ] && [ "$a" = "$b" ] || { echo "$pin: Dockerfile has '$a', release.yml has '$b'"; ok=1; }
  done
  for pin in ZIG_VERSION CARGO_ZIGBUILD_VERSION RUST_VERSION; do
    a=$(dockerfile_arg Dockerfile "$pin") b=$(dockerfile_arg deployer.Dockerfile "$pin")
    [ -n "$a" ] && [ "$a" = "$b" ] || { echo "$pin: Dockerfile has '$a', deployer.Dockerfile has '$b'"; ok=1; }
  done
  [ "$ok" = 0 ] && echo "esbuild $(hack/tools.sh version esbuild), zig and cargo-zigbuild pins agree"
  return "$ok"
}

# The plugin runs `celld-bucket` in the deploy pod: the deployer image must build that binary
# of the workspace and install it on PATH under that name.
deployer_bucket_agent() {
  local ok=0 agent
  agent=$(sed -n 's/^pub const AGENT: &str = "\(.*\)";$/\1/p' crates/kubectl-celld/src/bucket/client.rs)
  [ -n "$agent" ] || { echo "crates/kubectl-celld/src/bucket/client.rs names no AGENT"; return 1; }
  grep -q "^name = \"$agent\"$" crates/bucket-agent/Cargo.toml ||
    { echo "crates/bucket-agent has no binary $agent"; ok=1; }
  grep -q -- "-p celld-bucket-agent --bin $agent " deployer.Dockerfile ||
    { echo "deployer.Dockerfile does not build $agent"; ok=1; }
  grep -q "^COPY --from=bucket-agent /out/$agent /usr/local/bin/$agent$" deployer.Dockerfile ||
    { echo "deployer.Dockerfile does not install $agent in /usr/local/bin"; ok=1; }
  [ "$ok" = 0 ] && echo "deployer.Dockerfile builds and installs $agent, the plugin's bucket agent"
  return "$ok"
}

worker_bundle() {
  ESBUILD=$(tool esbuild) node --test poc/test/worker.test.mjs
}

# Packages a stand-in binary for every release target exactly as the release workflow does, then
# checks that the install snippet's `kubectl-celld_${OS}_${ARCH}` (OS from uname -s, ARCH from
# uname -m) finds an asset and its checksum on each supported platform.
release_asset_names() {
  local tmp ok=0 target platform
  tmp=$(mktemp -d)
  printf '#!/bin/sh\necho kubectl-celld stand-in\n' > "$tmp/kubectl-celld"
  chmod +x "$tmp/kubectl-celld"
  for target in x86_64-unknown-linux-musl aarch64-unknown-linux-musl x86_64-apple-darwin aarch64-apple-darwin; do
    grep -q "target: $target," .github/workflows/release.yml || { echo "release.yml does not build $target"; ok=1; }
    DIST=$tmp/dist hack/dist-plugin.sh --target "$target" --binary "$tmp/kubectl-celld" >/dev/null || ok=1
  done
  # `uname -s | tr '[:upper:]' '[:lower:]'` and `uname -m` on each supported platform.
  for platform in "Linux x86_64" "Linux aarch64" "Darwin x86_64" "Darwin arm64"; do
    local os arch asset
    os=$(printf '%s' "${platform% *}" | tr '[:upper:]' '[:lower:]') arch=${platform#* }
    asset=kubectl-celld_${os}_${arch}
    if [ -x "$tmp/dist/$asset" ] && (cd "$tmp/dist" && sha256sum -c --quiet "$asset.sha256"); then
      echo "$platform -> $asset (+ .sha256, .tar.gz)"
    else
      echo "$platform: no release asset $asset"; ok=1
    fi
  done
  # shellcheck disable=SC2016 # the install guide's literal shell text
  for snippet in 'ARCH=$(uname -m)' 'kubectl-celld_${OS}_${ARCH}' "OS=\$(uname -s | tr '[:upper:]' '[:lower:]')"; do
    grep -qF "$snippet" docs/install.md || { echo "docs/install.md lacks the install snippet part: $snippet"; ok=1; }
  done
  hack/render-krew.sh "$(tr -d '[:space:]' < VERSION)" "$tmp/dist" > "$tmp/celld.yaml" || ok=1
  rm -rf "$tmp"
  return "$ok"
}

kustomize_builds() {
  local kubectl
  # The local control plane's kubectl (built by `make testenv`), else the one on PATH.
  local version; version=$(sed -n 's/^KUBERNETES_VERSION=//p' testenv/versions.env)
  kubectl=${CELLD_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/celld-operator/testenv}/kubernetes-$version/bin/kubectl
  [ -x "$kubectl" ] || kubectl=$(command -v kubectl || true)
  if [ -z "$kubectl" ]; then echo "no kubectl: run 'make testenv' (it builds one) or put kubectl on PATH"; return 1; fi
  local out; out=$("$kubectl" kustomize config/default)
  grep -q "image: ghcr.io/anthaathi/celld-operator:v$(tr -d '[:space:]' < VERSION)$" <<<"$out" ||
    { echo "config/default does not pin the operator image to VERSION"; return 1; }
  echo "kubectl kustomize config/default: $(grep -c '^kind:' <<<"$out") objects, image pinned"
}

check "hadolint: Dockerfile, deployer.Dockerfile, poc/deployer.Dockerfile" hadolint_dockerfiles
check "actionlint: .github/workflows" actionlint_workflows
check "actionlint: the workflow of docs/previews.md" docs_workflow
check "workflows pinned and least-privileged, release manifests by digest (hack/check-workflows.py)" workflow_rules
check "zizmor: .github" zizmor_workflows
check "shellcheck: hack/*.sh, testenv/scripts/*.sh, .ci/run, publish.sh" shellcheck_scripts
check "pinned versions agree" pins_agree
check "the deployer image holds the bucket agent the plugin runs" deployer_bucket_agent
check "poc/worker bundles with esbuild and answers GET /hello" worker_bundle
check "release asset names match the install snippet; krew manifest renders" release_asset_names
check "kustomize build of config/default" kustomize_builds
check "the static-binary check refuses a dynamic binary and accepts a static one" static_binary_check

printf '\n'
for f in "${failures[@]}"; do printf 'failed: %s\n' "$f"; done
printf 'check-packaging: %d passed, %d failed\n' "$passed" "$failed"
[ "$failed" = 0 ]
