#!/usr/bin/env bash
# tests/setup/check_deps_test.sh ROOT — scripts/check_deps.py passes on the project, and fails on a
# copy of it whose notebook runner calls `jupyter nbconvert` (the program jupyter-nbconvert is a
# package of its own that make deps does not install: the gap a fresh Debian root once found).
set -euo pipefail
root=$1
command -v dpkg >/dev/null && command -v apt-cache >/dev/null || { echo "not a Debian system: skipped"; exit 77; }
"$root/scripts/check_deps.py"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/scripts" "$tmp/notebooks" "$tmp/.ci"
cp "$root/scripts/deps.sh" "$root/scripts/check_deps.py" "$tmp/scripts/"
cp "$root/Makefile" "$tmp/"
printf '#!/usr/bin/env bash\n/usr/bin/python3 -m jupyter nbconvert --to notebook --execute x.ipynb\n' > "$tmp/scripts/run_notebooks.sh"
if out=$("$tmp/scripts/check_deps.py" 2>&1); then
  echo "check_deps.py accepted a runner that needs jupyter-nbconvert:"; echo "$out"; exit 1
fi
grep -q "jupyter nbconvert" <<<"$out" || { echo "the gap was not named:"; echo "$out"; exit 1; }
echo "check_deps.py names the missing jupyter-nbconvert program in a broken copy"
