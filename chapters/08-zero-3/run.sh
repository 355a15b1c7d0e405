#!/usr/bin/env bash
# Chapter 8's demonstration (make chapter-8), in two parts:
#  1. The traffic of one step per rank, stage 0 against stage 3 at N = 2 and 4, read from
#     --summary-json: bytes sent by collective, their sum and the ratio, beside the paper's
#     3ψ/2ψ = 1.5 [ZeRO §7.2]. These are the chapter's traffic table: one step, fp16, one
#     micro-batch per rank, the paper's --reduce-dtype compute; then the default fp32, whose
#     FP32 gradients make stage 0 send twice the bytes and the ratio about 1.
#  2. ZeRO-3 (parameters gathered per unit, prefetch 1, overlapped reductions) on 1, 2 and 4 ranks
#     (processes), checked bit for bit with --verify.
# chapters/08-zero-3/quotes.json names these commands (c0c2 ... s3f4, "script") and pins their
# numbers in the README; tests/chapter06/check_printed_lesson.py checks the printed lines.
set -euo pipefail
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# one run of zero-train; its output is kept quiet unless it fails
zt() { "$build/bin/zero-train" "$@" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; return 1; }; }
zt --stage 0 --world-size 2 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype compute \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 2 --micro-batch 1 --summary-json "$tmp/compute-s0-n2.json"
zt --stage 3 --world-size 2 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype compute \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 2 --micro-batch 1 --summary-json "$tmp/compute-s3-n2.json"
zt --stage 0 --world-size 4 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype compute \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 4 --micro-batch 1 --summary-json "$tmp/compute-s0-n4.json"
zt --stage 3 --world-size 4 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype compute \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 4 --micro-batch 1 --summary-json "$tmp/compute-s3-n4.json"
zt --stage 0 --world-size 2 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype fp32 \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 2 --micro-batch 1 --summary-json "$tmp/fp32-s0-n2.json"
zt --stage 3 --world-size 2 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype fp32 \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 2 --micro-batch 1 --summary-json "$tmp/fp32-s3-n2.json"
zt --stage 0 --world-size 4 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype fp32 \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 4 --micro-batch 1 --summary-json "$tmp/fp32-s0-n4.json"
zt --stage 3 --world-size 4 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype fp32 \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 4 --micro-batch 1 --summary-json "$tmp/fp32-s3-n4.json"
python3 - "$tmp" <<'EOF'
import json, sys
SHORT = {"reduce_scatter": "RS", "all_gather": "AG", "all_reduce": "AR"}
def sent(rd, stage, n):
    """Bytes rank 0 sends in one step, by collective: the gradient's reduction first."""
    with open(f"{sys.argv[1]}/{rd}-s{stage}-n{n}.json") as f:
        b = json.load(f)["comm"]["bytes_sent_per_step"]
    first = "reduce_scatter" if b.get("reduce_scatter") else "all_reduce"
    order = [first, "all_gather"] + [k for k in b if k not in (first, "all_gather")]
    return [(k, b[k]) for k in order if b.get(k)]
def sp(n):  # bytes as the chapter writes them: 315 700
    return f"{n:,}".replace(",", " ")
def line(parts):
    return " + ".join(f"{sp(v)} {SHORT[k]}" for k, v in parts) + f" = {sp(sum(v for _, v in parts))}"
print("Bytes one rank sends per step (RS reduce-scatter, AG all-gather, AR all-reduce).")
print("The paper [ZeRO §7.2]: stage 0 all-reduces the gradient, 2ψ elements. Stage 3 gathers the")
print("parameters in forward and in backward and reduce-scatters the gradient, 3ψ: 3ψ/2ψ = 1.5.")
print("Measured in the paper's configuration: fp16, --reduce-dtype compute, one micro-batch per rank.")
ratio = {}
for rd in ("compute", "fp32"):
    for n in (2, 4):
        s0, s3 = sent(rd, 0, n), sent(rd, 3, n)
        ratio[rd, n] = sum(v for _, v in s3) / sum(v for _, v in s0)
        if rd == "compute":
            print(f"--- N = {n}")
            print(f"  stage 0: {line(s0)}")
            print(f"  stage 3: {line(s3)}")
            print(f"  stage 3 / stage 0 = {ratio[rd, n]:.3f}; the paper: 3ψ/2ψ = 1.5")
print(f"The extra {ratio['compute', 2] - 1.5:.3f}: the tied embeddings' third gather and the step's scalars")
print("(loss sums, norm block sums, overflow flag).")
print(f"With the default --reduce-dtype fp32 the ratio is {ratio['fp32', 2]:.3f} at N = 2 and {ratio['fp32', 4]:.3f} at N = 4:")
print("FP32 gradients make both stages send 8 bytes per element, 4 + 4 in stage 0's all-reduce,")
print("4 + 2 + 2 in stage 3's reduce-scatter and two gathers.")
EOF
echo "--verify: ZeRO-3 on 1, 2 and 4 ranks (processes), fp16, FP32 gradients, --prefetch 1 --overlap on"
for n in 1 2 4; do
  "$build/bin/zero-train" --stage 3 --world-size "$n" --precision fp16 --steps 8 --warmup-steps 0 \
    --global-batch 8 --micro-batch 2 --prefetch 1 --overlap on --verify | grep -E "verify" | sed "s/^/N = $n: /"
done
