#!/usr/bin/env bash
# bench/model/run.sh — build the model benchmarks against an existing build tree and run them:
# sgemm rate, our GPT (fp32, and optionally fp16/bf16), and PyTorch eager on the same model if
# python3-torch is installed (a benchmark peer only, never a project dependency).
# usage: bench/model/run.sh [BUILD_DIR=build] [B=4] [STEPS=5]
# Our model runs twice per round: on the canonical GEMM (zero-train's default) and on OpenBLAS.
set -euo pipefail
BUILD=${1:-build}; B=${2:-4}; STEPS=${3:-5}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT="$ROOT/$BUILD/bench"; mkdir -p "$OUT"
cmake --build "$ROOT/$BUILD" --target zt_model zt_kernels zt_gemm zt_fp -j2 >/dev/null
FLAGS="-O2 -std=c++20 -Wall -Wextra -ffp-contract=off -fno-fast-math -I$ROOT/src"
LIBS="$ROOT/$BUILD/lib/libzt_model.a $ROOT/$BUILD/lib/libzt_kernels.a $ROOT/$BUILD/lib/libzt_gemm.a $ROOT/$BUILD/lib/libzt_fp.a $ROOT/$BUILD/lib/libzt_core.a -lopenblas"
g++ $FLAGS "$ROOT/bench/model/sgemm_rate.cc" $LIBS -o "$OUT/bench-sgemm"
g++ $FLAGS "$ROOT/bench/model/bench_model.cc" $LIBS -o "$OUT/bench-model"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
lscpu | grep -E "Model name" || true
"$OUT/bench-sgemm" 1
# Side by side, alternating twice, so that a busy machine penalises both peers alike; the ratio
# uses each peer's best step (the least disturbed) and, separately, the means.
: > "$OUT/model_bench.jsonl"
for round in 1 2; do
  for gemm in canonical blas; do
    ZT_BENCH_GEMM=$gemm "$OUT/bench-model" "$B" "$STEPS" 1 fp32 ${BENCH_PRECISIONS:-} | tee /dev/stderr |
      grep '^{' >> "$OUT/model_bench.jsonl"
  done
  if /usr/bin/python3 -c "import torch" 2>/dev/null; then
    /usr/bin/python3 "$ROOT/bench/model/torch_gpt.py" --batch "$B" --steps "$STEPS" | tee /dev/stderr | grep '^{' >> "$OUT/model_bench.jsonl"
  else
    echo "python3-torch not installed: skipping the PyTorch eager comparison"
  fi
done
/usr/bin/python3 - "$OUT/model_bench.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
torch = [r for r in rows if r["peer"] == "torch-eager"]
best = lambda rs, k: max(r[k] for r in rs)
for gemm in ("canonical", "blas"):
    ours = [r for r in rows if r["peer"] == "zero-teach" and r["precision"] == "fp32" and r.get("gemm") == gemm]
    print(f"fp32, --gemm {gemm}: tokens/s best {best(ours, 'tokens_per_s_best'):.0f}, "
          f"mean-of-best-run {best(ours, 'tokens_per_s'):.0f}; MFU best {100 * best(ours, 'mfu_best'):.1f}%")
    if torch:
        print(f"  ratio to torch eager: best {best(ours, 'tokens_per_s_best') / best(torch, 'tokens_per_s_best'):.2f}, "
              f"mean {best(ours, 'tokens_per_s') / best(torch, 'tokens_per_s'):.2f}")
if torch:
    print(f"torch eager tokens/s: best {best(torch, 'tokens_per_s_best'):.0f}, mean-of-best-run {best(torch, 'tokens_per_s'):.0f}")
PY
