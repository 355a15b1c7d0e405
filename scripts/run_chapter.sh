#!/usr/bin/env bash
# scripts/run_chapter.sh BUILD N — run chapter N's program (chapters/NN-name/, target chapter-NN).
set -euo pipefail
build=$1; n=$(printf '%02d' "$2")
dir=$(ls -d chapters/${n}-*/ 2>/dev/null | head -1 || true)
[[ -n "$dir" ]] || { echo "chapter-$2: no folder chapters/${n}-*" >&2; exit 2; }
exe="$build/bin/chapter-${n}"
[[ -x "$exe" ]] || { echo "chapter-$2: $exe was not built" >&2; exit 2; }
echo "== ${dir%/}: $exe"
exec "$exe"
