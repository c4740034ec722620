#!/usr/bin/env bash
# Builds the kubelet and the CSI volumes benchmark, starts a private containerd and a private
# v1.28.7 control plane with the e2e harnesses (binaries from ../shared/k8s, which also holds the
# upstream kubelet the benchmark compares against; the CSI driver and sidecars from
# ../shared/csi), runs the benchmark (default N = 1 10) and tears both down.
# Usage: bench/run-csi-volumes.sh [N ...]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d ../shared/csi ] || { echo "../shared/csi (the CSI driver and sidecars) is missing" >&2; exit 2; }
source bench/api-harness.sh "${BENCH_ENV_DIR:-/var/tmp/kubelet-csi-volumes-bench-env}" \
  "${BENCH_CP_DIR:-/var/tmp/kubelet-csi-volumes-bench-cp}" csi_volumes_bench
../shared/csi/unpack.sh "$KUBEBUILDER_ASSETS" >/dev/null
"$BUILD_DIR/bench/csi_volumes_bench" "$BUILD_DIR/cmd/kubelet/kubelet" "$UPSTREAM_KUBELET" "$@"
