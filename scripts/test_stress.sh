#!/usr/bin/env bash
# scripts/test_stress.sh BUILD [REPEAT] — the tests that start processes, each run REPEAT times
# (default 10) on ONE core that a CPU hog also wants: `make test-stress`.
#
# Why: a test whose outcome depends on timing passes on an idle machine and fails, once in N
# runs, on a loaded CI machine (two shared cores) or a faster CPU. Squeezing every rank, launcher
# and test onto CPU 0 next to a busy loop (taskset -c 0 for both) stretches every interval and
# reorders events the way a loaded machine does, so such a test fails here first. A failure is a
# bug in the design or the test, never fixed by sleeping longer.
# What runs: CTest label `processes` (every test that starts programs, ranks or forked children;
# `ctest -L processes -N` lists them), with --repeat until-fail:REPEAT, two at a time (-j 2) on the
# one core, minus the `full` matrix. The docs checks (tests/docs) are not in the label: they run
# the chapters' quoted commands one after another and compare their output, ten minutes a pass
# at this load; the programs they run are the ones the labelled tests start. Not part of
# `make test`: on the 2-core machine it takes about 45 minutes (figures in README.md).
set -euo pipefail
build=$1
repeat=${2:-10}
log="$build/test-stress.log"
command -v taskset >/dev/null || { echo "test-stress: needs taskset (util-linux)" >&2; exit 1; }
# the hog: one busy loop pinned to the same core, stopped however this script ends
taskset -c 0 sh -c 'while :; do :; done' &
hog=$!
trap 'kill $hog 2>/dev/null || true' EXIT
start=$(date +%s)
status=0
taskset -c 0 ctest --test-dir "$build" --output-on-failure -L processes -LE full -j 2 \
  --repeat "until-fail:$repeat" 2>&1 | tee "$log" || status=$?
echo "test-stress: $(grep -c ' Test *#' "$log" || true) test runs (each test up to $repeat times), $(( $(date +%s) - start )) s, exit $status; log: $log"
exit $status
