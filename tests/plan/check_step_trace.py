#!/usr/bin/env python3
"""tests/plan/check_step_trace.py BUILD_DIR [--self-test] - zero-train runs the step zero-plan prints.

For a grid of configurations (stages 0-3, with and without prefetch, --overlap off, ZeRO-Offload,
the parameter file tier, P_a with tensor parallelism, hybrid sharding, a pipeline stage under
GPipe and 1F1B), zero-train --step-trace FILE records the operations rank 0 executed, step by
step, and zero-plan --print-step prints rank 0's program from the same flags in a process of its
own. Every step's executed operations must be the printed program, operation for operation: the
same indices, in the same order, each doing the same thing to the same unit, bucket and
parameter. A skipped step (an overflow) would leave out its updates and shares; the grid's steps
are all applied, so every operation runs. `--self-test` plants one operation out of order in a
real trace and checks that the comparison reports it. Exit 0 when every check holds.
"""
import os
import re
import subprocess
import sys
import tempfile

BUILD = sys.argv[1]
ZP, ZT = BUILD + "/bin/zero-plan", BUILD + "/bin/zero-train"
COMMON = ["--global-batch", "4", "--eval-every", "0"]
STEPS = 2
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_print_step import GRID as PRINTED  # noqa: E402  (the print-step check's grid)

# that grid, with the parameter file tier added (its reads and writes follow the gathers)
GRID = PRINTED[:8] + [["--stage", "3", "--world-size", "2", "--offload-params", "file:{tmp}/params"]] + PRINTED[8:]
PRINTED = re.compile(r"^ *(\d+)  (\S+(?: \S+)*)")
EXECUTED = re.compile(r"^step (\d+) (\d+) (.+)$")


def printed_program(text):
    """[(index, operation)] from zero-plan --print-step's lines."""
    ops = []
    for line in text.split("\n")[2:]:
        m = PRINTED.match(line)
        if m:
            ops.append((int(m.group(1)), m.group(2)))
    return ops


def executed_steps(text):
    """{step: [(index, operation)]} from a --step-trace file."""
    steps = {}
    for line in text.split("\n"):
        m = EXECUTED.match(line)
        if m:
            steps.setdefault(int(m.group(1)), []).append((int(m.group(2)), m.group(3)))
        elif line:
            steps.setdefault(-1, []).append((-1, line))
    return steps


def compare(program, steps):
    problems = []
    if -1 in steps:
        problems.append("not a step-trace line: %r" % steps[-1][0][1])
    if sorted(steps) != list(range(1, STEPS + 1)):
        problems.append("steps traced %s, want 1..%d" % (sorted(steps), STEPS))
    for s, ran in sorted(steps.items()):
        if s < 0:
            continue
        for k, (got, want) in enumerate(zip(ran, program)):
            if got != want:
                problems.append("step %d: executed operation %d is %d %s, the program's is %d %s"
                                % (s, k, got[0], got[1], want[0], want[1]))
                break
        else:
            if len(ran) != len(program):
                problems.append("step %d: %d operations executed, the program has %d" % (s, len(ran), len(program)))
    return problems


def run_pair(args, tmp):
    args = [a.replace("{tmp}", tmp) for a in args]
    trace = os.path.join(tmp, "step-trace.txt")
    plan = subprocess.run([ZP, "--print-step", *args, *COMMON], capture_output=True, text=True)
    if plan.returncode:
        return None, None, ["zero-plan exit %d: %s" % (plan.returncode, plan.stderr.strip())]
    train = subprocess.run([ZT, *args, *COMMON, "--steps", str(STEPS), "--step-trace", trace],
                           capture_output=True, text=True)
    if train.returncode:
        return None, None, ["zero-train exit %d: %s" % (train.returncode, train.stderr.strip()[-400:])]
    with open(trace) as f:
        return printed_program(plan.stdout), f.read(), []


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        program, trace, problems = run_pair(GRID[2], tmp)
    if problems:
        print("FAIL: %s" % problems)
        return 1
    lines = trace.split("\n")
    k = next(i for i, l in enumerate(lines) if " reduce_scatter " in l)  # issued before its parameters are final
    lines[k], lines[k - 1] = lines[k - 1], lines[k]
    if not compare(program, executed_steps("\n".join(lines))):
        print("FAIL: the planted out-of-order operation was not reported")
        return 1
    print("check_step_trace self-test: an operation planted out of order is reported")
    return 0


def main():
    if "--self-test" in sys.argv:
        return self_test()
    failures = 0
    for args in GRID:
        with tempfile.TemporaryDirectory() as tmp:
            program, trace, problems = run_pair(args, tmp)
        if not problems:
            problems = compare(program, executed_steps(trace))
        for p in problems:
            print("FAIL: %s: %s" % (" ".join(args), p))
        failures += len(problems)
        if not problems:
            print("ok: %s: %d steps of %d operations each ran as printed" % (" ".join(args), STEPS, len(program)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
