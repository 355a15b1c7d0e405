#!/usr/bin/env python3
"""bench/gpu/ops.py — one GPU run per configuration against zero-plan's roofline for it.

For each tag (gemm_precision) it reads WORK/trace_TAG.json (zero-train --trace: the device's
kernels as spans named "kernel 'NAME'"), WORK/summary_TAG.json (tokens/s) and WORK/plan_TAG.json
(zero-plan --gpu --json: the roofline), and prints a per-op table, measured against predicted
milliseconds per step, with the step's tokens/s and MFU. The first step is left out of the
measured per-op times (it includes the first use of every kernel). Writes everything to --out.
"""
import argparse
import json
import os
import re
import sys
from collections import defaultdict


def per_op_ms(trace_path, steps):
    """Kernel time per step by op name, the first step's share left out (rank 0's device spans)."""
    events = json.load(open(trace_path))["traceEvents"]
    kernels = [e for e in events if e.get("ph") == "X" and e.get("pid", 0) == 0 and str(e.get("name", "")).startswith("kernel '")]
    kernels.sort(key=lambda e: e["ts"])
    per_step = max(1, len(kernels) // steps)
    kept = kernels[per_step:] if steps > 1 else kernels
    total = defaultdict(float)
    for e in kept:
        name = re.sub(r"^kernel '(.*)'$", r"\1", e["name"])
        total[name] += e["dur"] / 1000.0
    measured_steps = steps - 1 if steps > 1 else 1
    return {k: v / measured_steps for k, v in total.items()}


def main():
    a = argparse.ArgumentParser(description=__doc__)
    a.add_argument("--gpu", required=True)
    a.add_argument("--gpu-name", required=True)
    a.add_argument("--work", required=True)
    a.add_argument("--steps", type=int, required=True)
    a.add_argument("--out", required=True)
    a.add_argument("tags", nargs="+")
    args = a.parse_args()
    report = {"gpu": args.gpu, "gpu_name": args.gpu_name, "runs": []}
    for tag in args.tags:
        plan = json.load(open(f"{args.work}/plan_{tag}.json"))["roofline"]
        summary = json.load(open(f"{args.work}/summary_{tag}.json"))
        measured = per_op_ms(f"{args.work}/trace_{tag}.json", args.steps)
        tps = summary["tokens_per_s"]
        mfu = tps * plan["model_flops_per_step"] / plan["tokens_per_step"] / plan["bf16_dense_flops"]
        rows = []
        print(f"\n{tag}: measured {tps} tokens/s (MFU {mfu}), predicted {plan['tokens_per_s']:.0f} tokens/s "
              f"(MFU {plan['mfu']:.3f}), launches per step {plan['launches_per_step']}")
        print(f"  {'op':36s} {'measured ms':>12s} {'predicted ms':>13s} {'ratio':>7s}")
        for op in plan["ops"]:
            m = measured.get(op["op"])
            p = op["seconds"] * 1000.0
            ratio = m / p if m and p > 0 else None
            rows.append({"op": op["op"], "measured_ms": m, "predicted_ms": p, "ratio": ratio})
            print(f"  {op['op']:36s} {m if m is not None else float('nan'):12.3f} {p:13.3f} "
                  f"{ratio if ratio is not None else float('nan'):7.2f}")
        report["runs"].append({"tag": tag, "tokens_per_s": tps, "mfu": mfu, "predicted": plan, "ops": rows})
    with open(args.out + ".tmp", "w") as f:
        json.dump(report, f, indent=2)
    os.replace(args.out + ".tmp", args.out)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
