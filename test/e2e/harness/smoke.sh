#!/usr/bin/env bash
# smoke.sh ENV_FILE: proves an environment made by `containerd-env.sh up` is fit
# for the e2e tests, independently of the project's own code.
#
# Always: the env file is complete, containerd answers, both images are there.
# With protoc and an HTTP/2 curl (see cri-lib.sh), through CRI as the kubelet
# would: a pod sandbox gets an IP from the run's subnet, a busybox httpd
# container in it serves the host over the CNI bridge, its log lands in the
# pod's log directory, the local registry's image pulls over plain HTTP and
# removes without touching the imported busybox, and everything tears down.
# Without them: a `ctr run` of busybox instead of the CRI pod.
set -euo pipefail

HARNESS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/cri-lib.sh
source "$HARNESS_DIR/cri-lib.sh"

PASSED=0
log() { printf '[smoke %s] %s\n' "$(date +%H:%M:%S.%3N)" "$*" >&2; }
ok() {
  PASSED=$((PASSED + 1))
  log "ok: $*"
}
fail() {
  log "FAIL: $*"
  echo "$PASSED passed, 1 failed"
  exit 1
}

ENV_FILE=${1:-${KUBELET_E2E_ENV_FILE:-}}
[[ -n "$ENV_FILE" && -f "$ENV_FILE" ]] || fail "no env file (usage: smoke.sh DIR/env)"

load_env() {
  local key value
  while IFS='=' read -r key value; do
    [[ "$key" =~ ^KUBELET_E2E_[A-Z0-9_]+$ ]] || continue
    printf -v "$key" '%s' "$value"
  done <"$ENV_FILE"
  for key in KUBELET_E2E_DIR KUBELET_E2E_RUNTIME_SOCK KUBELET_E2E_RUNTIME_ENDPOINT \
    KUBELET_E2E_CNI_BRIDGE KUBELET_E2E_CNI_SUBNET KUBELET_E2E_BUSYBOX_IMAGE KUBELET_E2E_PAUSE_IMAGE \
    KUBELET_E2E_CONTAINERD_PID KUBELET_E2E_SNAPSHOTTER; do
    [[ -n "${!key:-}" ]] || fail "$ENV_FILE lacks $key"
  done
  ok "env file complete"
}

CTR=()
check_containerd() {
  CTR=(ctr --address "$KUBELET_E2E_CONTAINERD_SOCK" -n k8s.io)
  "${CTR[@]}" version >/dev/null || fail "ctr version: containerd does not answer"
  ok "containerd answers on $KUBELET_E2E_CONTAINERD_SOCK"
  local images
  images=$("${CTR[@]}" images ls -q)
  grep -qxF "$KUBELET_E2E_BUSYBOX_IMAGE" <<<"$images" || fail "$KUBELET_E2E_BUSYBOX_IMAGE not imported"
  grep -qxF "$KUBELET_E2E_PAUSE_IMAGE" <<<"$images" || fail "$KUBELET_E2E_PAUSE_IMAGE not imported"
  ok "images present: $KUBELET_E2E_BUSYBOX_IMAGE $KUBELET_E2E_PAUSE_IMAGE"
}

# --- CRI path ----------------------------------------------------------------

POD_ID='' CTR_ID=''
cleanup_pod() {
  [[ -n "$CTR_ID" ]] && cri_call RuntimeService RemoveContainer "container_id: \"$CTR_ID\"" >/dev/null 2>&1
  if [[ -n "$POD_ID" ]]; then
    cri_call RuntimeService StopPodSandbox "pod_sandbox_id: \"$POD_ID\"" >/dev/null 2>&1
    cri_call RuntimeService RemovePodSandbox "pod_sandbox_id: \"$POD_ID\"" >/dev/null 2>&1
  fi
  return 0
}

