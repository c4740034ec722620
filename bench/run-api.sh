#!/usr/bin/env bash
# Builds the kubelet and the API/probe benchmark, starts a private containerd with the e2e
# harness, runs the benchmark (default N = 110 pods for /pods and /stats, P = 50 probed pods) and
# tears containerd down.
# Usage: bench/run-api.sh [N [P]]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" --target kubelet api_bench
ENV_DIR=${BENCH_ENV_DIR:-/var/tmp/kubelet-api-bench-env}
HARNESS=test/e2e/harness/containerd-env.sh
bash "$HARNESS" up "$ENV_DIR" --fresh
trap 'bash "$HARNESS" down "$ENV_DIR"' EXIT
set -a
# shellcheck disable=SC1091
source "$ENV_DIR/env"
set +a
"$BUILD_DIR/bench/api_bench" "$BUILD_DIR/cmd/kubelet/kubelet" "$@"
