#!/usr/bin/env bash
# Builds the kubelet and the API pods benchmark, starts a private containerd and a private
# v1.28.7 control plane with the e2e harnesses (binaries from ../shared/k8s, which also holds the
# upstream kubelet the benchmark compares against), runs the benchmark (default N = 30 110) and
# tears both down.
# Usage: bench/run-api-pods.sh [N ...]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d ../shared/k8s ] || { echo "../shared/k8s (upstream v1.28.7 binaries) is missing" >&2; exit 2; }
source bench/harness.sh "${BENCH_ENV_DIR:-/var/tmp/kubelet-api-pods-bench-env}" api_pods_bench
mkdir -p "$BUILD_DIR/k8s-bin"
KUBEBUILDER_ASSETS=$(cd "$(../shared/k8s/unpack.sh "$BUILD_DIR/k8s-bin")" && pwd)
export KUBEBUILDER_ASSETS KUBELET_CP_REQUIRED=1
CP_DIR=${BENCH_CP_DIR:-/var/tmp/kubelet-api-pods-bench-cp}
CP=test/e2e/harness/controlplane-env.sh
bash "$CP" up "$CP_DIR" --fresh
# shellcheck disable=SC2064
trap "bash '$CP' down '$CP_DIR'; bash '$HARNESS' down '$bench_env_dir'" EXIT
export KUBELET_CP_ENV_FILE=$CP_DIR/env
"$BUILD_DIR/bench/api_pods_bench" "$BUILD_DIR/cmd/kubelet/kubelet" "$KUBEBUILDER_ASSETS/kubelet" "$@"
