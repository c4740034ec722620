#!/usr/bin/env bash
# Builds the kubelet and the streaming benchmark, starts a private containerd and a private
# v1.28.7 control plane (as bench/run-api-pods.sh), and prints `kubectl exec -- true` latency
# and `kubectl port-forward` download throughput through our kubelet and the upstream one in
# the same run, each against the runtime's streaming server used directly with crictl.
# Usage: bench/run-streaming.sh [ROUNDS (default 20)] [MiB (default 64)] [DOWNLOADS (default 3)]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/api-harness.sh "${BENCH_ENV_DIR:-/var/tmp/kubelet-stream-bench-env}" \
  "${BENCH_CP_DIR:-/var/tmp/kubelet-stream-bench-cp}" streaming_bench
"$BUILD_DIR/bench/streaming_bench" "$BUILD_DIR/cmd/kubelet/kubelet" "$UPSTREAM_KUBELET" "$@"
