#!/usr/bin/env bash
# ThreadSanitizer sees synchronization only in instrumented code. Debian's abseil is not
# instrumented, and absl::Mutex (which guards nearly all our shared state, and gRPC's through
# gpr_mu) synchronizes in its .so with plain atomics and futexes, so every access it orders
# would be reported as a race. This builds Debian's own abseil source (the installed version,
# its patches, soname and options.h) as shared libraries with -fsanitize=thread into DIR/lib;
# the TSan unit tests run with DIR/lib first on LD_LIBRARY_PATH, so our code and gRPC both use
# the instrumented absl. Nothing is installed system-wide.
# Usage: scripts/tsan-abseil.sh DIR   (a no-op when DIR/lib is already built for this version)
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
mkdir -p "$1"
DIR=$(cd "$1" && pwd)
JOBS=${JOBS:-2}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

version=$(dpkg-query -W -f='${source:Version}' libabsl-dev)
upstream=${version%-*}
if [ -f "$DIR/lib/.version" ] && [ "$(cat "$DIR/lib/.version")" = "$version" ]; then
  exit 0
fi

src="$DIR/src"
rm -rf "$src" "$DIR/build" "$DIR/lib"
mkdir -p "$src"
(
  cd "$src"
  for f in "abseil_${version}.dsc" "abseil_${upstream}.orig.tar.gz" \
           "abseil_${version}.debian.tar.xz"; do
    curl -fsSL --retry 3 -o "$f" "$MIRROR/pool/main/a/abseil/$f"
  done
  # Checks the files against the .dsc's checksums (the signature is not checked: no keyring).
  dpkg-source -x "abseil_${version}.dsc" abseil >/dev/null
)

LAUNCHER=()
if command -v ccache >/dev/null; then
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
# The flags of debian/rules' shared build, plus TSan.
nice -n 10 cmake -S "$src/abseil" -B "$DIR/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_STANDARD=17 \
  -DBUILD_SHARED_LIBS=ON -DBUILD_TESTING=OFF \
  -DCMAKE_C_FLAGS="-fsanitize=thread" -DCMAKE_CXX_FLAGS="-fsanitize=thread" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" "${LAUNCHER[@]}" >/dev/null
nice -n 10 cmake --build "$DIR/build" -j"$JOBS"
mkdir -p "$DIR/lib"
find "$DIR/build" -name 'libabsl_*.so.*' -exec cp -P {} "$DIR/lib/" \;
echo "$version" >"$DIR/lib/.version"
rm -rf "$src"
