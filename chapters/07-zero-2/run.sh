#!/usr/bin/env bash
# Chapter 7's demonstration: ZeRO-2 with small buckets that split units, gradients reduced after
# every micro-batch (strided schedule: N a power of two), checked bit for bit with --verify.
set -euo pipefail
build=${1:-build}
for n in 1 2 4; do
  echo "--- ZeRO-2, $n rank(s), 0.01 MiB buckets"
  "$build/bin/zero-train" --stage 2 --world-size "$n" --precision bf16 --steps 8 --warmup-steps 0 \
    --global-batch 8 --micro-batch 2 --bucket-mb 0.01 --verify | grep -E "verify|model states"
done
