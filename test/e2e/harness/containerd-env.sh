#!/usr/bin/env bash
# containerd-env.sh: a private, throw-away container runtime for the kubelet e2e tests.
#
#   containerd-env.sh up DIR [--fresh] [--no-registry]
#                                              start containerd (+ CNI + local registry) under DIR
#   containerd-env.sh down DIR                 stop it and remove every trace it left on the host
#   containerd-env.sh stop-runtime DIR         stop the containerd daemon only (a runtime outage:
#                                              shims and containers keep running)
#   containerd-env.sh start-runtime DIR        start it again with the same configuration and
#                                              state; DIR/env gets the new pid
#
# `up` leaves DIR/env, a KEY=VALUE file (no quotes, no spaces: sourceable by sh and
# trivially parsed by C++) describing the runtime. Everything of the run lives
# under DIR except what containerd/CNI insist on putting at fixed host paths
# (/var/run/netns, /var/lib/cni/results, iptables, the bridge link, cgroups);
# those carry names unique to the run and `down` removes them.
#
# Images are cached beside DIR (DIR/../.kubelet-e2e-image-cache, or
# $KUBELET_E2E_IMAGE_CACHE); `down` leaves the cache alone.
#
# Requirements: root, containerd 1.6, runc, containernetworking-plugins in
# /usr/lib/cni, busybox-static, gcc with static libc, tar, gzip, sha256sum,
# curl, iproute2, iptables; docker-registry for the registry part; protoc is
# optional (lets `down` tear pods down through CRI; see cri-lib.sh).
#
# Sourced instead of run, it only defines its functions (crio-env.sh reuses the
# network, image and registry parts).
#
# Both subcommands are idempotent: `up` on a healthy DIR is a no-op (with
# --fresh it rebuilds), `up` on a broken DIR cleans it first; `down` is safe
# twice, after a half-done `up` and after containerd died.
#
# DIR/env keys: KUBELET_E2E_RUNTIME=containerd, _RUNTIME_SOCK, _RUNTIME_ENDPOINT (unix://),
# _CONTAINERD_SOCK (the same socket, for ctr), _CONTAINERD_PID, _CONTAINERD_NAMESPACE, _SNAPSHOTTER, _REGISTRY (127.0.0.1:port,
# empty with --no-registry), _REGISTRY_PID, _REGISTRY_IMAGE (<registry>/e2e/busybox:1.36;
# :latest is pushed too), _CGROUP_ROOT (a --cgroup-root for a kubelet under test,
# removed by `down`), _CNI_NETWORK, _CNI_BRIDGE, _CNI_SUBNET, _CNI_CONF_DIR,
# _CNI_BIN_DIR, _BUSYBOX_IMAGE, _PAUSE_IMAGE, _DIR (all prefixed KUBELET_E2E).
set -euo pipefail

HARNESS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
HARNESS_NAME=containerd-env
# shellcheck source=SCRIPTDIR/harness-lib.sh
source "$HARNESS_DIR/harness-lib.sh"
# shellcheck source=SCRIPTDIR/cri-lib.sh
source "$HARNESS_DIR/cri-lib.sh"

readonly BUSYBOX_IMAGE=docker.io/library/busybox:1.36
readonly PAUSE_IMAGE=registry.k8s.io/pause:3.9
readonly REGISTRY_REPO=e2e/busybox
readonly CNI_BIN_DIR=/usr/lib/cni
readonly NETNS_DIR=/var/run/netns
readonly CGROUP_ROOT=/sys/fs/cgroup
readonly MARKER=.kubelet-e2e-harness
# The kubelet talks to containerd's CRI in this namespace.
readonly CRI_NS=k8s.io

# die (harness-lib.sh) runs this first: let a background containerd start finish recording its
# PID, so a following `down` knows what to stop.
harness_on_die() {
  if [[ -n "${STARTER_PID:-}" && $BASHPID == "$$" ]]; then
    wait "$STARTER_PID" 2>/dev/null || true
  fi
}

usage() {
  cat >&2 <<'EOF'
usage: containerd-env.sh up DIR [--fresh] [--no-registry]
       containerd-env.sh down DIR
       containerd-env.sh stop-runtime DIR | start-runtime DIR
EOF
  exit 2
}

# ---------------------------------------------------------------------------
# Run state: DIR/.state holds KEY=VALUE lines appended as `up` progresses, so
# that `down` can undo exactly what a (possibly half-finished) `up` did
# (state_set / state_load of harness-lib.sh).
# ---------------------------------------------------------------------------

# stop_pid PID MATCH LABEL: SIGTERM, wait up to 10 s, then SIGKILL. MATCH must
# appear in the process's command line (see pid_alive).
stop_pid() {
  local pid=$1 match=$2 label=$3 i
  pid_alive "$pid" "$match" || return 0
  log "stopping $label (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    pid_alive "$pid" "$match" || return 0
    sleep 0.1
  done
  log "$label (pid $pid) ignored SIGTERM for 10s; sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    pid_alive "$pid" "$match" || return 0
    sleep 0.1
  done
  die "$label (pid $pid) survived SIGKILL"
}

random_u16() { od -An -N2 -tu2 /dev/urandom | tr -d ' '; }

# ---------------------------------------------------------------------------
# up
# ---------------------------------------------------------------------------

