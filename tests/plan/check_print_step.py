#!/usr/bin/env python3
"""tests/plan/check_print_step.py BUILD_DIR [--self-test] - zero-plan --print-step prints a rank's
step as a program whose shape follows from the configuration alone.

For a grid of configurations (stages 0-3 at N = 2 with one and two micro-batches per rank,
--prefetch 0-2, small buckets, --overlap off, 16-bit gradients, ZeRO-Offload, P_a with tensor
parallelism, hybrid sharding, a pipeline stage under GPipe and 1F1B) the printed program must:
  - have as many operation lines as its header says, numbered 0, 1, 2, ...;
  - free every buffer it allocates: the live bytes after the last operation are the set-up's,
    and each category's + and - bytes balance;
  - run the model's passes in order (forward then backward of micro-batch 0, 1, ...; with a
    pipeline, every micro-batch's forward and backward once), and close every `grad uX` with a
    `grad_done uX` before the unit's next `grad`;
  - gather before use at stage 3: one all_gather per acquire (no persistent unit here), the k-th
    issued before the k-th acquire and at most --prefetch + 1 ahead of it; none at stages 0-2;
  - reduce every unit's whole gradient: at stages 2-3 (--grad-sync micro-batch) each micro-batch's
    reduce_scatter buckets of a unit move its grad_staging bytes times the wire's width over the
    compute width; at stages 0-1 (--grad-sync step) one step_sync per unit after the last pass.
Those are the rules the engine follows; that the program is the engine's own order is checked
by the plan agreement (check_plan.py agreement), where walking it gives zero-train's measured
--memory-trace event by event. A configuration the single-rank loop runs prints one line saying
so. `--self-test` plants a swapped pair of operations and a dropped free into a real program and
checks that both are reported. Exit 0 when every check holds; each failure is printed.
"""
import re
import subprocess
import sys

BUILD = sys.argv[1]
ZP = BUILD + "/bin/zero-plan"
COMMON = ["--global-batch", "4", "--eval-every", "0"]
GRID = [
    ["--stage", "0", "--world-size", "2"],
    ["--stage", "1", "--world-size", "2", "--micro-batch", "1"],
    ["--stage", "2", "--world-size", "2", "--bucket-mb", "0.05"],
    ["--stage", "2", "--world-size", "2", "--micro-batch", "1", "--overlap", "off", "--precision", "bf16"],
    ["--stage", "2", "--world-size", "2", "--precision", "bf16", "--reduce-dtype", "compute"],
    ["--stage", "3", "--world-size", "2", "--prefetch", "0"],
    ["--stage", "3", "--world-size", "2", "--micro-batch", "1", "--prefetch", "2", "--precision", "fp16"],
    ["--stage", "2", "--world-size", "2", "--offload-optimizer", "host"],
    ["--stage", "2", "--world-size", "4", "--mp-size", "2", "--checkpoint-activations", "--partition-activations", "on"],
    ["--stage", "3", "--world-size", "4", "--shard-group", "2"],
    ["--stage", "1", "--world-size", "4", "--pp-size", "2", "--micro-batch", "1", "--pp-schedule", "gpipe"],
    ["--stage", "3", "--world-size", "4", "--pp-size", "2", "--micro-batch", "1", "--pp-schedule", "1f1b"],
]
HEADER = re.compile(r"^step of rank 0: (\d+) operations, (\d+) buffers; live at the start \(set-up\): (\d+) B$")
LINE = re.compile(r"^ *(\d+)  (\S+)(.*?) live (\d+)$")


def parse(text):
    lines = text.rstrip("\n").split("\n")
    m = HEADER.match(lines[0])
    if not m:
        return None, ["no header: %r" % lines[0]]
    ops, problems = [], []
    for line in lines[2:]:
        o = LINE.match(line)
        if not o:
            problems.append("not an operation line: %r" % line)
            continue
        ops.append({"index": int(o.group(1)), "kind": o.group(2), "rest": o.group(3), "live": int(o.group(4))})
    return (int(m.group(1)), int(m.group(3)), ops), problems


