#!/usr/bin/env bash
# Chapter 11's demonstration: tensor parallelism on a data-parallel x model-parallel grid, each run
# checked bit for bit against one device holding all --mp-blocks blocks (--verify), with and
# without activation checkpointing; the ledger's activations and the model-parallel all-reduces
# per step are printed from the summary. Then section 3's arithmetic from zero-plan: one layer of a
# 1.5B-class model split over 8 GPUs of a node and over 16 GPUs of two nodes, and ZeRO-3 instead.
set -euo pipefail
build=${1:-build}
json=$(mktemp /tmp/zt-ch11-XXXXXX.json)
trap 'rm -f "$json"' EXIT
show() { /usr/bin/python3 "$(dirname "$0")/../../scripts/show_activations.py" "$json"; }
common=(--precision bf16 --steps 4 --warmup-steps 0 --global-batch 16 --micro-batch 8 --eval-every 0)
echo "--- one device"
"$build/bin/zero-train" "${common[@]}" --summary-json "$json" | grep -E "loss  step"
show
for grid in "2 1" "2 2" "4 2" "4 4"; do
  set -- $grid
  for ckpt in "" "--checkpoint-activations"; do
    echo "--- world $1, --mp-size $2, stage 2 ${ckpt}"
    "$build/bin/zero-train" "${common[@]}" --world-size "$1" --mp-size "$2" --mp-blocks 4 --stage 2 $ckpt \
      --verify --summary-json "$json" | grep -E "verify"
    show
  done
done
layer=(--layers 1 --width 1600 --heads 16 --context 1024 --precision fp16)
echo "--- zero-plan: one layer, C = 1600, 8 sequences of 1024 tokens; N_m = 8 inside a node (300 GB/s)"
"$build/bin/zero-plan" "${layer[@]}" --global-batch 8 --world-size 8 --mp-size 8 --beta-gbs 300 | grep -E "rank 0 .*mp all_reduce|^time"
echo "--- the same, N_m = 16 across two nodes (25 GB/s)"
"$build/bin/zero-plan" "${layer[@]}" --global-batch 8 --world-size 16 --mp-size 16 --beta-gbs 25 | grep -E "rank 0 .*mp all_reduce|^time"
echo "--- ZeRO-3 over 8 data-parallel ranks of 8 sequences each, across nodes (25 GB/s)"
"$build/bin/zero-plan" "${layer[@]}" --global-batch 64 --world-size 8 --stage 3 --beta-gbs 25 | grep -E "^time"
