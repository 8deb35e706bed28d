#!/usr/bin/env bash
# Runs a command with the local control plane up, and a second one without the Gateway API CRDs
# and Flux (state in .testenv-bare/, for the tests of a cluster that lacks them): starts each when it is
# not running, and stops it again afterwards (also when the command fails) if this script
# started it. Exits with the command's status.
#
#   testenv/scripts/with-cluster.sh cargo test --workspace
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
[ $# -gt 0 ] || die "usage: with-cluster.sh COMMAND [ARG...]"

bare=$(repo_root)/.testenv-bare
started=0 started_bare=0
[ -f "$(state_dir)/ready" ] || started=1
[ -f "$bare/ready" ] || started_bare=1
# shellcheck disable=SC2329 # run by the EXIT trap
stop() {
  if [ "$started" = 1 ]; then "$here/down.sh" || true; fi
  if [ "$started_bare" = 1 ]; then CELLD_TESTENV_DIR=$bare "$here/down.sh" || true; fi
}
trap stop EXIT
"$here/up.sh"
CELLD_TESTENV_DIR=$bare CELLD_TESTENV_GATEWAY_API=0 CELLD_TESTENV_FLUX=0 "$here/up.sh"
status=0
"$@" || status=$?
exit "$status"
