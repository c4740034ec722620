#!/usr/bin/env bash
# Builds the kubelet and the configMap update benchmark, starts a private containerd and a
# private v1.28.7 control plane (as bench/run-api-pods.sh), and prints how long a configMap
# update takes to reach the file in a running pod, against its arrival on a watch, for our
# kubelet and the upstream one in the same run.
# Usage: bench/run-configmap-update.sh [ROUNDS (default 5)]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/api-harness.sh "${BENCH_ENV_DIR:-/var/tmp/kubelet-cm-bench-env}" \
  "${BENCH_CP_DIR:-/var/tmp/kubelet-cm-bench-cp}" configmap_update_bench
"$BUILD_DIR/bench/configmap_update_bench" "$BUILD_DIR/cmd/kubelet/kubelet" "$UPSTREAM_KUBELET" "$@"
