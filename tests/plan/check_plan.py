#!/usr/bin/env python3
"""tests/plan/check_plan.py - zero-plan against measured runs, the paper's figures and bad input.

Usage: check_plan.py BUILD_DIR {agreement|agreement-full|paper|seq-default|bad-input|max-model}

agreement  For a grid of configurations zero-train runs here (stages 0-3, N = 1, 2, 4, fp32 /
           fp16 / bf16, one and two micro-batches per rank: the 12 rows that hold every pair of
           values of any two of these axes, or their full product of 72 with agreement-full, which
           make test-full runs; then --mp-size 2, --checkpoint-activations,
           and the schedule's options: buckets, --overlap off, --reduce-dtype compute, --grad-sync,
           --prefetch, --persist-below-mb, --offload-params, --allocator zero, split blocks, --data,
           --shard-group: hybrid sharding, its traffic inside, across and over all ranks apart;
           --pp-size: pipeline stages with GPipe and 1F1B, an uneven --pp-split, and with model
           parallelism and hybrid sharding, every stage's ranks and the pipeline group's traffic),
           zero-plan's per-rank bytes by ledger category (device and host), every rank's high-water
           mark, and rank 0's calls and bytes per step by collective and group equal EXACTLY the
           MEASURED fields of zero-train's --summary-json (memory.per_rank[].by_category and
           peak_bytes, comm.groups.*.bytes_sent_per_step and calls_per_step), never zero-train's
           own predicted ones; and where the run is the ZeRO engine, rank 0's predicted arena trace
           (zero-plan --memory-trace) equals zero-train's --memory-trace event by event. Rows with
           --device emulated (tensor parallelism, P_a, P_a+cpu, ZeRO-Offload and the parameter tier among them) add
           the host side's bytes and rank 0's copies between host and device memory per step (zero-plan's device_copies against zero-train's measured
           device_copies.per_step, by kind, copies and bytes).
paper      Paper-scale figures: expected values from the closed form 2psi + 2psi + K psi with
           P_os / P_os+g / P_os+g+p over N_d (with --pp-size, of psi / N_p per stage), computed here,
           equal zero-plan's JSON; and they agree
           with the figures as printed by the paper and by the exercises within their rounding
           (one unit of the last printed digit). Also the breakeven batch of chapter 8's exercise.
seq-default  The time estimate's and the breakeven's T: with --params and no --seq it is GPT-3's
           context, 2048 tokens, and the time-estimate line says so; --seq overrides it; without
           --params it is the run's own --context (32 by default), as before.
bad-input  Each bad command line gives one error line on stderr and a non-zero exit.
max-model  zero-plan --max-model's --layers answer runs under zero-train at the same
           --memory-budget-mb, and one layer more fails with the arena's out-of-memory error at
           the allocation the planner's replay predicted (same request, free bytes and largest
           free block), over notebook 07's grid of stages 0-3 and N = 1, 2, 4, 8.
Exit status 0 when every check holds; each failure is printed.
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

BUILD = sys.argv[1]
MODE = sys.argv[2]
ZP = os.path.join(BUILD, "bin", "zero-plan")
ZT = os.path.join(BUILD, "bin", "zero-train")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def plan_json(args):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "plan.json")
        subprocess.run([ZP, *args, "--json", path], check=True, stdout=subprocess.DEVNULL)
        with open(path) as f:
            return json.load(f)


def measured_json(args):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "summary.json")
        subprocess.run([ZT, *args, "--steps", "1", "--eval-every", "0", "--ranks-as", "threads", "--summary-json", path],
                       check=True, stdout=subprocess.DEVNULL)
        with open(path) as f:
            return json.load(f)


def events_of(path):
    with open(path) as f:
        return json.load(f)["events"]


def same_trace(name, planned, measured):
    """Event lists equal; else the first difference."""
    for i, (p, m) in enumerate(zip(planned, measured)):
        if p != m:
            check(False, f"{name}: trace event {i}: planned {p}, measured {m}")
            return
    check(len(planned) == len(measured), f"{name}: {len(planned)} planned events, {len(measured)} measured")


def comm_of(group):
    """{kind: {calls, bytes}} from one group of the summary's comm object (measured fields)."""
    return {k: {"calls": group["calls_per_step"][k], "bytes": group["bytes_sent_per_step"][k]}
            for k in group["calls_per_step"] if group["calls_per_step"][k]}