def field(op, letter):
    m = re.search(r"\b%s(\d+)\b" % letter, op["rest"])
    return int(m.group(1)) if m else None


def effects(op):
    return [(sign, cat, int(n)) for sign, cat, n in re.findall(r"([+-])(\w+) (\d+)", op["rest"])]


def check_program(args, text):
    parsed, problems = parse(text)
    if parsed is None:
        return problems
    count, start, ops = parsed
    opt = {args[i]: args[i + 1] for i in range(0, len(args) - 1) if args[i].startswith("--") and not args[i + 1].startswith("--")}
    stage, pipelined = int(opt["--stage"]), "--pp-size" in opt
    if len(ops) != count or [o["index"] for o in ops] != list(range(count)):
        problems.append("%d operation lines numbered %s, the header says %d" % (len(ops), [o["index"] for o in ops][:5], count))
    if ops and ops[-1]["live"] != start:
        problems.append("live bytes after the last operation %d, at the start %d" % (ops[-1]["live"], start))
    balance = {}
    for o in ops:
        for sign, cat, n in effects(o):
            balance[cat] = balance.get(cat, 0) + (n if sign == "+" else -n)
    problems += ["category %s: + and - differ by %d bytes" % (c, b) for c, b in balance.items() if b]
    passes = [(o["rest"].split()[0], field(o, "m")) for o in ops if o["kind"] == "pass"]
    a = len(passes) // 2
    if not pipelined and passes != [(k, m) for m in range(a) for k in ("forward", "backward")]:
        problems.append("passes out of order: %s" % passes)
    if pipelined and sorted(passes) != sorted((k, m) for m in range(a) for k in ("forward", "backward")):
        problems.append("a pipeline stage's passes are not each micro-batch's forward and backward once: %s" % passes)
    open_grads = set()
    for o in ops:
        u = field(o, "u")
        if o["kind"] == "grad":
            if u in open_grads:
                problems.append("op %d: grad u%d again before its grad_done" % (o["index"], u))
            open_grads.add(u)
        if o["kind"] == "grad_done":
            if u not in open_grads:
                problems.append("op %d: grad_done u%d without a grad" % (o["index"], u))
            open_grads.discard(u)
    problems += check_gathers(opt, stage, pipelined, ops)
    problems += check_reductions(opt, stage, pipelined, ops, a)
    units = {field(o, "u") for o in ops if o["kind"] == "grad"}
    problems += check_step_end(opt, stage, ops, units)
    return problems


def check_gathers(opt, stage, pipelined, ops):
    gathers = [o["index"] for o in ops if o["kind"] == "all_gather" and "in place" not in o["rest"]]
    acquires = [o["index"] for o in ops if o["kind"] == "acquire"]
    if stage < 3:
        return ["stage %d gathers %d units" % (stage, len(gathers))] if gathers else []
    if pipelined:  # a last stage's reads of wte are its received copy's; the first stage gathers wte for it
        return [] if gathers else ["stage 3 on a pipeline gathers nothing"]
    problems = []
    if len(gathers) != len(acquires):
        problems.append("%d all_gathers for %d acquires" % (len(gathers), len(acquires)))
    ahead = int(opt.get("--prefetch", "1")) + 1
    waits = [o["index"] for o in ops if o["kind"] == "wait"]
    for k, (g, q) in enumerate(zip(gathers, acquires)):
        own_wait = next((w for w in waits if w > q), None)  # the acquire waits for its own gather
        if own_wait is None or g > own_wait:
            problems.append("gather %d (op %d) issued after acquire %d (op %d) waited for it" % (k, g, k, q))
        if k + ahead < len(gathers) and gathers[k + ahead] < q:
            problems.append("more than --prefetch + 1 gathers issued before acquire %d (op %d)" % (k, q))
    return problems


