#!/usr/bin/env bash
# Runs a command with the local control plane up: starts it when it is not running, and stops it
# again afterwards (also when the command fails) if this script started it. Exits with the
# command's status.
#
#   testenv/scripts/with-cluster.sh cargo test --workspace
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
[ $# -gt 0 ] || die "usage: with-cluster.sh COMMAND [ARG...]"

started=0
if [ ! -f "$(state_dir)/ready" ]; then
  started=1
fi
stop() { if [ "$started" = 1 ]; then "$here/down.sh" || true; fi; }
trap stop EXIT
"$here/up.sh"
status=0
"$@" || status=$?
exit "$status"
