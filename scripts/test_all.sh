#!/usr/bin/env bash
# scripts/test_all.sh — what `make test` runs, phase by phase, each one timed: install what is
# missing (scripts/deps.sh), configure (once), build, every test but the `full` matrix (CTest, JOBS
# at a time), the GPU build check, the Doxygen reference (warnings are errors) and the notebooks.
# It stops at the first phase that fails, and in either case ends with the table of phases, the
# test-seconds by label and the ten slowest tests (scripts/test_report.py), so a slow or failing
# machine says where its time went. Environment: BUILD (default build), JOBS (compilers at a time,
# default nproc), TEST_JOBS (tests and notebooks at a time, default 2 x JOBS: see the Makefile),
# CMAKE_FLAGS (for the first configure); the Makefile passes its own.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
jobs=${JOBS:-$(nproc)}
test_jobs=${TEST_JOBS:-$((2 * jobs))}
export JOBS=$jobs TEST_JOBS=$test_jobs
phases=$(mktemp)
trap 'rm -f "$phases"' EXIT

# phase NAME COMMAND...: run it, append NAME, seconds and exit status to the phases file.
phase() {
  local name=$1; shift
  local start end rc
  start=$(date +%s.%N)
  "$@"; rc=$?
  end=$(date +%s.%N)
  printf '%s\t%s\t%d\n' "$name" "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')" "$rc" >>"$phases"
  return $rc
}

configure() {
  [[ -f "$build/CMakeCache.txt" ]] && return 0
  # shellcheck disable=SC2086 # CMAKE_FLAGS is a list of flags
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release ${CMAKE_FLAGS:-}
}

run_tests() {
  mkdir -p "$build/test-report"
  rm -f "$build/test-report/junit.xml"
  ctest --test-dir "$build" --output-on-failure -j "$test_jobs" -LE full --output-junit test-report/junit.xml
}

report() {
  echo
  if [[ -x /usr/bin/python3 ]]; then
    /usr/bin/python3 scripts/test_report.py "$build" "$phases"
  else
    echo "make test: phases (seconds):"; cat "$phases"
  fi
}

status=0
phase install scripts/deps.sh &&
  phase configure configure &&
  phase build cmake --build "$build" -j "$jobs" &&
  phase ctest run_tests &&
  phase gpu-build-check scripts/check_gpu_build.sh "$build" &&
  phase doxygen make --no-print-directory BUILD="$build" doxygen &&
  phase notebooks env JOBS="$test_jobs" scripts/run_notebooks.sh "$build" || status=$?
report
exit $status
