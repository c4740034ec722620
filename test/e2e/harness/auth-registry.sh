#!/usr/bin/env bash
# auth-registry.sh: a private registry that demands credentials (htpasswd basic auth), beside a
# running containerd harness, for the image pull secret tests.
#
#   auth-registry.sh up DIR ENV_FILE    start it under DIR; ENV_FILE is the containerd harness's
#                                       DIR/env (its images, its containerd's certs.d)
#   auth-registry.sh down DIR ENV_FILE  stop it and remove its hosts.toml from the harness
#
# `up` copies the harness registry's busybox to <registry>/e2e/private:1.36 (with credentials)
# and prints KEY=VALUE lines on stdout (also left in DIR/env):
#   AUTH_REGISTRY=127.0.0.1:<port>  AUTH_REGISTRY_IMAGE=<registry>/e2e/private:1.36
#   AUTH_REGISTRY_USER=...  AUTH_REGISTRY_PASSWORD=... (random per run)
# containerd reaches it over plain HTTP through a hosts.toml in the harness's certs.d, which it
# reads at pull time. Anonymous requests get 401 Unauthorized.
#
# Requirements: docker-registry, htpasswd (apache2-utils), curl, jq, and a containerd harness
# that was started with its registry (the image is copied from there).
set -euo pipefail

HARNESS_NAME=auth-registry
# shellcheck source=SCRIPTDIR/harness-lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/harness-lib.sh"

[[ $# -eq 3 ]] || die "usage: auth-registry.sh up|down DIR ENV_FILE"
CMD=$1
DIR=$2
ENV_FILE=$3
[[ -f "$ENV_FILE" ]] || die "no harness env file $ENV_FILE"
HARNESS_DIR=$(sed -n 's/^KUBELET_E2E_DIR=//p' "$ENV_FILE")
[[ -n "$HARNESS_DIR" && -d "$HARNESS_DIR" ]] || die "KUBELET_E2E_DIR missing from $ENV_FILE"
readonly REPO=e2e/private

down() {
  local pid registry
  if [[ -f "$DIR/pid" ]]; then
    pid=$(cat "$DIR/pid")
    if [[ -n "$pid" ]] && grep -qF "$DIR/config.yml" "/proc/$pid/cmdline" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
  fi
  if [[ -f "$DIR/env" ]]; then
    registry=$(sed -n 's/^AUTH_REGISTRY=//p' "$DIR/env")
    [[ -n "$registry" ]] && rm -rf "${HARNESS_DIR:?}/certs.d/$registry"
  fi
  rm -rf "${DIR:?}"
}

free_port() {
  local p
  for p in $(shuf -i 20000-29999 -n 50); do
    if ! (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

up() {
  local src port pid manifest digest
  src=$(sed -n 's/^KUBELET_E2E_REGISTRY=//p' "$ENV_FILE")
  [[ -n "$src" ]] || die "the harness has no registry (started with --no-registry?)"
  command -v jq >/dev/null || die "jq missing (Debian: jq)"
  command -v docker-registry >/dev/null || die "docker-registry missing (Debian: docker-registry)"
  command -v htpasswd >/dev/null || die "htpasswd missing (Debian: apache2-utils)"
  down
  mkdir -p "$DIR/data"
  USER_NAME=e2e-puller
  PASSWORD=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
  htpasswd -Bbn "$USER_NAME" "$PASSWORD" >"$DIR/htpasswd" 2>/dev/null || die "htpasswd failed"
  port=$(free_port) || die "no free port"
  REGISTRY=127.0.0.1:$port
  cat >"$DIR/config.yml" <<EOF
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $DIR/data
http:
  addr: $REGISTRY
  secret: auth-registry-$port
auth:
  htpasswd:
    realm: kubelet-e2e
    path: $DIR/htpasswd
EOF
  cat >"$DIR/env" <<EOF
AUTH_REGISTRY=$REGISTRY
AUTH_REGISTRY_IMAGE=$REGISTRY/$REPO:1.36
AUTH_REGISTRY_USER=$USER_NAME
AUTH_REGISTRY_PASSWORD=$PASSWORD
EOF
  setsid docker-registry serve "$DIR/config.yml" </dev/null >>"$DIR/registry.log" 2>&1 &
  pid=$!
  echo "$pid" >"$DIR/pid"
  for _ in $(seq 150); do
    kill -0 "$pid" 2>/dev/null || { tail -n 20 "$DIR/registry.log" >&2; die "docker-registry exited"; }
    # 401 without credentials is the sign it is up with auth on.
    [[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$REGISTRY/v2/")" == 401 ]] && break
    sleep 0.1
  done
  [[ "$(curl -s -o /dev/null -w '%{http_code}' -u "$USER_NAME:$PASSWORD" "http://$REGISTRY/v2/")" == 200 ]] ||
    die "registry on $REGISTRY does not accept its credentials (see $DIR/registry.log)"
  # The harness registry's busybox, blob by blob, then its manifest.
  mkdir -p "$DIR/blobs"
  manifest=$DIR/blobs/manifest.json
  curl -fsS -H 'Accept: application/vnd.oci.image.manifest.v1+json' -o "$manifest" \
    "http://$src/v2/e2e/busybox/manifests/1.36" || die "cannot read the harness image from $src"
  for digest in $(jq -r '.config.digest, .layers[].digest' "$manifest"); do
    curl -fsS -o "$DIR/blobs/${digest#sha256:}" "http://$src/v2/e2e/busybox/blobs/$digest" ||
      die "cannot read blob $digest from $src"
    push_blob "$DIR/blobs/${digest#sha256:}" "$digest" "$REPO" "$USER_NAME:$PASSWORD"
  done
  curl -fsS -u "$USER_NAME:$PASSWORD" -X PUT \
    -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' \
    --data-binary @"$manifest" -o /dev/null "http://$REGISTRY/v2/$REPO/manifests/1.36" ||
    die "manifest PUT failed"
  mkdir -p "$HARNESS_DIR/certs.d/$REGISTRY"
  cat >"$HARNESS_DIR/certs.d/$REGISTRY/hosts.toml" <<EOF
server = "http://$REGISTRY"

[host."http://$REGISTRY"]
  capabilities = ["pull", "resolve"]
EOF
  log "registry with basic auth on $REGISTRY holds $REGISTRY/$REPO:1.36"
  cat "$DIR/env"
}

case "$CMD" in
  up) up ;;
  down) down ;;
  *) die "unknown command $CMD" ;;
esac
