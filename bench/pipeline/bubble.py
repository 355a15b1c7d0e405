#!/usr/bin/env python3
"""bench/pipeline/bubble.py - the pipeline bubble measured from zero-train's --trace, against the
closed form (P-1)/(M+P-1) (chapter 15).

For each schedule (gpipe, 1f1b), P stages and M micro-batches, zero-train runs --world-size P
--pp-size P with ranks as processes and --trace; in the trace every pass of a stage is a span of
category "pass" ("forward m", "backward m"). Per step: stage s's busy time B_s is the sum of its
pass spans; the step's makespan T is stage 0's first pass start to its last pass end (stage 0
starts the step's first forward and ends its last backward); the measured bubble is
1 - sum_s B_s / (P T), the fraction of the P x T stage-time the stages were idle. Reported per
configuration: the median over the measured steps (the first is excluded), beside the closed
form. The closed form assumes every stage takes the same t_f and t_b; here the first stage also
runs the embedding and the last the head and the loss, and the transfers take time, so the
measurement sits near the formula, not on it: the table states the difference.

Not a test: timings are properties of the machine. With P ranks on fewer than P cores the stages
share cores and the wall-clock spans stretch; the machine's cores are printed.
usage: bench/pipeline/bubble.py [BUILD_DIR=build] [--stages 2,4] [--micro 4,8,16] [--steps 6]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("build", nargs="?", default="build")
ap.add_argument("--stages", default="2,4")
ap.add_argument("--micro", default="4,8,16")
ap.add_argument("--steps", type=int, default=6)
ap.add_argument("--model", default="--layers 8 --heads 4 --width 256 --context 64 --precision fp32 "
                                   "--micro-batch 4 --warmup-steps 0 --eval-every 0")
args = ap.parse_args()
ZT = os.path.join(args.build, "bin", "zero-train")
MODEL = args.model.split()
B = int(MODEL[MODEL.index("--micro-batch") + 1])  # sequences per micro-batch: --global-batch is M x B


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown CPU"




def bubble(trace, P, M):
    """Per measured step: 1 - sum of busy / (P * stage 0's span)."""
    by_rank = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "pass":
            by_rank.setdefault(e["pid"], []).append((e["ts"], e["dur"]))
    per_stage = [sorted(by_rank[s]) for s in range(P)]
    out = []
    n = len(per_stage[0]) // (2 * M)
    for k in range(1, n):  # the first step warms up
        busy = sum(d for s in range(P) for _, d in per_stage[s][2 * M * k: 2 * M * (k + 1)])
        first = per_stage[0][2 * M * k]
        last = per_stage[0][2 * M * (k + 1) - 1]
        span = last[0] + last[1] - first[0]
        out.append(1.0 - busy / (P * span))
    return out


print(f"machine: {os.cpu_count()} cores, {cpu_model()}")
print(f"model: {args.model}")
print(f"{'schedule':8} {'P':>2} {'M':>3}  {'measured':>9}  {'(P-1)/(M+P-1)':>13}  {'difference':>10}")
with tempfile.TemporaryDirectory() as d:
    for sched in ("gpipe", "1f1b"):
        for P in (int(x) for x in args.stages.split(",")):
            for M in (int(x) for x in args.micro.split(",")):
                path = os.path.join(d, "trace.json")
                cmd = [ZT, *MODEL, "--world-size", str(P), "--pp-size", str(P), "--pp-schedule", sched,
                       "--global-batch", str(B * M), "--steps", str(args.steps), "--trace", path]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    sys.exit(f"zero-train failed: {' '.join(cmd)}\n{r.stderr}")
                with open(path) as f:
                    measured = statistics.median(bubble(json.load(f), P, M))
                closed = (P - 1) / (M + P - 1)
                print(f"{sched:8} {P:>2} {M:>3}  {measured:9.3f}  {closed:13.3f}  {measured - closed:+10.3f}")
