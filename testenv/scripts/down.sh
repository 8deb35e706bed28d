#!/usr/bin/env bash
# Stops everything up.sh started (each component's whole process group) and removes the state in
# .testenv/ except the logs. Safe to run when nothing is up. Exits non-zero if a process of this
# control plane is still running afterwards.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/lib.sh"

state=$(state_dir)
run=$state/run
# Reverse start order: clients of the apiserver first, etcd last.
components=(source-controller kwok kube-scheduler kube-controller-manager oci-registry s3s-fs fake-gcs-server azurite
  kube-apiserver etcd)

group_alive() { pgrep -g "$1" >/dev/null 2>&1; }
pgids=()
for c in "${components[@]}"; do
  f=$run/$c.pid
  [ -s "$f" ] || continue
  pgid=$(cat "$f")
  if group_alive "$pgid"; then
    kill -TERM -- "-$pgid" 2>/dev/null || true
    pgids+=("$pgid")
  fi
done

# Give them up to 10 s to exit, then SIGKILL what is left.
deadline=$((SECONDS + 10))
for pgid in "${pgids[@]}"; do
  while group_alive "$pgid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
  if group_alive "$pgid"; then
    log "process group $pgid did not stop on SIGTERM; sending SIGKILL"
    kill -KILL -- "-$pgid" 2>/dev/null || true
  fi
done
for pgid in "${pgids[@]}"; do
  for _ in $(seq 1 50); do group_alive "$pgid" || break; sleep 0.1; done
done

# Anything still running a cached binary on this state dir (a process that left its group) is a
# leak: name it and kill it. Only processes whose executable is in the testenv cache and whose
# command line names this checkout's state dir count, so a shell tailing a log is left alone.
strays() {
  local pid exe
  for pid in $(pgrep -f -- "$state/" || true); do
    exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
    case $exe in "$(cache_root)"/*) printf '%s\n' "$pid" ;; esac
  done
}
mapfile -t left < <(strays)
if [ "${#left[@]}" -gt 0 ]; then
  log "killing processes still running from $state: ${left[*]}"
  kill -KILL "${left[@]}" 2>/dev/null || true
  sleep 0.5
  mapfile -t left < <(strays)
  [ "${#left[@]}" -eq 0 ] || die "processes still running from $state: ${left[*]}"
fi

if [ -d "$state" ]; then
  find "$state" -mindepth 1 -maxdepth 1 ! -name logs -exec rm -rf {} +
fi
log "down (logs kept in $state/logs)"
