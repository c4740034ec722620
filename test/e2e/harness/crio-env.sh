#!/usr/bin/env bash
# crio-env.sh: a private, throw-away CRI-O v1.28 for the kubelet e2e tests, beside
# containerd-env.sh (same DIR/env keys, so the tests stay runtime-neutral).
#
#   crio-env.sh up DIR [--fresh]   start CRI-O (+ CNI bridge + local registry) under DIR
#   crio-env.sh down DIR           stop it and remove every trace it left on the host
#   crio-env.sh stop-runtime DIR   stop the crio daemon only (a runtime outage: conmon keeps the
#                                  containers running)
#   crio-env.sh start-runtime DIR  start it again with the same configuration and state
#
# CRI-O itself comes from ../shared/crio (relative to the repository root; $KUBELET_CRIO_DIST
# overrides): its unpack.sh writes crio, pinns and cri-mini into the build tree (DIR/../
# .kubelet-e2e-crio-bin, kept across runs), its crio-test.sh renders the configuration and
# starts and stops the instance (see its README for the host quirks it handles). This script
# adds what the tests need around it, reusing containerd-env.sh's functions (sourced):
#   - a bridge and /24 unique on the host (CRIO_BRIDGE / CRIO_SUBNET of crio-test.sh);
#   - a docker-registry on 127.0.0.1:<free port> (crio-test.sh's REGISTRY: plain HTTP and the
#     first mirror of docker.io and registry.k8s.io) holding the very images the containerd
#     harness imports, under the mirror's paths: library/busybox:1.36 (same image ID as on
#     containerd) and pause:3.9, plus e2e/busybox:1.36 and :latest (the registry flavour, own
#     image ID) as containerd-env.sh pushes them;
#   - busybox and pause pulled into CRI-O before the tests (as containerd-env.sh imports them).
# The instance's directory (socket, storage, runtime state) is DIR/i, or
# /tmp/kubelet-e2e-crio-<id> when DIR is long: conmon's attach sockets live at
# <instance>/run/<64-hex id>/attach, and a unix socket path must stay below 108 bytes.
#
# DIR/env (KEY=VALUE, sourceable): KUBELET_E2E_RUNTIME=crio, KUBELET_E2E_RUNTIME_SOCK and
# _RUNTIME_ENDPOINT (the names the tests read, whatever the runtime), _CRIO_PID, _CRIO_DIR (the instance), _CRIO_VERSION,
# _REGISTRY, _REGISTRY_PID, _REGISTRY_IMAGE, _CNI_NETWORK, _CNI_BRIDGE, _CNI_SUBNET,
# _BUSYBOX_IMAGE, _PAUSE_IMAGE, _DIR (all KUBELET_E2E_).
#
# Without CRI-O or a host package it needs (not root, no ../shared/crio, conmon, runc, CNI
# plugins, docker-registry, jq, xz...) `up` prints one line `SKIPPED: <reason>`, writes
# DIR/env with KUBELET_E2E_SKIPPED=<reason> (spaces allowed in that value) and exits 0, so
# the tests skip with that reason; with KUBELET_CRIO_REQUIRED=1 it fails instead. A CRI-O
# that is present but does not come up is always a failure.
#
# Both subcommands are idempotent: `up` on a healthy DIR is a no-op (--fresh rebuilds), `down`
# is safe twice and after a failed `up`. Root only.
set -euo pipefail

CRIO_HARNESS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$CRIO_HARNESS_DIR/../../.." && pwd)
# shellcheck source=SCRIPTDIR/containerd-env.sh
source "$CRIO_HARNESS_DIR/containerd-env.sh"

readonly CRIO_MARKER=.kubelet-e2e-crio
readonly CRIO_VERSION_WANT=1.28.11

# Log lines (harness-lib.sh, through containerd-env.sh) name this script.
HARNESS_NAME=crio-env

crio_usage() {
  cat >&2 <<'EOF'
usage: crio-env.sh up DIR [--fresh]
       crio-env.sh down DIR
       crio-env.sh stop-runtime DIR | start-runtime DIR
EOF
  exit 2
}

