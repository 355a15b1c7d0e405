#!/usr/bin/env bash
# tests/setup/check_run_chapter.sh SOURCE BUILD — `make chapter-N`'s build step (scripts/run_chapter.sh)
# prints one line, not the build's output, and the whole of `make chapter-1` stays within 60 lines.
#
# It never builds: a stand-in `cmake` on PATH plays the four outcomes (nothing to do, three targets
# relinked, a first configure, a failed compile), each printing hundreds of lines as the real build
# does, into a scratch build folder whose bin/chapter-01 is BUILD's. So it runs inside make test
# without a build of the tree under test. Checked: the one line ("build: up to date", "build:
# rebuilt 3 targets (log: ...)", "build: configured ... and built ..."), the full output kept in
# the log, chapter 1's program run after it, and on failure the log's last 40 lines, no
# "Entering directory" noise, a non-zero exit and no chapter.
set -euo pipefail
source_dir=$1
real_build=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/fakebin" "$scratch/build/bin"
ln -s "$(realpath "$real_build/bin/chapter-01")" "$scratch/build/bin/chapter-01"
cat >"$scratch/fakebin/cmake" <<'EOF'
#!/usr/bin/env bash
# the stand-in: FAKE_CMAKE says what the build does; -S configures (writes the cache)
if [[ "$1" == -S ]]; then
  echo "-- Configuring done"; touch "$4/CMakeCache.txt"; exit 0
fi
for i in $(seq 1 300); do
  echo "gmake[3]: Entering directory '/somewhere'"
  echo "[ $((i / 3))%] Built target target_$i"
done
case "$FAKE_CMAKE" in
  rebuilt) for t in a b c; do echo "[ 50%] Building CXX object CMakeFiles/$t.dir/x.cc.o"
                              echo "[ 51%] Linking CXX executable bin/$t"; done ;;
  failed) echo "x.cc:1:1: error: expected a declaration"; echo "gmake[1]: *** [all] Error 2"; exit 2 ;;
esac
exit 0
EOF
chmod +x "$scratch/fakebin/cmake"
touch "$scratch/build/CMakeCache.txt"
status=0
fail() { echo "FAIL: $*"; status=1; }
run() {  # run_chapter.sh with the stand-in; stdout+stderr in $scratch/out, the exit status in $rc
  rc=0
  (cd "$source_dir" && PATH="$scratch/fakebin:$PATH" FAKE_CMAKE=$1 JOBS=1 scripts/run_chapter.sh "$scratch/build" 1) \
    >"$scratch/out" 2>&1 || rc=$?
  first=$(head -1 "$scratch/out")
  lines=$(wc -l <"$scratch/out")
}
log="$scratch/build/chapter-build.log"

run uptodate
[[ $rc -eq 0 && "$first" == "build: up to date" ]] || fail "nothing to build: exit $rc, first line '$first'"
[[ $lines -le 60 ]] || fail "nothing to build: make chapter-1 printed $lines lines (at most 60)"
grep -q "^== chapters/01-" "$scratch/out" || fail "nothing to build: chapter 1 did not run"
[[ $(grep -c "Built target" "$log") -eq 300 ]] || fail "nothing to build: the log does not hold the build's output"
echo "up to date: $lines lines, first: $first"

run rebuilt
[[ $rc -eq 0 && "$first" == "build: rebuilt 3 targets (log: $log)" ]] || fail "rebuilt: exit $rc, first line '$first'"
[[ $lines -le 60 ]] || fail "rebuilt: $lines lines"
echo "rebuilt: $lines lines, first: $first"

rm "$scratch/build/CMakeCache.txt"
run uptodate
[[ $rc -eq 0 && "$first" == "build: configured $scratch/build/ and built 0 targets (log: $log)" ]] ||
  fail "first configure: exit $rc, first line '$first'"
[[ -f "$scratch/build/CMakeCache.txt" ]] || fail "first configure: no configure ran"
echo "configured: first: $first"

run failed
[[ $rc -ne 0 ]] || fail "failed build: exit 0"
grep -q "^== chapters/" "$scratch/out" && fail "failed build: the chapter ran anyway"
grep -q "error: expected a declaration" "$scratch/out" || fail "failed build: the error is not shown"
grep -q "Entering directory" "$scratch/out" && fail "failed build: make's directory lines are shown"
shown=$(grep -vc "the build failed" "$scratch/out" || true)
[[ $shown -eq 40 ]] || fail "failed build: $shown lines of the log shown, expected 40"
grep -q "chapter-1: the build failed (whole log: $log)" "$scratch/out" || fail "failed build: no closing line"
echo "failed: exit $rc, $lines lines"
exit $status
