#!/usr/bin/env bash
# Builds the kubelet and the API/probe benchmark, starts a private containerd with the e2e
# harness, runs the benchmark (default N = 110 pods for /pods and /stats, P = 50 probed pods) and
# tears containerd down.
# Usage: bench/run-api.sh [N [P]]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/harness.sh "${BENCH_ENV_DIR:-/var/tmp/kubelet-api-bench-env}" api_bench
"$BUILD_DIR/bench/api_bench" "$BUILD_DIR/cmd/kubelet/kubelet" "$@"
