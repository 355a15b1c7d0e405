#!/usr/bin/env bash
# bench/gpu/run.sh — the GPU measurements chapter 13 records, as one script to run the moment a
# machine with a GPU is at hand: the GPU tests, then GPT-2 124M's shape (V 50304, T 1024, L 12,
# H 12, C 768, batch 8 x 1024) under --gemm canonical and --gemm blas, fp32 and bf16, each for
# tokens/s, MFU and a per-op table of measured kernel time (CUDA events, --trace) against zero-plan's
# roofline for the same run; then the host rows (the pipeline bubble, make bench).
# Writes bench/gpu/results/<gpu>.json (ops.py's format) and prints every table.
# Not a test: timings belong to the machine. usage: bench/gpu/run.sh [BUILD_DIR=build] [STEPS=6]
set -euo pipefail
BUILD=${1:-build}; STEPS=${2:-6}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$GPU_NAME" in
  *H200*) GPU=h200 ;; *H100*) GPU=h100 ;; *A100*) GPU=a100 ;;
  *) echo "bench/gpu: '$GPU_NAME' is not in zero-plan's --gpu table (h100, h200, a100)"; exit 2 ;;
esac
echo "machine: $GPU_NAME; $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p')"
OUT="$ROOT/bench/gpu/results"; mkdir -p "$OUT"
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
make -C "$ROOT" test-gpu 2>&1 | tail -5
MODEL="--vocab 50304 --context 1024 --layers 12 --heads 12 --width 768 --micro-batch 8 --global-batch 8 \
--steps $STEPS --warmup-steps 0 --eval-every 0 --device cuda"
RUNS=()
for gemm in blas canonical; do
  for p in bf16 fp32; do
    tag="${gemm}_${p}"
    # shellcheck disable=SC2086
    "$ROOT/$BUILD/bin/zero-plan" $MODEL --gemm $gemm --precision $p --gpu $GPU --json "$WORK/plan_$tag.json" \
      > /dev/null
    # shellcheck disable=SC2086
    "$ROOT/$BUILD/bin/zero-train" $MODEL --gemm $gemm --precision $p --trace "$WORK/trace_$tag.json" \
      --summary-json "$WORK/summary_$tag.json" > "$WORK/log_$tag.txt" 2>&1 ||
      { echo "run failed: --gemm $gemm --precision $p"; tail -3 "$WORK/log_$tag.txt"; exit 1; }
    RUNS+=("$tag")
  done
done
python3 "$ROOT/bench/gpu/ops.py" --gpu "$GPU" --gpu-name "$GPU_NAME" --work "$WORK" --steps "$STEPS" \
  --out "$OUT/$GPU.json" "${RUNS[@]}"
# the host rows, on this machine's CPU
python3 "$ROOT/bench/pipeline/bubble.py" --stages 4 || echo "bench/pipeline/bubble.py failed"
make -C "$ROOT" bench 2>&1 | tail -40 || echo "make bench failed"
