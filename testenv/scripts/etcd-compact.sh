#!/usr/bin/env bash
# Compacts the etcd of a running local control plane up to its current revision, as
# kube-apiserver does every 5 minutes. A watch that resumes from an older revision afterwards
# (the API server's watch caches, when etcd restarts) finds it compacted and has to list again:
# with restart.sh, this reproduces an etcd restart in a cluster whose objects were idle for a while.
#
#   testenv/scripts/etcd-compact.sh        prints the revision compacted to
#
# Environment:
#   CELLD_TESTENV_DIR  the control plane's state directory (default .testenv/)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
need curl

state=$(state_dir)
[ -f "$state/ports.env" ] || die "no control plane is up in $state; start it with up.sh first"
# shellcheck disable=SC1091
etcd=http://127.0.0.1:$(. "$state/ports.env" && printf '%s' "$ETCD_PORT")

# etcd's JSON gateway: a range read returns the store's current revision in its header.
header=$(curl -fsS --max-time 5 -X POST "$etcd/v3/kv/range" -d '{"key":"AA=="}') \
  || die "etcd at $etcd does not answer"
revision=$(printf '%s' "$header" | sed -n 's/.*"revision":"\([0-9]*\)".*/\1/p')
[ -n "$revision" ] || die "no revision in etcd's answer: $header"
curl -fsS --max-time 30 -X POST "$etcd/v3/kv/compaction" -d "{\"revision\":\"$revision\",\"physical\":true}" >/dev/null \
  || die "compacting etcd at $etcd to revision $revision failed"
printf '%s\n' "$revision"
