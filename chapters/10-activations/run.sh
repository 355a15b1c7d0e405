#!/usr/bin/env bash
# Chapter 10's demonstration (make chapter-10), in three parts:
#  1. Rank 0's activation bytes, read from --summary-json before the first step (--steps 0), at
#     B = 1, 8 and 16 sequences, each beside the chapter's closed forms: what a block keeps,
#     (16·B·T·C + B·H·T²)·t plus FP32 LayerNorm statistics, times L, plus the buffers outside the
#     blocks; the ZeRO paper's estimate 12·C·B·T·L·t [ZeRO §3.2]; and with per-block checkpointing
#     the L block inputs, L·B·T·C·t, beside one block's tensors that are recomputed.
#  2. A short training run with and without checkpointing: the same losses.
#  3. A 10 MiB budget that the plan says only the checkpointed run fits: the other run's error, and
#     the peak of the one that trains, from its summary.
# chapters/10-activations/quotes.json names these commands ("script") and pins their numbers in the
# README; tests/chapter10/check_printed_lesson.py checks the printed arithmetic.
set -euo pipefail
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# one run of zero-train; its output is kept quiet unless it fails
zt() { "$build/bin/zero-train" "$@" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; return 1; }; }
zt --layers 4 --heads 4 --width 128 --context 64 --precision bf16 --global-batch 1 --steps 0 --eval-every 0 --summary-json "$tmp/b1.json"
zt --layers 4 --heads 4 --width 128 --context 64 --precision bf16 --global-batch 1 --steps 0 --eval-every 0 --checkpoint-activations --summary-json "$tmp/c1.json"
zt --layers 4 --heads 4 --width 128 --context 64 --precision bf16 --global-batch 8 --steps 0 --eval-every 0 --summary-json "$tmp/b8.json"
zt --layers 4 --heads 4 --width 128 --context 64 --precision bf16 --global-batch 8 --steps 0 --eval-every 0 --checkpoint-activations --summary-json "$tmp/c8.json"
zt --layers 4 --heads 4 --width 128 --context 64 --precision bf16 --global-batch 16 --steps 0 --eval-every 0 --summary-json "$tmp/b16.json"
zt --layers 4 --heads 4 --width 128 --context 64 --precision bf16 --global-batch 16 --steps 0 --eval-every 0 --checkpoint-activations --summary-json "$tmp/c16.json"
python3 - "$tmp" <<'EOF'
import json, sys
def summary(name):
    with open(f"{sys.argv[1]}/{name}.json") as f:
        return json.load(f)
def shape(s):
    """L, C, H, T, V, t of a run: its config, the vocabulary from ψ (wte is V·C, wpe T·C)."""
    c = s["config"]
    L, C, H, T = c["layers"], c["width"], c["heads"], c["context"]
    V = (s["param_count"] - T * C - L * (12 * C * C + 13 * C) - 2 * C) // C
    return L, C, H, T, V, {"fp32": 4, "fp16": 2, "bf16": 2}[c["precision"]]
def block(B, C, H, T, t):   # what one block keeps: section 1's table, and 4 FP32 statistics a row
    return (16 * B * T * C + B * H * T * T) * t + 4 * B * T * 4
def outside(B, C, T, V, t):  # x_0, ln_f's output, the logits; ln_f's 2 statistics and the loss's 3
    return (2 * B * T * C + B * T * V) * t + 5 * B * T * 4
L, C, H, T, V, t = shape(summary("b1"))
print("Activations of rank 0 in bytes, before the first step: the ledger beside the closed forms.")
print(f"L = {L}, C = {C}, H = {H}, T = {T}, V = {V}, bf16: t = {t} bytes a value, 4 an FP32 statistic.")
print("  a block keeps    (16·B·T·C + B·H·T²)·t + 4·B·T·4   section 1's table, LayerNorm statistics")
print("  outside blocks   (2·B·T·C + B·T·V)·t + 5·B·T·4     x_0, ln_f, the logits, the loss's rows")
print("  the paper        12·C·B·T·L·t                      ZeRO §3.2, for all L blocks")
print(f"  B = 1: {L}·[(16·1·{T}·{C} + 1·{H}·{T}²)·{t} + 4·1·{T}·4] + (2·1·{T}·{C} + 1·{T}·{V})·{t} + 5·1·{T}·4"
      f" = {L * block(1, C, H, T, t) + outside(1, C, T, V, t):,}")
print("No checkpointing: every block's tensors.")
print("   B   the paper   L·block + outside    measured   measured / paper")
kept = {}
for B in (1, 8, 16):
    a = summary(f"b{B}")["memory"]["per_rank"][0]["by_category"]["activations"]
    paper = 12 * C * B * T * L * t
    exact = L * block(B, C, H, T, t) + outside(B, C, T, V, t)
    print(f"  {B:2d} {paper:11,} {exact:19,} {a:11,}   {a / paper:.2f}")
    kept[B] = a
print("--checkpoint-activations: the L block inputs, and one block's tensors at a time; kept is")
print("checkpoints + activations as a fraction of the measured activations without checkpointing.")
print("   B   checkpoints L·B·T·C·t         measured   one block + outside    measured   kept")
for B in (1, 8, 16):
    m = summary(f"c{B}")["memory"]["per_rank"][0]["by_category"]
    ck, a = m["activation_checkpoints"], m["activations"]
    formula = f"{L}·{B}·{T}·{C}·{t}"
    print(f"  {B:2d}   {formula:<13} = {L * B * T * C * t:9,} {ck:12,} {block(B, C, H, T, t) + outside(B, C, T, V, t):20,}"
          f" {a:11,}   {(ck + a) / kept[B]:.2f}")
EOF
echo "--- training, one device, with and without checkpointing: the same losses"
"$build/bin/zero-train" --precision bf16 --steps 4 --warmup-steps 0 --global-batch 16 --micro-batch 8 --eval-every 0 | grep -E "loss  step"
"$build/bin/zero-train" --precision bf16 --steps 4 --warmup-steps 0 --global-batch 16 --micro-batch 8 --eval-every 0 --checkpoint-activations | grep -E "loss  step"
echo "--- a budget: L = 4, C = 64, T = 32, global batch 16, FP32, --memory-budget-mb 10"
zt --digits 1 --steps 1 --global-batch 16 --layers 4 --eval-every 0 --summary-json "$tmp/plain.json"
"$build/bin/zero-train" --digits 1 --steps 1 --global-batch 16 --layers 4 --eval-every 0 --memory-budget-mb 10 2>&1 | grep -E "out of memory" | cut -c1-240 || true
zt --digits 1 --steps 1 --global-batch 16 --layers 4 --eval-every 0 --memory-budget-mb 10 --checkpoint-activations --summary-json "$tmp/ckpt.json"
python3 - "$tmp" <<'EOF'
import json, sys
def rank0(name):
    with open(f"{sys.argv[1]}/{name}.json") as f:
        return json.load(f)["memory"]["per_rank"][0]
plain, ckpt = rank0("plain"), rank0("ckpt")
arena = ckpt["arena_capacity"]
print(f"  no checkpointing: predicted peak {plain['peak_bytes_predicted']:,} B > the arena's {arena:,} B: the error above")
print(f"  --checkpoint-activations: predicted peak {ckpt['peak_bytes_predicted']:,} B < {arena:,} B; it trains,"
      f" peak {ckpt['peak_bytes']:,} B")
EOF
