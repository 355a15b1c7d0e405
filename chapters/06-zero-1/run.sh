#!/usr/bin/env bash
# Chapter 6's demonstration (make chapter-6), in three parts:
#  1. ZeRO-1's model states per rank at N = 1, 2 and 4, by category, each beside the paper's
#     formula [ZeRO §5.1]: 2ψ of 16-bit parameters, 2ψ of 16-bit gradients and 12ψ/N of FP32
#     master weights and Adam moments, with ψ_pad (ψ padded by the layout rule) as the chapter
#     counts them. These are the paper's configuration and the chapter's memory table: one step,
#     fp16, --reduce-dtype compute, one micro-batch per rank. Only the optimizer states shrink.
#  2. The default --reduce-dtype fp32 (the table's last column): FP32 gradients, 4ψ_pad bytes.
#  3. --verify on 1, 2 and 4 ranks (processes): a global batch of four micro-batches split 4x1,
#     2x2 and 1x4, bit for bit the single-rank run.
# chapters/06-zero-1/quotes.json names these commands (m1 ... c1f4, "script") and pins their numbers
# in the README; tests/chapter06/check_printed_lesson.py checks the printed lines.
set -euo pipefail
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# one run of zero-train; its output is kept quiet unless it fails
zt() { "$build/bin/zero-train" "$@" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; return 1; }; }
zt --stage 1 --world-size 1 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype compute \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 1 --micro-batch 1 --summary-json "$tmp/compute1.json"
zt --stage 1 --world-size 2 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype compute \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 2 --micro-batch 1 --summary-json "$tmp/compute2.json"
zt --stage 1 --world-size 4 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype compute \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 4 --micro-batch 1 --summary-json "$tmp/compute4.json"
zt --stage 1 --world-size 1 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype fp32 \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 1 --micro-batch 1 --summary-json "$tmp/fp321.json"
zt --stage 1 --world-size 2 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype fp32 \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 2 --micro-batch 1 --summary-json "$tmp/fp322.json"
zt --stage 1 --world-size 4 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype fp32 \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 4 --micro-batch 1 --summary-json "$tmp/fp324.json"
python3 - "$tmp" <<'EOF'
import json, sys
def summary(name):
    with open(f"{sys.argv[1]}/{name}.json") as f:
        return json.load(f)
def sp(n):  # bytes as the chapter writes them: 1 658 880
    return f"{n:,}".replace(",", " ")
def psi_pad(s, n):
    """ψ padded by the chapter's layout rule: each unit's shard rounded up to whole norm blocks."""
    c = s["config"]
    w, b = c["width"], c["norm_block"]
    block = 12 * w * w + 13 * w                        # a transformer block's elements
    lnf = 2 * w                                        # the final LayerNorm
    emb = s["param_count"] - c["layers"] * block - lnf  # wte + wpe
    units = [emb] + [block] * c["layers"] + [lnf]
    return sum(n * b * -(-u // (n * b)) for u in units)
psi = summary("compute1")["param_count"]
print("ZeRO-1 model states per rank, in bytes: measured beside the paper's formula [ZeRO §5.1].")
print("The paper's configuration: fp16 compute, --reduce-dtype compute, one micro-batch per rank.")
print(f"ψ = {sp(psi)} elements; ψ_pad rounds each unit's shard up to whole norm blocks of 256.")
row = "  {:<18}{:>10}   {:<12}= {:>9}{}"
opt, pad = {}, {}
for n in (1, 2, 4):
    s = summary(f"compute{n}")
    m = s["memory"]["per_rank"][0]
    cat = m["by_category"]
    pad[n] = p = psi_pad(s, n)
    opt[n] = cat["master"] + cat["optimizer"]
    paper = (4 * n + 12) * psi // n
    print(f"--- N = {n}: ψ_pad = {sp(p)}")
    print(row.format("16-bit parameters", sp(cat["params"]), "2ψ_pad", sp(2 * p), ""))
    print(row.format("16-bit gradients", sp(cat["grads"]), "2ψ_pad", sp(2 * p), ""))
    print(row.format("optimizer states", sp(opt[n]), "12ψ_pad/N", sp(12 * p // n),
                     f"  (master {sp(cat['master'])} + moments {sp(cat['optimizer'])})"))
    print(row.format("model states", sp(m["model_states_bytes"]), "(4 + 12/N)ψ", sp(paper),
                     f"  + {sp(m['model_states_bytes'] - paper)} mean padding"))
print(f"Only the optimizer states shrink: at N = 2 and 4 they are {opt[2] / opt[1]:.3f} and "
      f"{opt[4] / opt[1]:.3f} of N = 1's (1/N, plus padding).")
fp32 = {n: summary(f"fp32{n}")["memory"]["per_rank"][0]["model_states_bytes"] for n in (1, 2, 4)}
print("The default --reduce-dtype fp32 keeps FP32 gradients, 4ψ_pad instead of 2ψ_pad; nothing else")
print(f"changes. Model states: {sp(fp32[1])}, {sp(fp32[2])} and {sp(fp32[4])} at N = 1, 2 and 4.")
EOF
echo "--verify: ZeRO-1 on 1, 2 and 4 ranks (processes), fp16, FP32 gradients, 4 micro-batches a step"
for n in 1 2 4; do
  "$build/bin/zero-train" --stage 1 --world-size "$n" --precision fp16 --steps 8 --warmup-steps 0 \
    --global-batch 8 --micro-batch 2 --verify | grep -E "verify" | sed "s/^/N = $n: /"
done
