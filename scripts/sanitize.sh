#!/usr/bin/env bash
# Builds the libraries and the unit tests with sanitizers (clang) and runs the unit tests (CTest
# label `unit`; a sanitized build has no end-to-end tests and no benchmarks).
#   scripts/sanitize.sh asan [extra ctest args]   AddressSanitizer (with LeakSanitizer) + UBSan,
#                                                 in build-asan
#   scripts/sanitize.sh tsan [extra ctest args]   ThreadSanitizer, in build-tsan (first builds an
#                                                 instrumented abseil: scripts/tsan-abseil.sh)
# BUILD_DIR overrides the build directory; JOBS the build's parallelism (default 2). Any report
# fails the test that produced it.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

usage() { echo "usage: $0 asan|tsan [extra ctest args]" >&2; exit 2; }
[ $# -ge 1 ] || usage
kind=$1
shift
case "$kind" in
  asan) sanitize="address,undefined" ;;
  tsan) sanitize="thread" ;;
  *) usage ;;
esac

scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build-$kind}
JOBS=${JOBS:-2}
LAUNCHER=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT}
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
if [ "$kind" = tsan ]; then
  JOBS=$JOBS scripts/tsan-abseil.sh "$BUILD_DIR/abseil"
fi
nice -n 10 cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DKUBELET_SANITIZE="$sanitize" \
  -DKUBELET_BUILD_TESTS=ON -DKUBELET_BUILD_BENCH=OFF "${LAUNCHER[@]}"
nice -n 10 cmake --build "$BUILD_DIR" -j"$JOBS"

# shellcheck source=scripts/sanitizer-env.sh
source scripts/sanitizer-env.sh "$kind" "$BUILD_DIR"
cd "$BUILD_DIR"
ctest --output-on-failure -L unit -j"$(nproc)" "$@"
