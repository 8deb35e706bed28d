# shellcheck shell=sh
# celld-publish: the script of a deploy Job's container (POSIX sh), run as
#
#   sh -c "$SCRIPT" celld-publish celld deploy DIR --bucket B [...]
#
# The positional parameters are the exact command to run. Before it, when CELLD_ARTIFACT_URL is
# set, the script downloads that tar.gz to $CELLD_WORK, checks it against CELLD_ARTIFACT_DIGEST
# (sha256:<64 lowercase hex digits>) and extracts it into $CELLD_WORK/src. The command's output
# goes to the container's stdout (kubectl logs); its last lines are kept for the result.
#
# celld deploy does not retry its own conditional writes: one S3 SlowDown (HTTP 503) ends it with
# an error saying the write "may have committed". The command is idempotent, so when a failed
# attempt's output has a line matching $retryable (the write may have committed, SlowDown, an
# HTTP 5xx status, a timeout, a connection reset or refused), the script runs it again, at most
# $attempts times in all, waiting the seconds of $backoff in turn, and says so on stdout:
#   celld-publish: attempt 2 of 4 in 2s after: <the line that made it retryable>
# Any other failure (a validation or bundling error) is not retried. The rule is
# celld_api::contract::deploy_retry's; a test checks that both spell it alike.
#
# The result is one JSON object written to $CELLD_TERMINATION_LOG (default /dev/termination-log,
# which the kubelet reads into the container's termination message, at most 4096 bytes):
#   {"outcome":"Published","attempts":N}
#   {"outcome":"Failed","step":"download|digest|extract|links","exitCode":N,"message":"..."}
#   {"outcome":"Failed","step":"deploy","exitCode":N,"message":"...","attempts":N}
# "attempts" is how many times celld deploy ran (results of older scripts have none).
# Before celld deploy DIR runs, a symbolic link under DIR that leads outside it fails the links
# step (celld deploy would read what it points to, in this pod).
# The script exits 0 when published, non-zero otherwise. It needs sh, curl, sha256sum, tar,
# gzip, tail, tr, sed, mktemp, find and readlink (Debian's essential packages and curl).

work=${CELLD_WORK:-/work}
result_file=${CELLD_TERMINATION_LOG:-/dev/termination-log}
url=${CELLD_ARTIFACT_URL:-}
digest=${CELLD_ARTIFACT_DIGEST:-}

# The longest message kept in the result, escaped; the JSON around it stays well under 4096.
max_message=3000

# When a failed celld deploy runs again (see the header).
retryable='may have committed|slowdown|timed out|timeout|connection reset|connection refused|(http|status( code)?):? 5[0-9][0-9]([^0-9]|$)'
attempts=4
backoff='2 4 8'
# How many times celld deploy ran; 0 until it runs.
attempt=0

# write_result JSON: writes the result where the kubelet reads it.
write_result() {
  if ! printf '%s' "$1" >"$result_file"; then
    printf 'celld-publish: cannot write the result to %s\n' "$result_file" >&2
  fi
}

# escape FILE BYTES: the last BYTES bytes of FILE (without a leading partial UTF-8 character or
# trailing newlines) as the inside of a JSON string: backslash, double quote, tab, carriage return
# and newline escaped, other control characters dropped.
escape() {
  tail -c "$2" "$1" \
    | LC_ALL=C sed "1s/^$continuation*//" \
    | LC_ALL=C tr -d '\000-\010\013\014\016-\037' \
    | LC_ALL=C tr '\n' '\001' \
    | LC_ALL=C sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e "s/$tab/\\\\t/g" -e "s/$cr/\\\\r/g" \
      -e "s/\\($soh\\)*\$//" -e "s/$soh/\\\\n/g"
}
continuation=$(printf '[\200-\277]')
tab=$(printf '\t')
cr=$(printf '\r')
soh=$(printf '\001')

