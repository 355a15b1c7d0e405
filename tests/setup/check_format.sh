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
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [[ ${#bad[@]} -gt 0 ]]; then
  echo "not formatted (run make format): ${bad[*]}"; exit 1
fi
echo "${#files[@]} files formatted as .clang-format says"
