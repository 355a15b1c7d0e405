#!/usr/bin/env bash
# Chapter 7's demonstration (make chapter-7), in three parts:
#  1. ZeRO-2's model states per rank at N = 1, 2 and 4, by category, each beside the paper's
#     formula [ZeRO §5.2]: 2ψ of 16-bit parameters stays whole, 2ψ/N of 16-bit gradients and
#     12ψ/N of FP32 master weights and Adam moments are shards. Counted at ψ_pad (chapter 6's
#     padding), the rows equal their formulas exactly. The paper's configuration: one step, fp16,
#     --reduce-dtype compute, one micro-batch per rank. Then what the default fp32 changes.
#  2. The traffic of one step per rank, stage 0 against stage 2 at N = 2 and 4 [ZeRO §7.2]: a
#     reduce-scatter and an all-gather send what one all-reduce sends.
#  3. --verify on 1, 2 and 4 ranks (processes) with 0.01 MiB buckets that cut units.
# chapters/07-zero-2/quotes.json names these commands (s2c1 ... c0f4, "script") and pins their
# numbers in the README; tests/chapter06/check_printed_lesson.py 7 checks the printed lines.
set -euo pipefail
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# one run of zero-train; its output is kept quiet unless it fails
zt() { "$build/bin/zero-train" "$@" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; return 1; }; }
# stage 2 in both configurations at N = 1, 2, 4; stage 0 beside it where there is traffic (N > 1)
zt --stage 2 --world-size 1 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype compute \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 1 --micro-batch 1 --summary-json "$tmp/s2-compute-1.json"
zt --stage 2 --world-size 1 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype fp32 \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 1 --micro-batch 1 --summary-json "$tmp/s2-fp32-1.json"
zt --stage 0 --world-size 2 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype compute \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 2 --micro-batch 1 --summary-json "$tmp/s0-compute-2.json"
zt --stage 2 --world-size 2 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype compute \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 2 --micro-batch 1 --summary-json "$tmp/s2-compute-2.json"
zt --stage 0 --world-size 2 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype fp32 \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 2 --micro-batch 1 --summary-json "$tmp/s0-fp32-2.json"
zt --stage 2 --world-size 2 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype fp32 \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 2 --micro-batch 1 --summary-json "$tmp/s2-fp32-2.json"
zt --stage 0 --world-size 4 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype compute \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 4 --micro-batch 1 --summary-json "$tmp/s0-compute-4.json"
zt --stage 2 --world-size 4 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype compute \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 4 --micro-batch 1 --summary-json "$tmp/s2-compute-4.json"
zt --stage 0 --world-size 4 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype fp32 \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 4 --micro-batch 1 --summary-json "$tmp/s0-fp32-4.json"
zt --stage 2 --world-size 4 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype fp32 \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 4 --micro-batch 1 --summary-json "$tmp/s2-fp32-4.json"
python3 - "$tmp" <<'EOF'
import json, sys
def summary(stage, rd, n):
    with open(f"{sys.argv[1]}/s{stage}-{rd}-{n}.json") as f:
        return json.load(f)
def sp(n):  # bytes as the chapters write them: 1 658 880
    return f"{n:,}".replace(",", " ")