def agreement(full=False):
    grid = []
    # stages 0-3 x N = 1, 2, 4 x fp32 / fp16 / bf16 x one or two micro-batches per rank: every row of
    # the product with `full` (make test-full); else the 12 rows that hold every (stage, N) once and
    # every pair of values of any two of the four axes (k = stage + N's index runs over 0..5, and
    # (k mod 3, k mod 2) takes all six values)
    for stage in range(4):
        for j, n in enumerate((1, 2, 4)):
            for p, precision in enumerate(("fp32", "fp16", "bf16")):
                for two_micro_batches in (False, True):
                    if not full and (p != (stage + j) % 3 or two_micro_batches != bool((stage + j) % 2)):
                        continue
                    args = ["--stage", str(stage), "--world-size", str(n), "--precision", precision]
                    if two_micro_batches:  # --micro-batch half of the per-rank share of --global-batch 32
                        args += ["--micro-batch", str(32 // n // 2)]
                    grid.append(args)
    grid.append(["--stage", "2", "--world-size", "2", "--precision", "fp16", "--offload-optimizer", "host"])
    grid.append(["--stage", "1", "--world-size", "4", "--mp-size", "2", "--precision", "bf16",
                 "--partition-activations", "cpu", "--checkpoint-activations"])
    grid.append(["--stage", "1", "--world-size", "4", "--mp-size", "2", "--precision", "bf16"])
    grid.append(["--stage", "3", "--world-size", "2", "--precision", "fp16", "--checkpoint-activations",
                 "--micro-batch", "8"])
    # the schedule's options, which move the transient buffers in time (the trace's order)
    grid.append(["--stage", "2", "--world-size", "4", "--precision", "bf16", "--bucket-mb", "0.02"])
    grid.append(["--stage", "2", "--world-size", "2", "--precision", "fp32", "--bucket-mb", "0.03", "--overlap", "off",
                 "--micro-batch", "4"])
    grid.append(["--stage", "2", "--world-size", "2", "--precision", "fp16", "--reduce-dtype", "compute",
                 "--bucket-mb", "0.02", "--micro-batch", "8"])
    for stage in range(4):
        grid.append(["--stage", str(stage), "--world-size", "2", "--precision", "bf16", "--reduce-dtype", "compute"])
    grid.append(["--stage", "1", "--world-size", "2", "--precision", "bf16", "--grad-sync", "micro-batch",
                 "--micro-batch", "4"])
    grid.append(["--stage", "2", "--world-size", "2", "--precision", "fp16", "--grad-sync", "step", "--micro-batch", "4"])
    grid.append(["--stage", "3", "--world-size", "4", "--precision", "bf16", "--prefetch", "0", "--overlap", "off"])
    grid.append(["--stage", "3", "--world-size", "2", "--precision", "fp16", "--prefetch", "3",
                 "--persist-below-mb", "0.05", "--micro-batch", "4"])
    grid.append(["--stage", "3", "--world-size", "2", "--precision", "bf16", "--offload-params", "file:PARAMS"])
    grid.append(["--stage", "2", "--world-size", "2", "--precision", "bf16", "--allocator", "zero",
                 "--checkpoint-activations", "--micro-batch", "4"])
    grid.append(["--stage", "3", "--world-size", "4", "--mp-size", "2", "--mp-blocks", "2", "--precision", "fp16",
                 "--partition-activations", "on", "--checkpoint-activations"])
    grid.append(["--stage", "3", "--world-size", "2", "--precision", "bf16", "--data", "TEXT", "--context", "16"])
    # hybrid sharding: states over groups of 2, replicated across 2 groups; and with model parallelism
    grid.append(["--stage", "3", "--world-size", "4", "--shard-group", "2", "--precision", "bf16"])
    grid.append(["--stage", "2", "--world-size", "4", "--shard-group", "2", "--precision", "fp16", "--bucket-mb", "0.02"])
    grid.append(["--stage", "1", "--world-size", "8", "--mp-size", "2", "--shard-group", "2", "--precision", "fp32",
                 "--micro-batch", "4"])
    # pipeline stages: ZeRO inside each stage, the workspaces of the micro-batches in flight, send/recv
    grid.append(["--stage", "1", "--world-size", "4", "--pp-size", "2", "--pp-schedule", "gpipe", "--precision", "bf16",
                 "--micro-batch", "4"])
    grid.append(["--stage", "3", "--world-size", "4", "--pp-size", "2", "--precision", "fp16",
                 "--checkpoint-activations", "--micro-batch", "8"])
    grid.append(["--stage", "0", "--world-size", "3", "--pp-size", "3", "--layers", "4", "--pp-split", "1,1,2", "--precision", "fp32",
                 "--micro-batch", "8"])
    grid.append(["--stage", "2", "--world-size", "8", "--pp-size", "2", "--mp-size", "2", "--precision", "bf16",
                 "--micro-batch", "8", "--bucket-mb", "0.02"])
    grid.append(["--stage", "3", "--world-size", "8", "--pp-size", "2", "--shard-group", "2", "--precision", "bf16",
                 "--micro-batch", "4"])
    # on the emulated device: the device arena, the host side and the copies between them
    grid.append(["--device", "emulated", "--precision", "bf16", "--micro-batch", "8"])
    for stage, n, precision in ((0, 2, "fp32"), (1, 2, "bf16"), (2, 4, "bf16"), (3, 2, "fp32"), (3, 1, "bf16")):
        grid.append(["--device", "emulated", "--stage", str(stage), "--world-size", str(n), "--precision", precision,
                     "--micro-batch", str(32 // n // 2)])
    grid.append(["--device", "emulated", "--stage", "2", "--world-size", "2", "--precision", "bf16",
                 "--reduce-dtype", "compute", "--bucket-mb", "0.02", "--micro-batch", "8"])
    grid.append(["--device", "emulated", "--stage", "3", "--world-size", "4", "--mp-size", "2", "--mp-blocks", "4",
                 "--precision", "fp16", "--checkpoint-activations", "--micro-batch", "8"])
    grid.append(["--device", "emulated", "--stage", "1", "--world-size", "4", "--mp-size", "2", "--precision", "bf16",
                 "--partition-activations", "cpu", "--checkpoint-activations"])
    grid.append(["--device", "emulated", "--stage", "3", "--world-size", "4", "--mp-size", "2", "--precision", "fp32",
                 "--partition-activations", "on", "--checkpoint-activations", "--micro-batch", "8"])
    grid.append(["--device", "emulated", "--stage", "2", "--world-size", "2", "--precision", "fp16",
                 "--offload-optimizer", "host"])
    grid.append(["--device", "emulated", "--stage", "3", "--world-size", "2", "--precision", "bf16",
                 "--offload-params", "file:PARAMS", "--gemm", "blas"])
    tmp = tempfile.mkdtemp(prefix="zt-plan-")
    text = os.path.join(tmp, "text.txt")
    os.makedirs(os.path.join(tmp, "params"))
    with open(text, "w") as f:
        f.write("the zero redundancy optimizer partitions the model states across data-parallel ranks. " * 20)
    for args in grid:
        args = [text if a == "TEXT" else a.replace("PARAMS", os.path.join(tmp, "params")) for a in args]
        name = " ".join(args)
        plan = plan_json(args)
        engine = not plan["reference_loop"]
        if engine:  # (--memory-trace makes zero-train use the engine: only where it does anyway)
            for old in ("planned.json", "measured.json"):
                if os.path.exists(os.path.join(tmp, old)):
                    os.remove(os.path.join(tmp, old))
            traced = ["--memory-trace", os.path.join(tmp, "measured.json")]
            plan = plan_json([*args, "--memory-trace", os.path.join(tmp, "planned.json")])
            run = measured_json([*args, *traced])
            same_trace(name, events_of(os.path.join(tmp, "planned.json")), events_of(os.path.join(tmp, "measured.json")))
        else:
            run = measured_json(args)
        ranks = run["memory"]["per_rank"]
        check(len(ranks) == len(plan["ranks"]), f"{name}: {len(plan['ranks'])} planned ranks, {len(ranks)} measured")
        for p, m in zip(plan["ranks"], ranks):
            check(p["device"] == m["by_category"],
                  f"{name}: rank {m['rank']} device bytes: planned {p['device']} measured {m['by_category']}")
            check(p["high_water_bytes"] == m["peak_bytes"],
                  f"{name}: rank {m['rank']} high-water: planned {p['high_water_bytes']} measured {m['peak_bytes']}")
            check(p["model_states_bytes"] == m["model_states_bytes"], f"{name}: rank {m['rank']} model states")
            if "host" in m:
                check(p["host"] == m["host"]["by_category"], f"{name}: rank {m['rank']} host bytes")
        p0 = plan["ranks"][0]
        if "comm" in run:  # the ZeRO engine reports rank 0's counters of the last step
            groups = run["comm"]["groups"]
            for g in [g for g in ("dp", "mp", "dp_shard", "dp_replica", "dp_whole", "pp") if g in p0["comm"]]:
                check(g in groups, f"{name}: zero-train reports no {g} traffic")
                check(p0["comm"][g] == comm_of(groups[g]),
                      f"{name}: rank 0 {g} traffic: planned {p0['comm'][g]} measured {comm_of(groups[g])}")
        else:  # the single-rank reference loop communicates nothing
            check(p0["comm"] == {"dp": {}, "mp": {}}, f"{name}: one rank plans no traffic")
        if "device_copies" in run:  # on a device: rank 0's host<->device copies of the step (either loop)
            check(not run["steps"][-1]["skipped"], f"{name}: the measured step was skipped")
            measured = {k: v for k, v in run["device_copies"]["per_step"].items() if k != "device_to_device"}
            check(p0.get("device_copies") == measured,
                  f"{name}: rank 0 device copies: planned {p0.get('device_copies')} measured {measured}")
        print("agree:", name, "(trace too)" if engine else "(reference loop)")


def within_printed(value, printed):
    """The printed figure's last digit is one unit: |value - printed| < that unit."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return abs(value - float(printed)) < 10.0 ** -decimals


def paper():
    def closed_form(psi, k, stage, n):
        s_p, s_g, s_o = stage >= 3, stage >= 2, stage >= 1
        return (2 * psi * (1 / n if s_p else 1) + 2 * psi * (1 / n if s_g else 1) + k * psi * (1 / n if s_o else 1))

    # (psi, optimizer, stage, N_d, printed GB or None, where it is printed)
    cases = [
        (7.5e9, "adamw", 0, 1, "120", "Figure 1 baseline"),
        (7.5e9, "adamw", 1, 64, "31.4", "Figure 1 P_os"),
        (7.5e9, "adamw", 2, 64, "16.6", "Figure 1 P_os+g"),
        (7.5e9, "adamw", 3, 64, "1.9", "Figure 1 P_os+g+p"),
        (1.5e9, "adam", 0, 1, "24", "Sec. 3.1: 16 psi for 1.5B"),
        (13e9, "adamw", 0, 1, "208", "13B, no ZeRO"),
        (13e9, "adamw", 2, 8, "48.75", "13B, ZeRO-2 on 8"),
        (13e9, "adamw", 3, 32, "6.5", "13B, ZeRO-3 on 32"),
        (70e9, "adamw", 0, 1, "1120", "70B, plain data parallel"),
        (70e9, "adamw", 3, 16, "70", "70B, ZeRO-3 on 16"),
    ]
    # the paper's Table 1 (chapter 3 prints it beside the recomputed values)
    table = {1: ["120", "120", "120", "2048", "2048", "2048", "16000", "16000", "16000"],
             4: ["52.5", "41.3", "30", "896", "704", "512", "7000", "5500", "4000"],
             16: ["35.6", "21.6", "7.5", "608", "368", "128", "4750", "2875", "1000"],
             64: ["31.4", "16.6", "1.88", "536", "284", "32", "4187", "2218", "250"],
             256: ["30.4", "15.4", "0.47", "518", "263", "8", "4046", "2054", "62.5"],
             1024: ["30.1", "15.1", "0.12", "513", "257", "2", "4011", "2013", "15.6"]}
    for n, row in table.items():
        for m, psi in enumerate((7.5e9, 128e9, 1e12)):
            for stage in (1, 2, 3):
                cases.append((psi, "adam", stage, n, row[3 * m + stage - 1], f"Table 1 N = {n}"))
    for psi, opt, stage, n, printed, where in cases:
        j = plan_json(["--params", repr(psi), "--optimizer", opt, "--stage", str(stage), "--world-size", str(n)])
        expected = closed_form(psi, 12 if opt != "sgd" else 8, stage, n)
        got = j["model_states"]["total"]
        check(math.isclose(got, expected, rel_tol=1e-12), f"{where}: zero-plan {got} B, closed form {expected} B")
        # the paper truncates some figures (4187 for 4187.5): allow one unit of the last digit
        check(within_printed(got / 1e9, printed), f"{where}: {got / 1e9} GB vs printed {printed}")
        print(f"paper: {where}: psi {psi:g} stage {stage} N {n}: {got / 1e9:g} GB (printed {printed})")
    # a common picture: 4 pipeline stages, each with its own ZeRO-3 group of 4 ranks: a stage holds
    # psi / 4, sharded over its 4 ranks
    for stage in (1, 2, 3):
        j = plan_json(["--params", "13e9", "--stage", str(stage), "--world-size", "16", "--pp-size", "4",
                       "--layers", "40"])
        expected = closed_form(13e9 / 4, 12, stage, 4)
        check(math.isclose(j["model_states"]["total"], expected, rel_tol=1e-12),
              f"pipeline 4 x ZeRO-{stage} over 4: zero-plan {j['model_states']['total']} B, closed form {expected} B")
    # without --layers the call count takes GPT-3's depth for psi: L = round(cbrt(psi / (12 * 128^2)))
    # (GPT-3 13B has 40 layers, 175B 96); --layers overrides it
    for psi, layers in ((7.5e9, 34), (13e9, 40), (175e9, 96), (1e3, 1)):
        want = max(1, round((psi / (12 * 128 * 128)) ** (1 / 3)))  # at least one layer
        j = plan_json(["--params", repr(psi), "--stage", "3", "--world-size", "8"])
        check(want == layers, f"psi {psi:g}: closed form L = {want}, expected {layers}")
        check(j["traffic"]["layers"] == layers and not j["traffic"]["layers_given"]
              and j["traffic"]["calls_per_step"] == 3 * layers,
              f"psi {psi:g} without --layers: zero-plan L = {j['traffic']['layers']}, "
              f"{j['traffic']['calls_per_step']} calls; expected L = {layers}, {3 * layers} calls")
    j = plan_json(["--params", "7.5e9", "--stage", "3", "--world-size", "8", "--layers", "72"])
    check(j["traffic"]["layers"] == 72 and j["traffic"]["layers_given"] and j["traffic"]["calls_per_step"] == 216,
          f"--layers 72 at paper scale: zero-plan L = {j['traffic']['layers']}, {j['traffic']['calls_per_step']} calls")
    # SGD: K = 8
    j = plan_json(["--params", "1e9", "--optimizer", "sgd"])
    check(j["model_states"]["total"] == 12e9, "SGD: 12 psi")
    # traffic: exact model keeps (N-1)/N
    j = plan_json(["--params", "1e9", "--stage", "3", "--world-size", "4"])
    check(math.isclose(j["traffic"]["bytes_per_step"], 6e9 * 3 / 4, rel_tol=1e-12), "stage 3 traffic 3 psi (N-1)/N")
    # the back-of-envelope breakeven: alpha 10 us, beta 100 GB/s, 150 TFLOP/s, 5%, 6 psi bytes (paper model)
    for psi, layers in ((7e9, 32), (13e9, 40), (70e9, 80)):
        for seq, want in ((2048, 15), (8192, 4)):
            j = plan_json(["--params", repr(psi), "--stage", "3", "--world-size", "8", "--layers", str(layers),
                           "--traffic-model", "paper", "--seq", str(seq)])
            # expected: the smallest B with L 3 alpha + 6 psi / beta <= 0.05 * 6 psi B S / F
            comm = layers * 3 * 10e-6 + 6 * psi / 100e9
            b = 1
            while comm > 0.05 * 6 * psi * b * seq / 150e12:
                b += 1
            got = j["breakeven"]["batch"]
            check(got == b == want, f"breakeven psi {psi:g} S {seq}: zero-plan {got}, closed form {b}, expected {want}")
            print(f"breakeven: psi {psi:g} L {layers} S {seq}: B = {got}")


def seq_default():
    note = "T = 2048 tokens (the default with --params: GPT-3's context) per rank"
    # (args, expected T, where it came from, whether the time-estimate line names the default)
    cases = [(["--params", "7.5e9", "--stage", "3", "--world-size", "64"], 2048, "gpt3_context", True),
             (["--params", "13e9", "--stage", "2", "--world-size", "8", "--layers", "40"], 2048, "gpt3_context", True),
             (["--params", "7.5e9", "--stage", "3", "--world-size", "64", "--seq", "512"], 512, "--seq", False),
             (["--params", "7.5e9", "--stage", "3", "--world-size", "64", "--context", "64"], 2048, "gpt3_context",
              True),
             (["--stage", "2", "--world-size", "2"], 32, "--context", False),
             (["--stage", "2", "--world-size", "2", "--context", "64"], 64, "--context", False),
             (["--stage", "2", "--world-size", "2", "--seq", "128"], 128, "--seq", False)]
    for args, seq, source, named in cases:
        j = plan_json(args)
        out = subprocess.run([ZP, *args], check=True, capture_output=True, text=True).stdout
        time_line = next((l for l in out.splitlines() if l.startswith("time estimate:")), "")
        even_line = next((l for l in out.splitlines() if l.startswith("breakeven:")), "")
        check(j["time_estimate"]["seq"] == seq and j["breakeven"]["seq"] == seq
              and j["time_estimate"]["seq_from"] == source,
              f"{args}: T = {j['time_estimate']['seq']} (breakeven {j['breakeven']['seq']}) from "
              f"{j['time_estimate']['seq_from']}; expected {seq} from {source}")
        check((note in time_line) == named and f"x T = {seq} tokens" in time_line,
              f"{args}: time estimate line {time_line!r}: T = {seq}, the default named: {named}")
        check(f"of T = {seq} tokens per rank per step" in even_line, f"{args}: breakeven line {even_line!r}")
        # the estimate's compute term is c psi B T / F with the T above
        t = j["time_estimate"]
        want = t["flops_per_param_token"] * t["psi"] * t["batch"] * seq / (t["tflops"] * 1e12)
        check(math.isclose(t["compute_s"], want, rel_tol=1e-12), f"{args}: compute {t['compute_s']} s, expected {want}")
        print(f"seq default: {' '.join(args)}: T = {seq} ({source})")
    # --help says what the default is
    help_text = subprocess.run([ZP, "--help"], check=True, capture_output=True, text=True).stdout
    # the flag's entry up to its default, however --help wraps its lines
    seq_entry = re.search(r"--seq INT (.*?\(default: [^)]*\))", " ".join(help_text.split()))
    check(seq_entry and "(default: --context; with --params 2048, GPT-3's context)" in seq_entry.group(1),
          f"--help's --seq: {seq_entry.group(1) if seq_entry else None!r}")


def bad_input():
    cases = [
        ["--bogus"],
        ["--params", "abc"],
        ["--params", "0"],
        ["--beta-gbs", "0"],
        ["--traffic-model", "ring"],
        ["--stage", "4"],
        ["--width", "65", "--heads", "4"],
        ["--world-size", "3"],
        ["--params", "1e9", "--world-size", "6", "--mp-size", "4"],
        ["--json"],
        ["--gpu", "h200"],
        ["--gpu", "v100", "--device", "cuda"],
        ["--gpu", "h200", "--device", "cuda", "--mp-size", "2", "--world-size", "2"],
    ]
    for args in cases:
        r = subprocess.run([ZP, *args], capture_output=True, text=True)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        check(r.returncode != 0 and len(lines) == 1 and r.stdout == "",
              f"{args}: exit {r.returncode}, stderr {r.stderr!r}, stdout {r.stdout[:80]!r}")
        print("bad input:", args, "->", lines[0] if lines else "(nothing)")


def max_model():
    cases = [["--memory-budget-mb", "16"],
             ["--memory-budget-mb", "12", "--stage", "2", "--world-size", "2", "--precision", "fp16"]]
    # notebook 07's grid: every stage at N = 1, 2, 4, 8 in 8 MiB (the stage-3 answers need the
    # replayed trace: the sum of the category peaks is above the arena's real high-water mark)
    for stage in range(4):
        for n in (1, 2, 4, 8):
            cases.append(["--memory-budget-mb", "8", "--precision", "bf16", "--global-batch", "8", "--stage", str(stage),
                          "--world-size", str(n)])
    for args in cases:
        j = plan_json(["--max-model", *args])["max_model"]
        layers = j["layers"]
        check(layers >= 1, f"{args}: a layer fits")
        fits = subprocess.run([ZT, *args, "--layers", str(layers), "--steps", "1", "--eval-every", "0",
                               "--ranks-as", "threads"], capture_output=True, text=True)
        check(fits.returncode == 0, f"{args} --layers {layers}: zero-train failed: {fits.stderr.strip()}")
        over = subprocess.run([ZT, *args, "--layers", str(layers + 1), "--steps", "1", "--eval-every", "0",
                               "--ranks-as", "threads"], capture_output=True, text=True)
        # the run fails at the allocation the replay predicted, with the same free bytes and largest block
        predicted = j["next_failure"].replace("out of memory in replay", "out of memory in the --memory-budget-mb arena")
        check(over.returncode != 0 and predicted in over.stderr,
              f"{args} --layers {layers + 1}: expected {predicted!r}, got exit {over.returncode}: "
              f"{over.stderr.strip()[:300]}")
        print(f"max model {args}: --layers {layers} runs; --layers {layers + 1}: {predicted}")


{"agreement": agreement, "agreement-full": lambda: agreement(full=True), "paper": paper, "seq-default": seq_default,
 "bad-input": bad_input, "max-model": max_model}[MODE]()
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
