#!/usr/bin/env bash
# scripts/fuzz.sh [TARGET...] — `make fuzz`: build tests/fuzz's targets with clang, libFuzzer,
# AddressSanitizer and UBSan into build-fuzz/, then run each target (all of them, or those named)
# for FUZZ_SECONDS seconds (default 60), one after the other (a fuzzer uses one core).
# Each run starts from the committed seed corpus and regressions and writes the new inputs it
# finds into build-fuzz/fuzz/TARGET/corpus/ (a scratch folder: the committed corpus is never
# touched) and any crash, leak, timeout or out-of-memory input into build-fuzz/fuzz/TARGET/crashes/;
# one line per run is appended to build-fuzz/fuzz/summary.txt.
# Exit status 1 if any target found one. tests/fuzz/README.md says how to turn one into a
# regression input. Not part of make test (which replays the corpus with g++ and needs no clang).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
build=${FUZZ_BUILD:-build-fuzz}
jobs=${JOBS:-$(nproc)}
scripts/deps.sh fuzz
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  # shellcheck disable=SC2086  # CMAKE_FLAGS holds several words on purpose
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 -DZT_FUZZ=ON \
    ${CMAKE_FLAGS:-}
fi
all=(checkpoint_manifest checkpoint_read cli ds_config memory_trace store_request text_file)
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=("${all[@]}")
# The largest input each target is given: room for several times its largest seed, small enough
# that one execution stays well under a millisecond or two.
declare -A max_len=([checkpoint_manifest]=16384 [checkpoint_read]=65536 [cli]=2048 [ds_config]=8192
                    [memory_trace]=32768 [store_request]=65536 [text_file]=8192)
for t in "${targets[@]}"; do
  [[ -n "${max_len[$t]:-}" ]] || { echo "fuzz: no target '$t' (targets: ${all[*]})" >&2; exit 2; }
done
cmake --build "$build" -j "$jobs" --target "${targets[@]/#/fuzz-}"
failed=()
for t in "${targets[@]}"; do
  work="$build/fuzz/$t"
  mkdir -p "$work/corpus" "$work/crashes"
  echo "fuzz: $t for $seconds s (log: $work/log.txt)"
  # -rss_limit_mb: the whole process; -malloc_limit_mb: any single allocation (a size field
  # trusted before the bytes arrived); -timeout: one input (a hang); -close_fd_mask=1: no stdout
  # (the command-line target prints --help).
  status=0
  "$build/bin/fuzz-$t" -max_total_time="$seconds" -max_len="${max_len[$t]}" -rss_limit_mb=2048 \
    -malloc_limit_mb=64 -timeout=10 -close_fd_mask=1 -print_final_stats=1 -artifact_prefix="$work/crashes/" \
    "$work/corpus" "tests/fuzz/corpus/$t" "tests/fuzz/regressions/$t" >"$work/log.txt" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log.txt")
  # libFuzzer's last status line: edges covered and the corpus it holds (inputs/bytes)
  cov=$(grep -o 'cov: [0-9]*' "$work/log.txt" | tail -n 1)
  corp=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$work/log.txt" | tail -n 1)
  found=$(find "$work/crashes" -type f | wc -l)
  echo "fuzz: $t: $seconds s, exit $status, ${execs:-?} executions, ${cov:-cov: ?}, ${corp:-corp: ?}," \
    "$(find "$work/corpus" -type f | wc -l) new inputs kept, $found failing inputs" | tee -a "$build/fuzz/summary.txt"
  if [[ $status -ne 0 || $found -gt 0 ]]; then
    failed+=("$t")
    grep -m 3 -E "^==[0-9]+==ERROR|runtime error|fuzz target:|uncaught exception|Test unit written" "$work/log.txt" || true
  fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz: inputs that fail: ${failed[*]} (see $build/fuzz/TARGET/crashes/ and tests/fuzz/README.md)" >&2
  exit 1
fi
echo "fuzz: no failing input in ${#targets[@]} targets"