# size TEXT: its length in bytes.
size() { printf '%s' "$1" | wc -c; }

# fail STEP CODE PREFIX [FILE]: writes the Failed result, its message PREFIX followed by the last
# lines of FILE (as many as fit in max_message once escaped), says so on stderr and exits with
# CODE (1 if CODE is 0 or not a number).
fail() {
  step=$1 code=$2
  [ "$code" -gt 0 ] 2>/dev/null || code=1
  printf '%s' "$3" >"$scratch/prefix"
  message=$(escape "$scratch/prefix" 1000)
  if [ -n "${4:-}" ] && [ -s "$4" ]; then
    budget=$((max_message - $(size "$message")))
    bytes=$budget
    output=$(escape "$4" "$bytes")
    # Escaping lengthens the text: take fewer bytes, in proportion, until it fits.
    while [ "$(size "$output")" -gt "$budget" ] && [ "$bytes" -gt 64 ]; do
      bytes=$((bytes * budget / $(size "$output") - 16))
      output=$(escape "$4" "$bytes")
    done
    [ "$(wc -c <"$4")" -le "$bytes" ] || output="...$output"
    if [ -n "$message" ]; then message="$message\n$output"; else message=$output; fi
  fi
  ran=
  [ "$attempt" -eq 0 ] || ran=",\"attempts\":$attempt"
  write_result "{\"outcome\":\"Failed\",\"step\":\"$step\",\"exitCode\":$code,\"message\":\"$message\"$ran}"
  printf 'celld-publish: %s failed (exit code %s)\n' "$step" "$code" >&2
  exit "$code"
}

# run STEP PREFIX COMMAND...: runs COMMAND with its output (stdout and stderr) on stdout and in
# $scratch/output; when it fails, fails STEP with PREFIX and the output's last lines.
run() {
  step=$1 prefix=$2
  shift 2
  rm -f "$scratch/rc"
  { "$@" </dev/null 2>&1; echo "$?" >"$scratch/rc"; } | tee "$scratch/output"
  rc=$(cat "$scratch/rc" 2>/dev/null)
  [ -n "$rc" ] || rc=1
  [ "$rc" -eq 0 ] || fail "$step" "$rc" "$prefix" "$scratch/output"
}

first_step=deploy
[ -z "$url$digest" ] || first_step=download

scratch=$(mktemp -d "$work/.celld-publish.XXXXXX" 2>/dev/null || mktemp -d 2>/dev/null)
if [ -z "$scratch" ]; then
  write_result "{\"outcome\":\"Failed\",\"step\":\"$first_step\",\"exitCode\":1,\"message\":\"cannot create a scratch directory under CELLD_WORK or TMPDIR: mount a writable volume there\"}"
  printf 'celld-publish: cannot create a scratch directory under %s or %s\n' "$work" "${TMPDIR:-/tmp}" >&2
  exit 1
fi
trap 'rm -rf "$scratch"' EXIT

if [ "$#" -eq 0 ]; then
  fail deploy 2 "no command to run: the deploy command is the script's arguments"
fi

