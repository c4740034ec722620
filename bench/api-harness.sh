# Sourced by the API-server-mode bench/run-*.sh scripts: bench/harness.sh (dependencies, build of
# the kubelet and the named targets, a private containerd under $1) plus a private v1.28.7
# control plane under $2 from ../shared/k8s (which also holds the upstream kubelet the
# benchmarks compare against, exported as UPSTREAM_KUBELET); both torn down when the calling
# script exits.
# Usage: source bench/api-harness.sh ENV_DIR CP_DIR TARGET...
[ -d ../shared/k8s ] || { echo "../shared/k8s (upstream v1.28.7 binaries) is missing" >&2; exit 2; }
api_cp_dir=$2
api_env_dir=$1
shift 2
source bench/harness.sh "$api_env_dir" "$@"
mkdir -p "$BUILD_DIR/k8s-bin"
KUBEBUILDER_ASSETS=$(cd "$(../shared/k8s/unpack.sh "$BUILD_DIR/k8s-bin")" && pwd)
export KUBEBUILDER_ASSETS KUBELET_CP_REQUIRED=1
CP=test/e2e/harness/controlplane-env.sh
bash "$CP" up "$api_cp_dir" --fresh
# shellcheck disable=SC2064
trap "bash '$CP' down '$api_cp_dir'; bash '$HARNESS' down '$bench_env_dir'" EXIT
export KUBELET_CP_ENV_FILE=$api_cp_dir/env
export UPSTREAM_KUBELET=$KUBEBUILDER_ASSETS/kubelet
