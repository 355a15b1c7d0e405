#!/usr/bin/env bash
# Chapter 11's demonstration (make chapter-11), in three parts:
#  1. Tensor parallelism on four DP x MP grids, with and without activation checkpointing, each run
#     checked bit for bit against one device computing in the same --mp-blocks 4 blocks (--verify).
#  2. From those runs' --summary-json, rank 0's model-parallel all-reduces per step beside Megatron's
#     count (4 per block and micro-batch, 6 with checkpointing, each of B·T·C FP32 partial sums, of
#     which a rank sends 2(N_m−1)/N_m), and its activations beside the closed form in which only
#     the split tensors shrink by N_m and the checkpoints stay whole on every MP rank.
#  3. Section 3's arithmetic from zero-plan: one layer of a 1.5B-class model split over 8 GPUs of
#     a node and over 16 GPUs of two nodes, and ZeRO-3 instead.
# chapters/11-tensor-parallel/quotes.json names these commands ("script") and pins their numbers in
# the README; tests/chapter10/check_printed_lesson.py checks the printed arithmetic.
set -euo pipefail
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "--- --verify: each grid against one device computing in the same Q = 4 blocks (processes)"
# one --verify run: its summary goes to $tmp/NAME.json, its verdict is printed after LABEL
v() {
  local label=$1 name=$2
  shift 2
  "$build/bin/zero-train" "$@" --verify --summary-json "$tmp/$name.json" | grep -o 'verify:.*' | sed "s/^/  $label: /"
}
v "world 2, N_m = 1" w2m1 --precision bf16 --steps 4 --warmup-steps 0 --global-batch 16 --micro-batch 8 --eval-every 0 --world-size 2 --mp-size 1 --mp-blocks 4 --stage 2
v "world 2, N_m = 1, checkpointing" w2m1c --precision bf16 --steps 4 --warmup-steps 0 --global-batch 16 --micro-batch 8 --eval-every 0 --world-size 2 --mp-size 1 --mp-blocks 4 --stage 2 --checkpoint-activations
v "world 2, N_m = 2" w2m2 --precision bf16 --steps 4 --warmup-steps 0 --global-batch 16 --micro-batch 8 --eval-every 0 --world-size 2 --mp-size 2 --mp-blocks 4 --stage 2
v "world 2, N_m = 2, checkpointing" w2m2c --precision bf16 --steps 4 --warmup-steps 0 --global-batch 16 --micro-batch 8 --eval-every 0 --world-size 2 --mp-size 2 --mp-blocks 4 --stage 2 --checkpoint-activations
v "world 4, N_m = 2" w4m2 --precision bf16 --steps 4 --warmup-steps 0 --global-batch 16 --micro-batch 8 --eval-every 0 --world-size 4 --mp-size 2 --mp-blocks 4 --stage 2
v "world 4, N_m = 2, checkpointing" w4m2c --precision bf16 --steps 4 --warmup-steps 0 --global-batch 16 --micro-batch 8 --eval-every 0 --world-size 4 --mp-size 2 --mp-blocks 4 --stage 2 --checkpoint-activations
v "world 4, N_m = 4" w4m4 --precision bf16 --steps 4 --warmup-steps 0 --global-batch 16 --micro-batch 8 --eval-every 0 --world-size 4 --mp-size 4 --mp-blocks 4 --stage 2
v "world 4, N_m = 4, checkpointing" w4m4c --precision bf16 --steps 4 --warmup-steps 0 --global-batch 16 --micro-batch 8 --eval-every 0 --world-size 4 --mp-size 4 --mp-blocks 4 --stage 2 --checkpoint-activations
python3 - "$tmp" <<'EOF'
import json, sys
def summary(name):
    with open(f"{sys.argv[1]}/{name}.json") as f:
        return json.load(f)