check_prereqs() {
  local missing=() tool
  [[ $EUID -eq 0 ]] || die "must run as root (containerd, CNI and mounts need it)"
  for tool in containerd ctr runc containerd-shim-runc-v2 gcc tar gzip sha256sum curl ip iptables \
    busybox stat od ss pgrep realpath; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
  done
  if ((WITH_REGISTRY)); then
    command -v docker-registry >/dev/null 2>&1 || missing+=(docker-registry)
  fi
  for tool in bridge host-local portmap loopback; do
    [[ -x "$CNI_BIN_DIR/$tool" ]] || missing+=("$CNI_BIN_DIR/$tool")
  done
  ((${#missing[@]} == 0)) ||
    die "missing prerequisites: ${missing[*]} (Debian: containerd runc containernetworking-plugins busybox-static docker-registry gcc libc6-dev curl iproute2 iptables)"
  log "prerequisites present"
}

# healthy: DIR describes a running environment whose containerd answers.
healthy() {
  [[ -f "$DIR/env" ]] || return 1
  state_load
  pid_alive "${S_CONTAINERD_PID:-}" "$DIR/config.toml" || return 1
  ctr --address "$S_SOCK" --timeout 5s version >/dev/null 2>&1 || return 1
  if [[ -n "${S_REGISTRY_PID:-}" ]]; then
    pid_alive "$S_REGISTRY_PID" "$DIR/registry/config.yml" || return 1
  fi
}

# ipv4_to_int A.B.C.D
ipv4_to_int() {
  local IFS=. a b c d
  read -r a b c d <<<"$1"
  echo $(((a << 24) | (b << 16) | (c << 8) | d))
}

# subnet_is_free 10.A.B.0: no route or address on the host overlaps 10.A.B.0/24.
subnet_is_free() {
  local cand lo hi prefix net len n m plo phi
  cand=$(ipv4_to_int "$1")
  lo=$cand hi=$((cand + 255))
  # Routes in every table plus addresses (covers links that are down).
  while read -r prefix; do
    [[ "$prefix" == default ]] && continue
    net=${prefix%/*}
    [[ "$net" =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]] || continue
    len=32
    [[ "$prefix" == */* ]] && len=${prefix#*/}
    n=$(ipv4_to_int "$net")
    m=$(((0xffffffff << (32 - len)) & 0xffffffff))
    plo=$((n & m))
    phi=$((plo | (~m & 0xffffffff)))
    ((phi < lo || plo > hi)) || return 1
  done < <({
    ip -4 route show table all 2>/dev/null | awk '{print $1}'
    ip -4 -o addr show 2>/dev/null | awk '{print $4}'
  })
  return 0
}

# pick_network: a bridge name and a /24 unique on this host. The bridge is created
# here (with the gateway address) rather than lazily by the CNI plugin so that its
# route claims the subnet at once: a concurrent `up` then sees it as taken.
pick_network() {
  local try id a b
  for ((try = 0; try < 64; try++)); do
    id=$(printf '%04x' "$(random_u16)")
    a=$((88 + $(random_u16) % 163))
    b=$(($(random_u16) % 256))
    ip link show "kube-e2e$id" >/dev/null 2>&1 && continue
    subnet_is_free "10.$a.$b.0" || continue
    if ! ip link add "kube-e2e$id" type bridge 2>/dev/null; then
      continue # lost a race for the name; pick again
    fi
    # Recorded only once the link is ours: `down` deletes what the state names.
    RUN_ID=$id
    BRIDGE=kube-e2e$id
    NET_NAME=kube-e2e-$id
    SUBNET=10.$a.$b.0/24
    GATEWAY=10.$a.$b.1
    state_set RUN_ID "$RUN_ID"
    state_set BRIDGE "$BRIDGE"
    state_set NET_NAME "$NET_NAME"
    state_set SUBNET "$SUBNET"
    ip addr add "$GATEWAY/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
    log "network: bridge $BRIDGE, subnet $SUBNET (gateway $GATEWAY), CNI network $NET_NAME"
    return 0
  done
  die "could not find a free bridge name and 10.x.y.0/24 subnet after 64 tries"
}

# pick_socket_dir: unix socket paths are limited to 107 bytes and containerd adds
# ".ttrpc" to its socket name, so a deep DIR gets a short directory under /run.
pick_socket_dir() {
  local longest=/containerd.sock.ttrpc
  if ((${#DIR} + ${#longest} > 100)); then
    SOCK_DIR=/run/kubelet-e2e-$RUN_ID
    mkdir -p "$SOCK_DIR"
    log "DIR is long (${#DIR} chars): socket goes to $SOCK_DIR"
  else
    SOCK_DIR=$DIR
  fi
  SOCK=$SOCK_DIR/containerd.sock
  state_set SOCK_DIR "$SOCK_DIR"
  state_set SOCK "$SOCK"
}

# pick_snapshotter: overlayfs when DIR's filesystem supports it (containerd's
# overlayfs plugin would otherwise fail to load and take CRI down with it).
pick_snapshotter() {
  local t=$DIR/root/.overlay-check
  mkdir -p "$t/lower" "$t/upper" "$t/work" "$t/merged"
  if mount -t overlay overlay -o "lowerdir=$t/lower,upperdir=$t/upper,workdir=$t/work" "$t/merged" \
    2>/dev/null; then
    umount "$t/merged"
    SNAPSHOTTER=overlayfs
  else
    SNAPSHOTTER=native
  fi
  rm -rf "$t"
  state_set SNAPSHOTTER "$SNAPSHOTTER"
  log "snapshotter: $SNAPSHOTTER"
}

pick_registry_port() {
  local try p
  for ((try = 0; try < 100; try++)); do
    p=$((30000 + $(random_u16) % 30000))
    if port_is_free "$p"; then
      REGISTRY_PORT=$p
      REGISTRY=127.0.0.1:$p
      state_set REGISTRY "$REGISTRY"
      return 0
    fi
  done
  die "no free TCP port found for the registry"
}

# Records which top-level cgroups exist before the run, so `down` removes only
# the namespace-level parents (/k8s.io, /default) that this run caused.
record_cgroups() {
  find "$CGROUP_ROOT" -mindepth 2 -maxdepth 2 -type d -printf '%f\n' 2>/dev/null | sort -u \
    >"$DIR/.cgroups-before"
}

write_cni_config() {
  mkdir -p "$DIR/cni/net.d" "$DIR/cni/networks"
  # Loopback is not listed: containerd's CRI always brings lo up itself
  # (go-cni's loopback network); a chained loopback plugin would act on eth0.
  # IPAM state lives under DIR so nothing of it outlives `down`.
  cat >"$DIR/cni/net.d/10-$NET_NAME.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$NET_NAME",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$SUBNET", "gateway": "$GATEWAY"}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": "$DIR/cni/networks"
      }
    },
    {
      "type": "portmap",
      "capabilities": {"portMappings": true}
    }
  ]
}
EOF
  log "wrote CNI conflist $DIR/cni/net.d/10-$NET_NAME.conflist"
}

write_registry_hosts() {
  # containerd 1.6 CRI reads hosts.toml per registry host from config_path at
  # pull time; an http:// server makes the pull plain HTTP.
  mkdir -p "$DIR/certs.d/$REGISTRY"
  cat >"$DIR/certs.d/$REGISTRY/hosts.toml" <<EOF
server = "http://$REGISTRY"

[host."http://$REGISTRY"]
  capabilities = ["pull", "resolve", "push"]
  skip_verify = true
EOF
  log "wrote registry hosts.toml for $REGISTRY"
}

write_containerd_config() {
  mkdir -p "$DIR/root" "$DIR/state" "$DIR/opt" "$DIR/runc" "$DIR/certs.d"
  # Disabled plugins: snapshotters that cannot work here and tracing; they only
  # cost startup time and log noise.
  # runc options Root: keeps runc's state under DIR instead of the shared
  # /run/containerd/runc, so `down` can find (and force-delete) this run's
  # containers even when containerd is already gone.
  cat >"$DIR/config.toml" <<EOF
version = 2
root = "$DIR/root"
state = "$DIR/state"
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

[grpc]
  address = "$SOCK"

[debug]
  level = "info"

[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "$DIR/opt"

  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "$PAUSE_IMAGE"
    restrict_oom_score_adj = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"

    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "$SNAPSHOTTER"
      default_runtime_name = "runc"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
          Root = "$DIR/runc"

    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "$CNI_BIN_DIR"
      conf_dir = "$DIR/cni/net.d"
      max_conf_num = 1

    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = "$DIR/certs.d"
EOF
  log "wrote containerd config $DIR/config.toml"
}

start_containerd() {
  local pid i
  log "starting containerd (log: $DIR/containerd.log)"
  # setsid: the daemon must outlive the calling test process (CTest fixture) and
  # must not hold the caller's stdout/stderr open (CTest would wait for EOF).
  setsid containerd --config "$DIR/config.toml" </dev/null >>"$DIR/containerd.log" 2>&1 &
  pid=$!
  state_set CONTAINERD_PID "$pid"
  for ((i = 0; i < 300; i++)); do
    # kill -0, not pid_alive: right after `&` the child may not have exec'd yet.
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 30 "$DIR/containerd.log" >&2 || true
      die "containerd exited during startup (see $DIR/containerd.log)"
    fi
    if [[ -S "$SOCK" ]] && ctr --address "$SOCK" --timeout 2s version >/dev/null 2>&1; then
      log "containerd is up (pid $pid) after $((i / 10)).$((i % 10))s"
      return 0
    fi
    sleep 0.1
  done
  tail -n 30 "$DIR/containerd.log" >&2 || true
  die "containerd did not answer on $SOCK within 30s"
}

# --- images ----------------------------------------------------------------

# blob_add FILE LAYOUT: moves FILE into LAYOUT/blobs/sha256 and sets BLOB_DIGEST,
# BLOB_SIZE.
blob_add() {
  local file=$1 layout=$2 hex
  hex=$(sha256sum "$file" | cut -d' ' -f1)
  BLOB_DIGEST=sha256:$hex
  BLOB_SIZE=$(stat -c %s "$file")
  mkdir -p "$layout/blobs/sha256"
  mv -f "$file" "$layout/blobs/sha256/$hex"
}

# make_layer ROOTFS LAYOUT: a reproducible gzip layer of ROOTFS; sets LAYER_DIGEST,
# LAYER_SIZE and DIFF_ID (sha256 of the uncompressed tar, as the config needs).
make_layer() {
  local rootfs=$1 layout=$2 work
  work=$(dirname "$rootfs")
  # Fixed owner and mtime, sorted entries, gzip without name/time: identical
  # bytes every run, so digests are stable and shared across runs.
  (cd "$rootfs" && tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 \
    -cf "$work/layer.tar" -- *)
  DIFF_ID=sha256:$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
  gzip -n -1 -f "$work/layer.tar"
  blob_add "$work/layer.tar.gz" "$layout"
  LAYER_DIGEST=$BLOB_DIGEST
  LAYER_SIZE=$BLOB_SIZE
}

# make_image LAYOUT WORK CONFIG_JSON_BODY: writes config + manifest blobs for the
# last make_layer; sets MANIFEST_DIGEST, MANIFEST_SIZE, CONFIG_DIGEST.
make_image() {
  local layout=$1 work=$2 config_body=$3
  printf '{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z","config":%s,"rootfs":{"type":"layers","diff_ids":["%s"]},"history":[{"created":"1970-01-01T00:00:00Z","created_by":"kubelet-cpp e2e harness (containerd-env.sh)"}]}' \
    "$config_body" "$DIFF_ID" >"$work/config.json"
  blob_add "$work/config.json" "$layout"
  CONFIG_DIGEST=$BLOB_DIGEST
  local config_size=$BLOB_SIZE
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"%s","size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"%s","size":%d}]}' \
    "$CONFIG_DIGEST" "$config_size" "$LAYER_DIGEST" "$LAYER_SIZE" >"$work/manifest.json"
  blob_add "$work/manifest.json" "$layout"
  MANIFEST_DIGEST=$BLOB_DIGEST
  MANIFEST_SIZE=$BLOB_SIZE
}

# index_entry NAME: an index.json manifest descriptor naming the image; ctr
# import takes the image name from io.containerd.image.name.
index_entry() {
  printf '{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"%s","size":%d,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}' \
    "$MANIFEST_DIGEST" "$MANIFEST_SIZE" "$1" "${1##*:}"
}

build_busybox_rootfs() {
  local rootfs=$1 applet
  mkdir -p "$rootfs"/{bin,etc,tmp,proc,sys,dev,root,home,var,run,usr/bin}
  chmod 1777 "$rootfs/tmp"
  chmod 700 "$rootfs/root"
  cp "$(command -v busybox)" "$rootfs/bin/busybox"
  for applet in $("$rootfs/bin/busybox" --list); do
    [[ "$applet" == busybox ]] && continue
    ln -sf busybox "$rootfs/bin/$applet"
  done
  ln -sf ../../bin/busybox "$rootfs/usr/bin/env"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n' \
    >"$rootfs/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' >"$rootfs/etc/group"
  printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$rootfs/etc/hosts"
  : >"$rootfs/etc/resolv.conf"
  echo busybox >"$rootfs/etc/hostname"
}

# build_images: one OCI-layout tarball holding busybox and pause (one import
# call), plus the registry flavour of busybox kept as loose blobs for pushing.
build_images() {
  local img=$DIR/images layout bb_entry pause_entry
  rm -rf "$img"
  layout=$img/layout
  mkdir -p "$layout" "$img/busybox" "$img/pause/rootfs"
  log "building images in $img"

  build_busybox_rootfs "$img/busybox/rootfs"
  make_layer "$img/busybox/rootfs" "$layout"
  local path_env='"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]'
  make_image "$layout" "$img/busybox" "{$path_env,\"Cmd\":[\"sh\"]}"
  bb_entry=$(index_entry "$BUSYBOX_IMAGE")
  BUSYBOX_LAYER_DIGEST=$LAYER_DIGEST

  # The registry copy gets its own config (hence its own image ID): CRI
  # RemoveImage deletes every tag of an image ID, so a test removing the pulled
  # registry image must not take docker.io/library/busybox:1.36 with it.
  make_image "$img/registry-blobs" "$img/busybox" \
    "{$path_env,\"Cmd\":[\"sh\"],\"Labels\":{\"io.kubelet-e2e.source\":\"registry\"}}"
  REG_CONFIG_DIGEST=$CONFIG_DIGEST
  REG_MANIFEST_DIGEST=$MANIFEST_DIGEST
  cp "$layout/blobs/sha256/${BUSYBOX_LAYER_DIGEST#sha256:}" "$img/registry-blobs/blobs/sha256/"

  gcc -static -O2 -Wall -o "$img/pause/rootfs/pause" "$HARNESS_DIR/pause.c"
  strip "$img/pause/rootfs/pause" 2>/dev/null || true
  make_layer "$img/pause/rootfs" "$layout"
  # Upstream pause:3.9 runs as 65535:65535; so does ours.
  make_image "$layout" "$img/pause" \
    "{$path_env,\"Entrypoint\":[\"/pause\"],\"User\":\"65535:65535\"}"
  pause_entry=$(index_entry "$PAUSE_IMAGE")

  printf '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[%s,%s]}' \
    "$bb_entry" "$pause_entry" >"$layout/index.json"
  (cd "$layout" && tar --owner=0 --group=0 --numeric-owner -cf "$img/images.oci.tar" oci-layout index.json blobs)
  printf 'BUSYBOX_LAYER_DIGEST=%s\nREG_CONFIG_DIGEST=%s\nREG_MANIFEST_DIGEST=%s\n' \
    "$BUSYBOX_LAYER_DIGEST" "$REG_CONFIG_DIGEST" "$REG_MANIFEST_DIGEST" >"$img/digests"
  log "built $BUSYBOX_IMAGE (layer $BUSYBOX_LAYER_DIGEST) and $PAUSE_IMAGE into $img/images.oci.tar"
}

# prepare_images: DIR/images (images.oci.tar, registry-blobs/, digests) from the
# image cache beside DIR, built on a miss. Building costs 1-2 s of every `up`
# on a busy 2-core machine; the cache key covers every input (busybox binary,
# pause.c, compiler, the build code itself), so a stale entry is never used.
# Entries are immutable and appear atomically (mv of a complete temp dir), so
# concurrent `up`s may share the cache. KUBELET_E2E_IMAGE_CACHE moves it.
prepare_images() {
  local cache=${KUBELET_E2E_IMAGE_CACHE:-$(dirname "$DIR")/.kubelet-e2e-image-cache}
  local key entry tmp k v
  key=$({
    sha256sum "$(command -v busybox)" "$HARNESS_DIR/pause.c"
    gcc -dumpfullversion
    declare -f build_images make_layer make_image build_busybox_rootfs index_entry blob_add
    echo "$BUSYBOX_IMAGE $PAUSE_IMAGE"
  } | sha256sum | cut -c1-16)
  entry=$cache/$key
  if [[ ! -f "$entry/digests" ]]; then
    build_images
    mkdir -p "$cache"
    tmp=$(mktemp -d "$cache/.tmp.XXXXXX")
    cp -a "$DIR/images/images.oci.tar" "$DIR/images/registry-blobs" "$DIR/images/digests" "$tmp/"
    mv -T "$tmp" "$entry" 2>/dev/null || rm -rf "$tmp" # another run stored it first
    log "stored images in cache $entry"
    return 0
  fi
  rm -rf "$DIR/images"
  mkdir -p "$DIR/images"
  cp -a "$entry/images.oci.tar" "$entry/registry-blobs" "$DIR/images/"
  while IFS='=' read -r k v; do
    case $k in
      BUSYBOX_LAYER_DIGEST | REG_CONFIG_DIGEST | REG_MANIFEST_DIGEST) printf -v "$k" '%s' "$v" ;;
    esac
  done <"$entry/digests"
  [[ -n "${REG_MANIFEST_DIGEST:-}" ]] || die "corrupt image cache entry $entry (remove it)"
  log "images from cache $entry"
}

import_images() {
  log "importing images into namespace $CRI_NS"
  ctr --address "$SOCK" -n "$CRI_NS" images import --snapshotter "$SNAPSHOTTER" \
    "$DIR/images/images.oci.tar" >"$DIR/images/import.log" 2>&1 ||
    { cat "$DIR/images/import.log" >&2; die "ctr images import failed"; }
  local have
  have=$(ctr --address "$SOCK" -n "$CRI_NS" images ls -q)
  grep -qxF "$BUSYBOX_IMAGE" <<<"$have" || die "$BUSYBOX_IMAGE missing after import"
  grep -qxF "$PAUSE_IMAGE" <<<"$have" || die "$PAUSE_IMAGE missing after import"
  log "imported $BUSYBOX_IMAGE and $PAUSE_IMAGE"
}

# --- registry ----------------------------------------------------------------

start_registry() {
  local pid i
  mkdir -p "$DIR/registry/data"
  cat >"$DIR/registry/config.yml" <<EOF
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $DIR/registry/data
  delete:
    enabled: true
http:
  addr: $REGISTRY
  secret: kubelet-e2e-$RUN_ID
EOF
  log "starting docker-registry on $REGISTRY (log: $DIR/registry.log)"
  setsid docker-registry serve "$DIR/registry/config.yml" </dev/null >>"$DIR/registry.log" 2>&1 &
  pid=$!
  state_set REGISTRY_PID "$pid"
  for ((i = 0; i < 150; i++)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      if grep -q 'address already in use' "$DIR/registry.log" 2>/dev/null; then
        return 75 # lost a race for the port; the caller picks another
      fi
      tail -n 20 "$DIR/registry.log" >&2 || true
      die "docker-registry exited during startup (see $DIR/registry.log)"
    fi
    if curl -fsS -o /dev/null "http://$REGISTRY/v2/" 2>/dev/null; then
      log "registry is up (pid $pid)"
      return 0
    fi
    sleep 0.1
  done
  die "docker-registry did not answer on $REGISTRY within 15s"
}

push_registry_image() {
  local blobs=$DIR/images/registry-blobs/blobs/sha256 tag
  push_blob "$blobs/${BUSYBOX_LAYER_DIGEST#sha256:}" "$BUSYBOX_LAYER_DIGEST" "$REGISTRY_REPO"
  push_blob "$blobs/${REG_CONFIG_DIGEST#sha256:}" "$REG_CONFIG_DIGEST" "$REGISTRY_REPO"
  # :latest too, so tests can exercise the always-pull default of :latest tags.
  for tag in 1.36 latest; do
    curl -fsS -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' \
      --data-binary @"$blobs/${REG_MANIFEST_DIGEST#sha256:}" -o /dev/null \
      "http://$REGISTRY/v2/$REGISTRY_REPO/manifests/$tag" || die "manifest PUT for :$tag failed"
  done
  log "pushed $REGISTRY/$REGISTRY_REPO:1.36 and :latest ($REG_MANIFEST_DIGEST)"
}

# verify_registry_pull: containerd can pull the pushed image over plain HTTP;
# the copy is removed again so tests start without it.
verify_registry_pull() {
  local ref=$REGISTRY/$REGISTRY_REPO:1.36
  ctr --address "$SOCK" -n "$CRI_NS" images pull --plain-http --snapshotter "$SNAPSHOTTER" "$ref" \
    >"$DIR/images/pull.log" 2>&1 || { cat "$DIR/images/pull.log" >&2; die "pull of $ref failed"; }
  # CRI mirrors every image under its ID ("sha256:<config digest>") as well,
  # asynchronously on the create event; both names must go or CRI keeps listing
  # an untagged image. Wait for the mirror first so it cannot reappear later.
  local i
  for ((i = 0; i < 30; i++)); do
    ctr --address "$SOCK" -n "$CRI_NS" images ls -q | grep -qxF "$REG_CONFIG_DIGEST" && break
    sleep 0.1
  done
  ctr --address "$SOCK" -n "$CRI_NS" images rm --sync "$ref" "$REG_CONFIG_DIGEST" >/dev/null 2>&1 || true
  if ctr --address "$SOCK" -n "$CRI_NS" images ls -q | grep -qxF -e "$ref" -e "$REG_CONFIG_DIGEST"; then
    die "could not remove the verification copy of $ref"
  fi
  log "verified pull of $ref (and removed it again)"
}

write_env_file() {
  local tmp=$DIR/env.tmp
  cat >"$tmp" <<EOF
KUBELET_E2E_RUNTIME=containerd
KUBELET_E2E_DIR=$DIR
KUBELET_E2E_RUNTIME_SOCK=$SOCK
KUBELET_E2E_RUNTIME_ENDPOINT=unix://$SOCK
KUBELET_E2E_CONTAINERD_SOCK=$SOCK
KUBELET_E2E_CONTAINERD_PID=$S_CONTAINERD_PID
KUBELET_E2E_CONTAINERD_NAMESPACE=$CRI_NS
KUBELET_E2E_SNAPSHOTTER=$SNAPSHOTTER
KUBELET_E2E_REGISTRY=${REGISTRY:-}
KUBELET_E2E_REGISTRY_PID=${S_REGISTRY_PID:-}
KUBELET_E2E_REGISTRY_IMAGE=${REGISTRY:+$REGISTRY/$REGISTRY_REPO:1.36}
KUBELET_E2E_CGROUP_ROOT=/kubelet-e2e-$RUN_ID
KUBELET_E2E_CNI_NETWORK=$NET_NAME
KUBELET_E2E_CNI_BRIDGE=$BRIDGE
KUBELET_E2E_CNI_SUBNET=$SUBNET
KUBELET_E2E_CNI_CONF_DIR=$DIR/cni/net.d
KUBELET_E2E_CNI_BIN_DIR=$CNI_BIN_DIR
KUBELET_E2E_BUSYBOX_IMAGE=$BUSYBOX_IMAGE
KUBELET_E2E_PAUSE_IMAGE=$PAUSE_IMAGE
EOF
  if grep -q '[[:space:]"'"'"']' <(cut -d= -f2- "$tmp"); then
    die "a value in $tmp contains whitespace or quotes (DIR must not)"
  fi
  mv -f "$tmp" "$DIR/env"
  log "wrote $DIR/env"
}

cmd_up() {
  local t0
  t0=$(date +%s.%N)
  check_prereqs
  # DIR ends up in the KEY=VALUE env file, which promises no quoting.
  [[ ! "$DIR" =~ [[:space:]\"\'] ]] || die "DIR must not contain whitespace or quotes: $DIR"
  if [[ -d "$DIR" && -e "$DIR/$MARKER" ]]; then
    if ((FRESH)); then
      log "--fresh: removing the environment already in $DIR"
      (trap - ERR; cmd_down) || die "could not remove the old environment in $DIR"
    elif healthy; then
      log "environment in $DIR is already up (containerd pid $S_CONTAINERD_PID); nothing to do"
      return 0
    else
      log "found a stale or half-built environment in $DIR; tearing it down first"
      (trap - ERR; cmd_down) || die "could not remove the old environment in $DIR"
    fi
  elif [[ -d "$DIR" ]] && [[ -n "$(ls -A "$DIR")" ]]; then
    die "$DIR exists, is not empty and was not made by this script; refusing to use it"
  fi
  mkdir -p "$DIR"
  : >"$DIR/$MARKER"
  : >"$DIR/.state"
  unset "${!S_@}"
  log "setting up in $DIR"
  record_cgroups
  pick_network
  pick_socket_dir
  pick_snapshotter
  if ((WITH_REGISTRY)); then
    pick_registry_port
    write_registry_hosts
  else
    REGISTRY=''
  fi
  write_cni_config
  write_containerd_config
  # containerd starts (about a second) while images build on the other core.
  start_containerd &
  STARTER_PID=$!
  prepare_images
  local starter=$STARTER_PID
  STARTER_PID=''
  wait "$starter" || die "containerd failed to start"
  state_load
  import_images
  if ((WITH_REGISTRY)); then
    local attempt rc
    for ((attempt = 1; ; attempt++)); do
      rc=0
      start_registry || rc=$?
      ((rc == 75)) || break
      ((attempt < 3)) || die "docker-registry could not bind a port (3 attempts)"
      log "port $REGISTRY_PORT was taken meanwhile; trying another"
      rm -rf "$DIR/certs.d/$REGISTRY"
      pick_registry_port
      write_registry_hosts
    done
    state_load
    push_registry_image
    verify_registry_pull
  fi
  write_env_file
  log "up done in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}')s: source $DIR/env"
}

# ---------------------------------------------------------------------------
# stop-runtime / start-runtime: an outage of the daemon alone
# ---------------------------------------------------------------------------

cmd_stop_runtime() {
  [[ -e "$DIR/$MARKER" ]] || die "no environment in $DIR"
  state_load
  stop_pid "$S_CONTAINERD_PID" containerd containerd
}

cmd_start_runtime() {
  [[ -e "$DIR/$MARKER" ]] || die "no environment in $DIR"
  state_load
  if pid_alive "$S_CONTAINERD_PID" containerd; then
    log "containerd is already running (pid $S_CONTAINERD_PID)"
    return 0
  fi
  SOCK=$S_SOCK
  start_containerd
  state_load
  sed -i "s/^KUBELET_E2E_CONTAINERD_PID=.*/KUBELET_E2E_CONTAINERD_PID=$S_CONTAINERD_PID/" "$DIR/env"
}

# ---------------------------------------------------------------------------
# down
# ---------------------------------------------------------------------------

# run_ids: every container and sandbox ID this run's containerd ever knew of,
# read from its on-disk state so it works when containerd is dead.
run_ids() {
  {
    ls -1 "$DIR/root/io.containerd.grpc.v1.cri/sandboxes" 2>/dev/null
    ls -1 "$DIR/root/io.containerd.grpc.v1.cri/containers" 2>/dev/null
    ls -1 "$DIR"/state/io.containerd.runtime.v2.task/* 2>/dev/null
    ls -1 "$DIR"/runc/* 2>/dev/null
  } | grep -E '^[0-9a-zA-Z][0-9a-zA-Z_.-]*$' | sort -u || true
}

# run_namespaces: containerd namespaces this run used (cgroup parents are named
# after them when no cgroup_parent is given).
run_namespaces() {
  {
    echo "$CRI_NS"
    ls -1 "$DIR/state/io.containerd.runtime.v2.task" 2>/dev/null
    ls -1 "$DIR/runc" 2>/dev/null
  } | sort -u
}

containerd_up() {
  [[ -n "${S_SOCK:-}" && -S "$S_SOCK" ]] || return 1
  pid_alive "${S_CONTAINERD_PID:-}" "$DIR/config.toml" || return 1
  ctr --address "$S_SOCK" --timeout 5s version >/dev/null 2>&1
}

# teardown_via_cri: StopPodSandbox runs CNI DEL (IP release, iptables, netns) as
# the kubelet would; RemovePodSandbox removes the sandbox's containers.
teardown_via_cri() {
  local ids id n=0
  CRI_SOCK=$S_SOCK
  ids=$(cri_call RuntimeService ListPodSandbox '' | cri_all_fields id) || return 1
  for id in $ids; do
    cri_call RuntimeService StopPodSandbox "pod_sandbox_id: \"$id\"" >/dev/null ||
      log "StopPodSandbox $id failed (continuing)"
    cri_call RuntimeService RemovePodSandbox "pod_sandbox_id: \"$id\"" >/dev/null ||
      log "RemovePodSandbox $id failed (continuing)"
    n=$((n + 1))
  done
  log "removed $n pod sandbox(es) through CRI"
}

# teardown_via_ctr: kills every task and deletes every container in every
# namespace (covers `ctr run` leftovers and the no-protoc case).
teardown_via_ctr() {
  local ns id
  for ns in $(ctr --address "$S_SOCK" namespaces ls -q 2>/dev/null); do
    for id in $(ctr --address "$S_SOCK" -n "$ns" tasks ls -q 2>/dev/null); do
      ctr --address "$S_SOCK" -n "$ns" tasks kill -a -s SIGKILL "$id" >/dev/null 2>&1 || true
    done
    for id in $(ctr --address "$S_SOCK" -n "$ns" tasks ls -q 2>/dev/null); do
      ctr --address "$S_SOCK" -n "$ns" tasks delete -f "$id" >/dev/null 2>&1 || true
    done
    for id in $(ctr --address "$S_SOCK" -n "$ns" containers ls -q 2>/dev/null); do
      ctr --address "$S_SOCK" -n "$ns" containers delete "$id" >/dev/null 2>&1 || true
    done
  done
  log "killed remaining tasks through ctr"
}

# cgroup_dirs_of IDS...: cgroup directories (any hierarchy) of this run's
# containers, deepest first. A 64-hex ID (CRI) is unique enough to match at any
# depth (the kubelet nests them under its pod cgroups); other IDs (`ctr run
# NAME`) only match as /<namespace>/<ID>, where containerd puts them.
cgroup_dirs_of() {
  (($# > 0)) || return 0
  find "$CGROUP_ROOT" -mindepth 2 -type d 2>/dev/null |
    IDS=$(printf '%s\n' "$@") NSS=$(run_namespaces) awk -F/ '
    BEGIN {
      n = split(ENVIRON["IDS"], a, "\n"); for (i = 1; i <= n; i++) want[a[i]] = 1
      n = split(ENVIRON["NSS"], b, "\n"); for (i = 1; i <= n; i++) ns[b[i]] = 1
    }
    ($NF in want) && ($NF ~ /^[0-9a-f]+$/ && length($NF) == 64 || ($(NF-1) in ns) && NF == 7) {
      print length($0) "\t" $0
    }' | sort -rn | cut -f2-
}

# sweep_processes IDS...: SIGKILL whatever still runs of this run: shims started
# for our socket and every process inside our containers' cgroups.
sweep_processes() {
  local pids=() pid dir i
  if [[ -n "${S_SOCK:-}" ]]; then
    for pid in $(pgrep -f -- "containerd-shim.*-address $S_SOCK( |\$)" 2>/dev/null || true); do
      pids+=("$pid")
    done
  fi
  while read -r dir; do
    [[ -n "$dir" && -r "$dir/cgroup.procs" ]] || continue
    while read -r pid; do pids+=("$pid"); done <"$dir/cgroup.procs"
  done < <(cgroup_dirs_of "$@"; cgroup_root_dirs)
  ((${#pids[@]} > 0)) || return 0
  mapfile -t pids < <(printf '%s\n' "${pids[@]}" | sort -un)
  log "killing ${#pids[@]} leftover process(es): ${pids[*]}"
  kill -KILL "${pids[@]}" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    local alive=0
    # A zombie counts as gone: its reaper (PID 1 here) may take its time.
    for pid in "${pids[@]}"; do
      [[ -r /proc/$pid/stat && "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]] && alive=1
    done
    ((alive)) || return 0
    sleep 0.1
  done
  log "warning: some processes outlived SIGKILL: ${pids[*]}"
}

# runc_force_delete IDS...: runc state of containers a dead containerd left.
# CRI containers use the runc root of our config (DIR/runc); `ctr run` ones the
# shared default /run/containerd/runc, where only this run's IDs are touched.
runc_force_delete() {
  local root id ns
  for root in "$DIR"/runc/*/; do
    [[ -d "$root" ]] || continue
    for id in "$root"*; do
      [[ -e "$id" ]] || continue
      runc --root "${root%/}" delete --force "${id##*/}" >/dev/null 2>&1 || true
    done
  done
  for ns in $(run_namespaces); do
    for id in "$@"; do
      [[ -d "/run/containerd/runc/$ns/$id" ]] || continue
      runc --root "/run/containerd/runc/$ns" delete --force "$id" >/dev/null 2>&1 || true
    done
  done
}

# unmount_below PREFIX...: lazily unmounts every mount point under the prefixes,
# deepest first (overlay rootfs, sandbox /dev/shm, ...).
unmount_below() {
  local prefix mp n=0
  for prefix in "$@"; do
    [[ -n "$prefix" ]] || continue
    while read -r mp; do
      umount "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null || log "warning: cannot unmount $mp"
      n=$((n + 1))
    done < <(awk -v p="$prefix/" '{ m = $2; gsub(/\\040/, " ", m); if (index(m, p) == 1) print length(m) "\t" m }' /proc/mounts |
      sort -rn | cut -f2-)
  done
  ((n == 0)) || log "unmounted $n mount(s)"
}

# in_subnet IP: IP lies in this run's /24.
in_subnet() {
  [[ -n "${S_SUBNET:-}" ]] || return 1
  local net=${S_SUBNET%/*}
  [[ "${1%.*}" == "${net%.*}" ]]
}

# cleanup_netns: network namespaces of this run's sandboxes. They are found by
# name in containerd's metadata DB (CRI records the netns path) and, for safety
# when the DB is gone, by carrying an address from this run's subnet.
cleanup_netns() {
  local names=() name addr
  if [[ -f "$DIR/root/io.containerd.metadata.v1.bolt/meta.db" ]]; then
    while read -r name; do names+=("$name"); done < <(grep -aoE "$NETNS_DIR/cni-[0-9a-f-]{36}" \
      "$DIR/root/io.containerd.metadata.v1.bolt/meta.db" 2>/dev/null | sed 's|.*/||' | sort -u)
  fi
  if [[ -n "${S_SUBNET:-}" && -d "$NETNS_DIR" ]]; then
    for name in "$NETNS_DIR"/*; do
      [[ -e "$name" ]] || continue
      name=${name##*/}
      for addr in $(ip -n "$name" -4 -o addr show 2>/dev/null | awk '{print $4}'); do
        in_subnet "${addr%/*}" && names+=("$name")
      done
    done
  fi
  local n=0
  for name in $(printf '%s\n' "${names[@]}" | sort -u); do
    [[ -e "$NETNS_DIR/$name" ]] || continue
    ip netns delete "$name" 2>/dev/null || { umount -l "$NETNS_DIR/$name" 2>/dev/null; rm -f "$NETNS_DIR/$name"; }
    n=$((n + 1))
  done
  ((n == 0)) || log "removed $n leftover network namespace(s)"
}

# cleanup_iptables: rules CNI added for this network (bridge ipMasq, portmap),
# found by the network name in their comments or by this run's subnet, and the
# per-container CNI-* chains they jump to. portmap's shared CNI-HOSTPORT-*
# chains go too once no network uses them (portmap re-creates them on demand).
cleanup_iptables() {
  [[ -n "${S_NET_NAME:-}" && -n "${S_SUBNET:-}" ]] || return 0
  command -v iptables >/dev/null 2>&1 || return 0
  local table rule chain net_re chains n=0
  local net=${S_SUBNET%/*}
  net_re="(^|[^0-9])${net%.*}."
  net_re=${net_re//./\\.}'[0-9]+'
  for table in nat filter mangle; do
    chains=()
    while IFS= read -r rule; do
      [[ "$rule" == -A\ * ]] || continue
      if grep -qF -- "\\\"$S_NET_NAME\\\"" <<<"$rule" || grep -qE -- "$net_re" <<<"$rule"; then
        chain=$(awk '{print $2}' <<<"$rule")
        [[ "$chain" == CNI-* && "$chain" != CNI-HOSTPORT-* ]] && chains+=("$chain")
        if [[ "$rule" =~ -j\ (CNI-[A-Za-z0-9_-]+) ]] && [[ "${BASH_REMATCH[1]}" != CNI-HOSTPORT-* ]]; then
          chains+=("${BASH_REMATCH[1]}")
        fi
        # iptables -S quotes its output for the shell, hence eval.
        eval "iptables -w -t $table -D ${rule#-A }" 2>/dev/null && n=$((n + 1))
      fi
    done < <(iptables -w -t "$table" -S 2>/dev/null)
    for chain in $(printf '%s\n' "${chains[@]}" | sort -u); do
      iptables -w -t "$table" -S "$chain" >/dev/null 2>&1 || continue
      remove_chain "$table" "$chain" && n=$((n + 1))
    done
  done
  # Shared portmap chains: drop them when no container of any network maps a port.
  if iptables -w -t nat -S CNI-HOSTPORT-DNAT >/dev/null 2>&1 &&
    ! iptables -w -t nat -S CNI-HOSTPORT-DNAT | grep -q '^-A'; then
    for chain in CNI-HOSTPORT-DNAT CNI-HOSTPORT-SNAT CNI-HOSTPORT-MASQ CNI-HOSTPORT-SETMARK; do
      iptables -w -t nat -S "$chain" >/dev/null 2>&1 && remove_chain nat "$chain" && n=$((n + 1))
    done
  fi
  ((n == 0)) || log "removed $n iptables rule(s)/chain(s) of $S_NET_NAME"
}

# remove_chain TABLE CHAIN: drops every jump to CHAIN, flushes and deletes it.
remove_chain() {
  local table=$1 chain=$2 rule
  while IFS= read -r rule; do
    [[ "$rule" == -A\ * && "$rule" =~ -j\ $chain( |$) ]] || continue
    eval "iptables -w -t $table -D ${rule#-A }" 2>/dev/null || true
  done < <(iptables -w -t "$table" -S 2>/dev/null)
  iptables -w -t "$table" -F "$chain" 2>/dev/null || true
  iptables -w -t "$table" -X "$chain" 2>/dev/null
}

cleanup_network() {
  local link
  if [[ -n "${S_BRIDGE:-}" ]] && ip link show "$S_BRIDGE" >/dev/null 2>&1; then
    # Host ends of veths whose netns we could not identify; deleting one end
    # destroys the pair.
    for link in $(ip -o link show master "$S_BRIDGE" 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
      ip link delete "$link" 2>/dev/null || true
    done
    ip link delete "$S_BRIDGE" && log "deleted bridge $S_BRIDGE"
  fi
  if [[ -n "${S_NET_NAME:-}" ]]; then
    rm -rf "/var/lib/cni/networks/$S_NET_NAME"
    rm -f /var/lib/cni/results/"$S_NET_NAME"-* 2>/dev/null || true
  fi
  # libcni's result cache (fixed path), e.g. cni-loopback-<id>-lo, for sandboxes
  # that never got a CNI DEL.
  local id
  for id in "$@"; do
    rm -f /var/lib/cni/results/*-"$id"-* 2>/dev/null || true
  done
}

# cgroup_root_dirs: every cgroup below the run's KUBELET_E2E_CGROUP_ROOT (a
# kubelet under test started with --cgroup-root set to it puts its pod cgroups
# there), deepest first.
cgroup_root_dirs() {
  [[ -n "${S_RUN_ID:-}" ]] || return 0
  local h
  for h in "$CGROUP_ROOT"/*/kubelet-e2e-"$S_RUN_ID"; do
    if [[ -d "$h" ]]; then find "$h" -type d; fi
  done | awk '{ print length($0) "\t" $0 }' | sort -rn | cut -f2-
}

cleanup_cgroups() {
  local dir ns h n=0
  while read -r dir; do
    [[ -n "$dir" ]] || continue
    if rmdir "$dir" 2>/dev/null; then n=$((n + 1)); else log "warning: cannot remove cgroup $dir"; fi
  done < <(cgroup_dirs_of "$@"; cgroup_root_dirs)
  # Namespace-level parents (/k8s.io, /default): only if empty, and only if this
  # run created them or no containerd is left on the host that could be using
  # them (runc re-creates a missing parent anyway). The second case covers two
  # overlapping runs, where the later one saw the earlier one's parent.
  local others=0
  # (ps, not pgrep: our own containerd may linger as a zombie until PID 1 reaps it.)
  ps -eo stat=,comm= | awk '$1 !~ /^Z/ && $2 == "containerd" { found = 1 } END { exit !found }' &&
    others=1
  if [[ -f "$DIR/.cgroups-before" ]]; then
    for ns in $(run_namespaces); do
      ((others)) && grep -qxF "$ns" "$DIR/.cgroups-before" && continue
      for h in "$CGROUP_ROOT"/*/; do
        [[ -d "$h$ns" ]] && rmdir "$h$ns" 2>/dev/null && n=$((n + 1))
      done
    done
  fi
  ((n == 0)) || log "removed $n cgroup dir(s)"
}

# best_effort CMD...: a cleanup step; its failure is reported, not fatal, so
# one stuck resource does not keep `down` from removing the others. (Inside a
# `||` list bash suspends errexit, so the step also runs past its own errors.)
best_effort() {
  "$@" || log "warning: $1 failed (exit $?); continuing"
}

cmd_down() {
  local ids=()
  if [[ ! -d "$DIR" ]]; then
    log "$DIR does not exist; nothing to tear down"
    return 0
  fi
  if [[ ! -e "$DIR/$MARKER" ]]; then
    [[ -z "$(ls -A "$DIR")" ]] || die "$DIR was not made by this script (no $MARKER); refusing to delete it"
    rmdir "$DIR"
    return 0
  fi
  unset "${!S_@}"
  state_load
  log "tearing down $DIR"
  while read -r id; do [[ -n "$id" ]] && ids+=("$id"); done < <(run_ids)

  if containerd_up; then
    if cri_available; then
      best_effort teardown_via_cri
    else
      log "protoc/HTTP2 curl unavailable: no CRI teardown, using ctr"
    fi
    best_effort teardown_via_ctr
  fi
  stop_pid "${S_CONTAINERD_PID:-}" "$DIR/config.toml" containerd
  stop_pid "${S_REGISTRY_PID:-}" "$DIR/registry/config.yml" docker-registry
  # A dead containerd leaves shims and containers behind: finish them off.
  best_effort sweep_processes "${ids[@]}"
  best_effort runc_force_delete "${ids[@]}"
  local sock_dir=${S_SOCK_DIR:-}
  [[ "$sock_dir" != "$DIR" ]] || sock_dir=''
  best_effort unmount_below "$DIR" "$sock_dir"
  best_effort cleanup_netns
  best_effort cleanup_iptables
  best_effort cleanup_network "${ids[@]}"
  best_effort cleanup_cgroups "${ids[@]}"
  if [[ -n "${S_BRIDGE:-}" ]] && ip link show "$S_BRIDGE" >/dev/null 2>&1; then
    log "warning: bridge $S_BRIDGE is still there"
  fi

  if awk -v p="$DIR/" 'index($2, p) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
    die "mounts remain below $DIR; not deleting it"
  fi
  if [[ -n "${S_SOCK_DIR:-}" && "$S_SOCK_DIR" == /run/kubelet-e2e-* ]]; then
    rm -rf "$S_SOCK_DIR"
  fi
  rm -rf "$DIR" || die "cannot remove $DIR"
  log "down done: $DIR removed"
}

main() {
  (($# >= 2)) || usage
  local cmd=$1
  DIR=$2
  shift 2
  WITH_REGISTRY=1
  FRESH=0
  while (($# > 0)); do
    case $1 in
      --fresh) FRESH=1 ;;
      --no-registry) WITH_REGISTRY=0 ;;
      --registry) WITH_REGISTRY=1 ;;
      *) usage ;;
    esac
    shift
  done
  [[ -n "$DIR" ]] || usage
  DIR=$(realpath -m -- "$DIR")
  [[ "$DIR" != / && "$DIR" != /root && "$DIR" != /tmp && "$DIR" != /home ]] || die "refusing DIR=$DIR"
  case $cmd in
    up)
      # Every failing command of `up` reports itself, even outside die(): -E
      # makes the trap reach functions and subshells. `down` goes without: it
      # is best effort and reports what it could not clean.
      set -E
      trap 'die "command failed (exit $?) at line $LINENO: $BASH_COMMAND"' ERR
      cmd_up
      ;;
    down) cmd_down ;;
    stop-runtime) cmd_stop_runtime ;;
    start-runtime) cmd_start_runtime ;;
    *) usage ;;
  esac
}

# Sourced (by crio-env.sh, which reuses the network, image and registry functions): define only.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  main "$@"
fi
