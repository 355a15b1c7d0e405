#!/usr/bin/env bash
# Chapter 6's demonstration: ZeRO-1 on 1, 2 and 4 ranks (processes), one global batch of four
# micro-batches split 4x1, 2x2, 1x4; each run is checked bit for bit against the single-device
# reference (--verify), and the per-rank model states shrink as (6 + 12/N)ψ plus padding (the
# default FP32 gradients; the paper's 16-bit gradients give (4 + 12/N)ψ).
set -euo pipefail
build=${1:-build}
for n in 1 2 4; do
  echo "--- ZeRO-1, $n rank(s)"
  "$build/bin/zero-train" --stage 1 --world-size "$n" --precision fp16 --steps 8 --warmup-steps 0 \
    --global-batch 8 --micro-batch 2 --verify | grep -E "verify|model states"
done
