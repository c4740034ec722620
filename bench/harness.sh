# Sourced by the bench/run-*.sh scripts: installs dependencies, builds the kubelet and the named
# benchmark targets, starts a private containerd (KUBELET_RUNTIME=crio: CRI-O) with the e2e
# harness under $1 (torn down when the calling script exits) and exports its KUBELET_E2E_*
# variables.
# Usage: source bench/harness.sh ENV_DIR TARGET...
bench_env_dir=$1
shift
scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" --target kubelet "$@"
# On disk as an installed binary is: the kernel keeps a file's dirty pages resident, and the
# kubelet hands its start-up code pages back once started (common/memory_trim.h).
sync "$BUILD_DIR/cmd/kubelet/kubelet"
HARNESS=$(test/e2e/harness/runtime-harness.sh)
# CRI-O's environment in a folder of its own (a containerd one may be left in the other).
case "$HARNESS" in */crio-env.sh) bench_env_dir=$bench_env_dir-crio ;; esac
bash "$HARNESS" up "$bench_env_dir" --fresh
# shellcheck disable=SC2064
trap "bash '$HARNESS' down '$bench_env_dir'" EXIT
set -a
# shellcheck disable=SC1091
source "$bench_env_dir/env"
set +a