# skip_or_fail REASON: CRI-O cannot run here. Exit 0 with a one-line SKIPPED notice (CTest
# marks the setup test skipped; the tests skip with the reason), or fail under
# KUBELET_CRIO_REQUIRED=1.
skip_or_fail() {
  local reason=$1
  if [[ "${KUBELET_CRIO_REQUIRED:-0}" == 1 ]]; then
    die "KUBELET_CRIO_REQUIRED=1 but CRI-O cannot start: $reason"
  fi
  mkdir -p "$DIR"
  : >"$DIR/$CRIO_MARKER"
  printf 'KUBELET_E2E_SKIPPED=%s\nKUBELET_E2E_RUNTIME=crio\nKUBELET_E2E_DIR=%s\n' "$reason" "$DIR" \
    >"$DIR/env"
  echo "SKIPPED: $reason"
  exit 0
}

# check_crio_prereqs: every piece there, or skip_or_fail naming what is missing.
check_crio_prereqs() {
  local missing=() tool
  [[ $EUID -eq 0 ]] || skip_or_fail "not root (CRI-O, CNI and mounts need it)"
  DIST=${KUBELET_CRIO_DIST:-$REPO_ROOT/../shared/crio}
  [[ -x "$DIST/crio-test.sh" && -x "$DIST/unpack.sh" && -f "$DIST/crio.xz" ]] ||
    skip_or_fail "no CRI-O distribution at $DIST (crio-test.sh, unpack.sh, crio.xz)"
  DIST=$(cd "$DIST" && pwd)
  export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
  for tool in conmon runc xz jq curl ip iptables docker-registry gcc busybox tar gzip sha256sum \
    setsid ss; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
  done
  for tool in bridge host-local loopback; do
    [[ -x "$CNI_BIN_DIR/$tool" ]] || missing+=("$CNI_BIN_DIR/$tool")
  done
  ((${#missing[@]} == 0)) ||
    skip_or_fail "missing ${missing[*]} (Debian: conmon runc containernetworking-plugins xz-utils jq curl iproute2 iptables docker-registry gcc busybox-static)"
}

crio_running() {
  [[ -f "$DIR/env" ]] || return 1
  state_load
  [[ -n "${S_INST:-}" ]] || return 1
  CRIO_BIN=$S_CRIO_BIN "$DIST/crio-test.sh" status "$S_INST" >/dev/null 2>&1 || return 1
  pid_alive "${S_REGISTRY_PID:-}" "$DIR/registry/config.yml"
}

# pick_instance_dir: DIR/i, or a short directory under /tmp when DIR is long (see the header).
pick_instance_dir() {
  local attach=/run/0123456789012345678901234567890123456789012345678901234567890123/attach
  if ((${#DIR} + 2 + ${#attach} > 106)); then
    INST=/tmp/kubelet-e2e-crio-$RUN_ID
    log "DIR is long (${#DIR} chars): the CRI-O instance goes to $INST"
  else
    INST=$DIR/i
  fi
  state_set INST "$INST"
}

# push_oci_image NAME REPO TAG: pushes image NAME of the OCI layout DIR/images/layout (the
# containerd harness's images.oci.tar, unpacked) to the registry as REPO:TAG.
push_oci_image() {
  local name=$1 repo=$2 tag=$3 layout=$DIR/images/layout manifest blob
  manifest=$(jq -r --arg n "$name" \
    '.manifests[] | select(.annotations["io.containerd.image.name"] == $n) | .digest' \
    "$layout/index.json")
  [[ "$manifest" == sha256:* ]] || die "$name is not in $layout/index.json"
  for blob in $(jq -r '.config.digest, .layers[].digest' "$layout/blobs/sha256/${manifest#sha256:}"); do
    push_blob "$layout/blobs/sha256/${blob#sha256:}" "$blob" "$repo"
  done
  curl -fsS -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' \
    --data-binary @"$layout/blobs/sha256/${manifest#sha256:}" -o /dev/null \
    "http://$REGISTRY/v2/$repo/manifests/$tag" || die "manifest PUT for $repo:$tag failed"
  log "pushed $name as $REGISTRY/$repo:$tag ($manifest)"
}

# start_crio_registry: docker-registry with the images, retried on a lost port race.
start_crio_registry() {
  local attempt rc
  for ((attempt = 1; ; attempt++)); do
    pick_registry_port
    rc=0
    start_registry || rc=$?
    ((rc == 75)) || break
    ((attempt < 3)) || die "docker-registry could not bind a port (3 attempts)"
    log "port $REGISTRY_PORT was taken meanwhile; trying another"
  done
  state_load
  mkdir -p "$DIR/images/layout"
  tar -xf "$DIR/images/images.oci.tar" -C "$DIR/images/layout"
  push_oci_image "$BUSYBOX_IMAGE" library/busybox 1.36
  push_oci_image "$PAUSE_IMAGE" pause 3.9
  push_registry_image
}

cri_mini() { "$S_CRIO_BIN/cri-mini" -e "unix://$INST/crio.sock" -t 60s "$@"; }

write_crio_env_file() {
  local tmp=$DIR/env.tmp sock=$INST/crio.sock
  cat >"$tmp" <<EOF
KUBELET_E2E_RUNTIME=crio
KUBELET_E2E_DIR=$DIR
KUBELET_E2E_RUNTIME_SOCK=$sock
KUBELET_E2E_RUNTIME_ENDPOINT=unix://$sock
KUBELET_E2E_CRIO_DIR=$INST
KUBELET_E2E_CRIO_PID=$(cat "$INST/crio.pid")
KUBELET_E2E_CRIO_VERSION=$CRIO_VERSION
KUBELET_E2E_REGISTRY=$REGISTRY
KUBELET_E2E_REGISTRY_PID=$S_REGISTRY_PID
KUBELET_E2E_REGISTRY_IMAGE=$REGISTRY/$REGISTRY_REPO:1.36
KUBELET_E2E_CNI_NETWORK=crio-$BRIDGE
KUBELET_E2E_CNI_BRIDGE=$BRIDGE
KUBELET_E2E_CNI_SUBNET=$SUBNET
KUBELET_E2E_BUSYBOX_IMAGE=$BUSYBOX_IMAGE
KUBELET_E2E_PAUSE_IMAGE=$PAUSE_IMAGE
EOF
  if grep -q '[[:space:]"'"'"']' <(cut -d= -f2- "$tmp"); then
    die "a value in $tmp contains whitespace or quotes (DIR must not)"
  fi
  mv -f "$tmp" "$DIR/env"
  log "wrote $DIR/env"
}

# crio_test_up REGISTRY BRIDGE SUBNET: crio-test.sh up of the instance $INST with this
# environment's registry and network (a no-op when it runs).
crio_test_up() {
  local endpoint
  endpoint=$(CRIO_BIN=$S_CRIO_BIN REGISTRY=$1 CRIO_BRIDGE=$2 CRIO_SUBNET=$3 \
    "$DIST/crio-test.sh" up "$INST") || {
    tail -n 30 "$INST/crio.log" >&2 2>/dev/null || true
    die "crio-test.sh up $INST failed"
  }
  [[ "$endpoint" == "unix://$INST/crio.sock" ]] || die "crio-test.sh printed '$endpoint'"
}

crio_up() {
  local t0
  t0=$(date +%s.%N)
  check_crio_prereqs
  [[ ! "$DIR" =~ [[:space:]\"\'] ]] || die "DIR must not contain whitespace or quotes: $DIR"
  if [[ -d "$DIR" && -e "$DIR/$CRIO_MARKER" ]]; then
    if ((FRESH)); then
      log "--fresh: removing the environment already in $DIR"
      crio_down
    elif crio_running; then
      log "environment in $DIR is already up; nothing to do"
      return 0
    else
      log "found a stale or half-built environment in $DIR; tearing it down first"
      crio_down
    fi
  elif [[ -d "$DIR" ]] && [[ -n "$(ls -A "$DIR")" ]]; then
    die "$DIR exists, is not empty and was not made by this script; refusing to use it"
  fi
  mkdir -p "$DIR"
  : >"$DIR/$CRIO_MARKER"
  : >"$DIR/.state"
  unset "${!S_@}"
  log "setting up in $DIR"
  # The binaries stay in the build tree across runs (unpack.sh keeps a checked copy).
  state_set CRIO_BIN "$(dirname "$DIR")/.kubelet-e2e-crio-bin"
  "$DIST/unpack.sh" "$S_CRIO_BIN" >/dev/null || die "unpack.sh $S_CRIO_BIN failed"
  CRIO_VERSION=$("$S_CRIO_BIN/crio" --version 2>/dev/null | awk '$1 == "Version:" { print $2 }')
  [[ "$CRIO_VERSION" == "$CRIO_VERSION_WANT" ]] ||
    log "warning: crio says version '$CRIO_VERSION', expected $CRIO_VERSION_WANT"
  pick_network
  # A Linux bridge takes the lowest MAC of its ports unless given one, so it changes while pods
  # come and go; CRI-O runs a CNI CHECK after ADD, and the bridge plugin then fails the sandbox
  # ("Bridge interface ... Mac doesn't match") when another pod joined in between. A fixed,
  # locally administered address keeps it stable.
  ip link set "$BRIDGE" address "$(printf '02:%02x:%02x:%02x:%02x:%02x' $((RANDOM % 256)) \
    $((RANDOM % 256)) $((RANDOM % 256)) $((RANDOM % 256)) $((RANDOM % 256)))"
  pick_instance_dir
  prepare_images
  start_crio_registry
  log "starting CRI-O in $INST"
  crio_test_up "$REGISTRY" "$BRIDGE" "$SUBNET"
  # The images the tests expect present, pulled through the registry.k8s.io / docker.io
  # mirror (stored under these names, as containerd-env.sh imports them).
  cri_mini pull "$BUSYBOX_IMAGE" >/dev/null || die "CRI-O could not pull $BUSYBOX_IMAGE"
  cri_mini pull "$PAUSE_IMAGE" >/dev/null || die "CRI-O could not pull $PAUSE_IMAGE"
  log "pulled $BUSYBOX_IMAGE and $PAUSE_IMAGE into CRI-O"
  write_crio_env_file
  log "up done in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}')s: source $DIR/env"
}

# crio_cgroup_dirs IDS...: cgroups runc made for CRI-O's containers and conmons of this
# instance (crio-<id>, crio-conmon-<id>, any hierarchy, any depth), deepest first.
crio_cgroup_dirs() {
  (($# > 0)) || return 0
  find "$CGROUP_ROOT" -mindepth 2 -type d -name 'crio-*' 2>/dev/null |
    IDS=$(printf '%s\n' "$@") awk -F/ '
    BEGIN { n = split(ENVIRON["IDS"], a, "\n"); for (i = 1; i <= n; i++) want[a[i]] = 1 }
    { id = $NF; sub(/^crio-(conmon-)?/, "", id); sub(/\.scope$/, "", id)
      if (id in want) print length($0) "\t" $0 }' | sort -rn | cut -f2- || true
}

crio_down() {
  local ids=() id dir n=0
  if [[ ! -d "$DIR" ]]; then
    log "$DIR does not exist; nothing to tear down"
    return 0
  fi
  if [[ ! -e "$DIR/$CRIO_MARKER" ]]; then
    [[ -z "$(ls -A "$DIR")" ]] || die "$DIR was not made by this script (no $CRIO_MARKER); refusing to delete it"
    rmdir "$DIR"
    return 0
  fi
  unset "${!S_@}"
  state_load
  log "tearing down $DIR"
  if [[ -n "${S_INST:-}" && -d "$S_INST" ]]; then
    # Container IDs, for their cgroups (crio-test.sh removes the containers themselves).
    while read -r id; do
      if [[ -n "$id" ]]; then ids+=("$id"); fi
    done < <(
      ls -1 "$S_INST/storage/overlay-containers" "$S_INST/storage/vfs-containers" \
        "$S_INST/run/runc" 2>/dev/null | grep -E '^[0-9a-f]{64}$' | sort -u || true
    )
    DIST=${DIST:-${KUBELET_CRIO_DIST:-$REPO_ROOT/../shared/crio}}
    if [[ -x "$DIST/crio-test.sh" ]]; then
      CRIO_BIN=$S_CRIO_BIN CRIO_BRIDGE=${S_BRIDGE:-criobr0} PURGE=1 \
        "$DIST/crio-test.sh" down "$S_INST" || log "warning: crio-test.sh down failed; continuing"
    fi
  fi
  stop_pid "${S_REGISTRY_PID:-}" "$DIR/registry/config.yml" docker-registry
  while read -r dir; do
    if [[ -n "$dir" ]] && rmdir "$dir" 2>/dev/null; then n=$((n + 1)); fi
  done < <(crio_cgroup_dirs "${ids[@]}")
  ((n == 0)) || log "removed $n cgroup dir(s) of CRI-O's containers"
  if [[ -n "${S_BRIDGE:-}" ]] && ip link show "$S_BRIDGE" >/dev/null 2>&1; then
    ip link delete "$S_BRIDGE" && log "deleted bridge $S_BRIDGE"
  fi
  if [[ -n "${S_BRIDGE:-}" ]]; then rm -f /var/lib/cni/results/crio-"$S_BRIDGE"-* 2>/dev/null || true; fi
  if [[ -n "${S_INST:-}" && "$S_INST" != "$DIR/i" && -d "$S_INST" ]]; then
    awk -v p="$S_INST/" 'index($2, p) == 1 { f = 1 } END { exit !f }' /proc/mounts &&
      die "mounts remain below $S_INST; not deleting it"
    rm -rf "$S_INST"
  fi
  if awk -v p="$DIR/" 'index($2, p) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
    die "mounts remain below $DIR; not deleting it"
  fi
  rm -rf "$DIR" || die "cannot remove $DIR"
  log "down done: $DIR removed"
}

# stop-runtime / start-runtime: an outage of the daemon alone.
crio_stop_runtime() {
  [[ -e "$DIR/$CRIO_MARKER" ]] || die "no environment in $DIR"
  state_load
  stop_pid "$(cat "$S_INST/crio.pid" 2>/dev/null)" crio crio
}

crio_start_runtime() {
  [[ -e "$DIR/$CRIO_MARKER" && -f "$DIR/env" ]] || die "no environment in $DIR"
  state_load
  DIST=${DIST:-${KUBELET_CRIO_DIST:-$REPO_ROOT/../shared/crio}}
  export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
  INST=$S_INST
  crio_test_up "$S_REGISTRY" "$S_BRIDGE" "$S_SUBNET"
  sed -i "s/^KUBELET_E2E_CRIO_PID=.*/KUBELET_E2E_CRIO_PID=$(cat "$INST/crio.pid")/" "$DIR/env"
  log "crio is back (pid $(cat "$INST/crio.pid"))"
}

crio_main() {
  (($# >= 2)) || crio_usage
  local cmd=$1
  DIR=$2
  shift 2
  FRESH=0
  while (($# > 0)); do
    case $1 in
      --fresh) FRESH=1 ;;
      *) crio_usage ;;
    esac
    shift
  done
  [[ -n "$DIR" ]] || crio_usage
  DIR=$(realpath -m -- "$DIR")
  [[ "$DIR" != / && "$DIR" != /root && "$DIR" != /tmp && "$DIR" != /home ]] || die "refusing DIR=$DIR"
  case $cmd in
    up)
      set -E
      trap 'die "command failed (exit $?) at line $LINENO: $BASH_COMMAND"' ERR
      crio_up
      ;;
    down) crio_down ;;
    stop-runtime) crio_stop_runtime ;;
    start-runtime) crio_start_runtime ;;
    *) crio_usage ;;
  esac
}

crio_main "$@"
