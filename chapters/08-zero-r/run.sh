#!/usr/bin/env bash
# Chapter 8's demonstration (part 1): activation checkpointing and tensor parallelism on a
# data-parallel x model-parallel grid, each run checked bit for bit against one device holding
# all --mp-blocks blocks (--verify); the ledger's activation categories and the model-parallel
# all-reduces per step are printed from the summary.
set -euo pipefail
build=${1:-build}
json=$(mktemp /tmp/zt-ch8-XXXXXX.json)
trap 'rm -f "$json"' EXIT
show() {  # the lines of a summary this chapter talks about
  /usr/bin/python3 - "$json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
m = j["memory"]["per_rank"][0]["by_category"]
print(f"  rank 0 activations {m['activations']:,} B, activation_checkpoints {m.get('activation_checkpoints', 0):,} B")
if "comm" in j and j["comm"]["groups"]["mp"]["calls_per_step"]:
    mp = j["comm"]["groups"]["mp"]
    print(f"  model-parallel group per step: calls {mp['calls_per_step']}, bytes sent {mp['bytes_sent_per_step']}")
PY
}
common=(--precision bf16 --steps 4 --warmup-steps 0 --global-batch 16 --micro-batch 8 --eval-every 0)
for ckpt in "" "--checkpoint-activations"; do
  echo "--- one device ${ckpt:-(no checkpointing)}"
  "$build/bin/zero-train" "${common[@]}" $ckpt --summary-json "$json" | grep -E "loss  step"
  show
done
for grid in "2 1" "2 2" "4 2" "4 4"; do
  set -- $grid
  for ckpt in "" "--checkpoint-activations"; do
    echo "--- world $1, --mp-size $2, stage 2 ${ckpt}"
    "$build/bin/zero-train" "${common[@]}" --world-size "$1" --mp-size "$2" --mp-blocks 4 --stage 2 $ckpt \
      --verify --summary-json "$json" | grep -E "verify"
    show
  done
done
