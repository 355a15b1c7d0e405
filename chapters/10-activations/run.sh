#!/usr/bin/env bash
# Chapter 10's demonstration: activations with and without per-block checkpointing on one device.
# Section 1's table (the ledger's activation categories for b = 1, 8, 16 before the first step),
# a short training run both ways with the same losses, and section 2's budget of 10 MiB that only
# the checkpointed run fits.
set -euo pipefail
build=${1:-build}
json=$(mktemp /tmp/zt-ch10-XXXXXX.json)
trap 'rm -f "$json"' EXIT
show() { /usr/bin/python3 "$(dirname "$0")/../../scripts/show_activations.py" "$json"; }
shape=(--layers 4 --heads 4 --width 128 --context 64 --precision bf16 --steps 0 --eval-every 0)
for b in 1 8 16; do
  for ckpt in "" "--checkpoint-activations"; do
    echo "--- L = 4, C = 128, s = 64, b = $b, bf16 ${ckpt:-(no checkpointing)}"
    "$build/bin/zero-train" "${shape[@]}" --global-batch "$b" $ckpt --summary-json "$json" >/dev/null
    show
  done
done
common=(--precision bf16 --steps 4 --warmup-steps 0 --global-batch 16 --micro-batch 8 --eval-every 0)
for ckpt in "" "--checkpoint-activations"; do
  echo "--- training, one device ${ckpt:-(no checkpointing)}: the same losses"
  "$build/bin/zero-train" "${common[@]}" $ckpt --summary-json "$json" | grep -E "loss  step"
  show
done
budget=(--digits 1 --steps 1 --global-batch 16 --layers 4 --eval-every 0 --memory-budget-mb 10)
for ckpt in "" "--checkpoint-activations"; do
  echo "--- L = 4, global batch 16, --memory-budget-mb 10 ${ckpt:-(no checkpointing)}"
  "$build/bin/zero-train" "${budget[@]}" $ckpt 2>&1 | grep -E "out of memory|memory:" | cut -c1-240 || true
done
