#!/usr/bin/env bash
# Chapter 15's demonstration: pipeline stages with ZeRO inside each stage. Every run is checked bit
# for bit against one device (--verify); the pipeline group's bytes per step and each stage's
# activation workspaces are printed from the summary beside the closed forms; then the bubble
# measured from the trace (bench/pipeline/bubble.py, a short version).
set -euo pipefail
build=${1:-build}
json=$(mktemp /tmp/zt-ch15-XXXXXX.json)
trap 'rm -f "$json"' EXIT
show() {  # the pipeline group's traffic of rank 0 and every rank's activations
  /usr/bin/python3 - "$json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
pp = j["comm"]["groups"]["pp"]
print(f"  rank 0 pipeline group per step: bytes sent {pp['bytes_sent_per_step']}, predicted {pp['predicted_bytes_sent_per_step']}")
for m in j["memory"]["per_rank"]:
    print(f"  rank {m['rank']} activations {m['by_category']['activations']:,} B (predicted {m['by_category_predicted']['activations']:,} B)")
PY
}
common=(--precision bf16 --micro-batch 2 --steps 3 --eval-every 3 --ranks-as threads)  # M = global batch / (N_d x 2)
for sched in 1f1b gpipe; do
  for stage in 1 3; do
    echo "--- 2 stages x 2 data-parallel ranks, ZeRO-$stage inside each stage, $sched"
    "$build/bin/zero-train" "${common[@]}" --layers 4 --global-batch 16 --world-size 4 --pp-size 2 \
      --pp-schedule "$sched" --stage "$stage" --verify --summary-json "$json" | grep -E "verify"
    show
  done
done
echo "--- 4 stages, an uneven split, with tensor parallelism: world 8 = 1 x 4 x 2"
"$build/bin/zero-train" "${common[@]}" --layers 5 --pp-split 2,1,1,1 --world-size 8 --pp-size 4 --mp-size 2 \
  --stage 2 --global-batch 8 --verify --summary-json "$json" | grep -E "verify"
# ZT_NO_BENCH=1 (the test of this script) leaves out the timing
if [[ -z "${ZT_NO_BENCH:-}" ]]; then
  echo "--- the bubble, measured from --trace against (P-1)/(M+P-1)"
  /usr/bin/python3 "$(dirname "$0")/../../bench/pipeline/bubble.py" "$build" --stages 2 --micro 4,8 --steps 4
fi
