# Sourced, not run: `source scripts/sanitizer-env.sh asan|tsan BUILD_DIR` exports the runtime
# options the sanitized unit tests run with (scripts/sanitize.sh, and scripts/test.sh for the unit
# tests it builds with the fuzz targets). Every report fails the test that produced it, with a
# symbolized stack. For tsan, BUILD_DIR/abseil/lib (scripts/tsan-abseil.sh) goes first on
# LD_LIBRARY_PATH.
_sanitizer_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case "$1" in
  asan)
    export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:detect_odr_violation=2"
    export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
    ;;
  tsan)
    LD_LIBRARY_PATH="$(cd "$2/abseil/lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export LD_LIBRARY_PATH
    export TSAN_OPTIONS="halt_on_error=0:second_deadlock_stack=1:history_size=4:suppressions=$_sanitizer_root/scripts/tsan.supp:print_suppressions=0"
    ;;
  *)
    echo "sanitizer-env.sh: asan or tsan" >&2
    return 2
    ;;
esac
unset _sanitizer_root
