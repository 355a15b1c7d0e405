#!/usr/bin/env bash
# Chapter 9's demonstration (make chapter-9): ZeRO-3's three knobs change when a collective runs,
# how many run, or over which ranks; never the bits. Per knob, the numbers of one step (ranks as
# threads, read from --summary-json) beside the chapter's formulas, then one --verify run on 4
# processes:
#  1. prefetch and overlap: the same calls and bytes at --prefetch 1 --overlap on and at
#     --prefetch 0 --overlap off; only the gathered peak differs (p + 1 blocks);
#  2. --trace: rank 0's spans over two steps beside the counts L + 3 and L + 2 per micro-batch;
#  3. --persist-below-mb at N = 2 and 4: fewer all-gathers, model states = the per-unit formula
#     (2ψ_u(1 - 1/N) more per whole unit) + mean padding, in the paper's configuration;
#  4. --shard-group 2 of N_d = 4: a 2-rank run's model states and gathers, and the replicas'
#     all-reduce 2(R - 1)/R · n/G beside it.
# chapters/09-zero-3-tuning/quotes.json names these commands (pf1 ... hyb, "script") and pins their
# numbers in the README; tests/chapter06/check_printed_lesson.py 9 checks the printed lines.
set -euo pipefail
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# one run of zero-train; its output is kept quiet unless it fails
zt() { "$build/bin/zero-train" "$@" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; return 1; }; }
# a --verify run's one line, the same whether rank 0 prefixes its lines or not
run_verify() { "$build/bin/zero-train" "$@" | grep -o 'verify:.*' | sed 's/^/  /'; }
# the paper's configuration, one step and one micro-batch per rank
zt --stage 3 --world-size 4 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype compute \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 4 --micro-batch 1 --prefetch 1 --overlap on --summary-json "$tmp/pf1.json"
zt --stage 3 --world-size 4 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype compute \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 4 --micro-batch 1 --prefetch 0 --overlap off --summary-json "$tmp/pf0.json"
zt --stage 3 --world-size 2 --ranks-as threads --precision fp16 --steps 2 --warmup-steps 0 \
  --eval-every 0 --global-batch 2 --micro-batch 1 --trace "$tmp/trace.json"
zt --stage 3 --world-size 2 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype compute \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 2 --micro-batch 1 --persist-below-mb 0 --summary-json "$tmp/ps2-0.json"
zt --stage 3 --world-size 2 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype compute \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 2 --micro-batch 1 --persist-below-mb 0.001 --summary-json "$tmp/ps2-1.json"
zt --stage 3 --world-size 2 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype compute \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 2 --micro-batch 1 --persist-below-mb 0.01 --summary-json "$tmp/ps2-2.json"
zt --stage 3 --world-size 4 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype compute \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 4 --micro-batch 1 --persist-below-mb 0 --summary-json "$tmp/ps4-0.json"
zt --stage 3 --world-size 4 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype compute \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 4 --micro-batch 1 --persist-below-mb 0.001 --summary-json "$tmp/ps4-1.json"
zt --stage 3 --world-size 4 --ranks-as threads --precision fp16 --optimizer adamw --reduce-dtype compute \
  --steps 1 --warmup-steps 0 --eval-every 0 --global-batch 4 --micro-batch 1 --persist-below-mb 0.01 --summary-json "$tmp/ps4-2.json"