# text_escape S: S as the inside of a protobuf text-format string literal.
text_escape() {
  local s=${1//\\/\\\\}
  printf '%s' "${s//\"/\\\"}"
}

sandbox_config() {
  cat <<EOF
metadata { name: "smoke" uid: "$UID_" namespace: "e2e-smoke" attempt: 0 }
hostname: "smoke"
log_directory: "$LOG_DIR"
labels { key: "io.kubelet-e2e/smoke" value: "true" }
linux { security_context { namespace_options { network: POD pid: CONTAINER ipc: POD } } }
EOF
}

cri_pod() {
  CRI_SOCK=$KUBELET_E2E_RUNTIME_SOCK
  trap cleanup_pod EXIT
  local reply ip state body i subnet=${KUBELET_E2E_CNI_SUBNET%/*}
  reply=$(cri_call RuntimeService Version '') || fail "CRI Version"
  ok "CRI Version: $(cri_field runtime_version <<<"$reply") api $(cri_field runtime_api_version <<<"$reply")"

  UID_=smoke-$$-$RANDOM
  LOG_DIR=$KUBELET_E2E_DIR/smoke-logs/$UID_
  mkdir -p "$LOG_DIR"
  reply=$(cri_call RuntimeService RunPodSandbox "config { $(sandbox_config) }") || fail "RunPodSandbox"
  POD_ID=$(cri_field pod_sandbox_id <<<"$reply")
  [[ -n "$POD_ID" ]] || fail "RunPodSandbox returned no id"
  reply=$(cri_call RuntimeService PodSandboxStatus "pod_sandbox_id: \"$POD_ID\"") || fail "PodSandboxStatus"
  ip=$(sed -n '/network {/,/}/p' <<<"$reply" | cri_field ip)
  [[ "${ip%.*}" == "${subnet%.*}" ]] || fail "pod IP '$ip' is not in $KUBELET_E2E_CNI_SUBNET"
  ok "pod sandbox ${POD_ID:0:12} runs with IP $ip (in $KUBELET_E2E_CNI_SUBNET)"

  # sh as PID 1 (pid namespace CONTAINER) ignores SIGTERM without a trap.
  local script="mkdir -p /www && echo smoke-ok-$UID_ > /www/index.html && echo serving && "
  script+="trap 'exit 0' TERM; httpd -f -p 8080 -h /www & wait"
  reply=$(cri_call RuntimeService CreateContainer "pod_sandbox_id: \"$POD_ID\"
    config {
      metadata { name: \"httpd\" attempt: 0 }
      image { image: \"$KUBELET_E2E_BUSYBOX_IMAGE\" }
      command: \"sh\" command: \"-c\" args: \"$(text_escape "$script")\"
      log_path: \"httpd/0.log\"
    }
    sandbox_config { $(sandbox_config) }") || fail "CreateContainer"
  CTR_ID=$(cri_field container_id <<<"$reply")
  cri_call RuntimeService StartContainer "container_id: \"$CTR_ID\"" >/dev/null || fail "StartContainer"
  reply=$(cri_call RuntimeService ContainerStatus "container_id: \"$CTR_ID\"") || fail "ContainerStatus"
  state=$(cri_field state <<<"$reply")
  [[ "$state" == CONTAINER_RUNNING ]] || fail "container state $state, want CONTAINER_RUNNING"
  ok "busybox container ${CTR_ID:0:12} running"

  for ((i = 0; i < 50; i++)); do
    body=$(curl -fsS --max-time 1 "http://$ip:8080/" 2>/dev/null) && break
    sleep 0.1
  done
  [[ "$body" == "smoke-ok-$UID_" ]] || fail "host could not fetch http://$ip:8080/ (got '${body:-nothing}')"
  ok "host reached httpd in the pod at http://$ip:8080/"

  grep -q serving "$LOG_DIR/httpd/0.log" || fail "container log $LOG_DIR/httpd/0.log lacks output"
  ok "container log written to the pod log directory (CRI log format)"

  cri_call RuntimeService StopContainer "container_id: \"$CTR_ID\" timeout: 10" >/dev/null || fail "StopContainer"
  reply=$(cri_call RuntimeService ContainerStatus "container_id: \"$CTR_ID\"") || fail "ContainerStatus"
  [[ "$(cri_field state <<<"$reply")" == CONTAINER_EXITED ]] || fail "container did not exit"
  [[ "$(cri_field exit_code <<<"$reply")" == "" || "$(cri_field exit_code <<<"$reply")" == 0 ]] ||
    fail "container exit code $(cri_field exit_code <<<"$reply"), want 0 (TERM trap)"
  ok "container stopped with exit code 0"

  cri_call RuntimeService RemoveContainer "container_id: \"$CTR_ID\"" >/dev/null || fail "RemoveContainer"
  CTR_ID=''
  cri_call RuntimeService StopPodSandbox "pod_sandbox_id: \"$POD_ID\"" >/dev/null || fail "StopPodSandbox"
  cri_call RuntimeService RemovePodSandbox "pod_sandbox_id: \"$POD_ID\"" >/dev/null || fail "RemovePodSandbox"
  POD_ID=''
  reply=$(cri_call RuntimeService ListPodSandbox '') || fail "ListPodSandbox"
  [[ -z "$(cri_all_fields id <<<"$reply")" ]] || fail "sandboxes remain after removal"
  ok "pod torn down"
  rm -rf "$LOG_DIR"
}

cri_registry_pull() {
  [[ -n "${KUBELET_E2E_REGISTRY:-}" ]] || {
    log "no registry in this environment; skipping the pull check"
    return 0
  }
  local ref=$KUBELET_E2E_REGISTRY/e2e/busybox:1.36 reply image_ref
  reply=$(cri_call ImageService PullImage "image { image: \"$ref\" }") || fail "CRI PullImage $ref"
  image_ref=$(cri_field image_ref <<<"$reply")
  ok "CRI pulled $ref over plain HTTP ($image_ref)"
  cri_call ImageService RemoveImage "image { image: \"$ref\" }" >/dev/null || fail "CRI RemoveImage $ref"
  reply=$(cri_call ImageService ListImages '') || fail "ListImages"
  grep -qF "\"$KUBELET_E2E_BUSYBOX_IMAGE\"" <<<"$reply" || fail "removing $ref also removed $KUBELET_E2E_BUSYBOX_IMAGE"
  ! grep -qF "$image_ref" <<<"$reply" || fail "$ref still listed after RemoveImage"
  ok "CRI removed $ref; $KUBELET_E2E_BUSYBOX_IMAGE untouched"
}

# --- ctr fallback ------------------------------------------------------------

ctr_run() {
  local out name=smoke-$$
  out=$("${CTR[@]}" run --rm --snapshotter "$KUBELET_E2E_SNAPSHOTTER" "$KUBELET_E2E_BUSYBOX_IMAGE" "$name" \
    sh -c 'echo smoke-ok') || fail "ctr run of $KUBELET_E2E_BUSYBOX_IMAGE"
  [[ "$out" == smoke-ok ]] || fail "ctr run printed '$out'"
  ok "ctr run of $KUBELET_E2E_BUSYBOX_IMAGE works"
}

main() {
  load_env
  check_containerd
  if cri_available; then
    cri_pod
    cri_registry_pull
  else
    log "protoc or HTTP/2 curl missing: checking with ctr only"
    ctr_run
  fi
  echo "$PASSED passed, 0 failed"
}

main
