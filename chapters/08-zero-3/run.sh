#!/usr/bin/env bash
# Chapter 8's demonstration: ZeRO-3 (parameters gathered per unit, prefetch 1, overlapped
# reductions) on 1, 2 and 4 ranks, checked bit for bit with --verify; the model states are
# (4+K)ψ/N plus padding.
set -euo pipefail
build=${1:-build}
for n in 1 2 4; do
  echo "--- ZeRO-3, $n rank(s)"
  "$build/bin/zero-train" --stage 3 --world-size "$n" --precision fp16 --steps 8 --warmup-steps 0 \
    --global-batch 8 --micro-batch 2 --prefetch 1 --overlap on --verify | grep -E "verify|model states"
done
