#!/usr/bin/env bash
# scripts/check.sh — `make check`: a contributor's loop on a tree that `make build` (or `make test`)
# has built once. It rebuilds what the change touched, then runs
#   - the unit and bitwise tests of the chapters the change touches (scripts/check_select.py maps
#     the changed files to chapter labels; CHECK_LABELS="5 7" chooses them instead), less the
#     `full` matrix and the two-host tests;
#   - the docs replay of those chapters: every quoted run and exercise command of theirs
#     (tests/docs/check_quotes.py and check_exercises.py with --chapter);
#   - the layout and docs checks, whatever changed: clang-format, file sizes and layering, links,
#     excerpts, labels, the lessons' shape, the numbers' registry, --help defaults, make deps' cover
#     and the fuzz corpora (labels docs, setup, fuzz).
# It is the quick loop, not the gate: `make test` runs everything, the figures and notebooks too.
# Environment: BUILD, JOBS, TEST_JOBS (default 2 x JOBS, as make test), CHECK_BASE (compare with this revision; default: the uncommitted work,
# or the last commit when nothing is uncommitted), CHECK_LABELS.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
jobs=${JOBS:-$(nproc)}
test_jobs=${TEST_JOBS:-$((2 * jobs))}
start=$(date +%s)
[[ -f "$build/CMakeCache.txt" ]] || {
  echo "check: $build/ is not configured; run make build (or make test) once first" >&2
  exit 2
}
log="$build/check-build.log"
if ! cmake --build "$build" -j "$jobs" >"$log" 2>&1; then
  grep -E "error|Error" "$log" | head -40 || tail -40 "$log"
  echo "check: the build failed (whole log: $log)" >&2
  exit 1
fi
echo "check: build up to date ($(( $(date +%s) - start )) s)"

if [[ -n "${CHECK_LABELS:-}" ]]; then
  chapters=$(echo "$CHECK_LABELS" | tr -d 'ch' | tr ',' ' ')
  echo "check: chapters chosen by CHECK_LABELS: ${chapters:-none}"
else
  selection=$(/usr/bin/python3 scripts/check_select.py ${CHECK_BASE:+"$CHECK_BASE"}) || exit 2
  chapters=$(sed -n 1p <<<"$selection")
  files=$(sed -n 2p <<<"$selection")
  echo "check: changed: ${files:-nothing}"
  echo "check: chapters touched: ${chapters:-none}"
fi

labels="docs|setup|fuzz"
for ch in $chapters; do labels+="|ch$ch"; done
status=0
ctest --test-dir "$build" --output-on-failure -j "$test_jobs" -L "^($labels)\$" -LE '^(full|replay|figures|multihost|gpu)$' \
  || status=1

if [[ -n "$chapters" ]]; then
  chapter_args=()
  for ch in $chapters; do chapter_args+=(--chapter "$ch"); done
  /usr/bin/python3 tests/docs/check_quotes.py . "$build" "${chapter_args[@]}" || status=1
  /usr/bin/python3 tests/docs/check_exercises.py . "$build" "${chapter_args[@]}" || status=1
fi

echo "check: $([[ $status -eq 0 ]] && echo passed || echo FAILED) in $(( $(date +%s) - start )) s" \
  "(chapters: ${chapters:-none}; make test runs everything)"
exit $status