def check_step_end(opt, stage, ops, units):
    """After the passes: the loss, each unit's step gradient, the agreement, each unit's update;
    with S_o but not S_p (stages 1-2) each updated unit is shared by an all_gather in place."""
    kinds = [o["kind"] for o in ops]
    problems = []
    if kinds.count("loss") != 1 or kinds.count("agree") != 1:
        return ["%d loss and %d agree operations, want one each" % (kinds.count("loss"), kinds.count("agree"))]
    loss, agree = kinds.index("loss"), kinds.index("agree")
    if any(k == "pass" for k in kinds[loss:]):
        problems.append("a pass after the loss")
    for kind, where in (("step_grad", (loss, agree)), ("update", (agree, len(ops)))):
        got = sorted(field(o, "u") for o in ops[where[0]:where[1]] if o["kind"] == kind)
        if got != sorted(units):
            problems.append("%s units %s, the step's units %s" % (kind, got, sorted(units)))
    shares = [field(o, "u") for o in ops if o["kind"] == "all_gather" and "in place" in o["rest"]]
    want = sorted(units) if stage in (1, 2) else []
    if sorted(shares) != want:
        problems.append("updated shards shared for units %s, want %s" % (sorted(shares), want))
    return problems


def check_reductions(opt, stage, pipelined, ops, a):
    problems = []
    staging = {}
    for o in ops:
        for sign, cat, n in effects(o):
            if sign == "+" and cat == "grad_staging":
                staging[field(o, "u")] = n
    compute = {"fp16": 2, "bf16": 2}.get(opt.get("--precision", "fp32"), 4)
    wire = compute if opt.get("--reduce-dtype") == "compute" else 4
    if stage >= 2 and "--shard-group" not in opt:
        moved = {}
        for o in ops:
            if o["kind"] in ("reduce_scatter", "all_reduce"):
                m = re.search(r"(\d+) B moved", o["rest"])
                moved[field(o, "u")] = moved.get(field(o, "u"), 0) + int(m.group(1))
        for u, n in staging.items():
            want = a * n * wire // compute
            if moved.get(u, 0) != want:
                problems.append("unit %d: its buckets move %d bytes, %d micro-batches of %d B at width %d want %d"
                                % (u, moved.get(u, 0), a, n, wire, want))
    if stage <= 1 and not pipelined:
        syncs = [o for o in ops if o["kind"] == "step_sync"]
        last_pass = max(o["index"] for o in ops if o["kind"] == "pass")
        if sorted(field(o, "u") for o in syncs) != sorted(staging):
            problems.append("step_sync units %s, the step's units %s" % ([field(o, "u") for o in syncs], sorted(staging)))
        if any(o["index"] < last_pass for o in syncs):
            problems.append("a step_sync before the last pass")
    return problems


def run(args):
    return subprocess.run([ZP, "--print-step", *args, *COMMON], capture_output=True, text=True)


def self_test():
    text = run(GRID[5]).stdout
    lines = text.split("\n")
    k = next(i for i, l in enumerate(lines) if " all_gather " in l)  # its wait moved before it
    swapped = lines[:]
    swapped[k], swapped[k + 1] = swapped[k + 1], swapped[k]
    dropped = [re.sub(r", -grads \d+", "", l) for l in lines]
    report = {"swapped": check_program(GRID[5], "\n".join(swapped)),
              "dropped": check_program(GRID[5], "\n".join(dropped))}
    bad = [name for name, problems in report.items() if not problems]
    for name in bad:
        print("FAIL: the planted fault '%s' was not reported" % name)
    if not bad:
        print("check_print_step self-test: a swapped gather and a dropped free are both reported")
    return 1 if bad else 0


def main():
    if "--self-test" in sys.argv:
        return self_test()
    failures = 0
    for args in GRID:
        r = run(args)
        problems = [f"exit {r.returncode}: {r.stderr.strip()}"] if r.returncode else check_program(args, r.stdout)
        for p in problems:
            print("FAIL: %s: %s" % (" ".join(args), p))
        failures += len(problems)
        if not problems:
            print("ok: %s: %s" % (" ".join(args), r.stdout.split("\n")[0]))
    r = run(["--stage", "0", "--world-size", "1"])
    if r.returncode or "reference loop" not in r.stdout:
        print("FAIL: a one-rank stage-0 run should say the reference loop runs it: %r" % r.stdout)
        failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
