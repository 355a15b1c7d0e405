#!/usr/bin/env bash
# Chapter 12's demonstration (make chapter-12), in three parts:
#  1. ZeRO-R's P_a and P_a+cpu on a 2 x 2 data-parallel x model-parallel grid, each run checked bit
#     for bit against one device (--verify).
#  2. From those runs' --summary-json, rank 0's checkpoint bytes, the all-gathers P_a adds and the
#     host transfers of P_a+cpu, each beside its closed form [ZeRO §6.1, §8]: a slice of
#     E = ⌈B·T·C/N_m⌉ values per block input, one all-gather of it per block and micro-batch.
#  3. M_D: a step's allocations replayed through one first-fit region and through M_D's regions,
#     then the real run under a budget between the two: general fails, zero trains.
# chapters/12-zero-r/quotes.json names these commands ("script") and pins their numbers in the
# README; tests/chapter10/check_printed_lesson.py checks the printed arithmetic.
set -euo pipefail
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "--- --verify: world 4, --mp-size 2, stage 2, --checkpoint-activations (processes)"
# one --verify run: its summary goes to $tmp/NAME.json, its verdict is printed after the flag it tests
v() {
  local name=$1
  shift
  "$build/bin/zero-train" "$@" --verify --summary-json "$tmp/$name.json" | grep -o 'verify:.*' | sed "s/^/  --partition-activations $name: /"
}
v off --precision bf16 --steps 4 --warmup-steps 0 --global-batch 16 --micro-batch 8 --eval-every 0 --world-size 4 --mp-size 2 --mp-blocks 4 --stage 2 --checkpoint-activations --partition-activations off
v on --precision bf16 --steps 4 --warmup-steps 0 --global-batch 16 --micro-batch 8 --eval-every 0 --world-size 4 --mp-size 2 --mp-blocks 4 --stage 2 --checkpoint-activations --partition-activations on
v cpu --precision bf16 --steps 4 --warmup-steps 0 --global-batch 16 --micro-batch 8 --eval-every 0 --world-size 4 --mp-size 2 --mp-blocks 4 --stage 2 --checkpoint-activations --partition-activations cpu
python3 - "$tmp" <<'EOF'
import json, sys
def summary(name):
    with open(f"{sys.argv[1]}/{name}.json") as f:
        return json.load(f)
