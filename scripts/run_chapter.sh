#!/usr/bin/env bash
# scripts/run_chapter.sh BUILD N — run chapter N's program (chapters/NN-name/: run.sh if present,
# else the target chapter-NN).
set -euo pipefail
build=$1; n=$(printf '%02d' "$2")
dir=$(ls -d chapters/${n}-*/ 2>/dev/null | head -1 || true)
[[ -n "$dir" ]] || { echo "chapter-$2: no folder chapters/${n}-*" >&2; exit 2; }
# a chapter whose lesson is a run of the project's programs ships run.sh instead of a program
if [[ -x "${dir}run.sh" ]]; then
  echo "== ${dir%/}: ${dir}run.sh"
  exec "${dir}run.sh" "$build"
fi
exe="$build/bin/chapter-${n}"
[[ -x "$exe" ]] || { echo "chapter-$2: $exe was not built" >&2; exit 2; }
echo "== ${dir%/}: $exe"
exec "$exe"
