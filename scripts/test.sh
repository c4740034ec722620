#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs every test: unit tests, then the end-to-end tests
# against a private containerd that the CTest fixture starts and tears down.
# Usage: scripts/test.sh [extra ctest args]   (BUILD_DIR overrides the build directory)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$BUILD_DIR" -j"$(nproc)"
cd "$BUILD_DIR"
ctest --output-on-failure -j"$(nproc)" "$@"
