#!/usr/bin/env bash
# scripts/test_gpu.sh BUILD — the GPU tests (CTest label `gpu`) on a machine that has a device: like
# `make test`'s run of them, except that a skipped test is a failure here (make test-gpu promises
# that they ran). Without a device, use make test: there they report skipped.
set -euo pipefail
build=$1
log="$build/test-gpu.log"
ctest --test-dir "$build" --output-on-failure -L gpu 2>&1 | tee "$log"
if grep -q "\*\*\*Skipped" "$log"; then
  echo "test-gpu: some GPU tests were skipped (no usable CUDA device?): see $log" >&2
  exit 1
fi
