# Sourced by the build scripts: sets LAUNCHER to the CMake arguments that compile through
# ccache when it is installed (empty otherwise), so a rebuild, or a build in another checkout or
# build directory, reuses what an earlier one compiled.
LAUNCHER=()
if command -v ccache >/dev/null; then
  # Paths under the checkout are hashed relative to it, so a checkout in another folder (or
  # another build directory) reuses what an earlier build compiled. With debug info ccache also
  # hashes the working directory (the build folder) unless told not to; the objects then name
  # the folder they were first compiled in, which only a debugger looking for sources notices.
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(pwd)}
  export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