first = summary("w2m1")
c = first["config"]
L, C, H, T, B, G = c["layers"], c["width"], c["heads"], c["context"], c["micro_batch"], c["global_batch"]
V = (first["param_count"] - T * C - L * (12 * C * C + 13 * C) - 2 * C) // C  # wte V·C, wpe T·C
t = {"fp32": 4, "fp16": 2, "bf16": 2}[c["precision"]]
def block(n_m):  # one block's tensors on a rank: QKV, attention, c_fc and GELU split over N_m
    return (4 * B * T * C + (12 * B * T * C + B * H * T * T) // n_m) * t + 4 * B * T * 4
outside = (2 * B * T * C + B * T * V) * t + 5 * B * T * 4  # x_0, ln_f, the logits, the loss's rows
print(f"Rank 0 per step, from those runs' summaries: L = {L}, C = {C}, H = {H}, T = {T}, V = {V}, bf16 (t = {t}),")
print(f"stage 2; a global batch of {G} sequences in micro-batches of B = {B}: A = {G}/({B}·N_d) per rank.")
print("--- MP all-reduces: k per block and micro-batch (k = 4, or 6 with checkpointing), each of B·T·C")
print("FP32 partial sums of which a rank sends 2(N_m−1)/N_m, plus one 4-byte overflow flag a step.")
print("  world N_m ckpt  A  calls = k·L·A + 1   bytes sent = k·L·A × 2(N_m−1)/N_m × B·T·C·4 + 4")
for world, n_m in ((2, 2), (4, 2), (4, 4)):
    for ck in (False, True):
        s = summary(f"w{world}m{n_m}" + ("c" if ck else ""))
        mp = s["comm"]["groups"]["mp"]
        calls, sent = mp["calls_per_step"]["all_reduce"], mp["bytes_sent_per_step"]["all_reduce"]
        k, a = 6 if ck else 4, G // (B * (world // n_m))
        formula = f"{k * L * a} × 2·{n_m - 1}/{n_m} × {B}·{T}·{C}·4 + 4"
        value = k * L * a * 2 * (n_m - 1) * B * T * C * 4 // n_m + 4
        print(f"  {world:5d} {n_m:3d} {'yes' if ck else 'no':>4} {a:2d} {calls:6d} = {k}·{L}·{a} + 1"
              f" {sent:12,} = {formula} = {value:,}")
print("--- Activations: QKV, attention, c_fc and GELU shrink by N_m; the rest stays whole on each rank.")
print("  a block keeps (4·B·T·C + (12·B·T·C + B·H·T²)/N_m)·t + 4·B·T·4, outside (2·B·T·C + B·T·V)·t + 5·B·T·4")
print("  N_m   L·block + outside   measured   checkpointing: one block + outside   measured   checkpoints")
for n_m, world in ((1, 2), (2, 4), (4, 4)):
    a = summary(f"w{world}m{n_m}")["memory"]["per_rank"][0]["by_category"]["activations"]
    m = summary(f"w{world}m{n_m}c")["memory"]["per_rank"][0]["by_category"]
    print(f"  {n_m:3d} {L * block(n_m) + outside:19,} {a:10,} {block(n_m) + outside:36,} {m['activations']:10,}"
          f" {m['activation_checkpoints']:13,}")
print(f"  checkpoints: L·B·T·C·t = {L}·{B}·{T}·{C}·{t} = {L * B * T * C * t:,} on every MP rank, whatever N_m")
EOF
layer=(--layers 1 --width 1600 --heads 16 --context 1024 --precision fp16)
echo "--- zero-plan: one layer, C = 1600, 8 sequences of 1024 tokens; N_m = 8 inside a node (300 GB/s)"
"$build/bin/zero-plan" "${layer[@]}" --global-batch 8 --world-size 8 --mp-size 8 --beta-gbs 300 | grep -E "rank 0 .*mp all_reduce|^time"
echo "--- the same, N_m = 16 across two nodes (25 GB/s)"
"$build/bin/zero-plan" "${layer[@]}" --global-batch 8 --world-size 16 --mp-size 16 --beta-gbs 25 | grep -E "rank 0 .*mp all_reduce|^time"
echo "--- ZeRO-3 over 8 data-parallel ranks of 8 sequences each, across nodes (25 GB/s)"
"$build/bin/zero-plan" "${layer[@]}" --global-batch 64 --world-size 8 --stage 3 --beta-gbs 25 | grep -E "^time"
