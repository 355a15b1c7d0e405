#!/usr/bin/env bash
# Chapter 16's demonstration: each of FSDP's sharding strategies as this project's flags, on 4 ranks
# (threads), bf16 with FP32 gradient reduction (FSDP's MixedPrecision(param_dtype=bf16,
# reduce_dtype=fp32)); each run is checked bit for bit against one device (--verify), and its
# model states and traffic per rank per step are printed from the run's summary beside zero-train's
# prediction. Then the paper-scale comparison of FULL_SHARD and HYBRID_SHARD from zero-plan.
set -euo pipefail
build=${1:-build}
json=$(mktemp /tmp/zt-ch16-XXXXXX.json)
trap 'rm -f "$json"' EXIT
show() {  # rank 0's model states and bytes per step by collective, measured and predicted
  /usr/bin/python3 - "$json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
m = j["memory"]["per_rank"][0]
c = j["comm"]
print(f"  model states per rank {m['model_states_bytes']:,} B (predicted {m['model_states_bytes_predicted']:,} B)")
for kind in ("all_reduce", "reduce_scatter", "all_gather"):
    if kind in c["bytes_sent_per_step"]:
        print(f"  {kind:<15} {c['bytes_sent_per_step'][kind]:>9,} B per step (predicted {c['predicted_bytes_sent_per_step'][kind]:,} B)")
for group in ("dp_shard", "dp_replica"):
    sent = c["groups"].get(group, {}).get("bytes_sent_per_step", {})
    if sent:
        print(f"  of which {group}: " + ", ".join(f"{k} {v:,} B" for k, v in sent.items()))
PY
}
common=(--world-size 4 --ranks-as threads --precision bf16 --steps 3 --eval-every 0 --global-batch 16 --micro-batch 2)
while read -r name flags; do
  echo "--- $name: zero-train $flags"
  # shellcheck disable=SC2086  # the flags are words
  "$build/bin/zero-train" $flags "${common[@]}" --verify --summary-json "$json" | grep -E "^verify"
  show
done <<'RUNS'
NO_SHARD --stage 0
ZeroRedundancyOptimizer --stage 1
SHARD_GRAD_OP --stage 2
FULL_SHARD --stage 3
_HYBRID_SHARD_ZERO2 --stage 2 --shard-group 2
HYBRID_SHARD --stage 3 --shard-group 2
RUNS
echo "--- 7.5B parameters on 64 GPUs (8 nodes of 8): FULL_SHARD, then HYBRID_SHARD with a node as the shard group"
"$build/bin/zero-plan" --params 7.5e9 --stage 3 --world-size 64 | grep -E "total|^traffic"
"$build/bin/zero-plan" --params 7.5e9 --stage 3 --world-size 64 --shard-group 8 | grep -E "total|^traffic"
