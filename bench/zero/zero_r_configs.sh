#!/usr/bin/env bash
# bench/zero/zero_r_configs.sh BUILD [BUDGET_MB] — the ZeRO paper's Figure 6 in miniature: for each
# of Table 3's configurations C1..C5 (zero-train --zero-config), the largest number of layers that
# trains one step under a fixed per-rank budget, at a fixed width, batch and model-parallel degree.
# One row per configuration: the largest L that fits and the first that does not, with its error.
# The search starts where zero-plan --max-model says (chapter 3's planner replays the step's
# allocations), then measures: zero-train must train L and fail at L + 1; where it does not, the
# search walks on from there, so the answer is always zero-train's own. Two runs per configuration
# when the planner is right, as tests/plan/check_plan.py's max-model check requires it to be.
set -euo pipefail
build=${1:-build}
budget=${2:-32}
common=(--world-size 4 --mp-size 2 --ranks-as threads --precision fp16 --width 128 --heads 4 --context 64
        --global-batch 16 --micro-batch 8 --steps 1 --eval-every 0 --memory-budget-mb "$budget")
fits() { "$build/bin/zero-train" "${common[@]}" --zero-config "$1" --layers "$2" >/dev/null 2>"$3"; }
planned() {  # zero-plan's largest L for configuration $1 (1 if it names none)
  "$build/bin/zero-plan" "${common[@]}" --zero-config "$1" --max-model |
    sed -n 's/^max model: --layers \([0-9]*\) .*/\1/p' | grep . || echo 1
}
echo "per-rank budget $budget MiB, world 4 = 2 data-parallel x 2 model-parallel, fp16, C = 128, T = 64, b = 8"
for cfg in C1 C2 C3 C4 C5; do
  err=$(mktemp)
  lo=$(planned "$cfg")
  while ((lo > 0)) && ! fits "$cfg" "$lo" "$err"; do lo=$((lo - 1)); done  # down until L trains (0: none)
  hi=$((lo + 1))
  while fits "$cfg" "$hi" "$err"; do lo=$hi; hi=$((hi + 1)); done          # up until L + 1 fails
  printf '%s: largest L = %d; L = %d fails: %s\n' "$cfg" "$lo" "$hi" "$(grep -o 'out of memory.*' "$err" | head -1 | cut -c1-150)"
  rm -f "$err"
done
