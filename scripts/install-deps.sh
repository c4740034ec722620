#!/usr/bin/env bash
# Installs everything the kubelet needs to build, run and be tested, from Debian 12 packages.
# Idempotent and non-interactive; run as root (or with sudo available).
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build pkg-config git clang-format ccache
  # libFuzzer targets: clang with its sanitizer and fuzzer runtimes
  clang libclang-rt-14-dev
  # libraries
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  nlohmann-json3-dev libyaml-cpp-dev libssl-dev libsystemd-dev libboost-dev libboost-system-dev
  prometheus-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev
  # runtime and test harness: containerd + runc + CNI, images built from busybox, a registry
  containerd runc containernetworking-plugins busybox-static docker-registry
  # htpasswd (bcrypt) for the registry that tests image pull secrets
  apache2-utils
  # CRI-O (binaries from ../shared/crio) runs its containers through conmon; xz unpacks it, jq
  # edits OCI configs in its runtime wrapper on restricted hosts
  conmon xz-utils jq
  iproute2 iptables curl ca-certificates procps util-linux etcd-server openssl
  # graceful node shutdown tests: a private D-Bus bus (dbus-daemon) and dbus-send to emit
  # logind's PrepareForShutdown
  dbus-daemon dbus-bin
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
# The Debian containerd package starts a system containerd under systemd where systemd runs; we
# start our own with private paths, so the system one is left alone.
echo "install-deps: done"
