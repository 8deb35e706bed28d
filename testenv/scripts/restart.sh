#!/usr/bin/env bash
# Stops one component of a running local control plane and starts it again exactly as up.sh
# started it (same command line and environment, its own session and process group, output
# appended to its log after a `==== <time>: starting` header, pid in run/<component>.pid), then
# waits until it answers again. For tests of how clients ride out a failed component; use it on
# a control plane of your own (CELLD_TESTENV_DIR) when other tests share the default one.
#
#   testenv/scripts/restart.sh [--signal SIG] [--down SECONDS] COMPONENT   stop, wait, start
#   testenv/scripts/restart.sh --stop [--signal SIG] COMPONENT             stop only
#   testenv/scripts/restart.sh --start COMPONENT                           start what --stop stopped
#
# COMPONENT: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, s3s-fs,
# fake-gcs-server, azurite, oci-registry (in memory: a restart empties it) or source-controller
# (Flux; its artifacts stay on disk).
# --signal: what stops it (default KILL: a crash; TERM for a clean stop). --down: seconds it stays
# down before it starts again (default 0). --stop keeps its command line in
# run/<component>.cmdline and its environment in run/<component>.environ for --start.
#
# Environment:
#   CELLD_TESTENV_DIR      the control plane's state directory (default .testenv/)
#   CELLD_TESTENV_TIMEOUT  seconds to wait for it to stop and to answer again (default 45)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() { die "usage: restart.sh [--stop|--start] [--signal SIG] [--down SECONDS] COMPONENT"; }
mode=restart signal=KILL down=0 component=""
while [ $# -gt 0 ]; do
  case $1 in
    --stop) mode=stop ;;
    --start) mode=start ;;
    --signal) [ $# -ge 2 ] || usage; signal=${2#SIG}; shift ;;
    --down) [ $# -ge 2 ] || usage; down=$2; shift ;;
    -*) usage ;;
    *) [ -z "$component" ] || usage; component=$1 ;;
  esac
  shift
done
case $component in
  etcd | kube-apiserver | kube-controller-manager | kube-scheduler | kwok | s3s-fs | fake-gcs-server | azurite) ;;
  oci-registry | source-controller) ;;
  *) usage ;;
esac
case $down in '' | *[!0-9.]*) die "--down takes a number of seconds, not '$down'" ;; esac
need curl; need setsid

timeout=${CELLD_TESTENV_TIMEOUT:-45}
state=$(state_dir)
run=$state/run logs=$state/logs
pid_file=$run/$component.pid
cmdline=$run/$component.cmdline environ=$run/$component.environ
[ -f "$state/ready" ] || die "no control plane is up in $state; start it with up.sh first"

group_alive() { pgrep -g "$1" >/dev/null 2>&1; }

stop() {
  pid_alive "$pid_file" || die "$component is not running (no live pid in $pid_file)"
  local pid deadline
  pid=$(cat "$pid_file")
  # NUL-separated, as the kernel keeps them; read before the process is gone.
  cat "/proc/$pid/cmdline" >"$cmdline.tmp" && cat "/proc/$pid/environ" >"$environ.tmp" \
    || die "cannot read the command line of $component (pid $pid)"
  mv "$cmdline.tmp" "$cmdline"; mv "$environ.tmp" "$environ"
  kill "-$signal" -- "-$pid" 2>/dev/null || die "cannot send SIG$signal to $component's process group $pid"
  deadline=$((SECONDS + timeout))
  while group_alive "$pid"; do
    [ "$SECONDS" -lt "$deadline" ] || die "$component (process group $pid) still runs ${timeout}s after SIG$signal"
    sleep 0.1
  done
  log "$component stopped (SIG$signal)"
}

# Succeeds when the component answers on the port it was started with.
answers() {
  local ca=$state/pki/ca.crt port
  port_flag() { tr '\0' '\n' <"$cmdline" | sed -n "s/^--$1=//p" | head -n1; }
  case $component in
    etcd) curl -fsS --max-time 2 "$(port_flag advertise-client-urls)/health" ;;
    kube-apiserver) curl -fsS --max-time 2 --cacert "$ca" "https://127.0.0.1:$(port_flag secure-port)/readyz" ;;
    kube-controller-manager | kube-scheduler) curl -fsSk --max-time 2 "https://127.0.0.1:$(port_flag secure-port)/healthz" ;;
    kwok) curl -fsSk --max-time 2 "https://$(port_flag server-address)/healthz" ;;
    # s3s-fs takes "--port N" (two arguments): any HTTP answer means it listens.
    s3s-fs)
      port=$(tr '\0' '\n' <"$cmdline" | sed -n '/^--port$/{n;p;}' | head -n1)
      curl -sS -o /dev/null --max-time 2 "http://127.0.0.1:$port/"
      ;;
    # fake-gcs-server takes Go flags "-port=N"; it has a health endpoint.
    fake-gcs-server)
      port=$(tr '\0' '\n' <"$cmdline" | sed -n 's/^-port=//p' | head -n1)
      curl -fsS --max-time 2 "http://127.0.0.1:$port/_internal/healthcheck"
      ;;
    # Azurite (run by node) takes "--blobPort N": any HTTP answer means it listens (requests
    # without a SharedKey signature get 403).
    azurite)
      port=$(tr '\0' '\n' <"$cmdline" | sed -n '/^--blobPort$/{n;p;}' | head -n1)
      curl -sS -o /dev/null --max-time 2 "http://127.0.0.1:$port/"
      ;;
    # oci-registry takes "-addr=127.0.0.1:N"; the distribution API's base answers 200.
    oci-registry) curl -fsS --max-time 2 "http://$(tr '\0' '\n' <"$cmdline" | sed -n 's/^-addr=//p' | head -n1)/v2/" ;;
    # source-controller: ready, and its artifact server answers (any HTTP answer).
    source-controller)
      curl -fsS --max-time 2 "http://$(port_flag health-addr)/readyz" \
        && curl -sS -o /dev/null --max-time 2 "http://$(port_flag storage-addr)/"
      ;;
  esac
}

start() {
  [ -s "$cmdline" ] && [ -s "$environ" ] || die "$component was not stopped by restart.sh --stop (no $cmdline)"
  ! pid_alive "$pid_file" || die "$component is already running (pid $(cat "$pid_file"))"
  local -a command env_vars
  mapfile -d '' -t command <"$cmdline"
  mapfile -d '' -t env_vars <"$environ"
  printf '\n==== %s: starting %s\n' "$(date -u +%FT%TZ)" "${command[*]}" >>"$logs/$component.log"
  env -i "${env_vars[@]}" setsid "${command[@]}" >>"$logs/$component.log" 2>&1 </dev/null &
  echo $! >"$pid_file"
  local deadline=$((SECONDS + timeout))
  until answers >/dev/null 2>&1; do
    pid_alive "$pid_file" || die "$component exited while starting; see $logs/$component.log"
    [ "$SECONDS" -lt "$deadline" ] || die "$component did not answer within ${timeout}s; see $logs/$component.log"
    sleep 0.2
  done
  log "$component answers again"
}

case $mode in
  stop) stop ;;
  start) start ;;
  restart)
    stop
    sleep "$down"
    start
    ;;
esac
