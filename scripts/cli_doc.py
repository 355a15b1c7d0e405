#!/usr/bin/python3
"""scripts/cli_doc.py BUILD [--write ROOT | --check ROOT | --self-test] — docs/cli.md, generated from
the programs' own flag registries, so the command-line reference cannot drift from the code.

Each program declares its flags once (core/cli.h); parsing, `--help`, `--print-config` and the
config hash walk that declaration, and so does `--help-markdown`, which prints the same flags as
Markdown tables, one per group of flags (zero-train's: model, data, precision, ...), each under its
heading and an example command. This script runs `BUILD/bin/PROGRAM --help-markdown` for every
program a user runs (zero-train, zero-plan, zero-launch, zero-collbench, zero-memreplay, zero-ckpt)
and puts the tables under a heading each, after a short note on the program that the registry does
not hold.

  BUILD                 print the page on stdout;
  BUILD --write ROOT    write it to ROOT/docs/cli.md (after changing a flag, rebuild, then this);
  BUILD --check ROOT    exit 1 with one line and the start of a diff when ROOT/docs/cli.md is not
                        the page the programs print now (a `docs` test of make test);
  BUILD --self-test     the check passes on a fresh page and reports a planted stale row and a
                        missing row (a `docs` test too).
"""
import difflib
import os
import subprocess
import sys
import tempfile
import textwrap

DOC = os.path.join("docs", "cli.md")
REFRESH = "make cli-doc"

HEAD = """# Command-line reference

This page is generated: `scripts/cli_doc.py` runs each program with `--help-markdown`, which prints
the flags from the program's one declaration of them (`src/core/cli.h`), the same declaration that
parses the command line and prints `--help`. Do not edit it by hand. After changing a flag, refresh it
(this builds the six programs and runs `scripts/cli_doc.py build --write .`):

    {refresh}

A `docs` test (`ctest -R cli-doc`) fails when this page is not what the programs print.
Every program also prints its flags with `--help`.

| program | what it does |
|---|---|
{index}
"""

# program -> (what it does, in one line for the index; a note on what the flags do not say)
PROGRAMS = {
    "zero-train": (
        "trains the model: one rank, or N ranks with ZeRO, tensor and pipeline parallelism",
        "Ranks are processes (`--world-size N` starts them; so can zero-launch, torchrun, mpirun or "
        "srun) or threads (`--ranks-as threads`). The ranks form a grid of N_d × N_p × N_m: rank = "
        "pp × N_d × N_m + dp × N_m + mp. Defaults that depend on other flags are derived from them, so "
        "no default makes a valid explicit choice fail. `--print-config` prints the effective settings "
        "as flags; `--config FILE.json` reads a DeepSpeed-style file ([deepspeed-config.md](deepspeed-config.md))."),
    "zero-plan": (
        "plans a zero-train run without running it: bytes, traffic, time, the largest model",
        "Every flag of [zero-train](#zero-train) is an input too: any zero-train command line is a "
        "plan. Chapter 3 introduces it; [src/plan/README.md](../src/plan/README.md) describes each "
        "line it prints."),
    "zero-launch": (
        "starts the ranks of a job on one machine or several, as torchrun does",
        "Each rank gets torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT); "
        "its output lines start with `[rank R]`. When one rank fails, zero-launch stops the others and "
        "names the rank that failed first, with its message. `ZT_STORE` chooses the rendezvous store "
        "([src/launch/README.md](../src/launch/README.md)). On several machines, run the same command "
        "on each with `--nnodes`, `--node-rank`, `--master-addr` and `--master-port`."),
    "zero-collbench": (
        "measures every collective's bandwidth in both modes",
        "It reports algorithm and bus bandwidth (the nccl-tests definitions) beside a single-process "
        "memcpy. Chapter 4 explains the numbers."),
    "zero-memreplay": (
        "replays a `--memory-trace` through the first-fit and the M_D layouts",
        "It prints the smallest capacity of each layout and, where the first-fit layout fails, the "
        "request, the free bytes and the largest hole (chapter 12)."),
    "zero-ckpt": (
        "inspects, consolidates and exports zero-train's sharded checkpoints",
        "The format is described in [src/checkpoint/README.md](../src/checkpoint/README.md); chapter "
        "14 teaches it."),
}


def help_markdown(build, program):
    """What one program prints for --help-markdown (its exit status must be 0)."""
    proc = subprocess.run([os.path.join(build, "bin", program), "--help-markdown"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=60)
    if proc.returncode != 0 or not proc.stdout.strip():
        sys.exit("cli_doc: %s --help-markdown failed (status %d): %s" % (program, proc.returncode,
                                                                        proc.stderr.strip()[:300]))
    return proc.stdout.rstrip("\n") + "\n"


def page(build):
    """The whole of docs/cli.md."""
    index = "\n".join("| [%s](#%s) | %s |" % (p, p, what) for p, (what, _) in PROGRAMS.items())
    text = HEAD.format(refresh=REFRESH, index=index)
    for program, (_, note) in PROGRAMS.items():
        note = textwrap.fill(note, 100, break_long_words=False, break_on_hyphens=False)
        text += "\n## %s\n\n%s\n\n%s" % (program, note, help_markdown(build, program))
    return text


def check(build, root):
    """0 when ROOT/docs/cli.md is the page the programs print; else one line and a diff's start, 1."""
    want = page(build)
    path = os.path.join(root, DOC)
    have = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
    if have == want:
        print("cli_doc: %s is what the programs' --help-markdown print (%d lines)" % (DOC, want.count("\n")))
        return 0
    print("cli_doc: %s is stale: it is not what the programs' --help-markdown print now; refresh it with: %s"
          % (DOC, REFRESH))
    diff = list(difflib.unified_diff(have.splitlines(), want.splitlines(), DOC + " (committed)",
                                     DOC + " (generated)", n=0, lineterm=""))
    for line in diff[:20]:
        print("  " + line)
    if len(diff) > 20:
        print("  ... %d more diff lines" % (len(diff) - 20))
    return 1


def self_test(build):
    """The check accepts a fresh page and reports a changed row and a missing row."""
    fresh = page(build)
    rows = [line for line in fresh.splitlines() if line.startswith("| `--")]
    row = rows[len(rows) // 2]
    cases = [("fresh page", fresh, 0),
             ("a stale row", fresh.replace(row, row.replace(" |", " (stale) |", 1), 1), 1),
             ("a missing row", fresh.replace(row + "\n", "", 1), 1)]
    failures = []
    with tempfile.TemporaryDirectory(prefix="zt_cli_doc_") as root:
        os.makedirs(os.path.join(root, "docs"))
        for name, text, want in cases:
            with open(os.path.join(root, DOC), "w", encoding="utf-8") as f:
                f.write(text)
            got = check(build, root)
            if got != want:
                failures.append("%s: the check returned %d, expected %d" % (name, got, want))
    for f in failures:
        print("cli_doc self-test: " + f)
    if not failures:
        print("cli_doc self-test: a fresh page passes; a stale and a missing row are reported")
    return 1 if failures else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) == 2 and args[1] == "--self-test":
        sys.exit(self_test(args[0]))
    if len(args) == 3 and args[1] in ("--write", "--check"):
        if args[1] == "--check":
            sys.exit(check(args[0], args[2]))
        with open(os.path.join(args[2], DOC), "w", encoding="utf-8") as f:
            f.write(page(args[0]))
        sys.exit(0)
    if len(args) == 1:
        sys.stdout.write(page(args[0]))
        sys.exit(0)
    sys.exit("usage: cli_doc.py BUILD [--write ROOT | --check ROOT | --self-test]")
