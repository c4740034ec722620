#!/usr/bin/env bash
# Runs every libFuzzer target (or those named) for a given time each and prints executions and
# crashes per target. Builds the clang fuzz tree first (see fuzz/CMakeLists.txt).
# Usage: bench/fuzz.sh SECONDS [target...]     e.g. bench/fuzz.sh 600 http_request
# Each target works on a copy of its seed corpus under $FUZZ_BUILD_DIR/corpus-long/<name>;
# crash inputs land in $FUZZ_BUILD_DIR/artifacts/<name>/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:?usage: bench/fuzz.sh SECONDS [target...]}
shift
FUZZ_BUILD_DIR=${FUZZ_BUILD_DIR:-build-fuzz}
cmake -S . -B "$FUZZ_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DKUBELET_FUZZ=ON \
  -DKUBELET_BUILD_TESTS=OFF -DKUBELET_BUILD_BENCH=OFF >/dev/null
cmake --build "$FUZZ_BUILD_DIR" --target fuzzers -j"$(nproc)" >/dev/null
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/*_fuzzer.cc; do t=$(basename "$f" _fuzzer.cc); targets+=("$t"); done
fi
printf '%-16s %8s %12s %10s %8s\n' target seconds executions exec/s crashes
fail=0
for t in "${targets[@]}"; do
  bin="$FUZZ_BUILD_DIR/fuzz/${t}_fuzzer"
  work="$FUZZ_BUILD_DIR/corpus-long/$t"
  art="$FUZZ_BUILD_DIR/artifacts/$t"
  mkdir -p "$work" "$art"
  if [ -d "fuzz/corpus/$t" ]; then cp -rn "fuzz/corpus/$t/." "$work/"; fi
  log="$FUZZ_BUILD_DIR/fuzz-$t.log"
  rc=0
  "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$art/" "$work" >"$log" 2>&1 || rc=$?
  execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo 0)
  rate=$(grep -oE 'stat::average_exec_per_sec: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo 0)
  crashes=$(find "$art" -type f | wc -l)
  printf '%-16s %8s %12s %10s %8s\n' "$t" "$seconds" "$execs" "$rate" "$crashes"
  if [ "$rc" != 0 ] || [ "$crashes" != 0 ]; then fail=1; echo "  see $log"; fi
done
exit "$fail"
