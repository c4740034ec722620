# shellcheck shell=bash
# harness-lib.sh: what the harness scripts share; sourced by containerd-env.sh (and so
# crio-env.sh), controlplane-env.sh and auth-registry.sh.
#
#   log MESSAGE...       a timestamped line on stderr: [$HARNESS_NAME hh:mm:ss.mmm] MESSAGE
#   die MESSAGE...       logs "ERROR: MESSAGE" and exits 1; runs harness_on_die first when the
#                        sourcing script defines it
#   state_set KEY VALUE  appends KEY=VALUE to $DIR/.state and sets S_KEY
#   state_load           sets S_<KEY> for every KEY=VALUE line of $DIR/.state (later lines win;
#                        parsed, not sourced, so a corrupt file cannot run commands)
#   pid_alive PID MATCH  the process PID exists and its command line contains MATCH (a recycled
#                        PID of another program does not count)
#   port_is_free PORT    nothing listens on TCP PORT
#   push_blob FILE DIGEST REPO [USER:PASSWORD]
#                        uploads a blob to the registry at $REGISTRY unless it is there: a
#                        monolithic upload (POST opens a session, PUT finishes it)

: "${HARNESS_NAME:=harness}"

log() { printf '[%s %s] %s\n' "$HARNESS_NAME" "$(date +%H:%M:%S.%3N)" "$*" >&2; }

die() {
  log "ERROR: $*"
  if declare -F harness_on_die >/dev/null; then harness_on_die; fi
  exit 1
}

state_set() {
  printf '%s=%s\n' "$1" "$2" >>"$DIR/.state"
  printf -v "S_$1" '%s' "$2"
}

state_load() {
  local key value
  [[ -f "$DIR/.state" ]] || return 0
  while IFS='=' read -r key value; do
    [[ "$key" =~ ^[A-Z_][A-Z0-9_]*$ ]] || continue
    printf -v "S_$key" '%s' "$value"
  done <"$DIR/.state"
}

pid_alive() {
  local pid=$1 match=$2
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$match"
}

port_is_free() { ! ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }

push_blob() {
  local file=$1 digest=$2 repo=$3 creds=${4:-} location sep
  local auth=()
  [[ -n "$creds" ]] && auth=(-u "$creds")
  if curl -fsS "${auth[@]}" -o /dev/null -I "http://$REGISTRY/v2/$repo/blobs/$digest" 2>/dev/null; then
    return 0
  fi
  location=$(curl -fsS "${auth[@]}" -X POST -D - -o /dev/null \
    "http://$REGISTRY/v2/$repo/blobs/uploads/" | tr -d '\r' |
    awk 'tolower($1)=="location:"{print $2}')
  [[ -n "$location" ]] || die "registry gave no upload location for $digest"
  [[ "$location" == http* ]] || location=http://$REGISTRY$location
  sep='?'
  [[ "$location" == *\?* ]] && sep='&'
  curl -fsS "${auth[@]}" -X PUT -H 'Content-Type: application/octet-stream' \
    --data-binary @"$file" -o /dev/null "$location${sep}digest=$digest" ||
    die "upload of blob $digest failed"
}
