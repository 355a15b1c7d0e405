#!/usr/bin/env bash
# bench/zero/offload.sh — step time of ZeRO-Offload's tiers: the optimizer on the accelerator
# tier (no offload), in the host tier, and in the file tier with and without read-ahead.
# Configurations run in interleaved rounds (each once per round) so that load drifting over
# minutes penalises all of them alike. Reported per configuration: the median step time; the
# median over rounds of the step-time ratio to the host tier's run of the same round, with its
# interquartile range; the file tier's time blocked on I/O and the I/O thread's busy time per
# step (rank 0, medians); the process's peak resident memory (medians).
# The file lives under DIR (default: a fresh directory in /tmp), so its reads and writes go
# through the kernel's page cache: what is measured is the tier's own cost (system calls,
# copies, waiting), not a disk's bandwidth.
# Not a test: timings are properties of the machine and its load.
# usage: bench/zero/offload.sh [ROUNDS=5] [BUILD_DIR=build]
#   env MODEL="..." (model/batch flags), DIR=... (the file tier's directory)
set -euo pipefail
ROUNDS=${1:-5}; BUILD=${2:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$BUILD/bin/zero-train"
MODEL=${MODEL:-"--stage 1 --layers 8 --heads 4 --width 256 --context 32 --precision bf16 --optimizer adamw \
--global-batch 4 --micro-batch 4 --steps 12 --warmup-steps 0 --eval-every 0"}
OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT
DIR=${DIR:-$OUT/tier}; mkdir -p "$DIR"
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "model: $MODEL; file tier in $DIR"
/usr/bin/python3 - "$BIN" "$OUT" "$ROUNDS" "$DIR" "$MODEL" <<'PY'
import json, os, shlex, statistics, subprocess, sys
binary, out, rounds, tier, model = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
configs = [("no offload (accelerator tier)", "--offload-optimizer none"),
           ("host tier", "--offload-optimizer host"),
           ("file tier, B 3, read-ahead", f"--offload-optimizer file:{tier}"),
           ("file tier, B 1, read-ahead at step ends only", f"--offload-optimizer file:{tier} --offload-buffers 1"),
           ("file tier, B 3, no read-ahead", f"--offload-optimizer file:{tier} --offload-read-ahead off")]
runs = {i: [] for i in range(len(configs))}
for r in range(rounds):
    for i, (_, flags) in enumerate(configs):
        summary = f"{out}/s_{i}_{r}.json"
        p = subprocess.Popen([binary] + shlex.split(model) + shlex.split(flags) + ["--summary-json", summary],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(p.pid, 0)
        if status != 0:
            sys.exit(f"run failed: {flags}: {p.stderr.read().decode()}")
        j = json.load(open(summary))
        steps = j["config"]["steps"]
        io = j.get("offload_file_io", {})
        runs[i].append({"step": j["seconds"] / steps, "wait": io.get("wait_seconds", 0) / steps,
                        "busy": io.get("io_seconds", 0) / steps, "rss": usage.ru_maxrss / 1024})
def q(xs, f):
    xs = sorted(xs); k = (len(xs) - 1) * f; i = int(k)
    return xs[i] if i + 1 >= len(xs) else xs[i] + (xs[i + 1] - xs[i]) * (k - i)
med = lambda i, key: statistics.median(x[key] for x in runs[i])
print("| configuration | median step time | ratio to the host tier, same round: median (IQR) | blocked on file I/O per step | I/O thread busy per step | peak RSS |")
print("|---|---:|---|---:|---:|---:|")
for i, (name, _) in enumerate(configs):
    ratios = [runs[i][r]["step"] / runs[1][r]["step"] for r in range(rounds)]
    print(f"| {name} | {1000 * med(i, 'step'):.1f} ms | {statistics.median(ratios):.2f} ({q(ratios, .25):.2f}–{q(ratios, .75):.2f}) "
          f"| {1000 * med(i, 'wait'):.1f} ms | {1000 * med(i, 'busy'):.1f} ms | {med(i, 'rss'):.0f} MiB |")
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