off, on, cpu = summary("off"), summary("on"), summary("cpu")
c = off["config"]
L, C, T, B, G, n_m = c["layers"], c["width"], c["context"], c["micro_batch"], c["global_batch"], c["mp_size"]
A = G // (B * (c["world_size"] // n_m))             # micro-batches per rank
t = {"fp32": 4, "fp16": 2, "bf16": 2}[c["precision"]]
E = -(-B * T * C // n_m)                            # a slice: ⌈B·T·C/N_m⌉ values
Et = f"⌈{B}·{T}·{C}/{n_m}⌉·{t}"                      # E·t with the numbers filled in
def rank0(s):
    return s["memory"]["per_rank"][0]
def mp(s, kind, what):
    return s["comm"]["groups"]["mp"][what][kind]
ck = {k: rank0(s)["by_category"].get("activation_checkpoints", 0) for k, s in (("off", off), ("on", on), ("cpu", cpu))}
ag_off, ag_on = mp(off, "all_gather", "bytes_sent_per_step"), mp(on, "all_gather", "bytes_sent_per_step")
n_off, n_on = mp(off, "all_gather", "calls_per_step"), mp(on, "all_gather", "calls_per_step")
host = rank0(cpu)["host"]["by_category"]["activation_checkpoints"]
staging = rank0(cpu)["by_category"].get("checkpoint_staging", 0)
x = cpu["host_transfers"]["per_step"]
rows = [  # (what, closed form with the numbers filled in, measured)
    ("checkpoints, off", f"L·B·T·C·t = {L}·{B}·{T}·{C}·{t} = {L * B * T * C * t:,}", f"{ck['off']:,}"),
    ("checkpoints, on", f"L·E·t = {L}·{Et} = {L * E * t:,}", f"{ck['on']:,} = {ck['off']:,}/N_m"),
    ("MP all-gathers, on", f"off's {n_off} + L·A = {n_off} + {L}·{A} = {n_off + L * A}", f"{n_on}"),
    ("MP all-gather bytes, on", f"off's {ag_off} + L·A·(N_m−1)·E·t = {ag_off} + {L}·{A}·{n_m - 1}·{Et}"
     f" = {ag_off + L * A * (n_m - 1) * E * t:,}", f"{ag_on:,}"),
    ("cpu: checkpoints", "none on the accelerator: 0", f"{ck['cpu']:,}"),
    ("cpu: staging", f"2·E·t = 2·{Et} = {2 * E * t:,}", f"{staging:,}"),
    ("cpu: host checkpoints", f"L·E·t = {L}·{Et} = {L * E * t:,}", f"{host:,}"),
    ("cpu: to host", f"L·A·E·t = {L}·{A}·{Et} = {L * A * E * t:,} in L·A = {L * A} copies",
     f"{x['to_host_bytes']:,} in {x['to_host_calls']}"),
    ("cpu: back", f"the same, {L * A * E * t:,} in {L * A} copies", f"{x['to_device_bytes']:,} in {x['to_device_calls']}"),
]
width = max(len(f) for _, f, _ in rows)
print(f"Rank 0 per step, from those runs' summaries: L = {L}, C = {C}, T = {T}, B = {B}, A = {A}, N_m = {n_m},")
print(f"bf16 (t = {t}). P_a keeps E = ⌈B·T·C/N_m⌉ values of each block input and all-gathers them in backward.")
print(f"  {'':<26}{'closed form, numbers filled in':<{width}}  measured")
for what, formula, measured in rows:
    print(f"  {what:<26}{formula:<{width}}  {measured}")
ar = mp(on, "all_reduce", "bytes_sent_per_step")
print(f"P_a's all-gathers against the MP all-reduces: ({ag_on:,} − {ag_off}) / {ar:,} = {(ag_on - ag_off) / ar:.2%},")
print(f"t/48 = {t / 48:.2%} with FP32 sums; the paper's 1/12 = {1 / 12:.2%} with 16-bit sums: under its 10%.")
EOF
echo "--- M_D: replay of a stage-1 step's allocations (zero-memreplay)"
"$build/bin/zero-train" --stage 1 --global-batch 8 --micro-batch 1 --precision bf16 --steps 2 --eval-every 0 --layers 4 --memory-trace "$tmp/trace.json" >/dev/null
"$build/bin/zero-memreplay" -- "$tmp/trace.json"
echo "--- the same run under --memory-budget-mb 5.9 --allocator general"
"$build/bin/zero-train" --stage 1 --global-batch 8 --micro-batch 1 --precision bf16 --steps 2 --eval-every 0 --layers 4 --memory-budget-mb 5.9 --allocator general 2>&1 | grep -E "out of memory|loss  step" | cut -c1-240 || true
echo "--- the same run under --memory-budget-mb 5.9 --allocator zero"
"$build/bin/zero-train" --stage 1 --global-batch 8 --micro-batch 1 --precision bf16 --steps 2 --eval-every 0 --layers 4 --memory-budget-mb 5.9 --allocator zero --summary-json "$tmp/zero.json" 2>&1 | grep -E "out of memory|loss  step" | cut -c1-240 || true
python3 - "$tmp/zero.json" <<'EOF'
import json, sys
with open(sys.argv[1]) as f:
    r = json.load(f)["memory"]["per_rank"][0]
print(f"  peak {r['peak_bytes']:,} B (predicted {r['peak_bytes_predicted']:,}) of the arena's {r['arena_capacity']:,} B")
EOF