if [ -n "$url$digest" ]; then
  # The URL may carry credentials in its query (a presigned URL): messages show it without.
  shown=${url%%\?*}
  [ -n "$url" ] || fail download 1 "CELLD_ARTIFACT_DIGEST is set but CELLD_ARTIFACT_URL is not: set both or neither"
  [ -n "$digest" ] || fail digest 1 "CELLD_ARTIFACT_URL is set but CELLD_ARTIFACT_DIGEST is not: the artifact $shown cannot be verified"
  hex=${digest#sha256:}
  case $digest in
    sha256:*) ;;
    *) hex= ;;
  esac
  case $hex in
    *[!0-9a-f]*) hex= ;;
  esac
  [ "${#hex}" -eq 64 ] \
    || fail digest 1 "the source's digest \"$(printf '%.100s' "$digest")\" is not sha256: followed by 64 lowercase hex digits"

  archive=$work/artifact.tar.gz
  printf 'celld-publish: downloading %s\n' "$shown"
  run download "downloading $shown failed:" \
    curl --fail --silent --show-error --location --proto '=http,https' --proto-redir '=http,https' \
      --connect-timeout 15 --max-time 300 --retry 3 --retry-delay 2 --retry-connrefused \
      --output "$archive" "$url"

  actual=sha256:$(sha256sum <"$archive" | cut -d ' ' -f 1)
  if [ "$actual" != "$digest" ]; then
    fail digest 1 "the artifact's digest is $actual but the source says $digest ($shown)"
  fi
  printf 'celld-publish: %s has digest %s\n' "$shown" "$actual"

  # Every member must stay under src/: no absolute path, no '..' component (GNU tar would skip
  # them with a warning; refusing the artifact says what is wrong with it instead).
  tar -tzf "$archive" >"$scratch/members" 2>"$scratch/output"
  rc=$?
  if [ "$rc" -ne 0 ]; then
    cat "$scratch/output" >&2
    fail extract "$rc" "listing the artifact's files failed (not a tar.gz?):" "$scratch/output"
  fi
  escaping=$(grep -E -m 1 '^/|(^|/)\.\.(/|$)' "$scratch/members")
  if [ -n "$escaping" ]; then
    fail extract 1 "the artifact has a member outside its directory: $(printf '%.200s' "$escaping")"
  fi
  rm -rf "$work/src"
  mkdir -p "$work/src" || fail extract 1 "cannot create $work/src"
  run extract "extracting the artifact failed:" tar -xzf "$archive" -C "$work/src" --no-same-owner
  printf 'celld-publish: extracted into %s/src\n' "$work"
fi

# deploy COMMAND...: runs COMMAND (celld deploy) as `run` does, again after a wait while its
# output says it may succeed then (see the header); fails the deploy step with the last attempt.
deploy() {
  while :; do
    attempt=$((attempt + 1))
    rm -f "$scratch/rc"
    { "$@" </dev/null 2>&1; echo "$?" >"$scratch/rc"; } | tee "$scratch/output"
    rc=$(cat "$scratch/rc" 2>/dev/null)
    [ -n "$rc" ] || rc=1
    [ "$rc" -ne 0 ] || return 0
    [ "$attempt" -lt "$attempts" ] || fail deploy "$rc" "" "$scratch/output"
    reason=$(LC_ALL=C grep -Ei -e "$retryable" "$scratch/output" | tail -n 1 | LC_ALL=C tr -d '\000-\037')
    [ -n "$reason" ] || fail deploy "$rc" "" "$scratch/output"
    pause=$(printf '%s\n' "$backoff" | cut -d ' ' -f "$attempt")
    printf 'celld-publish: attempt %s of %s in %ss after: %.300s\n' "$((attempt + 1))" "$attempts" \
      "$pause" "$(printf '%s' "$reason" | sed 's/^[[:space:]]*//')"
    sleep "$pause"
  done
}

# check_links DIR: fails the links step on the first symbolic link under DIR that leads outside
# it (see outside_links): celld deploy would read what it points to in this pod.
check_links() {
  outside_links "$1" >"$scratch/links"
  [ -s "$scratch/links" ] || return 0
  link=$(head -n 1 "$scratch/links")
  fail links 1 "${link%% -> *} in the Worker source is a symbolic link to ${link#* -> }, outside it: celld deploy would read it in the deploy pod, where it reaches the pod's own files and credentials; copy what it points to into the source, or remove the link"
}

# celld deploy DIR ...: the Worker source is DIR.
[ "${1:-}" != celld ] || [ "${2:-}" != deploy ] || [ -z "${3:-}" ] || check_links "$3"

deploy "$@"
write_result "{\"outcome\":\"Published\",\"attempts\":$attempt}"
printf 'celld-publish: published\n'