def psi_pad(s, n):
    """ψ padded at N ranks (chapter 6): each unit's shard rounded up to whole norm blocks, times N."""
    c = s["config"]
    w, b = c["width"], c["norm_block"]
    block = 12 * w * w + 13 * w                         # one transformer block's elements
    lnf = 2 * w                                         # the final LayerNorm
    emb = s["param_count"] - c["layers"] * block - lnf  # wte + wpe, tied to the head
    return sum(n * b * -(-u // (n * b)) for u in [emb] + [block] * c["layers"] + [lnf])
psi = summary(2, "compute", 1)["param_count"]
print("ZeRO-2 model states per rank, in bytes: measured beside the paper's formula [ZeRO §5.2].")
print("The paper's configuration: fp16 compute, --reduce-dtype compute, one micro-batch per rank.")
print(f"ψ = {sp(psi)} elements; the rows count ψ_pad, ψ with chapter 6's padding; K = 12 = 4 + 8.")
row = "  {:<20}{:>10}   {:<16}= {:>9}{}"
for n in (1, 2, 4):
    s = summary(2, "compute", n)
    cat = s["memory"]["per_rank"][0]["by_category"]
    total = s["memory"]["per_rank"][0]["model_states_bytes"]
    p = psi_pad(s, n)
    print(f"--- N = {n}")
    print(row.format("16-bit parameters", sp(cat["params"]), "2ψ_pad", sp(2 * p), ""))
    print(row.format("16-bit gradients", sp(cat["grads"]), "2ψ_pad/N", sp(2 * p // n), ""))
    print(row.format("FP32 master weights", sp(cat["master"]), "4ψ_pad/N", sp(4 * p // n), ""))
    print(row.format("Adam moments", sp(cat["optimizer"]), "8ψ_pad/N", sp(8 * p // n), ""))
    print(row.format("model states", sp(total), "(2 + 14/N)ψ_pad", sp(2 * p + 14 * p // n),
                     f"; the paper's (2 + 14/N)ψ = {sp(2 * psi + 14 * psi // n)}"))
print("Only the 16-bit parameters stay whole. The gradients shrink as 1/N; ZeRO-1 keeps them whole.")
fp32 = [sp(summary(2, "fp32", n)["memory"]["per_rank"][0]["model_states_bytes"]) for n in (1, 2, 4)]
print("The default --reduce-dtype fp32 keeps the gradient shard in FP32, 4ψ_pad/N: model states")
print(f"{fp32[0]}, {fp32[1]} and {fp32[2]} at N = 1, 2 and 4, the paper's (2 + 16/N)ψ plus padding.")

SHORT = {"reduce_scatter": "RS", "all_gather": "AG", "all_reduce": "AR"}
def sent(stage, rd, n):
    """Bytes rank 0 sends in one step, by collective, the gradient's reduction first."""
    b = summary(stage, rd, n)["comm"]["bytes_sent_per_step"]
    order = ["reduce_scatter", "all_gather", "all_reduce"] if stage else ["all_reduce", "all_gather"]
    return [(SHORT[k], b[k]) for k in order if b.get(k)]
def line(parts):
    return " + ".join(f"{sp(v)} {k}" for k, v in parts) + f" = {sp(sum(v for _, v in parts))}"
print("Bytes rank 0 sends per step (RS reduce-scatter, AG all-gather, AR all-reduce) [ZeRO §7.2].")
print("Stage 0 all-reduces the gradient, 2ψ elements; stage 2 reduce-scatters it (ψ) and all-gathers")
print("the updated parameters (ψ). Each sends 2ψ_pad·(N - 1)/N elements of 2 bytes.")
ratio = {}
for rd in ("compute", "fp32"):
    for n in (2, 4):
        s0, s2 = sent(0, rd, n), sent(2, rd, n)
        ratio[rd, n] = sum(v for _, v in s2) / sum(v for _, v in s0)
        if rd == "compute":
            p = psi_pad(summary(2, rd, n), n)
            print(f"--- N = {n}: 2ψ_pad·(N - 1)/N elements × 2 bytes = {sp(4 * p * (n - 1) // n)}")
            print(f"  stage 0: {line(s0)}")
            print(f"  stage 2: {line(s2)}")
            print(f"  stage 2 / stage 0 = {ratio[rd, n]:.3f}; the paper: 2ψ/2ψ = 1")
print("Stage 2's extra bytes: the norm's block sums (AG) and the overflow flag (AR), as in chapter 6.")
print(f"With the default --reduce-dtype fp32 the ratio is {ratio['fp32', 2]:.3f} at N = 2 and "
      f"{ratio['fp32', 4]:.3f} at N = 4: the gradient")
print("travels in 4 bytes in both stages, the parameters in 2, so 6 bytes per element against 8.")
EOF
echo "--verify: ZeRO-2 on 1, 2 and 4 ranks (processes), bf16, 0.01 MiB buckets that cut units"
for n in 1 2 4; do
  "$build/bin/zero-train" --stage 2 --world-size "$n" --precision bf16 --steps 8 --warmup-steps 0 \
    --global-batch 8 --micro-batch 2 --bucket-mb 0.01 --verify | grep -o 'verify:.*' | sed "s/^/N = $n: /"
done
