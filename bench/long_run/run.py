#!/usr/bin/env python3
"""bench/long_run/run.py - does a long run leak? Resident memory and open descriptors over time.

usage: bench/long_run/run.py [BUILD_DIR=build] [--steps 10000] [--every 500] [--csv out.csv]

Runs zero-train for many steps the way a long job runs: ZeRO stage 3 on N = 2 ranks as processes,
a small model, a checkpoint every 500 steps (--save-dir, --save-every), the optimizer state in the
file tier (--offload-optimizer file:DIR) and the parameter shards in files (--offload-params
file:DIR). Every half second it samples each rank's resident memory (VmRSS in /proc/PID/status)
and its open file descriptors (the entries of /proc/PID/fd), and the step it has reached (from
rank 0's progress lines). Reported: the curves (a CSV with --csv, and a table of one row per
checkpoint interval), and the verdict: between the first interval after warm-up and the last,
the resident memory may grow by the step history (the one record a run keeps per step, 48
bytes, for its summary) plus 256 KiB of allocator noise, and the descriptor count may not grow
at all. Both are what a leak would break: memory that accumulates per step or per checkpoint, a
descriptor left open per save or per file-tier pass. (heaptrack on a 3000-step run showed the
malloc'd heap flat to within 3 KiB apart from that history.)
Not a test: it runs for minutes. Its figures are recorded in bench/long_run/README.md.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("build", nargs="?", default="build")
ap.add_argument("--steps", type=int, default=10000)
ap.add_argument("--every", type=int, default=500, help="checkpoint interval in steps")
ap.add_argument("--csv", help="write every sample here")
args = ap.parse_args()

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ZT = os.path.join(ROOT, args.build, "bin", "zero-train")
MODEL = ["--stage", "3", "--world-size", "2", "--layers", "2", "--heads", "2", "--width", "32", "--context", "16",
         "--digits", "1", "--global-batch", "4", "--precision", "bf16", "--warmup-steps", "50",
         "--eval-every", str(args.every)]


HISTORY_BYTES_PER_STEP = 48  # sizeof(zt::train::StepRecord), static_assert-ed in train/run_loop.cc
SLACK_KIB = 256  # allocator noise: a freed block the heap keeps, a page touched once


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except FileNotFoundError:
        return []


with tempfile.TemporaryDirectory(prefix="zt_long_run_") as work:
    cmd = [ZT] + MODEL + ["--steps", str(args.steps), "--save-dir", f"{work}/ckpt", "--save-every", str(args.every),
                          "--offload-optimizer", f"file:{work}/opt", "--offload-params", f"file:{work}/params"]
    print("machine:", os.cpu_count(), "cores,",
          subprocess.run(["sh", "-c", "lscpu | sed -n 's/^Model name: *//p'"], capture_output=True,
                         text=True).stdout.strip())
    print("command:", " ".join(cmd[1:]).replace(work, "$WORK"), flush=True)
    start = time.monotonic()
    out_path, err_path = f"{work}/stdout", f"{work}/stderr"
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
    step, samples, ranks = 0, [], []
    while proc.poll() is None:
        time.sleep(0.5)
        with open(out_path) as f:
            for m in re.finditer(r"step (\d+): loss", f.read()):
                step = int(m.group(1))
        if not ranks:
            ranks = children(proc.pid)
        try:
            samples.append((time.monotonic() - start, step, [rss_kib(p) for p in ranks], [fds(p) for p in ranks]))
        except (FileNotFoundError, ProcessLookupError):
            pass  # a rank is exiting at the end of the run
    if proc.returncode != 0:
        sys.exit(f"zero-train failed ({proc.returncode}):\n{open(err_path).read()}")
    took = time.monotonic() - start
    saves = len([d for d in os.listdir(f"{work}/ckpt") if d.startswith("step-")])

if args.csv:
    with open(args.csv, "w") as f:
        f.write("seconds,step," + ",".join(f"rss_kib_rank{r},fds_rank{r}" for r in range(len(ranks))) + "\n")
        for t, s, rss, fd in samples:
            f.write(f"{t:.1f},{s}," + ",".join(f"{a},{b}" for a, b in zip(rss, fd)) + "\n")

# One row per interval of `every` steps (the step counter comes from the evaluations, which run
# every `every` steps): the largest resident memory seen in it, and the fewest open descriptors (a
# save or a file-tier pass holds one more for a moment; a leaked one raises the floor).
rows = {}
for t, s, rss, fd in samples:
    k = s // args.every
    old = rows.get(k)
    rows[k] = (max(old[0], max(rss)) if old else max(rss), min(old[1], max(fd)) if old else max(fd))
print(f"{args.steps} steps, {saves} checkpoints kept, {took:.0f} s; per interval of {args.every} steps, over both "
      "ranks:")
print("  steps        resident MiB (largest)   open fds (fewest)")
for k in sorted(rows):
    print(f"  {k * args.every:>6}-{(k + 1) * args.every - 1:<6} {rows[k][0] / 1024:12.2f}             {rows[k][1]:6d}")
intervals = sorted(rows)
if len(intervals) < 3:
    sys.exit("too few intervals to judge: give more --steps")
first, last = rows[intervals[1]], rows[intervals[-1]]  # the first interval is warm-up
grew_kib = last[0] - first[0]
# The one thing a run keeps per step: its StepRecord (48 bytes; train/run_loop.cc reserves the
# history up front, so it grows by exactly that as its pages fill).
history_kib = HISTORY_BYTES_PER_STEP * (intervals[-1] - intervals[1]) * args.every / 1024
beyond = grew_kib - history_kib
print(f"after warm-up: resident memory {first[0] / 1024:.2f} -> {last[0] / 1024:.2f} MiB ({grew_kib:+d} KiB, of "
      f"which the step history {history_kib:.0f} KiB; beyond it {beyond:+.0f} KiB), open fds {first[1]} -> {last[1]}")
flat = beyond <= SLACK_KIB and last[1] <= first[1]
print("flat" if flat else "NOT flat: look for a leak")
sys.exit(0 if flat else 1)
