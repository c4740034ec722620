#!/usr/bin/env bash
# Builds the kubelet and the side-by-side benchmark, starts a private containerd with the e2e
# harness and runs, one after the other on it, the raw CRI floor, the upstream v1.28.7 kubelet
# (from ../shared/k8s, or $UPSTREAM_KUBELET) and ours in standalone mode with the same static
# pods (default N = 30 110), then tears containerd down. Without an upstream binary it prints
# our figures and says which are missing.
# Usage: bench/run-side-by-side.sh [N ...]   (KUBELET_RUNTIME=crio: the same on CRI-O)
# Env: IDLE_SECONDS (60), SETTLE_SECONDS (10), RESTARTS (5), REQUESTS (20).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/harness.sh "${BENCH_ENV_DIR:-/var/tmp/kubelet-side-by-side-bench-env}" \
  side_by_side_bench
upstream=${UPSTREAM_KUBELET:-}
if [ -z "$upstream" ] && [ -x ../shared/k8s/unpack.sh ]; then
  mkdir -p "$BUILD_DIR/k8s-bin"
  upstream=$(cd "$(../shared/k8s/unpack.sh "$BUILD_DIR/k8s-bin")" && pwd)/kubelet
fi
[ -n "$upstream" ] || echo "no upstream kubelet (../shared/k8s is missing): its figures will be missing" >&2
"$BUILD_DIR/bench/side_by_side_bench" "$BUILD_DIR/cmd/kubelet/kubelet" "${upstream:--}" "$@"
