#!/usr/bin/env bash
# Builds the kubelet and the API pods benchmark, starts a private containerd and a private
# v1.28.7 control plane with the e2e harnesses (binaries from ../shared/k8s, which also holds the
# upstream kubelet the benchmark compares against), runs the benchmark (default N = 30 110) and
# tears both down.
# Usage: bench/run-api-pods.sh [N ...]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/api-harness.sh "${BENCH_ENV_DIR:-/var/tmp/kubelet-api-pods-bench-env}" \
  "${BENCH_CP_DIR:-/var/tmp/kubelet-api-pods-bench-cp}" api_pods_bench
"$BUILD_DIR/bench/api_pods_bench" "$BUILD_DIR/cmd/kubelet/kubelet" "$UPSTREAM_KUBELET" "$@"
