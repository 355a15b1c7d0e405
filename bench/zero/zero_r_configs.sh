#!/usr/bin/env bash
# bench/zero/zero_r_configs.sh BUILD [BUDGET_MB] — the ZeRO paper's Figure 6 in miniature: for each
# of Table 3's configurations C1..C5 (zero-train --zero-config), the largest number of layers that
# trains one step under a fixed per-rank budget, at a fixed width, batch and model-parallel degree.
# One row per configuration: the largest L that fits and the first that does not, with its error.
set -euo pipefail
build=${1:-build}
budget=${2:-32}
common=(--world-size 4 --mp-size 2 --ranks-as threads --precision fp16 --width 128 --heads 4 --context 64
        --global-batch 16 --micro-batch 8 --steps 1 --eval-every 0 --memory-budget-mb "$budget")
fits() { "$build/bin/zero-train" "${common[@]}" --zero-config "$1" --layers "$2" >/dev/null 2>"$3"; }
echo "per-rank budget $budget MiB, world 4 = 2 data-parallel x 2 model-parallel, fp16, C = 128, T = 64, b = 8"
for cfg in C1 C2 C3 C4 C5; do
  lo=0 hi=1 err=$(mktemp)
  while fits "$cfg" "$hi" "$err"; do lo=$hi; hi=$((hi * 2)); done  # grow until it fails
  while (( hi - lo > 1 )); do mid=$(((lo + hi) / 2)); if fits "$cfg" "$mid" "$err"; then lo=$mid; else hi=$mid; fi; done
  fits "$cfg" "$hi" "$err" || true
  printf '%s: largest L = %d; L = %d fails: %s\n' "$cfg" "$lo" "$hi" "$(grep -o 'out of memory.*' "$err" | head -1 | cut -c1-150)"
  rm -f "$err"
done