# hybrid sharding as the README's table runs it: the default precision (fp32), global batch 8
zt --stage 3 --world-size 4 --global-batch 8 --ranks-as threads --steps 1 --eval-every 0 --summary-json "$tmp/flat.json"
zt --stage 3 --world-size 4 --shard-group 2 --global-batch 8 --ranks-as threads --steps 1 --eval-every 0 --summary-json "$tmp/hyb.json"
zt --stage 3 --world-size 2 --global-batch 8 --ranks-as threads --steps 1 --eval-every 0 --summary-json "$tmp/two.json"
# the lesson, one knob at a time; part N ends where the --verify run of that knob goes
lesson() { python3 - "$tmp" "$1" <<'EOF'
import json, sys
tmp, part = sys.argv[1], sys.argv[2]
def summary(name):
    with open(f"{tmp}/{name}.json") as f:
        return json.load(f)
def sp(n):  # bytes as the chapters write them: 831 488
    return f"{n:,}".replace(",", " ")
def rank0(name):
    return summary(name)["memory"]["per_rank"][0]
def units(s):
    """Real elements per unit in the acquire order's numbering: embeddings, L blocks, ln_f."""
    c = s["config"]
    w, L = c["width"], c["layers"]
    block, lnf = 12 * w * w + 13 * w, 2 * w
    return [s["param_count"] - L * block - lnf] + [block] * L + [lnf]
def padded(u, n, b):  # a unit's elements at N ranks: its shard rounded up to norm blocks, times N
    return n * b * -(-u // (n * b))
SHORT = {"reduce_scatter": "RS", "all_gather": "AG", "all_reduce": "AR"}
def parts(bytes_by_kind):
    order = ["reduce_scatter", "all_gather", "all_reduce"]
    shown = [f"{sp(bytes_by_kind[k])} {SHORT[k]}" for k in order if bytes_by_kind.get(k)]
    return " + ".join(shown) + f" = {sp(sum(bytes_by_kind.values()))}"
if part == "1":
    print("ZeRO-3's knobs change when a collective runs, how many run, or over which ranks; never a bit.")
    print("Bytes and calls are one step's, per rank (ranks as threads), read from --summary-json.")
    print("--- prefetch and overlap (N = 4, fp16, --reduce-dtype compute): the same bytes, sent sooner")
    for name, knobs in (("pf1", "--prefetch 1 --overlap on: "), ("pf0", "--prefetch 0 --overlap off:")):
        comm = summary(name)["comm"]
        print(f"  {knobs} {parts(comm['bytes_sent_per_step'])} bytes in {sum(comm['calls_per_step'].values())} calls")
    g1, g0 = (rank0(n)["by_category"]["gathered_params"] for n in ("pf1", "pf0"))
    print(f"  gathered_params peak: {sp(g1)} bytes at p = 1, {sp(g0)} at p = 0: p + 1 padded blocks")
    print("  4 processes, --prefetch 0 --overlap off, 8 steps:")
elif part == "2":
    with open(f"{tmp}/trace.json") as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("pid") == 0]
    count = lambda test: sum(1 for e in events if test(e))
    L = 2  # the default model's blocks
    print(f"--- --trace (N = 2, 2 steps, L = {L}): rank 0's spans beside their counts")
    print(f"  compute spans          {count(lambda e: e.get('cat') == 'compute'):>3} = 2 × ((L + 3) forward + (L + 2) backward)")
    print(f"  wait all_gather spans  {count(lambda e: e.get('name', '').startswith('wait all_gather')):>3}"
          " = 2 × (2L + 5) acquires, every unit sharded")
    print(f"  wait reduce spans      {count(lambda e: e.get('name', '').startswith('wait reduce')):>3} = 2 × (L + 2) units")
elif part == "3":
    print("--- --persist-below-mb (fp16, --reduce-dtype compute): model states per rank, in bytes")
    print("  per unit u: sharded (2 + 2 + K)ψ_u/N, whole 2ψ_u + (2 + K)ψ_u/N: 2ψ_u(1 - 1/N) more")
    print("  (AG: the all-gathers of a step; params: the 16-bit parameters a rank stores)")
    print(f"  N  threshold  {'whole units':<16}  {'AG calls':>8}  {'AG bytes':>8}  {'params':>7}  {'model states':>12}"
          "  Σ_u + mean padding")
    for n in (2, 4):
        for k, whole in enumerate(("none", "ln_f", "ln_f, embeddings")):
            s = summary(f"ps{n}-{k}")
            c, m = s["config"], s["memory"]["per_rank"][0]
            u = units(s)
            # whole units, by the flag's rule: 16-bit parameters under the threshold in bytes
            keep = [x for x in u if 2 * x < c["persist_below_mb"] * 2**20]
            formula = 16 * sum(u) // n + sum(2 * x * (n - 1) // n for x in keep)
            extra = f"{sp(formula)} + {sp(m['model_states_bytes'] - formula)}" if keep else "16ψ/N + padding"
            print(f"  {n}  {c['persist_below_mb']:<9g}  {whole:<16}  {s['comm']['calls_per_step']['all_gather']:>8}"
                  f"  {sp(s['comm']['bytes_sent_per_step']['all_gather']):>8}  {sp(m['by_category']['params']):>7}"
                  f"  {sp(m['model_states_bytes']):>12}  {extra}")
    print("  4 processes, --persist-below-mb 0.01, 8 steps:")
elif part == "4":
    flat, hyb, two = (summary(n) for n in ("flat", "hyb", "two"))
    groups = hyb["comm"]["groups"]
    G, Nd = hyb["config"]["shard_group"], hyb["config"]["world_size"]
    R = Nd // G
    shard = hyb["memory"]["per_rank"][0]["by_category"]["grads"]  # n/G: the FP32 gradient a rank reduces
    states = lambda s: sp(s["memory"]["per_rank"][0]["model_states_bytes"])
    print(f"--- hybrid sharding: N_d = {Nd}, --shard-group {G}, R = N_d/G = {R} (fp32, global batch 8)")
    print(f"  model states: {states(hyb)}, a {G}-rank run's {states(two)} (flat over {Nd} ranks: {states(flat)})")
    inside, alone = groups["dp_shard"]["bytes_sent_per_step"], two["comm"]["bytes_sent_per_step"]
    print(f"  inside the shard group:  {sp(inside['reduce_scatter'])} RS + {sp(inside['all_gather'])} AG,"
          f" the {G}-rank run's {sp(alone['reduce_scatter'])} RS + {sp(alone['all_gather'])} AG")
    print(f"  across the shard groups: {sp(groups['dp_replica']['bytes_sent_per_step']['all_reduce'])} AR"
          f" = 2(R - 1)/R × n/G + 4 = {sp(2 * (R - 1) * shard // R)} + 4")
    print(f"    (n/G = {sp(shard)} bytes: the rank's FP32 gradient shard, summed over the R replicas;"
          " 4: the overflow flag)")
    print(f"  all {Nd} ranks: {sp(groups['dp_whole']['bytes_sent_per_step']['all_gather'])} AG (the loss sums)")
    print("  4 processes, --shard-group 2, 8 steps:")
EOF
}
lesson 1
run_verify --stage 3 --world-size 4 --precision fp16 --steps 8 --warmup-steps 0 --global-batch 8 --micro-batch 2 --prefetch 0 --overlap off --verify
lesson 2
lesson 3
run_verify --stage 3 --world-size 4 --precision fp16 --steps 8 --warmup-steps 0 --global-batch 8 --micro-batch 2 --persist-below-mb 0.01 --verify
lesson 4
run_verify --stage 3 --world-size 4 --precision fp16 --steps 8 --warmup-steps 0 --global-batch 8 --micro-batch 2 --shard-group 2 --verify
