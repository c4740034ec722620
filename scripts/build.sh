#!/usr/bin/env bash
# Installs the dependencies and builds the kubelet binary (build/cmd/kubelet/kubelet).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
source scripts/ccache-launcher.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${LAUNCHER[@]}"
cmake --build "$BUILD_DIR" -j"$(nproc)" --target kubelet
