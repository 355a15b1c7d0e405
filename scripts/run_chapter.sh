#!/usr/bin/env bash
# scripts/run_chapter.sh BUILD N — `make chapter-N`: bring BUILD up to date quietly, then run
# chapter N's program (chapters/NN-name/: run.sh if present, else the target chapter-NN).
#
# The build (a first configure where BUILD has none, as `make build` does it, then `cmake --build`)
# writes everything it prints to BUILD/chapter-build.log and shows one line: "build: up to date" or
# "build: rebuilt N targets (log: ...)", N the libraries and programs it linked ("configured BUILD/
# and built N targets" the first time). When it fails: the log's last 40 lines (make's directory
# lines left out), a non-zero exit, and the chapter does not run. The Makefile runs `make deps`
# first, as `make build` does (silent when nothing is missing).
# Environment: JOBS (compiles at a time, default nproc), CMAKE_FLAGS (extra flags of a first configure).
set -euo pipefail
build=$1; n=$(printf '%02d' "$2")
dir=$(find chapters -mindepth 1 -maxdepth 1 -type d -name "${n}-*" | sort | head -1)
[[ -n "$dir" ]] || { echo "chapter-$2: no folder chapters/${n}-*" >&2; exit 2; }
dir+=/

log="$build/chapter-build.log"
configured=""
# configure where BUILD has no cache yet, then build; every line into the log
build_quietly() {
  if [[ ! -f "$build/CMakeCache.txt" ]]; then
    local extra=()
    read -r -a extra <<<"${CMAKE_FLAGS:-}"
    configured="configured $build/ and built"
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "${extra[@]}" || return 1
  fi
  cmake --build "$build" -j "${JOBS:-$(nproc)}" || return 1
}
mkdir -p "$build"
if ! build_quietly >"$log" 2>&1; then
  # (less make's "Entering/Leaving directory" lines, which a parallel build interleaves by the dozen)
  grep -vE "^g?make\[[0-9]+\]: (Entering|Leaving) directory" "$log" | tail -n 40
  echo "chapter-$2: the build failed (whole log: $log)" >&2
  exit 1
fi
# Make and Ninja both print "Linking CXX executable|static library ..." once per target they link,
# and every target here is a library or a program (no custom commands)
linked=$(grep -c "Linking " "$log" || true)
if [[ "$linked" -eq 0 && -z "$configured" ]]; then
  echo "build: up to date"
else
  echo "build: ${configured:-rebuilt} $linked target$([[ $linked -eq 1 ]] || echo s) (log: $log)"
fi

# a chapter whose lesson is a run of the project's programs ships run.sh instead of a program
if [[ -x "${dir}run.sh" ]]; then
  echo "== ${dir%/}: ${dir}run.sh"
  exec "${dir}run.sh" "$build"
fi
exe="$build/bin/chapter-${n}"
[[ -x "$exe" ]] || { echo "chapter-$2: $exe was not built" >&2; exit 2; }
echo "== ${dir%/}: $exe"
exec "$exe"
