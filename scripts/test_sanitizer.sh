#!/usr/bin/env bash
# scripts/test_sanitizer.sh address|thread BUILD [CTEST ARGS...] — run the tests of a sanitizer
# build (make test-asan, make test-tsan) and fail on any sanitizer report, wherever it happened.
#
# Why the reports go to files: the tests start programs, and the programs start their ranks as
# processes (zero-train --world-size N, zero-launch). A report in a rank kills that rank, but the
# exit status the test sees can hide it (a launcher that reports "rank 1 failed" and a test that
# expects a failure look the same; a crash in a child that a test only expects to end). Every
# process of the run therefore writes its reports to BUILD/sanitizer-logs/KIND.PID (log_path), and
# the run fails if any file is there after ctest, whatever ctest said. Files also keep reports out
# of the programs' stderr, which many tests compare line by line.
set -euo pipefail
kind=$1
build=$2
shift 2
root=$(realpath "$(dirname "$0")/..")
rm -rf "$build/sanitizer-logs"
mkdir -p "$build/sanitizer-logs"
logs=$(realpath "$build/sanitizer-logs")  # absolute: the tests run programs in other folders

if [[ "$kind" == address ]]; then
  # halt_on_error: the first report ends the process (non-zero), never a run that limps on.
  # detect_leaks: LeakSanitizer at every exit. detect_stack_use_after_return: a pointer or
  # reference to a dead stack frame (a lambda or a Work capturing a local) is caught, not read.
  # check_initialization_order/strict_init_order: globals that read other translation units'
  # globals before those are constructed.
  export ASAN_OPTIONS="log_path=$logs/asan:halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1"
  # -fno-sanitize-recover=all already makes every UBSan finding fatal; the stack says where.
  export UBSAN_OPTIONS="log_path=$logs/ubsan:halt_on_error=1:print_stacktrace=1"
elif [[ "$kind" == thread ]]; then
  # suppressions: only reports proven false inside uninstrumented Debian libraries, each with its
  # reasoning (scripts/tsan.supp). second_deadlock_stack: both stacks of a lock-order inversion.
  export TSAN_OPTIONS="log_path=$logs/tsan:halt_on_error=1:second_deadlock_stack=1:suppressions=$root/scripts/tsan.supp"
else
  echo "test_sanitizer: the first argument is address or thread, not '$kind'" >&2
  exit 2
fi

status=0
ctest --test-dir "$build" --output-on-failure --no-tests=error "$@" || status=$?

reports=$(find "$logs" -type f | sort)
if [[ -n "$reports" ]]; then
  for f in $reports; do
    echo "=== sanitizer report: $f"
    cat "$f"
  done
  echo "test_sanitizer: $(echo "$reports" | wc -l) process(es) wrote a sanitizer report (above; files in $logs)" >&2
  exit 1
fi
if [[ $status -ne 0 ]]; then
  echo "test_sanitizer: ctest failed (status $status) without a sanitizer report" >&2
  exit "$status"
fi
echo "test_sanitizer: $kind: every selected test passed and no process wrote a report"
