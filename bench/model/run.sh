#!/usr/bin/env bash
# bench/model/run.sh — build the model benchmarks against an existing build tree and run them:
# sgemm rate, our GPT (fp32, and optionally fp16/bf16), and PyTorch eager on the same model if
# python3-torch is installed (a benchmark peer only, never a project dependency).
# usage: bench/model/run.sh [BUILD_DIR=build] [B=4] [STEPS=5]
set -euo pipefail
BUILD=${1:-build}; B=${2:-4}; STEPS=${3:-5}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT="$ROOT/$BUILD/bench"; mkdir -p "$OUT"
cmake --build "$ROOT/$BUILD" --target zt_model zt_kernels -j2 >/dev/null
FLAGS="-O2 -std=c++20 -Wall -Wextra -ffp-contract=off -fno-fast-math -I$ROOT/src"
LIBS="$ROOT/$BUILD/lib/libzt_model.a $ROOT/$BUILD/lib/libzt_kernels.a $ROOT/$BUILD/lib/libzt_core.a -lopenblas"
g++ $FLAGS "$ROOT/bench/model/sgemm_rate.cc" $LIBS -o "$OUT/bench-sgemm"
g++ $FLAGS "$ROOT/bench/model/bench_model.cc" $LIBS -o "$OUT/bench-model"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
lscpu | grep -E "Model name" || true
"$OUT/bench-sgemm" 1
"$OUT/bench-model" "$B" "$STEPS" 1 fp32 ${BENCH_PRECISIONS:-}
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
  /usr/bin/python3 "$ROOT/bench/model/torch_gpt.py" --batch "$B" --steps "$STEPS"
else
  echo "python3-torch not installed: skipping the PyTorch eager comparison"
fi
