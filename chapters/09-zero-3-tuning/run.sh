#!/usr/bin/env bash
# Chapter 9's demonstration: stage 3 on 4 ranks with the knobs of the chapter, each checked bit for
# bit with --verify: without prefetch and overlap (the same bits, only slower), with persistent
# small units (--persist-below-mb: more model-state memory, fewer gathers) and with hybrid sharding
# (--shard-group 2: the model states of a 2-rank run). Then a --trace of one run and its spans.
set -euo pipefail
build=${1:-build}
common=(--stage 3 --world-size 4 --precision fp16 --steps 8 --warmup-steps 0 --global-batch 8 --micro-batch 2)
for knobs in "--prefetch 0 --overlap off" "--persist-below-mb 0.01" "--shard-group 2"; do
  echo "--- ZeRO-3, 4 ranks, $knobs"
  # shellcheck disable=SC2086  # $knobs is several flags
  "$build/bin/zero-train" "${common[@]}" $knobs --verify | grep -E "verify|model states"
done
trace=$(mktemp -d)
trap 'rm -rf "$trace"' EXIT
echo "--- ZeRO-3, 2 ranks, --trace: rank 0's spans over 2 steps (open the file in ui.perfetto.dev)"
"$build/bin/zero-train" --stage 3 --world-size 2 --ranks-as threads --precision fp16 --steps 2 --warmup-steps 0 \
  --eval-every 0 --global-batch 2 --micro-batch 1 --trace "$trace/trace.json" >/dev/null
# every span is one JSON object {...} on the trace's one line; rank 0's end with "pid":0
for kind in 'compute spans|"cat":"compute"' 'wait all_gather spans|"name":"wait all_gather' \
            'wait reduce spans|"name":"wait reduce'; do
  printf '  %-22s %s\n' "${kind%%|*}" "$(grep -o "${kind#*|}[^}]*\"pid\":0[,}]" "$trace/trace.json" | wc -l)"
done
