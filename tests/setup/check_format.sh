#!/usr/bin/env bash
# tests/setup/check_format.sh ROOT — every C++ source of the project is laid out as .clang-format
# says (clang-format 14, from Debian 12; `make format` applies it). A different clang-format
# major version may lay code out differently, so only 14 is checked; others skip.
set -euo pipefail
root=$1
command -v clang-format >/dev/null || { echo "no clang-format: skipped"; exit 77; }
version=$(clang-format --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
[[ "$version" == 14 ]] || { echo "clang-format $version, the layout is defined by 14: skipped"; exit 77; }
cd "$root"
mapfile -t files < <(find src tests chapters bench -type f \( -name '*.cc' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort)
# one clang-format for all the files (a process per file took most of this check's time): each
# file it would change is named in an "error: code should be clang-formatted" line
report=$(clang-format --dry-run -Werror "${files[@]}" 2>&1) && status=0 || status=$?
bad=$(grep -o '^[^:]*:[0-9]*:[0-9]*: error: code should be clang-formatted' <<<"$report" | cut -d: -f1 | sort -u | tr '\n' ' ' || true)
if [[ $status -ne 0 ]]; then
  [[ -n "$bad" ]] || { echo "clang-format failed:"; echo "$report" | head -20; exit 1; }
  echo "not formatted (run make format): ${bad% }"; exit 1
fi
echo "${#files[@]} files formatted as .clang-format says"
