#!/usr/bin/env bash
# Builds the kubelet and the pod start benchmark, starts a private containerd with the e2e
# harness, runs the benchmark (default N = 30 110) and tears containerd down.
# Usage: bench/run-pod-start.sh [N ...]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/harness.sh "${BENCH_ENV_DIR:-/var/tmp/kubelet-bench-env}" pod_start_bench
"$BUILD_DIR/bench/pod_start_bench" "$BUILD_DIR/cmd/kubelet/kubelet" "$@"
