#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs every test: unit tests, then the end-to-end tests
# against a private containerd and a private CRI-O that CTest fixtures start and tear down, then
# a second build with clang, ASan and UBSan that runs the unit tests again and a short session
# of every libFuzzer target.
# Usage: scripts/test.sh [extra ctest args]   (BUILD_DIR overrides the build directory;
# FUZZ=0 skips the sanitized build and its runs; ThreadSanitizer: scripts/sanitize.sh tsan)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
FUZZ_BUILD_DIR=${FUZZ_BUILD_DIR:-$BUILD_DIR-fuzz}
# Upstream v1.28.7 control plane for the API-server-mode e2e tests (CTest fixture
# "controlplane", envtest's KUBEBUILDER_ASSETS convention). When the binaries are at hand the
# fixture must start: KUBELET_CP_REQUIRED=1 turns its SKIPPED into a failure.
if [ -d ../shared/k8s ]; then
  mkdir -p "$BUILD_DIR/k8s-bin"
  KUBEBUILDER_ASSETS=$(cd "$(../shared/k8s/unpack.sh "$BUILD_DIR/k8s-bin")" && pwd)
  export KUBEBUILDER_ASSETS
  export KUBELET_CP_REQUIRED=1
  # The CSI driver and sidecars (../shared/csi) beside them, for the persistent-volume suites.
  if [ -d ../shared/csi ]; then
    ../shared/csi/unpack.sh "$KUBEBUILDER_ASSETS" >/dev/null
    export KUBELET_CSI_REQUIRED=1
  fi
fi
# CRI-O v1.28.11 as the second runtime of the core e2e suites (CTest fixture "crio", tests
# <suite>_crio): when it is at hand the fixture must start, KUBELET_CRIO_REQUIRED=1 turns its
# SKIPPED into a failure.
if [ -d ../shared/crio ]; then
  export KUBELET_CRIO_REQUIRED=1
fi
source scripts/ccache-launcher.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${LAUNCHER[@]}"
cmake --build "$BUILD_DIR" -j"$(nproc)"

status=0
fuzz_build=
if [ "${FUZZ:-1}" != 0 ]; then
  # The fuzz build also builds and runs the unit tests: the libraries are compiled once, with ASan
  # and UBSan (and libFuzzer's coverage hooks, no-ops outside the fuzz targets), for both. -O1 and
  # line tables only: the sanitizers' reports keep file:line, and it compiles in about half the
  # time of -O2 -g. It compiles while the end-to-end tests below run, at the idle scheduling
  # class: those tests mostly wait on the runtime, and they keep the CPU whenever they want it.
  cmake -S . -B "$FUZZ_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=None \
    -DCMAKE_C_FLAGS="-O1 -gline-tables-only -DNDEBUG" \
    -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only -DNDEBUG" \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DKUBELET_FUZZ=ON \
    -DKUBELET_BUILD_TESTS=ON -DKUBELET_BUILD_BENCH=OFF "${LAUNCHER[@]}"
  idle=(nice -n 19)
  if command -v chrt >/dev/null && chrt --idle 0 true 2>/dev/null; then idle=(chrt --idle 0); fi
  # In a session of its own, so that an interrupted run (a CI timeout) takes the whole build
  # (cmake, ninja, the compilers) down with it.
  setsid "${idle[@]}" cmake --build "$FUZZ_BUILD_DIR" -j"$(nproc)" >"$FUZZ_BUILD_DIR/build.log" 2>&1 &
  fuzz_build=$!
  trap 'kill -- "-$fuzz_build" 2>/dev/null || true' EXIT
fi

main_status=0
(cd "$BUILD_DIR" && ctest --output-on-failure -j"$(nproc)" "$@") || main_status=$?
status=$main_status

if [ -n "$fuzz_build" ]; then
  if wait "$fuzz_build"; then
    (
      source scripts/sanitizer-env.sh asan "$FUZZ_BUILD_DIR"
      cd "$FUZZ_BUILD_DIR" && ctest --output-on-failure -L unit -j"$(nproc)"
    ) || status=$?
    (cd "$FUZZ_BUILD_DIR" && ctest --output-on-failure -L fuzz) || status=$?
  else
    echo "the sanitized (fuzz) build failed:" >&2
    tail -n 100 "$FUZZ_BUILD_DIR/build.log" >&2
    status=1
  fi
fi
# The names of the main run's failed tests once more, last, where a truncated log still shows them.
if [ "$main_status" != 0 ] && [ -f "$BUILD_DIR/Testing/Temporary/LastTestsFailed.log" ]; then
  echo "failed in $BUILD_DIR:" >&2
  sed 's/^/  /' "$BUILD_DIR/Testing/Temporary/LastTestsFailed.log" >&2
fi
exit "$status"
