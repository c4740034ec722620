#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs the kubelet in standalone mode: builds it, starts a
# private containerd (+ runc, CNI bridge, busybox and pause images) with the test harness, and
# runs the kubelet in the foreground on examples/kubelet-config.yaml with the static pods in
# examples/static-pods. Ctrl-C stops the kubelet and tears containerd down.
# KUBELET_RUNTIME=crio runs the same on a private CRI-O v1.28 instead (from ../shared/crio; its
# README lists the host packages: conmon, runc, containernetworking-plugins).
# Extra arguments are passed to the kubelet (e.g. --v=2).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

scripts/build.sh
RUN_DIR=${KUBELET_RUN_DIR:-/var/tmp/kubelet-standalone}
HARNESS=$(test/e2e/harness/runtime-harness.sh)
bash "$HARNESS" down "$RUN_DIR" >/dev/null 2>&1 || true
bash "$HARNESS" up "$RUN_DIR"
trap 'bash "$HARNESS" down "$RUN_DIR"' EXIT
# shellcheck disable=SC1091
source "$RUN_DIR/env"
if [ -n "${KUBELET_E2E_SKIPPED:-}" ]; then
  echo "run-standalone: the runtime cannot run here: $KUBELET_E2E_SKIPPED" >&2
  exit 1
fi

sed -e "s|@STATIC_POD_PATH@|$ROOT/examples/static-pods|" \
    -e "s|@RUNTIME_ENDPOINT@|$KUBELET_E2E_RUNTIME_ENDPOINT|" \
    examples/kubelet-config.yaml > "$RUN_DIR/kubelet-config.yaml"

echo "run-standalone: kubelet config $RUN_DIR/kubelet-config.yaml; Ctrl-C to stop"
set +e
"${BUILD_DIR:-build}/cmd/kubelet/kubelet" --config "$RUN_DIR/kubelet-config.yaml" "$@"
rc=$?
set -e
echo "run-standalone: kubelet exited with $rc"
exit "$rc"
