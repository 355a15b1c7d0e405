#!/usr/bin/env bash
# bench/zero/stages.sh — step time of ZeRO stages against stage 0 at N ranks as processes.
# Configurations run in interleaved rounds (each once per round) so that load drifting over
# minutes penalises all of them alike. Reported per configuration: the median tokens/s; the median
# over rounds of the step-time ratio to the FIRST configuration's run of the same round (stage 0
# by default), with its interquartile range; rank 0's median time blocked on collectives per step
# (the `wait` spans of --trace).
# Not a test: timings are properties of the machine and its load.
# usage: bench/zero/stages.sh [ROUNDS=7] [BUILD_DIR=build]
#   env N=2 (ranks), MODEL="..." (model/batch flags), CONFIGS="label|flags;label|flags;..."
set -euo pipefail
ROUNDS=${1:-7}; BUILD=${2:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$BUILD/bin/zero-train"
N=${N:-2}
MODEL=${MODEL:-"--layers 4 --heads 4 --width 128 --context 64 --precision fp16 --optimizer adamw \
--global-batch 8 --micro-batch 4 --steps 12 --warmup-steps 0 --eval-every 0"}
CONFIGS=${CONFIGS:-"stage 0|--stage 0;stage 1|--stage 1;stage 2|--stage 2;\
stage 3|--stage 3;stage 3, no prefetch or overlap|--stage 3 --prefetch 0 --overlap off"}
OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT
IFS=';' read -r -a CFG <<< "$CONFIGS"
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "N=$N; model: $MODEL"
for round in $(seq "$ROUNDS"); do
  for i in "${!CFG[@]}"; do
    flags=${CFG[$i]#*|}
    # shellcheck disable=SC2086
    "$BIN" --world-size "$N" $MODEL $flags --trace "$OUT/t_${i}_$round.json" \
      --summary-json "$OUT/s_${i}_$round.json" > "$OUT/log_${i}_$round.txt" 2>&1 ||
      { echo "run failed: $flags"; tail -3 "$OUT/log_${i}_$round.txt"; exit 1; }
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$OUT" "$ROUNDS" "$CONFIGS" <<'PY'
import json, statistics, sys
out, rounds, cfgs = sys.argv[1], int(sys.argv[2]), [c.split("|")[0] for c in sys.argv[3].split(";")]
def q(xs, f):
    xs = sorted(xs); k = (len(xs) - 1) * f; i = int(k)
    return xs[i] if i + 1 >= len(xs) else xs[i] + (xs[i + 1] - xs[i]) * (k - i)
tps = {i: [json.load(open(f"{out}/s_{i}_{r}.json"))["tokens_per_s"] for r in range(1, rounds + 1)] for i in range(len(cfgs))}
def blocked(i, r):
    d = json.load(open(f"{out}/t_{i}_{r}.json")); ev = d["traceEvents"] if isinstance(d, dict) else d
    steps = json.load(open(f"{out}/s_{i}_{r}.json"))["config"]["steps"]
    return sum(e["dur"] for e in ev if e.get("ph") == "X" and e.get("pid", 0) == 0 and e.get("cat") == "wait") / 1000 / steps
print(f"| configuration | median tokens/s | median step time | step-time ratio to '{cfgs[0]}', same round: median (IQR) | blocked per step (rank 0, median) |")
print("|---|---:|---:|---|---:|")
for i, name in enumerate(cfgs):
    ratios = [tps[0][r] / tps[i][r] for r in range(rounds)]
    med = statistics.median(tps[i])
    tokens = json.load(open(f"{out}/s_{i}_1.json"))["config"]
    step_ms = 1000 * tokens["global_batch"] * tokens["context"] / med
    b = statistics.median(blocked(i, r) for r in range(1, rounds + 1))
    tokens_s = f"{med:,.0f}".replace(",", " ")
    print(f"| {name} | {tokens_s} | {step_ms:.0f} ms | {statistics.median(ratios):.2f} ({q(ratios, .25):.2f}–{q(ratios, .75):.2f}) | {b:.1f} ms |")
PY
