#!/usr/bin/env bash
# Chapter 12's demonstration: ZeRO-R. P_a and P_a+cpu on a 2 x 2 data-parallel x model-parallel
# grid, each checked bit for bit against one device (--verify): the checkpoint bytes on each tier,
# the P_a all-gather beside the model-parallel all-reduces, the host transfers. Then M_D: a step's
# allocations replayed through one first-fit region and through M_D's regions, and the real run
# under a budget between the two.
set -euo pipefail
build=${1:-build}
json=$(mktemp /tmp/zt-ch12-XXXXXX.json)
trap 'rm -f "$json"' EXIT
common=(--precision bf16 --steps 4 --warmup-steps 0 --global-batch 16 --micro-batch 8 --eval-every 0)
show_zero_r() {
  /usr/bin/python3 - "$json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
r = j["memory"]["per_rank"][0]
m = r["by_category"]
host = r.get("host", {}).get("by_category", {})
print(f"  rank 0 accelerator tier: activation_checkpoints {m.get('activation_checkpoints', 0):,} B,"
      f" checkpoint_staging {m.get('checkpoint_staging', 0):,} B; host tier: {host}")
mp = j["comm"]["groups"]["mp"]
print(f"  model-parallel group per step: calls {mp['calls_per_step']}, bytes sent {mp['bytes_sent_per_step']}")
if "host_transfers" in j:
    t = j["host_transfers"]["per_step"]
    print(f"  host transfers per step: {t['to_host_bytes']:,} B out in {t['to_host_calls']} copies,"
          f" {t['to_device_bytes']:,} B back in {t['to_device_calls']}")
PY
}
for pa in off on cpu; do
  echo "--- world 4, --mp-size 2, stage 2, --checkpoint-activations --partition-activations $pa"
  "$build/bin/zero-train" "${common[@]}" --world-size 4 --mp-size 2 --mp-blocks 4 --stage 2 \
    --checkpoint-activations --partition-activations "$pa" --verify --summary-json "$json" | grep -E "verify"
  show_zero_r
done
# M_D: rank 0's allocations of one short run, replayed through one first-fit region and through
# M_D's regions; then the real run under a budget between the two: general fails, zero trains.
trace=$(mktemp /tmp/zt-ch12-trace-XXXXXX.json)
trap 'rm -f "$json" "$trace"' EXIT
md=(--stage 1 --global-batch 8 --micro-batch 1 --precision bf16 --steps 2 --eval-every 0 --layers 4)
echo "--- M_D: replay of a stage-1 step's allocations (zero-memreplay)"
"$build/bin/zero-train" "${md[@]}" --memory-trace "$trace" >/dev/null
"$build/bin/zero-memreplay" -- "$trace"
for allocator in general zero; do
  echo "--- the same run under --memory-budget-mb 5.9 --allocator $allocator"
  "$build/bin/zero-train" "${md[@]}" --memory-budget-mb 5.9 --allocator "$allocator" 2>&1 | grep -E "out of memory|loss  step" | cut -c1-240 || true
done
