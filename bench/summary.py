#!/usr/bin/python3
"""bench/summary.py BUILD [--quick] [--rounds R] [--steps S] — the project's benchmarks in one run, one JSON, one table
(`make bench`).

What it measures, on this machine, each in interleaved rounds so that a load drifting over the
minutes penalises every configuration alike (the median of the rounds is reported):
  - gemm: the canonical GEMM against OpenBLAS on one core for the model's shapes (bench-gemm),
    with the name of the kernel OpenBLAS picked for this CPU (OPENBLAS_CORETYPE can override it);
  - model: zero-train on a 10.8M-parameter GPT (V 256, T 256, L 6, H 6, C 384, global batch 8,
    AdamW, clip 1.0, the text of /usr/share/common-licenses/GPL-3) in fp32, bf16 and fp16 at
    --threads 1 and at every core of the machine; tokens/s counts every step's tokens;
  - stages: ZeRO stages 0, 1 and 3 at N = 2 ranks as processes, one thread each;
  - torch: PyTorch eager on the same model at 1 and all threads (forward and backward, no
    optimizer step), and DDP / DDP + ZeroRedundancyOptimizer at N = 2 with AdamW and clipping (the
    peers of stages 0 and 1), when the Python running this script has PyTorch (a benchmark peer
    only, never a dependency).
Writes BUILD/bench/summary.json (atomically) and prints the table. Timings are properties of the
machine and its load: this is a benchmark to run and record, never a test.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

MODEL = ("--data /usr/share/common-licenses/GPL-3 --vocab 256 --context 256 --layers 6 --heads 6 "
         "--width 384 --global-batch 8 --warmup-steps 0 --eval-every 0 --clip-grad-norm 1.0 --optimizer adamw")


def machine():
    model = ""
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    flags = open("/proc/cpuinfo").read()
    return {"cpu": model, "cores": len(os.sched_getaffinity(0)), "avx512f": " avx512f" in flags,
            "load_before": open("/proc/loadavg").read().split()[:3]}


def run(argv, env=None):
    r = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **(env or {})})
    if r.returncode != 0:
        sys.exit(f"bench: {' '.join(argv)} failed ({r.returncode}): {r.stderr.strip()[-400:]}")
    return r.stdout


def zero_train(build, flags, steps):
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        run([os.path.join(build, "bin", "zero-train"), *MODEL.split(), "--steps", str(steps), *flags.split(),
             "--summary-json", summary])
        tps = json.load(open(summary))["tokens_per_s"]
        print(f"  zero-train {flags}: {tps:.0f} tokens/s", file=sys.stderr, flush=True)
        return tps


def gemm(build, reps):
    rows, core = [], "?"
    for line in run([os.path.join(build, "bin", "bench-gemm"), str(reps)]).splitlines():
        if line.startswith("OpenBLAS kernel: "):
            core = line.split(": ", 1)[1].strip()
        m = re.match(r"(\d+x\d+x\d+)\s+(NT|NN|TN)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", line)
        if m:
            rows.append({"shape": m.group(1), "op": m.group(2), "blas_gflops": float(m.group(3)),
                         "canonical_gflops": float(m.group(4)), "ratio": float(m.group(5))})
    return rows, core


def have_torch():
    # the Python running this script: where PyTorch lives in a virtual environment, run it with that one
    return subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0


def torch_peer(root, script, flags):
    # a peer that fails (a PyTorch without gloo, say) loses its row, not the whole summary
    try:
        r = subprocess.run([sys.executable, os.path.join(root, "bench", "model", script), *flags.split()],
                           capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        print(f"bench: {script} {flags} ran past 600 s", file=sys.stderr)
        return None
    lines = [l for l in r.stdout.splitlines() if l.startswith("{")]
    if r.returncode != 0 or not lines:
        print(f"bench: {script} {flags} failed ({r.returncode}): {r.stderr.strip()[-600:]}", file=sys.stderr)
        return None
    tps = json.loads(lines[-1])["tokens_per_s"]
    print(f"  {script} {flags}: {tps:.0f} tokens/s", file=sys.stderr, flush=True)
    return tps


def main():
    def positive(text):
        """argparse type: a count of at least 1 (0 or less would silently mean the default)."""
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
        if value < 1:
            raise argparse.ArgumentTypeError(f"{value} must be at least 1")
        return value

    ap = argparse.ArgumentParser(description="the project's benchmarks in one run (make bench)")
    ap.add_argument("build", help="the build folder (its bin/ holds zero-train and bench-gemm)")
    ap.add_argument("--quick", action="store_true", help="1 round of 2 steps, 3 GEMM repetitions")
    ap.add_argument("--rounds", type=positive, help="interleaved rounds (default: 3, or 1 with --quick)")
    ap.add_argument("--steps", type=positive, help="steps per run (default: 4, or 2 with --quick)")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rounds = a.rounds or (1 if a.quick else 3)
    steps = a.steps or (2 if a.quick else 4)
    quick = a.quick
    cores = len(os.sched_getaffinity(0))
    threads = sorted({1, cores})
    out = {"machine": machine(), "rounds": rounds, "steps": steps, "model": MODEL}
    out["gemm"], out["machine"]["openblas_kernel"] = gemm(build, 3 if quick else 10)

    model_runs = {}
    for _ in range(rounds):
        for precision in ("fp32", "bf16", "fp16"):
            for t in threads:
                key = f"{precision} threads {t}"
                model_runs.setdefault(key, []).append(
                    zero_train(build, f"--precision {precision} --threads {t}", steps))
    out["model"] = {k: {"tokens_per_s": statistics.median(v), "runs": v} for k, v in model_runs.items()}

    stage_runs = {}
    for _ in range(rounds):
        for stage in (0, 1, 3):
            stage_runs.setdefault(f"stage {stage}", []).append(
                zero_train(build, f"--world-size 2 --stage {stage} --threads 1", steps))
    out["stages"] = {k: {"tokens_per_s": statistics.median(v), "runs": v} for k, v in stage_runs.items()}

    peer = {}
    if have_torch():
        runs = {}
        for _ in range(rounds):
            for t in threads:
                runs.setdefault(f"torch eager threads {t}", []).append(
                    torch_peer(root, "torch_gpt.py", f"--batch 8 --steps {steps} --threads {t}"))
            # the peers of stages 0 and 1 at N = 2: DDP, and DDP + ZeroRedundancyOptimizer
            for mode in ("ddp", "zero1"):
                runs.setdefault(f"torch {mode} N = 2", []).append(
                    torch_peer(root, "torch_ddp.py", f"--mode {mode} --world-size 2 --batch 8 --steps {steps}"))
        peer = {k: {"tokens_per_s": statistics.median([x for x in v if x is not None]), "runs": v}
                for k, v in runs.items() if any(x is not None for x in v)}
    out["torch"] = peer or "PyTorch is not installed for " + sys.executable
    out["machine"]["load_after"] = open("/proc/loadavg").read().split()[:3]

    os.makedirs(os.path.join(build, "bench"), exist_ok=True)
    path = os.path.join(build, "bench", "summary.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)

    m = out["machine"]
    print(f"machine: {m['cpu']}, {m['cores']} cores, AVX-512 {'yes' if m['avx512f'] else 'no'}; "
          f"load {' '.join(m['load_before'])} -> {' '.join(m['load_after'])}; median of {rounds} round(s)")
    # the OpenBLAS kernel is named because a CPU the library does not recognise gets an older one
    print(f"canonical GEMM / OpenBLAS (its {m['openblas_kernel']} kernel), one core:")
    for r in out["gemm"]:
        print(f"  {r['shape']:>16} {r['op']}  {r['canonical_gflops']:7.1f} / {r['blas_gflops']:7.1f} GFLOP/s = {r['ratio']:.2f}")
    base = out["model"]["fp32 threads 1"]["tokens_per_s"]
    print("zero-train, 10.8M-parameter GPT, tokens/s (ratio to fp32 at 1 thread):")
    for k, v in out["model"].items():
        print(f"  {k:<18} {v['tokens_per_s']:8.0f}  {v['tokens_per_s'] / base:5.2f}")
    for k, v in out["stages"].items():
        print(f"  N = 2, {k:<11} {v['tokens_per_s']:8.0f}")
    if peer:
        for k, v in peer.items():
            print(f"  {k:<18} {v['tokens_per_s']:8.0f}")
    else:
        print(f"  PyTorch: not installed for {sys.executable} (no peer row)")
    print(f"written: {path}")


if __name__ == "__main__":
    main()
