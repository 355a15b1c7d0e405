#!/usr/bin/env bash
# scripts/run_notebooks.sh BUILD — execute every notebook in notebooks/ headlessly with Debian's
# Python (/usr/bin/python3, where make deps installed matplotlib and nbconvert). Executed copies go
# to BUILD/notebooks/, and so do the plots they write. A failing cell fails this script.
# `python3 -m nbconvert`, not `jupyter nbconvert`: the latter execs the program jupyter-nbconvert,
# which Debian ships in a package of its own (python3-nbconvert is only the library);
# scripts/check_deps.py (tests/setup) checks that make deps covers whatever this file runs.
set -euo pipefail
build=$(cd "$1" && pwd)
out="$build/notebooks"
mkdir -p "$out"
export ZT_BUILD="$build" ZT_NOTEBOOK_OUT="$out" MPLBACKEND=Agg PYDEVD_DISABLE_FILE_VALIDATION=1
shopt -s nullglob
books=(notebooks/*.ipynb)
[[ ${#books[@]} -gt 0 ]] || { echo "notebooks: none found"; exit 0; }
# JOBS at a time (default: the CPUs; make passes two per CPU): each notebook is its own kernel and
# writes only its own files. Debian 12's jupyter_client (7.4) picks a kernel's TCP ports by binding
# port 0 and closing it before the kernel binds them, so two kernels started at the same moment
# can draw the same port ("Address already in use", "Kernel died before replying to
# kernel_info"): a notebook whose kernel never started is run once more; a failing cell is not.
export out
printf '%s\0' "${books[@]}" | xargs -0 -n 1 -P "${JOBS:-$(nproc)}" bash -c '
  run() { /usr/bin/python3 -m nbconvert --log-level WARN --to notebook --execute --ExecutePreprocessor.timeout=600 \
            --output-dir "$out" "$0" >/dev/null 2>"$out/$(basename "$0").stderr"; }
  echo "notebooks: executing $0"
  run && exit 0
  if grep -q -e "Kernel died before replying to kernel_info" -e "Address already in use" "$out/$(basename "$0").stderr"; then
    echo "notebooks: $0: its kernel did not start (a port drawn twice); running it once more"
    run && exit 0
  fi
  cat "$out/$(basename "$0").stderr" >&2
  echo "notebooks: $0 failed" >&2
  exit 1' \
  || { echo "notebooks: a notebook failed (above)" >&2; exit 1; }
echo "notebooks: ${#books[@]} executed; outputs in $out"
